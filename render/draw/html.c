/* html.c - a scene as one self-contained HTML file (docs/charts.md, "HTML
 * report"): the picture is cairo's own SVG of it, inline, and over it an
 * invisible hit area for every item the chart builders gave a note (a
 * breakdown bar, a flame frame, an HLO buffer ...), placed from the item's
 * own geometry, so hover shows what the scene says is there, not what a
 * second layout guesses. The breakdown bars' notes also make a sortable
 * table. Script and style are embedded (html_assets.h, generated from
 * render/html/ at build time) and a Content-Security-Policy forbids any
 * fetch, so the file opens offline and can be attached to a bug report.
 * Every text from the capture (op names, file names) is escaped. */
#include "draw_impl.h"
#include "html_assets.h"

#include <memprof/render.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n bytes of s as HTML text or an attribute value (quotes included). */
static void esc(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		case '\n': fputs("&#10;", f); break; /* kept in attributes */
		default: fputc(s[i], f);
		}
	}
}

static void esc0(FILE *f, const char *s)
{
	esc(f, s, strlen(s));
}

/* The box an item covers, in px; 0 when it covers none. */
static int item_box(const mp_scene_t *s, const mp_scene_item_t *it, double *x, double *y, double *w, double *h)
{
	if (it->kind == MP_SCENE_RECT || it->kind == MP_SCENE_IMAGE) {
		*x = it->x, *y = it->y, *w = it->w, *h = it->h;
	} else if (it->kind == MP_SCENE_PATH && it->count) {
		const mp_point_t *p = mp_scene_points(s, it);
		double x0 = p[0].x, x1 = p[0].x, y0 = p[0].y, y1 = p[0].y;
		for (uint32_t i = 1; i < it->count; i++) {
			x0 = p[i].x < x0 ? p[i].x : x0, x1 = p[i].x > x1 ? p[i].x : x1;
			y0 = p[i].y < y0 ? p[i].y : y0, y1 = p[i].y > y1 ? p[i].y : y1;
		}
		*x = x0 - 2, *y = y0 - 2, *w = x1 - x0 + 4, *h = y1 - y0 + 4; /* a line is pointed at too */
	} else if (it->kind == MP_SCENE_TEXT) {
		const mp_text_style_t *ts = &it->text_style;
		double tw = mp_text_width(mp_render_measure(), mp_scene_string(s, it), ts->size, ts->bold);
		double th = ts->size * 1.2;
		*x = ts->halign == MP_ALIGN_CENTER ? it->x - tw / 2 : ts->halign == MP_ALIGN_RIGHT ? it->x - tw : it->x;
		*y = ts->valign == MP_VALIGN_TOP ? it->y : ts->valign == MP_VALIGN_MIDDLE ? it->y - th / 2 : it->y - ts->size;
		*w = tw, *h = th;
		if (ts->vertical) { /* turned a quarter: the box turns with it */
			*x = it->x - th / 2, *y = it->y - tw, *w = th, *h = tw;
		}
	} else {
		return 0;
	}
	if (*w < 2) /* a sliver of a bar is still pointed at */
		*x -= (2 - *w) / 2, *w = 2;
	if (*h < 2)
		*y -= (2 - *h) / 2, *h = 2;
	return 1;
}

static void hits(FILE *f, const mp_scene_t *s)
{
	fputs("<g id=\"hits\">\n", f);
	for (size_t i = 0; i < mp_scene_count(s); i++) {
		const mp_scene_item_t *it = mp_scene_item(s, i);
		const char *note = mp_scene_item_note(s, it);
		double x, y, w, h;
		if (!note || !note[0] || !item_box(s, it, &x, &y, &w, &h))
			continue;
		fprintf(f, "<rect class=\"hit\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" data-ref=\"%" PRIu32
			   "\" data-tag=\"", x, y, w, h, it->ref);
		esc0(f, it->tag ? it->tag : "");
		fputs("\" data-note=\"", f);
		esc0(f, note);
		fputs("\"/>\n", f);
	}
	fputs("</g>\n", f);
}

/* The line of note that starts with key ("bytes: "), past the key, and its
 * length; NULL when none. */
static const char *note_line(const char *note, const char *key, size_t *len)
{
	size_t k = strlen(key);
	for (const char *p = note; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, key, k)) {
			const char *e = strchr(p, '\n');
			*len = e ? (size_t)(e - p - (ptrdiff_t)k) : strlen(p + k);
			return p + k;
		}
	}
	return NULL;
}

/* The breakdown as a table: one row per "bar" of the scene, from its note
 * ("NAME\nbytes: N (SIZE)\nDETAIL\nchart: TITLE", breakdown.c). */
static void table(FILE *f, const mp_scene_t *s)
{
	size_t rank = 0;

	for (size_t i = 0; i < mp_scene_count(s); i++) {
		const mp_scene_item_t *it = mp_scene_item(s, i);
		const char *note = mp_scene_item_note(s, it), *nl, *b, *c, *open, *d;
		size_t bl = 0, cl = 0, dl = 0;
		if (!note || !it->tag || strcmp(it->tag, "bar") || !(b = note_line(note, "bytes: ", &bl)))
			continue;
		if (!rank++)
			fputs("<h2>What was live at the peak</h2>\n<table class=\"breakdown\" id=\"breakdown\"><thead><tr>"
			      "<th class=\"num\">#</th><th>chart</th><th>name</th><th class=\"num\">bytes</th>"
			      "<th>what</th></tr></thead><tbody>\n",
			      f);
		nl = strchr(note, '\n');
		c = note_line(note, "chart: ", &cl);
		open = memchr(b, '(', bl);
		d = b + bl + (b[bl] == '\n'); /* the detail: the line after the bytes, unless it is the chart's */
		if (*d && strncmp(d, "chart: ", 7))
			dl = strchr(d, '\n') ? (size_t)(strchr(d, '\n') - d) : strlen(d);
		fprintf(f, "<tr><td class=\"num\" data-v=\"%zu\">%zu</td><td data-v=\"", rank, rank);
		esc(f, c ? c : "", cl);
		fputs("\">", f);
		esc(f, c ? c : "", cl);
		fputs("</td><td data-v=\"", f);
		esc(f, note, nl ? (size_t)(nl - note) : strlen(note));
		fputs("\">", f);
		esc(f, note, nl ? (size_t)(nl - note) : strlen(note));
		fprintf(f, "</td><td class=\"num\" data-v=\"%llu\" title=\"%llu B\">", strtoull(b, NULL, 10),
			strtoull(b, NULL, 10));
		if (open) /* "1.00 MiB (12.5 %)" without the outer parentheses */
			esc(f, open + 1, (size_t)(b + bl - open) - 2);
		fputs("</td><td data-v=\"", f);
		esc(f, d, dl);
		fputs("\">", f);
		esc(f, d, dl);
		fputs("</td></tr>\n", f);
	}
	if (rank)
		fputs("</tbody></table>\n<p class=\"help\">Click a header to sort by it; again to reverse.</p>\n", f);
}

int dr_html(const mp_scene_t *s, const char *svg, size_t n, FILE *f)
{
	const char *start = svg;
	double w = mp_scene_width(s), h = mp_scene_height(s);

	/* cairo's document without its XML declaration: an element of ours */
	for (size_t i = 0; i + 4 <= n; i++)
		if (!memcmp(svg + i, "<svg", 4)) {
			start = svg + i;
			break;
		}
	errno = 0;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	      "<title>memprof report</title>\n<style>\n",
	      f);
	fputs(html_css, f);
	fputs("</style></head><body>\n<h1>memprof report</h1>\n<p class=\"help\">Point at a bar, block, buffer or "
	      "lane for its details. Wheel: zoom; drag: pan; double-click: whole picture.</p>\n<div id=\"chart\">",
	      f);
	fprintf(f, "<svg id=\"view\" width=\"%.0f\" height=\"%.0f\" "
		   "viewBox=\"0 0 %.0f %.0f\" data-w=\"%.0f\" data-h=\"%.0f\">\n",
		w, h, w, h, w, h);
	fwrite(start, 1, n - (size_t)(start - svg), f);
	hits(f, s);
	fputs("</svg></div>\n<div id=\"tip\"></div>\n", f);
	table(f, s);
	fputs("<pre id=\"selftest\"></pre>\n<script>\n", f);
	fputs(html_js, f);
	fputs("</script>\n</body></html>\n", f);
	if (ferror(f))
		return errno ? errno : EIO;
	return 0;
}
