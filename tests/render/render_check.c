/* render_check.c - reading pictures back for the render tests. */
#include "render_check.h"

#include <cairo.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

typedef struct root_info {
	int seen;
	char *root, *width, *height;
	size_t rootsz, attrsz;
} root_info_t;

static void on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
	root_info_t *r = ud;

	if (r->seen++)
		return;
	snprintf(r->root, r->rootsz, "%s", name);
	for (size_t i = 0; attrs[i]; i += 2) {
		if (!strcmp(attrs[i], "width"))
			snprintf(r->width, r->attrsz, "%s", attrs[i + 1]);
		else if (!strcmp(attrs[i], "height"))
			snprintf(r->height, r->attrsz, "%s", attrs[i + 1]);
	}
}

unsigned char *rc_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
		buf[n] = 0;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

int rc_svg_parse(const char *path, char *root, size_t rootsz, char *width, char *height, size_t attrsz, char *err,
		 size_t errsz)
{
	root_info_t r = {0, root, width, height, rootsz, attrsz};
	size_t len;
	unsigned char *buf = rc_slurp(path, &len);
	XML_Parser p;
	int rc = 0;

	root[0] = width[0] = height[0] = err[0] = '\0';
	if (!buf) {
		snprintf(err, errsz, "cannot read %s", path);
		return -1;
	}
	p = XML_ParserCreate(NULL);
	XML_SetUserData(p, &r);
	XML_SetStartElementHandler(p, on_start);
	if (XML_Parse(p, (const char *)buf, (int)len, 1) == XML_STATUS_ERROR) {
		snprintf(err, errsz, "%s at line %lu", XML_ErrorString(XML_GetErrorCode(p)),
			 (unsigned long)XML_GetCurrentLineNumber(p));
		rc = -1;
	}
	XML_ParserFree(p);
	free(buf);
	return rc;
}

int rc_png_size(const char *path, int *w, int *h)
{
	cairo_surface_t *s = cairo_image_surface_create_from_png(path);
	int rc = -1;

	if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS) {
		*w = cairo_image_surface_get_width(s);
		*h = cairo_image_surface_get_height(s);
		rc = 0;
	}
	cairo_surface_destroy(s);
	return rc;
}

long rc_png_pixel(const char *path, int x, int y)
{
	cairo_surface_t *s = cairo_image_surface_create_from_png(path);
	long px = -1;

	if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS && x >= 0 && y >= 0 &&
	    x < cairo_image_surface_get_width(s) && y < cairo_image_surface_get_height(s)) {
		const unsigned char *d = cairo_image_surface_get_data(s);
		uint32_t v;
		memcpy(&v, d + (size_t)y * (size_t)cairo_image_surface_get_stride(s) + (size_t)x * 4, 4);
		px = (long)(v & 0xFFFFFF); /* ARGB32, native endian; opaque: no premultiplication */
	}
	cairo_surface_destroy(s);
	return px;
}

int rc_png_count_column(const char *path, int x, int y0, int y1, long rgb)
{
	int n = 0;

	for (int y = y0; y <= y1; y++)
		n += rc_png_pixel(path, x, y) == rgb;
	return n;
}

int rc_run(const char *cmd, char **out)
{
	FILE *p = popen(cmd, "r");
	size_t cap = 1 << 16, len = 0, n;
	char *buf = malloc(cap), *grown;
	int st;

	if (out)
		*out = NULL;
	if (!p || !buf) {
		if (p)
			pclose(p);
		free(buf);
		return -1;
	}
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2) {
			if (!(grown = realloc(buf, cap *= 2)))
				break;
			buf = grown;
		}
	}
	buf[len] = '\0';
	st = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int rc_same_bytes(const char *a, const char *b)
{
	size_t la, lb;
	unsigned char *x = rc_slurp(a, &la), *y = rc_slurp(b, &lb);
	int same = x && y && la == lb && !memcmp(x, y, la);

	free(x);
	free(y);
	return same;
}
