/* diff.c - `memprof plot --diff A B`: per memory id, both inputs'
 * timelines on one axis (time from each input's first point) with their
 * peaks marked, then a diverging bar chart of the largest changes at the
 * peak: growth to the right, shrinkage to the left of one zero line. */
#include "charts_impl.h"

#include <memprof/plot.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAD 16.0
#define PLOT_H 240.0
#define AXIS_H 22.0
#define LEGEND_H 22.0
#define ROW_H 22.0
#define BAR_H 14.0
#define COLOR_A 0x0072B2    /* blue */
#define COLOR_B 0xE69F00    /* orange */
#define COLOR_GROWN 0xD55E00 /* vermillion */
#define COLOR_SHRUNK 0x009E73 /* bluish green */

static double memory_height(const mp_plot_diff_memory_t *m)
{
	return cx_header_height(1) + PLOT_H + AXIS_H + LEGEND_H + PAD + cx_header_height(0) +
	       ROW_H * (double)(m->nbars ? m->nbars : 1) + PAD;
}

static double series_end(const mp_solver_device_t *d)
{
	return d->timeline_count ? (double)(d->timeline[d->timeline_count - 1].time_ns - d->timeline[0].time_ns) : 0;
}

static void series(const mp_chart_area_t *a, const mp_solver_device_t *d, const mp_scale_t *sx, const mp_scale_t *sy,
		   uint32_t color, const char *tag, const char *peak_tag)
{
	mp_point_t *pts = calloc(d->timeline_count ? d->timeline_count : 1, sizeof(*pts));
	mp_style_t st = cx_stroke(color, 1.5, MP_DASH_SOLID), mk = cx_fill(color);
	long it;

	if (!pts)
		return;
	for (size_t i = 0; i < d->timeline_count; i++) {
		const mp_solver_point_t *p = &d->timeline[i];
		pts[i].x = mp_scale_map(sx, (double)(p->time_ns - d->timeline[0].time_ns));
		pts[i].y = mp_scale_map(sy, (double)(p->stack_bytes + p->heap_bytes));
	}
	if (d->timeline_count > 1) {
		it = mp_scene_path(a->scene, pts, d->timeline_count, 0, &st);
		mp_scene_tag(a->scene, it, tag);
	}
	free(pts);
	if (d->has_peak && d->timeline_count) {
		double x = mp_scale_map(sx, (double)(d->peak.time_ns - d->timeline[0].time_ns));
		double y = mp_scale_map(sy, (double)d->peak_bytes);
		it = mp_scene_rect(a->scene, x - 4, y - 4, 8, 8, &mk);
		mp_scene_tag(a->scene, it, peak_tag);
	}
}

static double timelines(const mp_chart_area_t *a, double y, const mp_plot_diff_memory_t *m)
{
	const mp_solver_device_t *da = m->a, *db = m->b;
	double t1 = series_end(da) > series_end(db) ? series_end(da) : series_end(db);
	double top = (double)(da->peak_bytes > db->peak_bytes ? da->peak_bytes : db->peak_bytes);
	mp_ticks_t ty, tx;
	mp_box_t plot;
	mp_scale_t sx, sy;
	char la[96], lb[96], h[32];

	if (t1 <= 0)
		t1 = 1;
	if (top <= 0)
		top = 1;
	top *= 1.08;
	if (mp_ticks_fit(&ty, MP_AXIS_BYTES, 0, top, PLOT_H, 0, a->measure, 11) < 0)
		ty.count = 0;
	plot.x = a->box.x + cx_ticks_width(a, &ty) + 10;
	plot.y = y;
	plot.w = a->box.x + a->box.w - plot.x - PAD;
	plot.h = PLOT_H;
	if (mp_ticks_fit(&tx, m->index_time ? MP_AXIS_INTEGER : MP_AXIS_TIME_NS, 0, t1, plot.w, 1, a->measure, 11) < 0)
		tx.count = 0;
	sx = (mp_scale_t){0, t1, plot.x, plot.x + plot.w};
	sy = (mp_scale_t){0, top, plot.y + plot.h, plot.y};
	cx_axis_left(a, &plot, &ty, &sy, 1);
	cx_axis_bottom(a, &plot, &tx, &sx, 0);
	series(a, da, &sx, &sy, COLOR_A, "diff-series-a", "diff-peak-a");
	series(a, db, &sx, &sy, COLOR_B, "diff-series-b", "diff-peak-b");
	snprintf(la, sizeof(la), "A %s: peak %s", m->name_a, mp_fmt_bytes(h, sizeof(h), da->peak_bytes));
	snprintf(lb, sizeof(lb), "B %s: peak %s", m->name_b, mp_fmt_bytes(h, sizeof(h), db->peak_bytes));
	cx_legend_entry_t e[2] = {{la, COLOR_A, CX_KEY_LINE}, {lb, COLOR_B, CX_KEY_LINE}};
	cx_legend(a, plot.x, plot.y + plot.h + AXIS_H, plot.w, e, 2, 1);
	return plot.y + plot.h + AXIS_H + LEGEND_H + PAD;
}

static void bars(const mp_chart_area_t *a, double y, const mp_plot_diff_memory_t *m)
{
	double label_w = a->box.w * 0.38, value_w = 90, x0 = a->box.x + label_w + 8;
	double half = (a->box.x + a->box.w - value_w - x0) / 2, mid = x0 + half;
	uint64_t most = 1;
	mp_style_t axis = cx_stroke(MP_COLOR_AXIS, 1, MP_DASH_SOLID);
	char h[48], v_s[32];

	for (size_t i = 0; i < m->nbars; i++) {
		uint64_t v = m->bars[i].change_bytes < 0 ? (uint64_t)0 - (uint64_t)m->bars[i].change_bytes
							   : (uint64_t)m->bars[i].change_bytes;
		most = v > most ? v : most;
	}
	if (!m->nbars) {
		cx_text(a, a->box.x, y + ROW_H / 2, "no change in what was live at the peak", 12, 0, MP_COLOR_MUTED,
			MP_ALIGN_LEFT, MP_VALIGN_MIDDLE);
		return;
	}
	mp_scene_line(a->scene, cx_crisp(mid), y, cx_crisp(mid), y + ROW_H * (double)m->nbars, &axis);
	for (size_t i = 0; i < m->nbars; i++) {
		const mp_plot_diff_bar_t *b = &m->bars[i];
		uint64_t v = b->change_bytes < 0 ? (uint64_t)0 - (uint64_t)b->change_bytes : (uint64_t)b->change_bytes;
		double len = half * (double)v / (double)most, cy = y + ROW_H * (double)i + ROW_H / 2;
		double bx = b->change_bytes < 0 ? mid - len : mid;
		mp_style_t fill = cx_fill(b->change_bytes < 0 ? COLOR_SHRUNK : COLOR_GROWN);
		long it;

		cx_text_fit(a, a->box.x, cy, b->label[0] ? b->label : "(no op)", label_w, 11, 0, MP_COLOR_TEXT,
			    MP_ALIGN_LEFT, MP_VALIGN_MIDDLE, MP_ELLIPSIS_MIDDLE);
		it = mp_scene_rect(a->scene, bx, cy - BAR_H / 2, len < 1 ? 1 : len, BAR_H, &fill);
		mp_scene_tag(a->scene, it, b->change_bytes < 0 ? "diff-bar-shrunk" : "diff-bar-grown");
		snprintf(h, sizeof(h), "%s%s", b->change_bytes < 0 ? "-" : "+", mp_fmt_bytes(v_s, sizeof(v_s), v));
		{ /* the hover's: the full name (the label may be shortened) and the exact change */
			size_t nn = strlen(b->label) + 96;
			char *note = malloc(nn);
			if (note) {
				snprintf(note, nn, "%s\nchange at the peak: %s%" PRIu64 " B (%s)", b->label[0] ? b->label : "(no op)",
					 b->change_bytes < 0 ? "-" : "+", v, h);
				mp_scene_note(a->scene, it, note, (uint32_t)i);
				free(note);
			}
		}
		if (b->change_bytes < 0) /* right of the zero line, where a shrinking row has room */
			cx_text(a, mid + 4, cy, h, 11, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT, MP_VALIGN_MIDDLE);
		else
			cx_text(a, bx + len + 4, cy, h, 11, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT, MP_VALIGN_MIDDLE);
	}
}

int mp_plot_diff(mp_scene_t **out, const mp_plot_diff_memory_t *mem, size_t n, double width,
		 const mp_text_measure_t *measure, mp_diag_t *diag)
{
	double height = PAD, y = PAD;
	mp_scene_t *s;

	*out = NULL;
	if (width <= 0)
		width = 1200;
	if (width < MP_PLOT_MIN_WIDTH) {
		mp_diag_set(diag, MP_EUSAGE, -1, -1, "the picture is %.0f px wide; the charts need %d", width,
			    (int)MP_PLOT_MIN_WIDTH);
		return MP_EUSAGE;
	}
	if (!n) {
		mp_diag_set(diag, MP_ENODATA, -1, -1, "no memory id in both inputs to draw");
		return MP_ENODATA;
	}
	for (size_t i = 0; i < n; i++)
		height += memory_height(&mem[i]) + PAD;
	if (!(s = mp_scene_new(width, height, MP_RGB(MP_COLOR_BACKGROUND))))
		return MP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		mp_chart_area_t a = {s, measure, {PAD, y, width - 2 * PAD, memory_height(&mem[i])}};
		char sub[256], h1[32], h2[32], h3[32];
		int64_t c = (int64_t)(mem[i].b->peak_bytes - mem[i].a->peak_bytes);
		uint64_t mc = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;

		snprintf(sub, sizeof(sub), "peak %s -> %s: %s%s%s", mp_fmt_bytes(h1, sizeof(h1), mem[i].a->peak_bytes),
			 mp_fmt_bytes(h2, sizeof(h2), mem[i].b->peak_bytes), c < 0 ? "-" : c > 0 ? "+" : "",
			 mp_fmt_bytes(h3, sizeof(h3), mc), c ? "" : " (no change)");
		double yy = cx_header(&a, mem[i].title, sub);
		yy = timelines(&a, yy, &mem[i]);
		a.box.y = yy;
		yy = cx_header(&a, "largest changes at the peak (B - A)", NULL);
		bars(&a, yy, &mem[i]);
		y += memory_height(&mem[i]) + PAD;
	}
	if (mp_scene_status(s) < 0) {
		mp_scene_free(s);
		return MP_ENOMEM;
	}
	*out = s;
	return 0;
}
