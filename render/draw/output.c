/* output.c - a scene into a file, whole or not at all: painted into a
 * temporary file beside the target and renamed over it only when cairo,
 * every write and close() succeeded. */
#include "draw_impl.h"

#include <memprof/render.h>
#include <memprof/vec.h>

#include <cairo-svg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

mp_render_format_t mp_render_format_of(const char *path)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');

	if (!dot || (slash && dot < slash))
		return MP_RENDER_NONE;
	if (!strcasecmp(dot, ".svg"))
		return MP_RENDER_SVG;
	if (!strcasecmp(dot, ".png"))
		return MP_RENDER_PNG;
	if (!strcasecmp(dot, ".html") || !strcasecmp(dot, ".htm"))
		return MP_RENDER_HTML;
	return MP_RENDER_NONE;
}

typedef struct sink {
	FILE *f;
	int err; /* errno of the first failed write */
	char *mem; /* HTML: the SVG is gathered here first (f is NULL) */
	size_t n, cap;
} sink_t;

static cairo_status_t sink_write(void *closure, const unsigned char *data, unsigned int length)
{
	sink_t *k = closure;

	if (k->err)
		return CAIRO_STATUS_WRITE_ERROR;
	if (!k->f) {
		if (MP_VEC_RESERVE(k->mem, k->cap, k->n + length) < 0) {
			k->err = ENOMEM;
			return CAIRO_STATUS_NO_MEMORY;
		}
		memcpy(k->mem + k->n, data, length);
		k->n += length;
		return CAIRO_STATUS_SUCCESS;
	}
	if (fwrite(data, 1, length, k->f) != length) {
		k->err = errno ? errno : EIO;
		return CAIRO_STATUS_WRITE_ERROR;
	}
	return CAIRO_STATUS_SUCCESS;
}

static cairo_status_t paint_to(const mp_scene_t *s, mp_render_format_t fmt, sink_t *k);

/* HTML: cairo's SVG into memory, then the page around it into k's file. */
static cairo_status_t paint_html(const mp_scene_t *s, sink_t *k)
{
	sink_t m = {NULL, 0, NULL, 0, 0};
	cairo_status_t st = paint_to(s, MP_RENDER_SVG, &m);

	if (m.err)
		k->err = m.err;
	else if (st == CAIRO_STATUS_SUCCESS)
		k->err = dr_html(s, m.mem ? m.mem : "", m.n, k->f);
	free(m.mem);
	return st;
}

/* Paint into a surface that writes to k; returns the first cairo error. */
static cairo_status_t paint_to(const mp_scene_t *s, mp_render_format_t fmt, sink_t *k)
{
	int w = (int)(mp_scene_width(s) + 0.5), h = (int)(mp_scene_height(s) + 0.5);
	cairo_surface_t *sf;
	cairo_status_t st;
	cairo_t *cr;

	if (fmt == MP_RENDER_HTML)
		return paint_html(s, k);
	if (fmt == MP_RENDER_SVG) {
		sf = cairo_svg_surface_create_for_stream(sink_write, k, w, h);
		if (cairo_surface_status(sf) == CAIRO_STATUS_SUCCESS)
			cairo_svg_surface_set_document_unit(sf, CAIRO_SVG_UNIT_PX);
	} else {
		sf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
	}
	if ((st = cairo_surface_status(sf)) != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(sf);
		return st;
	}
	cr = cairo_create(sf);
	st = cairo_status(cr);
	if (st == CAIRO_STATUS_SUCCESS)
		st = dr_paint(cr, s);
	cairo_destroy(cr);
	if (st == CAIRO_STATUS_SUCCESS && fmt == MP_RENDER_PNG) {
		cairo_surface_flush(sf);
		st = cairo_surface_write_to_png_stream(sf, sink_write, k);
	}
	cairo_surface_finish(sf); /* the SVG is written here */
	if (st == CAIRO_STATUS_SUCCESS)
		st = cairo_surface_status(sf);
	cairo_surface_destroy(sf);
	return st;
}

/* A target that exists and is not a regular file (/dev/stdout, a pipe) is
 * written in place: renaming over it would replace the device. */
static int write_in_place(const mp_scene_t *s, const char *path, mp_render_format_t fmt, mp_diag_t *diag)
{
	sink_t k = {fopen(path, "wb"), 0, NULL, 0, 0};
	cairo_status_t st;
	int rc = 0;

	if (!k.f)
		return mp_diag_set(diag, -errno, -1, -1, "cannot write '%s': %s", path, strerror(errno));
	st = paint_to(s, fmt, &k);
	if (k.err)
		rc = mp_diag_set(diag, -k.err, -1, -1, "cannot write '%s': %s", path, strerror(k.err));
	else if (st != CAIRO_STATUS_SUCCESS)
		rc = mp_diag_set(diag, MP_ERENDER, -1, -1, "cannot draw '%s': cairo: %s", path, cairo_status_to_string(st));
	if (fclose(k.f) != 0 && !rc)
		rc = mp_diag_set(diag, -errno, -1, -1, "cannot write '%s': %s", path, strerror(errno));
	return rc;
}

int mp_render_write(const mp_scene_t *s, const char *path, mp_render_format_t fmt, mp_diag_t *diag)
{
	struct stat target;
	size_t n = strlen(path) + 16;
	char *tmp;
	sink_t k = {NULL, 0, NULL, 0, 0};
	cairo_status_t st;
	mode_t mask;
	int fd, rc = 0;

	if (mp_scene_status(s))
		return mp_diag_set(diag, mp_scene_status(s), -1, -1, "out of memory while laying out the picture");
	if (fmt != MP_RENDER_SVG && fmt != MP_RENDER_PNG && fmt != MP_RENDER_HTML)
		return mp_diag_set(diag, MP_EUSAGE, -1, -1, "'%s': unknown picture format (expected .svg, .png or .html)",
				   path);
	if (!(mp_scene_width(s) >= 1 && mp_scene_height(s) >= 1 && mp_scene_width(s) <= MP_RENDER_MAX_SIDE &&
	      mp_scene_height(s) <= MP_RENDER_MAX_SIDE))
		return mp_diag_set(diag, MP_EUSAGE, -1, -1, "a picture of %.0fx%.0f px is out of range (1 to %d px a side)",
				   mp_scene_width(s), mp_scene_height(s), MP_RENDER_MAX_SIDE);
	if (stat(path, &target) == 0 && !S_ISREG(target.st_mode))
		return write_in_place(s, path, fmt, diag);
	if (!(tmp = malloc(n)))
		return mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
	snprintf(tmp, n, "%s.tmp-XXXXXX", path);
	if ((fd = mkstemp(tmp)) < 0) {
		rc = -errno;
		mp_diag_set(diag, rc, -1, -1, "cannot write '%s': %s", path, strerror(errno));
		free(tmp);
		return rc;
	}
	/* mkstemp makes the file 0600; a picture is as readable as any file */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0 || !(k.f = fdopen(fd, "wb"))) {
		rc = -errno;
		close(fd);
		mp_diag_set(diag, rc, -1, -1, "cannot write '%s': %s", path, strerror(-rc));
		goto fail;
	}
	st = paint_to(s, fmt, &k);
	if (k.err) {
		rc = -k.err;
		mp_diag_set(diag, rc, -1, -1, "cannot write '%s': %s", path, strerror(k.err));
	} else if (st != CAIRO_STATUS_SUCCESS) {
		rc = MP_ERENDER;
		mp_diag_set(diag, rc, -1, -1, "cannot draw '%s': cairo: %s", path, cairo_status_to_string(st));
	}
	if (fflush(k.f) != 0 && !rc) {
		rc = -errno;
		mp_diag_set(diag, rc, -1, -1, "cannot write '%s': %s", path, strerror(errno));
	}
	if (fclose(k.f) != 0 && !rc) {
		rc = -errno;
		mp_diag_set(diag, rc, -1, -1, "cannot write '%s': %s", path, strerror(errno));
	}
	if (rc)
		goto fail;
	if (rename(tmp, path) < 0) {
		rc = -errno;
		mp_diag_set(diag, rc, -1, -1, "cannot write '%s': %s", path, strerror(errno));
		goto fail;
	}
	free(tmp);
	return 0;
fail:
	unlink(tmp);
	free(tmp);
	return rc;
}
