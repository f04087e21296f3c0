/* hlo_space.c - the working-space chart: the heap and the unpadded heap at
 * every program point, the peak marked and labelled, and under the plot
 * the lifetimes of the largest buffers live at the peak, on the same x
 * axis. What the reference shows when the mouse is over a buffer (where it
 * lives) is drawn at once.
 *
 * x is the event index of the heap-simulator trace: event e is drawn over
 * [e, e + 1) with the heap after it (heap_sizes[e + 1]), so the peak line
 * stands at x = peak_position and a buffer's lifetime runs from its
 * allocation event to its release event. The curves are step lines through
 * the points mp_series_m4 keeps per pixel column (the exact peak among
 * them): their size is bounded by the width, not by the event count. */
#include "hlo_charts_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LANE_H 18.0
#define COLOR_UNPADDED 0xD55E00 /* vermillion: apart from the heap's blue */

static double legend_h(void)
{
	return CX_SMALL * CX_LINE + 2;
}

static double band_h(size_t lanes)
{
	/* the caption's two lines (what the lanes are; which ranks have none
	 * and what the colours are) and the lanes */
	return lanes ? 4 + 2 * CX_SMALL * CX_LINE + 2 + (double)lanes * LANE_H : 0;
}

/* Everything but the plot: header, legend, band, tick labels, x title. */
static double fixed_h(size_t lanes)
{
	return cx_header_height(1) + legend_h() + 8 + band_h(lanes) + 6 + CX_SMALL * CX_LINE + CX_SMALL * CX_LINE + 10;
}

typedef struct space {
	const mp_chart_area_t *a;
	const mp_hlo_result_t *r;
	mp_box_t plot;
	mp_scale_t xs, ys;
	size_t n;        /* points on x: hx_point_count() */
	double *x, *v, *u; /* event index, heap and unpadded heap after it */
	size_t *keep;
} space_t;

/* The heap after event e. */
static double after(const int64_t *s, size_t npoints, size_t e)
{
	return (double)s[e + 1 < npoints ? e + 1 : npoints - 1];
}

/* The step line through the kept points of y (and, closed, its area). */
static long step_path(space_t *s, const double *y, int area, const mp_style_t *st)
{
	size_t k = mp_series_m4(s->x, y, s->n, 0, (double)s->n, (size_t)s->plot.w, s->keep), np = 0;
	mp_point_t *p = malloc((2 * k + 3) * sizeof(*p));
	long it;

	if (!p)
		return -1;
	for (size_t j = 0; j < k; j++) {
		double x = mp_scale_map(&s->xs, s->x[s->keep[j]]);
		if (j)
			p[np++] = (mp_point_t){x, mp_scale_map(&s->ys, y[s->keep[j - 1]])};
		p[np++] = (mp_point_t){x, mp_scale_map(&s->ys, y[s->keep[j]])};
	}
	p[np++] = (mp_point_t){s->plot.x + s->plot.w, mp_scale_map(&s->ys, y[s->keep[k - 1]])};
	if (area) {
		p[np++] = (mp_point_t){s->plot.x + s->plot.w, s->plot.y + s->plot.h};
		p[np++] = (mp_point_t){s->plot.x, s->plot.y + s->plot.h};
	}
	it = mp_scene_path(s->a->scene, p, np, area, st);
	free(p);
	return it;
}

/* A label on a white backing, so that lines under it do not cross its
 * letters; over a bar, a translucent one lets the bar show through, its
 * extent still seen. The backing and the text both get the tag. */
static void backed_text(const mp_chart_area_t *a, double x, double y, double w, const char *text, const char *tag,
			unsigned alpha)
{
	mp_style_t bg = cx_fill_alpha(MP_COLOR_BACKGROUND, alpha);
	long it;

	mp_scene_tag(a->scene, mp_scene_rect(a->scene, x - 2, y - 8, w + 4, 16, &bg), tag);
	it = cx_text(a, x, y, text, CX_SMALL, 0, MP_COLOR_TEXT, MP_ALIGN_LEFT, MP_VALIGN_MIDDLE);
	mp_scene_tag(a->scene, it, tag);
}

/* Place the label of a lifetime bar [x0, x1] at lane centre cy: beside the
 * bar, else over it away from the peak line at px, else shortened into the
 * widest of those places. */
static void lane_label(space_t *s, double x0, double x1, double cy, double px, const char *text)
{
	const double g = 5, lo = s->plot.x + 2, hi = s->plot.x + s->plot.w - 2;
	double w = cx_width(s->a, text, CX_SMALL, 0), slot[4][2], best = 0;
	size_t bi = 0;
	char fit[512];

	slot[0][0] = x1 + g, slot[0][1] = hi;                 /* right of the bar */
	slot[1][0] = lo, slot[1][1] = x0 - g;                 /* left of it */
	slot[2][0] = x0 + 4, slot[2][1] = (px > x0 && px < x1 ? px : x1) - 4; /* over it, before the peak */
	slot[3][0] = (px > x0 && px < x1 ? px : x0) + 4, slot[3][1] = x1 - 4; /* over it, after the peak */
	for (size_t i = 0; i < 4; i++) {
		double room = slot[i][1] - slot[i][0];
		if (slot[i][0] < lo || slot[i][1] > hi || (px >= slot[i][0] - 3 && px <= slot[i][1] + 3))
			continue;
		if (room >= w) {
			double x = i == 1 ? slot[i][1] - w : slot[i][0];
			backed_text(s->a, x, cy, w, text, "lifetime-label", i >= 2 ? 0xB8 : 0xE6);
			return;
		}
		if (room > best) {
			best = room;
			bi = i;
		}
	}
	if (best < 60)
		return;
	mp_text_fit(s->a->measure, text, CX_SMALL, 0, best, MP_ELLIPSIS_MIDDLE, fit, sizeof(fit));
	w = cx_width(s->a, fit, CX_SMALL, 0);
	backed_text(s->a, bi == 1 ? slot[bi][1] - w : slot[bi][0], cy, w, fit, "lifetime-label", bi >= 2 ? 0xB8 : 0xE6);
}

/* Text at lane-centre y in the part of the plot's width clear of the
 * peak line: left of it when it fits there, else right of it, else in the
 * wider side, shortened. */
static void clear_of_peak(space_t *s, double cy, double px, const char *text)
{
	double lo = s->plot.x + 4, hi = s->plot.x + s->plot.w - 4, w = cx_width(s->a, text, CX_SMALL, 0), x, room;
	char fit[512];

	if (px - 6 - lo >= w || px - 6 - lo >= hi - px - 6) {
		x = lo;
		room = px - 6 - lo;
	} else {
		x = px + 6;
		room = hi - x;
	}
	if (room < 40)
		return;
	mp_text_fit(s->a->measure, text, CX_SMALL, 0, room, MP_ELLIPSIS_END, fit, sizeof(fit));
	backed_text(s->a, x, cy, cx_width(s->a, fit, CX_SMALL, 0), fit, "lifetime-caption", 0xE6);
}

/* The lanes under the plot, bars (labels 0) or labels (labels 1): the
 * labels go on top of the peak line, which goes on top of the bars. */
static void lifetimes(space_t *s, double top, const size_t *idx, size_t lanes, double px, int labels)
{
	const mp_hlo_result_t *r = s->r;
	size_t *rank = labels ? hx_ranks(r) : NULL, colored[HX_PALETTE], ncolored = hx_pick_colored(r, colored);
	double maxsize = (double)r->buffers[idx[0]].size;
	char text[512], gaps[320];

	if (labels) {
		snprintf(text, sizeof(text), "Lifetimes of the %zu largest buffers allocated and released in the trace "
			 "(thickness \xE2\x88\x9D size)", lanes);
		clear_of_peak(s, top + 4 + CX_SMALL * CX_LINE / 2, px, text);
		/* the ranks the lanes skip are said, not left to be guessed */
		if (hx_lane_gaps(r, idx, lanes, gaps, sizeof(gaps)))
			snprintf(text, sizeof(text), "%s; colours as in the strips and the table", gaps);
		else
			snprintf(text, sizeof(text), "Each its own colour, as in the strips and the table");
		clear_of_peak(s, top + 4 + CX_SMALL * CX_LINE * 1.5, px, text);
	}
	top += 4 + 2 * CX_SMALL * CX_LINE + 2;
	for (size_t l = 0; l < lanes; l++) {
		const mp_hlo_buffer_t *b = &r->buffers[idx[l]];
		double cy = top + (double)l * LANE_H + LANE_H / 2, t = round(14.0 * (double)b->size / maxsize);
		double x0 = round(mp_scale_map(&s->xs, (double)b->span_start));
		double x1 = round(mp_scale_map(&s->xs, (double)b->span_limit));
		double right = s->plot.x + s->plot.w;
		mp_style_t st = cx_fill(hx_buffer_color(colored, ncolored, idx[l]));

		/* spans beyond the trace (a hostile file) stay in the plot */
		x0 = x0 < s->plot.x ? s->plot.x : x0 > right - 2 ? right - 2 : x0;
		x1 = x1 > right ? right : x1;

		if (t < 2)
			t = 2;
		if (x1 < x0 + 2)
			x1 = x0 + 2;
		if (!labels) {
			long it = mp_scene_rect(s->a->scene, x0, round(cy - t / 2), x1 - x0, t, &st);
			mp_scene_tag(s->a->scene, it, "lifetime");
			/* the rank, for a test or a reader pointing at the bar */
			char first[64], note[2048];
			snprintf(first, sizeof(first), "#%zu %s", l + 1, mp_hlo_category_name(b->category));
			mp_scene_note(s->a->scene, it, hx_buffer_note(note, sizeof(note), first, b), (uint32_t)idx[l]);
			continue;
		}
		hx_buffer_text(text, sizeof(text), rank ? rank[idx[l]] : l, b, 0);
		if (b->category != MP_HLO_CAT_TEMPORARY) /* the type, where it is not the usual one */
			snprintf(text + strlen(text), sizeof(text) - strlen(text), " (%s)", mp_hlo_category_name(b->category));
		lane_label(s, x0, x1, cy, px, text);
	}
	free(rank);
}

/* The legend: the curves and the peak (the lanes' colours are the
 * buffers', said under the plot).
 * Returns its height; with draw 0 only measures (a may have no scene). */
static double legend(const mp_chart_area_t *a, const mp_hlo_result_t *r, double y, int draw)
{
	cx_legend_entry_t e[12];
	size_t n = 0;
	int same = 1;

	for (size_t i = 0; i < r->n_points && same; i++)
		same = r->heap_sizes[i] == r->unpadded_heap_sizes[i];
	e[n++] = (cx_legend_entry_t){"heap (padded sizes)", MP_COLOR_HEAP, CX_KEY_LINE};
	e[n++] = (cx_legend_entry_t){same ? "unpadded heap (the same: no padding)" : "unpadded heap", COLOR_UNPADDED,
				     CX_KEY_DASH};
	if (r->indefinite_bytes > 0)
		e[n++] = (cx_legend_entry_t){"indefinite allocations (parameters, outputs\xE2\x80\xA6)", MP_COLOR_MUTED,
					     CX_KEY_DASH};
	e[n++] = (cx_legend_entry_t){"peak", MP_COLOR_PEAK, CX_KEY_TICK};
	return cx_legend(a, a->box.x + CX_PAD, y, a->box.w - 2 * CX_PAD, e, n, draw);
}

double hx_space_height(const mp_hlo_result_t *r, size_t lanes, double width, const mp_text_measure_t *m)
{
	mp_chart_area_t a = {NULL, m, {0, 0, width, 0}};
	size_t idx[HX_MAX_LIFETIMES];

	lanes = hx_pick_lifetimes(r, lanes, idx);
	return fixed_h(lanes) - legend_h() + legend(&a, r, 0, 0) + HX_SPACE_PLOT_H;
}

/* The peak's label on a white backing at the top of the plot, on the side
 * of the line with room; the instruction name shortened to fit. */
static void peak_label(space_t *s, double px)
{
	const mp_hlo_result_t *r = s->r;
	char head[96], text[1024], fit[1024];
	double left = px - 6 - s->plot.x - 2, right = s->plot.x + s->plot.w - 2 - (px + 6), room, w, x;
	long it;
	mp_style_t bg = cx_fill_alpha(MP_COLOR_BACKGROUND, 0xE6);

	snprintf(head, sizeof(head), "peak %s at event %" PRId64, mp_fmt_bytes((char[32]){0}, 32,
		 (uint64_t)r->peak_heap_bytes), r->peak_position);
	if (r->peak_instruction && *r->peak_instruction)
		snprintf(text, sizeof(text), "%s: %s", head, r->peak_instruction);
	else
		snprintf(text, sizeof(text), "%s", head);
	w = cx_width(s->a, text, CX_SMALL, 1);
	room = right >= w || right >= left ? right : left;
	mp_text_fit(s->a->measure, text, CX_SMALL, 1, room, MP_ELLIPSIS_END, fit, sizeof(fit));
	w = cx_width(s->a, fit, CX_SMALL, 1);
	x = room == right ? px + 6 : px - 6 - w;
	mp_scene_rect(s->a->scene, x - 3, s->plot.y + 2, w + 6, CX_SMALL * CX_LINE + 2, &bg);
	it = cx_text(s->a, x, s->plot.y + 3, fit, CX_SMALL, 1, MP_COLOR_TEXT, MP_ALIGN_LEFT, MP_VALIGN_TOP);
	mp_scene_tag(s->a->scene, it, "peak-label");
}

int mp_chart_hlo_working_space(const mp_chart_area_t *a, const mp_hlo_result_t *r, size_t nlife)
{
	space_t s = {a, r, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, 0, NULL, NULL, NULL, NULL};
	size_t idx[HX_MAX_LIFETIMES], lanes;
	mp_ticks_t yt, xt;
	mp_box_t axis;
	mp_style_t st;
	double ymax, px, y, left, plot_bottom, band_top;
	int rc = 0;

	if (!r->n_points || !r->heap_sizes || !r->unpadded_heap_sizes)
		return MP_ENODATA;
	lanes = hx_pick_lifetimes(r, nlife, idx);
	s.n = hx_point_count(r);
	s.x = malloc(s.n * sizeof(*s.x));
	s.v = malloc(s.n * sizeof(*s.v));
	s.u = malloc(s.n * sizeof(*s.u));
	/* M4 keeps at most 4 points a pixel column; the plot is never wider
	 * than the box, nor narrower than 16 px */
	s.keep = malloc((4 * (size_t)(a->box.w > 16 ? a->box.w : 16) + 8) * sizeof(*s.keep));
	if (!s.x || !s.v || !s.u || !s.keep) {
		rc = MP_ENOMEM;
		goto out;
	}
	for (size_t e = 0; e < s.n; e++) {
		s.x[e] = (double)e;
		s.v[e] = after(r->heap_sizes, r->n_points, e);
		s.u[e] = after(r->unpadded_heap_sizes, r->n_points, e);
	}

	/* vertical layout: header, legend, plot, band, ticks, x title */
	y = cx_header(a, "Working space",
		      "Heap at each program point of the heap-simulator trace, indefinite allocations included");
	s.plot.y = round(y + legend(a, r, y, 1) + 8);
	plot_bottom = a->box.y + a->box.h - (fixed_h(lanes) - cx_header_height(1) - legend_h() - 8);
	s.plot.h = round(plot_bottom - s.plot.y);
	if (s.plot.h < 40)
		s.plot.h = 40;
	ymax = (double)r->peak_heap_bytes * 1.12;
	if (ymax < 16)
		ymax = 16;
	mp_ticks_fit(&yt, MP_AXIS_BYTES, 0, ymax, s.plot.h, 0, a->measure, CX_SMALL);
	left = CX_PAD + cx_ticks_width(a, &yt) + 8;
	s.plot.x = floor(a->box.x + left);
	s.plot.w = floor(a->box.x + a->box.w - CX_PAD - 10 - s.plot.x);
	if (s.plot.w < 16)
		s.plot.w = 16;
	s.xs = (mp_scale_t){0, (double)s.n, s.plot.x, s.plot.x + s.plot.w};
	s.ys = (mp_scale_t){0, ymax, s.plot.y + s.plot.h, s.plot.y};
	band_top = s.plot.y + s.plot.h;
	axis = (mp_box_t){s.plot.x, s.plot.y, s.plot.w, s.plot.h + band_h(lanes)};

	mp_ticks_fit(&xt, MP_AXIS_NUMBER, 0, (double)s.n, s.plot.w, 1, a->measure, CX_SMALL);
	if (xt.step < 1) /* events are whole: a few events get a tick each */
		mp_ticks_nice(&xt, MP_AXIS_NUMBER, 0, (double)s.n, s.n + 1);
	cx_axis_left(a, &s.plot, &yt, &s.ys, 1);
	cx_axis_bottom(a, &axis, &xt, &s.xs, 1);
	cx_text(a, s.plot.x + s.plot.w / 2, axis.y + axis.h + 6 + CX_SMALL * CX_LINE, "program point (heap-simulator event)",
		CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_CENTER, MP_VALIGN_TOP);
	mp_scene_tag(a->scene, mp_scene_rect(a->scene, s.plot.x, s.plot.y, s.plot.w, s.plot.h,
					     &(mp_style_t){MP_NONE, MP_NONE, 0, MP_DASH_SOLID}), "plot");

	st = cx_fill_alpha(MP_COLOR_HEAP, 0x38);
	mp_scene_tag(a->scene, step_path(&s, s.v, 1, &st), "heap-area");
	if (r->indefinite_bytes > 0) {
		double iy = cx_crisp(mp_scale_map(&s.ys, (double)r->indefinite_bytes));
		st = cx_stroke(MP_COLOR_MUTED, 1, MP_DASH_DASHED);
		mp_scene_tag(a->scene, mp_scene_line(a->scene, s.plot.x, iy, s.plot.x + s.plot.w, iy, &st), "indefinite");
	}
	if (memcmp(r->heap_sizes, r->unpadded_heap_sizes, r->n_points * sizeof(int64_t)) != 0) {
		/* (the same curve would be hidden under the heap's: the legend says so) */
		st = cx_stroke(COLOR_UNPADDED, 1.5, MP_DASH_DASHED);
		mp_scene_tag(a->scene, step_path(&s, s.u, 0, &st), "unpadded");
	}
	st = cx_stroke(MP_COLOR_HEAP, 1.5, MP_DASH_SOLID);
	mp_scene_tag(a->scene, step_path(&s, s.v, 0, &st), "heap");
	st = cx_stroke(MP_COLOR_AXIS, 1, MP_DASH_SOLID);
	mp_scene_line(a->scene, s.plot.x, band_top + 0.5, s.plot.x + s.plot.w, band_top + 0.5, &st);

	px = cx_crisp(mp_scale_map(&s.xs, (double)r->peak_position));
	if (px > s.plot.x + s.plot.w - 0.5)
		px = s.plot.x + s.plot.w - 0.5;
	if (lanes)
		lifetimes(&s, band_top, idx, lanes, px, 0);
	st = cx_stroke(MP_COLOR_PEAK, 1, MP_DASH_SOLID);
	mp_scene_tag(a->scene, mp_scene_line(a->scene, px, s.plot.y, px, axis.y + axis.h, &st), "peak-line");
	if (lanes)
		lifetimes(&s, band_top, idx, lanes, px, 1);
	peak_label(&s, px);
	rc = mp_scene_status(a->scene);
out:
	free(s.x);
	free(s.v);
	free(s.u);
	free(s.keep);
	return rc;
}
