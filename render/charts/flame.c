/* flame.c - a call tree of memory as an icicle or a flame graph
 * (memprof/flame.h): the header, a legend of the kinds drawn, the frames
 * row by row from a walk of the tree laid out by flame_tree.c, left to
 * right in each row, and a line saying what was too narrow or too deep to
 * draw. */
#include "charts_impl.h"
#include "flame_impl.h"

#include <memprof/error.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_PAD 4.0       /* between a frame's left edge and its name */
#define SIZE_GAP 16.0        /* between a frame's name and its bytes */
#define FRAME_H (MP_FLAME_ROW_H - 1)
#define MERGED_NAME "under 1 px, merged"

/* What the walk carries: the tree, where rows are, each row's last frame. */
typedef struct walk {
	const mp_chart_area_t *a;
	const fl_tree_t *t;
	double x0, top;      /* the plot's left edge; the top of the rows */
	int flame;
	double *last_x1;     /* per row: the right edge of its last frame */
	unsigned *last_shade;
	char *buf;           /* labels and notes */
	size_t bufsz;
} walk_t;

static int grow(walk_t *w, size_t need)
{
	char *p;

	if (need <= w->bufsz)
		return 0;
	if (!(p = realloc(w->buf, need)))
		return MP_ENOMEM;
	w->buf = p;
	w->bufsz = need;
	return 0;
}

static double row_y(const walk_t *w, uint32_t depth)
{
	return w->top + (w->flame ? w->t->rows - 1 - depth : depth) * MP_FLAME_ROW_H;
}

/* A frame's rect over bytes [lo, hi) in row depth; returns the item. */
static long frame_rect(walk_t *w, uint64_t lo, uint64_t hi, uint32_t depth, uint32_t rgb, double *fill_w)
{
	double x0 = w->x0 + fl_px(w->t, lo), x1 = w->x0 + fl_px(w->t, hi);
	mp_style_t st = cx_fill(rgb);

	*fill_w = x1 - x0 >= 3 ? x1 - x0 - 1 : x1 - x0; /* a white seam between neighbours */
	w->last_x1[depth] = x1;
	return mp_scene_rect(w->a->scene, x0, row_y(w, depth), *fill_w, FRAME_H, &st);
}

/* "forward (model.py:42)\nPython · 12582912 B (12.00 MiB), 40.0 % of all\nself ... · 1,234 allocations" */
static int frame_note(walk_t *w, long item, uint32_t c)
{
	const mp_flame_node_t *nd = &w->t->nodes[c];
	char total[64], self[64], count[32];
	double pct = 100.0 * (double)nd->total_bytes / (double)w->t->nodes[0].total_bytes;

	if (grow(w, strlen(fl_name(nd)) + 256) < 0)
		return MP_ENOMEM;
	snprintf(w->buf, w->bufsz, "%s\n%s · %s, %.1f %% of all\nself %s · %s allocations", fl_name(nd),
		 c ? mp_flame_kind_name(fl_kind(nd)) : "all", mp_bytes_exact(total, sizeof(total), nd->total_bytes),
		 pct, mp_bytes_exact(self, sizeof(self), nd->self_bytes),
		 mp_fmt_count(count, sizeof(count), nd->count));
	mp_scene_note(w->a->scene, item, w->buf, c);
	return 0;
}

/* A frame's bytes right-aligned at x, where `room` px are left after its
 * name: a picture has no hover, and the largest frames are what a reader
 * asks "how much?" of. */
static void size_label(walk_t *w, uint32_t c, double x, double room)
{
	const fl_tree_t *t = w->t;
	char bytes[32];

	mp_fmt_bytes(bytes, sizeof(bytes), t->nodes[c].total_bytes);
	if (cx_width(w->a, bytes, CX_SMALL, 0) + SIZE_GAP <= room)
		mp_scene_tag(w->a->scene,
			     cx_text(w->a, x, row_y(w, t->depth[c]) + FRAME_H / 2, bytes, CX_SMALL, 0, MP_COLOR_TEXT,
				     MP_ALIGN_RIGHT, MP_VALIGN_MIDDLE),
			     "flame-size");
}

static int draw_frame(walk_t *w, uint32_t c)
{
	const fl_tree_t *t = w->t;
	const char *name = fl_name(&t->nodes[c]);
	uint32_t d = t->depth[c];
	double x0 = w->x0 + fl_px(t, t->start[c]), fill_w;
	unsigned shade = fl_shade(name), prev = w->last_shade[d];
	long item;

	/* a neighbour of the same shade, or the next one, would read as one frame */
	if (w->last_x1[d] == x0 && prev < FL_SHADES && (shade + 1 >= prev && shade <= prev + 1))
		shade = (shade + FL_SHADES / 2) % FL_SHADES;
	w->last_shade[d] = shade;
	item = frame_rect(w, t->start[c], t->start[c] + t->span[c], d,
			  c ? fl_color(fl_kind(&t->nodes[c]), shade) : FL_ROOT_COLOR, &fill_w);
	mp_scene_tag(w->a->scene, item, "flame-frame");
	if (frame_note(w, item, c) < 0)
		return MP_ENOMEM;
	if (fill_w - 2 * LABEL_PAD < 3 * 0.5 * CX_SMALL) /* not even 3 characters */
		return 0;
	if (grow(w, strlen(name) + 16) < 0)
		return MP_ENOMEM;
	if (!fl_label(w->a->measure, name, CX_SMALL, fill_w - 2 * LABEL_PAD, w->buf, w->bufsz))
		return 0;
	mp_scene_tag(w->a->scene,
		     cx_text(w->a, x0 + LABEL_PAD, row_y(w, d) + FRAME_H / 2, w->buf, CX_SMALL, 0, MP_COLOR_TEXT,
			     MP_ALIGN_LEFT, MP_VALIGN_MIDDLE),
		     "flame-label");
	if (!strcmp(w->buf, name)) /* the name whole, and room for its bytes at the right end? */
		size_label(w, c, x0 + fill_w - LABEL_PAD, fill_w - 2 * LABEL_PAD - cx_width(w->a, name, CX_SMALL, 0));
	return 0;
}

/* The run of narrow siblings from order[k]: one grey frame when it spans a
 * pixel. */
static void draw_run(walk_t *w, uint32_t k)
{
	const fl_tree_t *t = w->t;
	uint32_t c = t->order[k], p = t->nodes[c].parent, end = t->first[p + 1], frames = 1;
	uint64_t lo = t->start[c], hi;
	char bytes[64], note[128];
	double fill_w;
	long item;

	while (k + 1 < end && t->state[t->order[k + 1]] == FL_NARROW) {
		k++;
		frames++;
	}
	hi = t->start[t->order[k]] + t->span[t->order[k]];
	if (fl_px(t, hi) - fl_px(t, lo) < 1)
		return;
	item = frame_rect(w, lo, hi, t->depth[c], FL_MERGED_COLOR, &fill_w);
	w->last_shade[t->depth[c]] = FL_SHADES; /* no shade: any may follow */
	mp_scene_tag(w->a->scene, item, "flame-merged");
	snprintf(note, sizeof(note), "%" PRIu32 " frame%s under 1 px wide, merged\n%s in all", frames,
		 frames == 1 ? "" : "s", mp_bytes_exact(bytes, sizeof(bytes), hi - lo));
	mp_scene_note(w->a->scene, item, note, p);
}

/* Depth first, children in order: each row's frames come left to right. */
static int walk(walk_t *w)
{
	const fl_tree_t *t = w->t;
	uint32_t *stack = malloc(t->n * sizeof(*stack)), sp = 0;

	if (!stack)
		return MP_ENOMEM;
	stack[sp++] = 0;
	while (sp) {
		uint32_t k = stack[--sp], c = t->order[k];
		if (t->state[c] == FL_NARROW) {
			draw_run(w, k);
			continue;
		}
		if (draw_frame(w, c) < 0) {
			free(stack);
			return MP_ENOMEM;
		}
		for (uint32_t kk = t->first[c + 1]; kk-- > t->first[c];) {
			uint8_t st = t->state[t->order[kk]];
			int run_start = kk == t->first[c] || t->state[t->order[kk - 1]] != FL_NARROW;
			if (st == FL_DRAWN || (st == FL_NARROW && run_start))
				stack[sp++] = kk;
		}
	}
	free(stack);
	return 0;
}

/* The legend's entries: the kinds drawn (every kind when all is set). */
static size_t legend_entries(cx_legend_entry_t *e, unsigned kinds, int merged, int all)
{
	size_t n = 0;

	for (int k = 0; k < MP_FLAME_KINDS; k++)
		if (all || kinds & 1u << k)
			e[n++] = (cx_legend_entry_t){mp_flame_kind_name(k), mp_flame_kind_color(k), CX_KEY_BOX};
	if (all || merged)
		e[n++] = (cx_legend_entry_t){MERGED_NAME, FL_MERGED_COLOR, CX_KEY_BOX};
	return n;
}

/* Room for the legend, whatever kinds it shows. */
static double legend_height(const mp_chart_area_t *a)
{
	cx_legend_entry_t e[MP_FLAME_KINDS + 1];

	return cx_legend(a, a->box.x + CX_PAD, 0, a->box.w - 2 * CX_PAD, e, legend_entries(e, 0, 0, 1), 0) + 4;
}

#define FOOTER_H (CX_SMALL * CX_LINE + 4)

/* The line under the rows: what was too narrow or too deep, and at its
 * right end, where it fits, how to read the chart (a picture in a bug
 * report is read without the docs). */
static void footer(const mp_chart_area_t *a, const fl_tree_t *t, double y, const mp_flame_options_t *o)
{
	char line[512], hint[128], nb[32], db[32], nf[32], df[32];
	double x = a->box.x + CX_PAD, w = a->box.w - 2 * CX_PAD, used = 0, hw;
	int k = 0;

	line[0] = '\0';
	if (t->narrow_frames)
		k = snprintf(line, sizeof(line), "%s frame%s under 1 px wide (%s in all) %s",
			     mp_fmt_count(nf, sizeof(nf), t->narrow_frames), t->narrow_frames == 1 ? "" : "s",
			     mp_fmt_bytes(nb, sizeof(nb), t->narrow_bytes),
			     t->merged ? "drawn merged in grey" : "not drawn");
	if (t->deep_frames)
		snprintf(line + k, sizeof(line) - (size_t)k, "%s%s frame%s below row %" PRIu32 " (%s in all) not drawn",
			 k ? "; " : "", mp_fmt_count(df, sizeof(df), t->deep_frames), t->deep_frames == 1 ? "" : "s",
			 t->cap, mp_fmt_bytes(db, sizeof(db), t->deep_bytes));
	if (line[0]) {
		long it = cx_text_fit(a, x, y + 4, line, w, CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT, MP_VALIGN_TOP,
				      MP_ELLIPSIS_END);
		mp_scene_tag(a->scene, it, "flame-hidden");
		if (it >= 0)
			used = cx_width(a, mp_scene_string(a->scene, mp_scene_item(a->scene, (size_t)it)), CX_SMALL, 0);
	}
	snprintf(hint, sizeof(hint), "width: bytes, callees included; callees %s their caller, %s",
		 o && o->flame ? "above" : "below", o && o->sort == MP_FLAME_SORT_NAME ? "by name" : "largest first");
	hw = cx_width(a, hint, CX_SMALL, 0);
	if (used + (used > 0 ? 24 : 0) + hw <= w)
		mp_scene_tag(a->scene,
			     cx_text(a, x + w, y + 4, hint, CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_RIGHT, MP_VALIGN_TOP),
			     "flame-hint");
}

/* "SUBTITLE · 12582912 B (12.00 MiB), 1,234 allocations"; caller frees. */
static char *subtitle_of(const mp_flame_node_t *root, const char *subtitle)
{
	char bytes[64], count[32];
	int has = subtitle && *subtitle;
	size_t n = (has ? strlen(subtitle) : 0) + 128;
	char *s = malloc(n);

	if (!s)
		return NULL;
	snprintf(s, n, "%s%s%s, %s allocation%s", has ? subtitle : "", has ? " · " : "",
		 mp_bytes_exact(bytes, sizeof(bytes), root->total_bytes),
		 mp_fmt_count(count, sizeof(count), root->count), root->count == 1 ? "" : "s");
	return s;
}

static uint32_t cap_of(const mp_flame_options_t *o)
{
	return o && o->max_depth ? o->max_depth : MP_FLAME_MAX_DEPTH;
}

static double plot_width(double box_w)
{
	double w = floor(box_w - 2 * CX_PAD);

	return w > 1 ? w : 1;
}

/* What every chart takes besides its rows: header, legend, the line under
 * the rows, the bottom padding. */
static double fixed_height(const mp_chart_area_t *a)
{
	return cx_header_height(1) + legend_height(a) + FOOTER_H + CX_PAD;
}

double mp_chart_flame_height(const mp_flame_node_t *nodes, size_t n, double width, const mp_flame_options_t *o,
			     const mp_text_measure_t *m)
{
	mp_chart_area_t a = {NULL, m, {0, 0, width, 0}};
	fl_tree_t t;
	uint32_t rows = 1; /* the root, or the line saying there is nothing */

	if (n && fl_tree_check(nodes, n) < 0)
		return 0;
	if (n && nodes[0].total_bytes) {
		if (fl_tree_build(&t, nodes, n, plot_width(width), cap_of(o), o ? o->sort : 0) < 0) {
			fl_tree_free(&t);
			return 0;
		}
		rows = t.rows;
		fl_tree_free(&t);
	}
	return fixed_height(&a) + rows * MP_FLAME_ROW_H;
}

int mp_chart_flame(const mp_chart_area_t *a, const mp_flame_node_t *nodes, size_t n, const char *title,
		   const char *subtitle, const mp_flame_options_t *o)
{
	cx_legend_entry_t e[MP_FLAME_KINDS + 1];
	double x0 = round(a->box.x + CX_PAD), y, legend_h = legend_height(a), room;
	fl_tree_t t;
	walk_t w;
	char *sub;
	int rc;

	if (n && (rc = fl_tree_check(nodes, n)) < 0)
		return rc;
	if (a->box.h < fixed_height(a) + MP_FLAME_ROW_H - 1e-6) /* no room for the header and one row */
		return MP_EUSAGE;
	if (!(sub = n ? subtitle_of(&nodes[0], subtitle) : NULL) && n)
		return MP_ENOMEM;
	y = cx_header(a, title ? title : "Memory by call stack", n ? sub : subtitle);
	free(sub);
	/* the rows the box has room for (what mp_chart_flame_height added, give or take rounding) */
	room = floor((a->box.y + a->box.h - CX_PAD - FOOTER_H - y - legend_h) / MP_FLAME_ROW_H + 1e-6);
	if (!n || !nodes[0].total_bytes) {
		mp_scene_tag(a->scene,
			     cx_text_fit(a, x0, y, "nothing to draw", a->box.w - 2 * CX_PAD, CX_TEXT, 0, MP_COLOR_MUTED,
					 MP_ALIGN_LEFT, MP_VALIGN_TOP, MP_ELLIPSIS_END),
			     "flame-empty");
		return mp_scene_status(a->scene);
	}
	rc = fl_tree_build(&t, nodes, n, plot_width(a->box.w), room < cap_of(o) ? (uint32_t)room : cap_of(o),
			   o ? o->sort : 0);
	if (rc < 0) {
		fl_tree_free(&t);
		return rc;
	}
	cx_legend(a, x0, y, a->box.w - 2 * CX_PAD, e, legend_entries(e, t.kinds, t.merged, 0), 1);
	memset(&w, 0, sizeof(w));
	w.a = a;
	w.t = &t;
	w.x0 = x0;
	w.flame = o && o->flame;
	/* rows on whole pixels, so that the PNG's edges are sharp */
	w.top = floor(w.flame ? a->box.y + a->box.h - CX_PAD - FOOTER_H - t.rows * MP_FLAME_ROW_H : y + legend_h);
	w.last_x1 = malloc(t.rows * sizeof(*w.last_x1));
	w.last_shade = malloc(t.rows * sizeof(*w.last_shade));
	rc = !w.last_x1 || !w.last_shade ? MP_ENOMEM : 0;
	for (uint32_t d = 0; !rc && d < t.rows; d++) {
		w.last_x1[d] = -1;
		w.last_shade[d] = FL_SHADES;
	}
	if (!rc)
		rc = walk(&w);
	if (!rc)
		footer(a, &t, w.top + t.rows * MP_FLAME_ROW_H, o);
	free(w.last_x1);
	free(w.last_shade);
	free(w.buf);
	fl_tree_free(&t);
	return rc < 0 ? rc : mp_scene_status(a->scene);
}
