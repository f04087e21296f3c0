/* diff.c - `memprof plot --diff A B`: per memory id, both inputs'
 * timelines on one axis (time from each input's first point, or aligned
 * at the first step both have) with their peaks and failed allocations
 * marked, then a diverging bar chart of the largest changes at the
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

/* Where both timelines have steps, they are drawn aligned at the start of
 * the first step both have (its first point in each): the same step's
 * work then lies over the same stretch of the axis, which a program that
 * starts up slower in B would otherwise shift. Else both start at 0. Each
 * series is drawn at time - its first point + shift; the later one's shift
 * is 0. */
typedef struct {
	int by_step;
	int64_t step;
	double shift_a, shift_b, at; /* at: the aligned step's start on the axis */
} align_t;

static int64_t first_step(const mp_solver_device_t *d)
{
	int64_t s = -1;

	for (size_t i = 0; i < d->timeline_count; i++)
		if (d->timeline[i].step >= 0 && (s < 0 || d->timeline[i].step < s))
			s = d->timeline[i].step;
	return s;
}

/* The time of step s's first point from d's first point; -1 when none. */
static double step_start(const mp_solver_device_t *d, int64_t s)
{
	for (size_t i = 0; i < d->timeline_count; i++)
		if (d->timeline[i].step == s)
			return (double)(d->timeline[i].time_ns - d->timeline[0].time_ns);
	return -1;
}

static align_t align(const mp_solver_device_t *a, const mp_solver_device_t *b)
{
	align_t al = {0, -1, 0, 0, 0};
	int64_t sa = first_step(a), sb = first_step(b), s = sa > sb ? sa : sb;
	double da, db;

	if (sa < 0 || sb < 0)
		return al;
	da = step_start(a, s);
	db = step_start(b, s);
	if (da < 0 || db < 0 || (da == 0 && db == 0))
		return al; /* (both start with it: the same as by start) */
	al.by_step = 1;
	al.step = s;
	al.at = da > db ? da : db;
	al.shift_a = al.at - da;
	al.shift_b = al.at - db;
	return al;
}

/* d's x value of time t: from its first point, shifted. */
static double xval(const mp_solver_device_t *d, uint64_t t, double shift)
{
	return (double)(t - d->timeline[0].time_ns) + shift;
}

static double series_end(const mp_solver_device_t *d, double shift)
{
	return d->timeline_count ? xval(d, d->timeline[d->timeline_count - 1].time_ns, shift) : 0;
}

static uint64_t in_use(const mp_solver_point_t *p)
{
	return p->stack_bytes + p->heap_bytes;
}

/* The x value of d's last change of bytes in use by more than least (what
 * the plot can show), or failed allocation. */
static double last_change(const mp_solver_device_t *d, double shift, uint64_t least)
{
	double x = d->timeline_count ? xval(d, d->timeline[0].time_ns, shift) : 0;

	for (size_t i = d->timeline_count; i-- > 1;) {
		uint64_t now = in_use(&d->timeline[i]), before = in_use(&d->timeline[i - 1]);
		if ((now > before ? now - before : before - now) > least) {
			x = xval(d, d->timeline[i].time_ns, shift);
			break;
		}
	}
	for (size_t i = 0; i < d->oom_count; i++)
		if (xval(d, d->oom[i].at.time_ns, shift) > x)
			x = xval(d, d->oom[i].at.time_ns, shift);
	return x;
}

static void series(const mp_chart_area_t *a, const mp_solver_device_t *d, const mp_scale_t *sx, const mp_scale_t *sy,
		   double shift, uint32_t color, char side)
{
	/* a step function: bytes in use hold until the next point (2n - 1 points) */
	size_t n = d->timeline_count ? 2 * d->timeline_count - 1 : 0;
	mp_point_t *pts = calloc(n ? n : 1, sizeof(*pts));
	mp_style_t st = cx_stroke(color, 1.5, MP_DASH_SOLID), mk = cx_fill(color);
	mp_style_t ls = cx_stroke(color, 1, MP_DASH_DOTTED);
	int b = side == 'b'; /* tags are kept by reference: literals */
	long it;

	if (!pts)
		return;
	for (size_t i = 0; i < d->timeline_count; i++) {
		const mp_solver_point_t *p = &d->timeline[i];
		double x = xval(d, p->time_ns, shift);
		pts[2 * i].x = mp_scale_map(sx, x < sx->d1 ? x : sx->d1); /* a flat tail, cut at the axis' end */
		pts[2 * i].y = mp_scale_map(sy, (double)in_use(p));
		if (i) /* the level before this point, up to its time */
			pts[2 * i - 1] = (mp_point_t){pts[2 * i].x, pts[2 * i - 2].y};
	}
	if (n > 1) {
		it = mp_scene_path(a->scene, pts, n, 0, &st);
		mp_scene_tag(a->scene, it, b ? "diff-series-b" : "diff-series-a");
	}
	free(pts);
	if (!d->timeline_count)
		return;
	if (d->has_peak) {
		double x = mp_scale_map(sx, xval(d, d->peak.time_ns, shift));
		double y = mp_scale_map(sy, (double)d->peak_bytes);
		it = mp_scene_rect(a->scene, x - 4, y - 4, 8, 8, &mk);
		mp_scene_tag(a->scene, it, b ? "diff-peak-b" : "diff-peak-a");
	}
	/* failed allocations: a triangle at the top in the input's colour
	 * (A's points down from the top edge, B's sits under it), a dotted
	 * line down while few */
	for (size_t i = 0; i < d->oom_count; i++) {
		double x = mp_scale_map(sx, xval(d, d->oom[i].at.time_ns, shift)), y0 = sy->r1 + (b ? 10 : 0);
		mp_point_t tri[3] = {{x - 5, y0}, {x + 5, y0}, {x, y0 + 9}};
		if (d->oom_count <= 20)
			mp_scene_line(a->scene, x, y0 + 9, x, sy->r0, &ls);
		mp_scene_tag(a->scene, mp_scene_path(a->scene, tri, 3, 1, &mk), b ? "diff-failed-b" : "diff-failed-a");
	}
}

/* The legend's height: a second line when there are more than the two
 * series' entries (the aligned step, failed allocations). */
static double legend_height(const mp_plot_diff_memory_t *m)
{
	return align(m->a, m->b).by_step || m->a->oom_count || m->b->oom_count ? 2 * LEGEND_H : LEGEND_H;
}

static double memory_height(const mp_plot_diff_memory_t *m)
{
	return cx_header_height(1) + PLOT_H + AXIS_H + legend_height(m) + PAD + cx_header_height(0) +
	       ROW_H * (double)(m->nbars ? m->nbars : 1) + PAD;
}

static double timelines(const mp_chart_area_t *a, double y, const mp_plot_diff_memory_t *m)
{
	const mp_solver_device_t *da = m->a, *db = m->b;
	align_t al = align(da, db);
	double ea = series_end(da, al.shift_a), eb = series_end(db, al.shift_b), t1 = ea > eb ? ea : eb;
	double top = (double)(da->peak_bytes > db->peak_bytes ? da->peak_bytes : db->peak_bytes);
	mp_ticks_t ty, tx;
	mp_box_t plot;
	mp_scale_t sx, sy;
	uint64_t least = (da->peak_bytes > db->peak_bytes ? da->peak_bytes : db->peak_bytes) / 100; /* ~2 px */
	double ca = last_change(da, al.shift_a, least), cb = last_change(db, al.shift_b, least), cut = ca > cb ? ca : cb;
	char la[160], lb[160], h[32], ls[64], ta[48], tb[48];
	cx_legend_entry_t e[5];
	size_t ne = 0;

	/* Both flat for the last fifth or more (a program idle after its
	 * work, one event long after): the axis ends soon after the last
	 * change, where the two can be compared, and the legend says how long
	 * each ran. */
	cut = cut * 1.05;
	ta[0] = tb[0] = '\0';
	if (cut > 0 && cut < t1 * 0.8) {
		if (ea > cut && !m->index_time)
			snprintf(ta, sizeof(ta), ", flat until %s", mp_fmt_time(h, sizeof(h), (uint64_t)ea));
		if (eb > cut && !m->index_time)
			snprintf(tb, sizeof(tb), ", flat until %s", mp_fmt_time(h, sizeof(h), (uint64_t)eb));
		if (ea > cut && m->index_time)
			snprintf(ta, sizeof(ta), ", flat until entry %.0f", ea);
		if (eb > cut && m->index_time)
			snprintf(tb, sizeof(tb), ", flat until entry %.0f", eb);
		t1 = cut;
	}
	/* one much shorter than the other (an unrelated pair, a run cut
	 * short): its line is squeezed at the left; the legend says so */
	if (!ta[0] && ea <= 0 && t1 > 0)
		snprintf(ta, sizeof(ta), ", all at one instant");
	else if (!ta[0] && ea < t1 * 0.1 && m->index_time)
		snprintf(ta, sizeof(ta), ", all within the first %.0f entries", ea);
	else if (!ta[0] && ea < t1 * 0.1)
		snprintf(ta, sizeof(ta), ", all within the first %s", mp_fmt_time(h, sizeof(h), (uint64_t)ea));
	if (!tb[0] && eb <= 0 && t1 > 0)
		snprintf(tb, sizeof(tb), ", all at one instant");
	else if (!tb[0] && eb < t1 * 0.1 && m->index_time)
		snprintf(tb, sizeof(tb), ", all within the first %.0f entries", eb);
	else if (!tb[0] && eb < t1 * 0.1)
		snprintf(tb, sizeof(tb), ", all within the first %s", mp_fmt_time(h, sizeof(h), (uint64_t)eb));
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
	if (al.by_step) { /* the aligned step's start: one line for both */
		mp_style_t ss = cx_stroke(MP_COLOR_STEP, 1, MP_DASH_DASHED);
		double x = cx_crisp(mp_scale_map(&sx, al.at));
		mp_scene_tag(a->scene, mp_scene_line(a->scene, x, plot.y, x, plot.y + plot.h, &ss), "diff-step-align");
		snprintf(ls, sizeof(ls), "step %" PRId64 " starts (both aligned here)", al.step);
	}
	series(a, da, &sx, &sy, al.shift_a, COLOR_A, 'a');
	series(a, db, &sx, &sy, al.shift_b, COLOR_B, 'b');
	snprintf(la, sizeof(la), "A %s: peak %s%s", m->name_a, mp_fmt_bytes(h, sizeof(h), da->peak_bytes), ta);
	snprintf(lb, sizeof(lb), "B %s: peak %s%s", m->name_b, mp_fmt_bytes(h, sizeof(h), db->peak_bytes), tb);
	e[ne++] = (cx_legend_entry_t){la, COLOR_A, CX_KEY_LINE};
	e[ne++] = (cx_legend_entry_t){lb, COLOR_B, CX_KEY_LINE};
	if (al.by_step)
		e[ne++] = (cx_legend_entry_t){ls, MP_COLOR_STEP, CX_KEY_TICK};
	if (da->oom_count)
		e[ne++] = (cx_legend_entry_t){"A failed allocation", COLOR_A, CX_KEY_MARK};
	if (db->oom_count)
		e[ne++] = (cx_legend_entry_t){"B failed allocation", COLOR_B, CX_KEY_MARK};
	cx_legend(a, plot.x, plot.y + plot.h + AXIS_H, plot.w, e, ne, 1);
	return plot.y + plot.h + AXIS_H + legend_height(m) + PAD;
}

static void bars(const mp_chart_area_t *a, double y, const mp_plot_diff_memory_t *m)
{
	double label_w = a->box.w * 0.38, value_w = 130, x0 = a->box.x + label_w + 8;
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
		snprintf(h, sizeof(h), "%s%s%s%s", b->change_bytes < 0 ? "-" : "+", mp_fmt_bytes(v_s, sizeof(v_s), v),
			 b->kind ? " " : "", b->kind ? b->kind : "");
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
