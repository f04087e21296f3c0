/* timeline.c - the memory timeline of one memory id: what was in use over
 * time, where the peak was and what made it, when allocations failed, how
 * fragmented the free space was.
 *
 * The solver's timeline is already bounded (each point the highest of its
 * bucket, the peak among them); here each series is cut once more to what
 * each pixel column of the plot shows (mp_series_columns: memory holds its
 * value until the next event, and a column's highest value is kept), so
 * the peak drawn is the peak reported and the picture's size follows its
 * width, whatever the capture's length. */
#include "charts_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tl {
	const mp_chart_area_t *a;
	const mp_solver_device_t *d;
	mp_box_t plot;
	mp_scale_t sx, sy, sf;
	size_t ncol;               /* pixel columns of the plot */
	mp_column_range_t *use;    /* per column: stack + heap */
	mp_column_range_t *top;    /* per column: stack + heap + free */
	mp_column_range_t *stack;  /* per column: stack */
	mp_column_range_t *frag;   /* per column: fragmentation */
	int has_stack, has_free, has_frag, show_steps;
	int off_scale; /* the capacity is far above what was used: free is cut at the top */
	size_t nsteps; /* step boundaries seen */
	uint64_t ymax;
	uint64_t used;             /* the most in use at any point */
} tl_t;

static uint64_t in_use(const mp_solver_point_t *p)
{
	return p->stack_bytes + p->heap_bytes;
}

static uint64_t free_top(const mp_solver_point_t *p)
{
	return in_use(p) + (p->has_free ? p->free_bytes : 0);
}

static double px(const tl_t *t, uint64_t time_ns)
{
	return mp_scale_map(&t->sx, (double)time_ns);
}

/* y of a byte count, cut at the plot's top (free above the scale). */
static double py(const tl_t *t, double bytes)
{
	double y = floor(mp_scale_map(&t->sy, bytes) * 2 + 0.5) / 2;

	return y < t->plot.y ? t->plot.y : y;
}

/* An area from the axis up to each column's highest value: one point pair
 * per run of equal heights, so its size follows the plot's width, never
 * the number of events. */
static int column_area(tl_t *t, const mp_column_range_t *col, uint32_t color, const char *tag)
{
	mp_point_t *pts = malloc((2 * t->ncol + 4) * sizeof(*pts));
	mp_style_t st = cx_fill(color);
	double bottom = t->plot.y + t->plot.h, x0 = floor(t->plot.x);
	size_t k = 0;

	if (!pts)
		return MP_ENOMEM;
	pts[k++] = (mp_point_t){x0, bottom};
	for (size_t c = 0; c < t->ncol; c++) {
		double y = col[c].has ? py(t, col[c].hi) : bottom;
		if (k >= 2 && pts[k - 1].y == y) {
			pts[k - 1].x = x0 + (double)c + 1; /* the run goes on */
			continue;
		}
		pts[k++] = (mp_point_t){x0 + (double)c, y};
		pts[k++] = (mp_point_t){x0 + (double)c + 1, y};
	}
	pts[k++] = (mp_point_t){x0 + (double)t->ncol, bottom};
	mp_scene_tag(t->a->scene, mp_scene_path(t->a->scene, pts, k, 1, &st), tag);
	free(pts);
	return 0;
}

/* Fragmentation on the right axis: each column's range as a vertical
 * stroke, joined, broken where it is unknown. */
static int fragmentation_line(tl_t *t)
{
	mp_point_t *pts = malloc((2 * t->ncol + 2) * sizeof(*pts));
	mp_style_t st = cx_stroke(MP_COLOR_FRAGMENTATION, 1.6, MP_DASH_SOLID);
	double x0 = floor(t->plot.x) + 0.5;
	size_t k = 0;

	if (!pts)
		return MP_ENOMEM;
	for (size_t c = 0; c <= t->ncol; c++) {
		const mp_column_range_t *r = c < t->ncol ? &t->frag[c] : NULL;
		if (!r || !r->has) {
			if (k > 1)
				mp_scene_tag(t->a->scene, mp_scene_path(t->a->scene, pts, k, 0, &st), "fragmentation");
			k = 0;
			continue;
		}
		double lo = floor(mp_scale_map(&t->sf, r->lo) * 2 + 0.5) / 2;
		double hi = floor(mp_scale_map(&t->sf, r->hi) * 2 + 0.5) / 2;
		/* from the end nearer the previous point, to keep the line short */
		int flip = k && fabs(pts[k - 1].y - hi) < fabs(pts[k - 1].y - lo);
		if (k && pts[k - 1].y == lo && lo == hi) {
			pts[k - 1].x = x0 + (double)c; /* a flat run */
			if (k >= 2 && pts[k - 2].y == lo)
				continue;
		}
		pts[k++] = (mp_point_t){x0 + (double)c, flip ? hi : lo};
		if (hi != lo)
			pts[k++] = (mp_point_t){x0 + (double)c, flip ? lo : hi};
	}
	free(pts);
	return 0;
}

/* The timeline reduced to the plot's columns, once per series. */
static int columns(tl_t *t, uint64_t t0, uint64_t t1)
{
	const mp_solver_device_t *d = t->d;
	size_t n = d->timeline_count;
	/* x, the three layers (stack, heap, free), their stacked tops, and
	 * fragmentation: 8 series of n */
	double *buf = malloc(8 * (n ? n : 1) * sizeof(*buf));
	double *x = buf, *layer = buf + n, *tops = buf + 4 * n, *frag = buf + 7 * n;
	const double *layers[3] = {layer, layer + n, layer + 2 * n};
	mp_column_range_t **out[4] = {&t->stack, &t->use, &t->top, &t->frag};

	t->ncol = (size_t)t->plot.w;
	for (int s = 0; s < 4; s++)
		*out[s] = calloc(t->ncol ? t->ncol : 1, sizeof(mp_column_range_t));
	if (!buf || !t->use || !t->top || !t->stack || !t->frag) {
		free(buf);
		return MP_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const mp_solver_point_t *p = &d->timeline[i];
		x[i] = (double)p->time_ns;
		layer[i] = (double)p->stack_bytes;
		layer[n + i] = (double)p->heap_bytes;
		layer[2 * n + i] = p->has_free ? (double)p->free_bytes : 0;
		frag[i] = p->fragmentation;
	}
	mp_series_stack(layers, 3, n, tops); /* stack; stack + heap; + free */
	for (int s = 0; s < 3; s++)
		mp_series_columns(x, tops + (size_t)s * n, n, (double)t0, (double)t1, t->ncol, *out[s]);
	mp_series_columns(x, frag, n, (double)t0, (double)t1, t->ncol, t->frag);
	free(buf);
	return 0;
}

/* The steps as a lane over the plot, one shaded span per step, numbered
 * where the number fits, and a light line down the plot where each
 * starts (while there are few enough to tell apart). */
#define LANE_H 15.0

static void step_lane(tl_t *t)
{
	const mp_solver_point_t *p = t->d->timeline;
	size_t n = t->d->timeline_count, start = 0, shade = 0;
	double lane_y = t->plot.y - LANE_H - 3;
	mp_style_t line = cx_stroke(MP_COLOR_STEP, 1, MP_DASH_DOTTED);

	for (size_t i = 1; i <= n; i++) {
		if (i < n && (p[i].step == p[start].step || p[i].step < 0))
			continue;
		double x0 = i == 1 || start == 0 ? t->plot.x : px(t, p[start].time_ns);
		double x1 = i < n ? px(t, p[i].time_ns) : t->plot.x + t->plot.w;
		if (p[start].step >= 0 && x1 > x0) {
			mp_style_t fill = cx_fill(shade++ % 2 ? 0xE4E4E4 : 0xF1F1F1);
			char num[32], label[40];
			mp_scene_rect(t->a->scene, x0, lane_y, x1 - x0, LANE_H, &fill);
			snprintf(num, sizeof(num), "%" PRId64, p[start].step);
			snprintf(label, sizeof(label), "step %s", num);
			if (cx_width(t->a, label, CX_TINY, 0) + 4 <= x1 - x0)
				cx_text(t->a, (x0 + x1) / 2, lane_y + LANE_H / 2, label, CX_TINY, 0, MP_COLOR_MUTED,
					MP_ALIGN_CENTER, MP_VALIGN_MIDDLE);
			else if (cx_width(t->a, num, CX_TINY, 0) + 2 <= x1 - x0)
				cx_text(t->a, (x0 + x1) / 2, lane_y + LANE_H / 2, num, CX_TINY, 0, MP_COLOR_MUTED,
					MP_ALIGN_CENTER, MP_VALIGN_MIDDLE);
		}
		if (start > 0 && t->nsteps <= 40) {
			double x = cx_crisp(px(t, p[start].time_ns));
			mp_scene_tag(t->a->scene, mp_scene_line(t->a->scene, x, t->plot.y, x, t->plot.y + t->plot.h, &line),
				     "step-tick");
		}
		start = i;
	}
}

static size_t count_steps(const mp_solver_device_t *d)
{
	size_t n = 0;

	for (size_t i = 1; i < d->timeline_count; i++)
		n += d->timeline[i].step != d->timeline[i - 1].step && d->timeline[i].step >= 0;
	return n;
}

/* The largest live group's op at the peak: what made it. */
static const char *top_op(const mp_chart_memory_t *mem)
{
	const mp_solver_device_t *d = mem->dev;

	if (!d->has_breakdown || !d->breakdown_count)
		return "";
	if (d->breakdown[0].unknown_origin)
		return "(in use before the capture)";
	return d->breakdown[0].op ? mp_source_string(mem->source, d->breakdown[0].op) : "";
}

static double legend(const tl_t *t, double x, double y, double w, int draw)
{
	cx_legend_entry_t e[8];
	size_t n = 0;

	if (t->has_stack)
		e[n++] = (cx_legend_entry_t){"stack (reserved)", MP_COLOR_STACK, CX_KEY_BOX};
	e[n++] = (cx_legend_entry_t){t->has_stack ? "heap (allocated)" : "in use (live allocations)", MP_COLOR_HEAP, CX_KEY_BOX};
	if (t->has_free)
		e[n++] = (cx_legend_entry_t){t->off_scale ? "free (up to the capacity, above the scale)" : "free",
					     MP_COLOR_FREE, CX_KEY_BOX};
	if (t->has_frag)
		e[n++] = (cx_legend_entry_t){"fragmentation (right axis)", MP_COLOR_FRAGMENTATION, CX_KEY_LINE};
	if (t->d->capacity_bytes && !t->off_scale)
		e[n++] = (cx_legend_entry_t){"capacity", MP_COLOR_TEXT, CX_KEY_DASH};
	e[n++] = (cx_legend_entry_t){"peak", MP_COLOR_PEAK, CX_KEY_LINE};
	if (t->d->oom_count)
		e[n++] = (cx_legend_entry_t){"failed allocation", MP_COLOR_OOM, CX_KEY_MARK};
	if (t->show_steps && t->nsteps <= 40)
		e[n++] = (cx_legend_entry_t){"step start", MP_COLOR_STEP, CX_KEY_TICK};
	return cx_legend(t->a, x, y, w, e, n, draw);
}

/* A two-line label (bold first line) in a white box; returns the box size. */
static void label_size(const mp_chart_area_t *a, const char *l1, const char *l2, double *w, double *h)
{
	double w1 = cx_width(a, l1, CX_TEXT, 1), w2 = l2[0] ? cx_width(a, l2, CX_SMALL, 0) : 0;

	*w = (w1 > w2 ? w1 : w2) + 8;
	*h = CX_TEXT * CX_LINE + (l2[0] ? CX_SMALL * CX_LINE : 0) + 4;
}

static void draw_label(const mp_chart_area_t *a, const mp_box_t *b, const char *l1, const char *l2, uint32_t color,
		       const char *tag)
{
	mp_style_t bg = {MP_RGBA(0xFFFFFF, 0xE6), MP_NONE, 0, 0};
	long item;

	mp_scene_rect(a->scene, b->x, b->y, b->w, b->h, &bg);
	item = cx_text_fit(a, b->x + 4, b->y + 2, l1, b->w - 8, CX_TEXT, 1, color, MP_ALIGN_LEFT, MP_VALIGN_TOP,
			   MP_ELLIPSIS_END);
	mp_scene_tag(a->scene, item, tag);
	if (l2[0])
		cx_text_fit(a, b->x + 4, b->y + 2 + CX_TEXT * CX_LINE, l2, b->w - 8, CX_SMALL, 0, MP_COLOR_TEXT,
			    MP_ALIGN_LEFT, MP_VALIGN_TOP, MP_ELLIPSIS_END);
}

/* Where a label at anchor x may go: beside the line, at the top first,
 * never over the line while a place beside it is free. */
static void candidates(mp_label_t *l, double x, const mp_box_t *plot, double y_hint)
{
	double top = plot->y + 4, mid = y_hint - l->h / 2;

	l->cand[0] = (mp_box_t){x + 6, top, 0, 0};
	l->cand[1] = (mp_box_t){x - 6 - l->w, top, 0, 0};
	l->cand[2] = (mp_box_t){x + 6, top + l->h + 4, 0, 0};
	l->cand[3] = (mp_box_t){x - 6 - l->w, top + l->h + 4, 0, 0};
	l->cand[4] = (mp_box_t){x + 6, mid, 0, 0};
	l->cand[5] = (mp_box_t){x - 6 - l->w, mid, 0, 0};
	/* last, a line too near an edge for either side: against the edge */
	l->cand[6] = (mp_box_t){plot->x + plot->w - l->w, top, 0, 0};
	l->cand[7] = (mp_box_t){plot->x, top, 0, 0};
	l->ncand = 8;
}

/* Whether the label box b would hide what is in use (the heap and stack
 * area's top in any column under it). */
static int covers_use(const tl_t *t, const mp_box_t *b)
{
	long c0 = (long)floor(b->x - t->plot.x), c1 = (long)ceil(b->x + b->w - t->plot.x);

	for (long c = c0 < 0 ? 0 : c0; c < c1 && c < (long)t->ncol; c++)
		if (t->use[c].has && mp_scale_map(&t->sy, t->use[c].hi) < b->y + b->h)
			return 1;
	return 0;
}

/* Place the labels; when the peak's label can only go over the data (a
 * peak near the plot's edge, a short panel among many), raise the top of
 * the y scale so that the band at the top, where it goes first, is clear
 * of what was in use, and place them again. Returns the number placed, or
 * MP_ENOMEM. */
static long place_labels(tl_t *t, mp_ticks_t *ty, mp_label_t *labels, size_t n)
{
	const mp_chart_area_t *a = t->a;
	double need, top;
	long rc = mp_labels_place(labels, n, &t->plot, NULL, 0, 3);

	if (rc < 0 || !n || !labels[0].placed || !covers_use(t, &labels[0].box))
		return rc;
	need = labels[0].h + 12; /* the top candidates' offset, the label, a gap */
	if (need > t->plot.h * 0.5)
		return rc; /* a plot this short: better over the data than no data */
	top = (double)t->used * t->plot.h / (t->plot.h - need);
	if (top <= t->sy.d1)
		return rc;
	t->sy.d1 = top;
	if ((rc = mp_ticks_fit(ty, MP_AXIS_BYTES, 0, top, t->plot.h, 0, a->measure, CX_SMALL)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		labels[i].placed = 0;
	return mp_labels_place(labels, n, &t->plot, NULL, 0, 3);
}

int mp_chart_timeline(const mp_chart_area_t *a, const mp_chart_memory_t *mem)
{
	const mp_solver_device_t *d = mem->dev;
	char title[512], sub[512], b1[64], b2[64], b3[64], b4[64], steps[32];
	char l1[160], l2[512], o1[160], o2[160];
	mp_label_t labels[2];
	size_t nlabels = 0;
	mp_ticks_t ty, tx, tf;
	double top, left_w, right_w;
	uint64_t t0, t1;
	tl_t t;
	int rc = 0;

	memset(&t, 0, sizeof(t));
	t.a = a;
	t.d = d;
	if (!d->has_peak || !d->timeline_count)
		return MP_ENODATA;
	{
		uint64_t used = d->peak_bytes, all = d->capacity_bytes;
		for (size_t i = 0; i < d->timeline_count; i++) {
			const mp_solver_point_t *p = &d->timeline[i];
			t.has_stack |= p->stack_bytes != 0;
			t.has_free |= p->has_free && p->free_bytes;
			t.has_frag |= !isnan(p->fragmentation);
			if (in_use(p) > used)
				used = in_use(p);
			if (free_top(p) > all)
				all = free_top(p);
		}
		/* 144 GiB of capacity would flatten a 432 MiB peak into the axis:
		 * beyond 4x, the scale follows what was used and free is cut */
		t.used = used;
		t.off_scale = all > 4 * used;
		t.ymax = t.off_scale ? used + used / 4 : all;
	}
	t.nsteps = count_steps(d);

	/* header */
	if (d->capacity_bytes)
		snprintf(title, sizeof(title), "%s, capacity %s", mem->title, mp_fmt_bytes(b1, sizeof(b1), d->capacity_bytes));
	else
		snprintf(title, sizeof(title), "%s", mem->title);
	steps[0] = '\0';
	if (d->peak.step >= 0)
		snprintf(steps, sizeof(steps), ", step %" PRId64, d->peak.step);
	snprintf(sub, sizeof(sub), "peak %s at %s%s · %s allocations, %s failed%s", mp_fmt_bytes_exact(b1, sizeof(b1), d->peak_bytes),
		 mp_fmt_time(b2, sizeof(b2), d->peak.time_ns), steps, mp_fmt_count(b3, sizeof(b3), d->allocations),
		 mp_fmt_count(b4, sizeof(b4), d->failed_allocations),
		 d->oom_total > d->oom_count ? " (the first 1000 marked)" : "");
	top = cx_header(a, title, sub);

	/* axes: the y ticks decide the left margin */
	if ((rc = mp_ticks_fit(&ty, MP_AXIS_BYTES, 0, (double)t.ymax * 1.04 + 1, a->box.h * 0.6, 0, a->measure, CX_SMALL)) < 0)
		return rc;
	left_w = cx_ticks_width(a, &ty) + 10;
	right_w = 0;
	if (t.has_frag) {
		mp_ticks_nice(&tf, MP_AXIS_PERCENT, 0, 100, 6);
		right_w = cx_ticks_width(a, &tf) + 10;
	}
	t.plot.x = a->box.x + CX_PAD + left_w;
	t.plot.w = a->box.w - 2 * CX_PAD - left_w - right_w;
	t.show_steps = t.nsteps > 0 && (double)t.nsteps <= t.plot.w / 4; /* before the legend: it has an entry */
	t.plot.y = top + legend(&t, a->box.x + CX_PAD, top, a->box.w - 2 * CX_PAD, 0) + 8;
	t.plot.h = a->box.y + a->box.h - CX_PAD - CX_SMALL * CX_LINE - 8 - t.plot.y;
	if (t.plot.w < 50 || t.plot.h < 40)
		return MP_EUSAGE;
	legend(&t, a->box.x + CX_PAD, top, a->box.w - 2 * CX_PAD, 1);
	if (t.show_steps) { /* room for the lane of steps over the plot */
		t.plot.y += LANE_H + 4;
		t.plot.h -= LANE_H + 4;
	}

	/* this memory id's points, within the axis its input's others share
	 * (a PyTorch snapshot's reserved segments, all made at the start,
	 * on the same 85 µs as the blocks inside them; the last value is
	 * held to the end, as the series is a step function) */
	t0 = d->timeline[0].time_ns;
	t1 = d->timeline[d->timeline_count - 1].time_ns;
	if (mem->t1_ns > mem->t0_ns) {
		t0 = mem->t0_ns < t0 ? mem->t0_ns : t0;
		t1 = mem->t1_ns > t1 ? mem->t1_ns : t1;
	}
	if (t1 <= t0) { /* one instant: a microsecond around it */
		t0 = t0 > 500 ? t0 - 500 : 0;
		t1 = t0 + 1000;
	}
	t.sx = (mp_scale_t){(double)t0, (double)t1, t.plot.x, t.plot.x + t.plot.w};
	if ((rc = mp_ticks_fit(&ty, MP_AXIS_BYTES, 0, (double)t.ymax * 1.04 + 1, t.plot.h, 0, a->measure, CX_SMALL)) < 0 ||
	    (rc = mp_ticks_fit(&tx, MP_AXIS_TIME_NS, (double)t0, (double)t1, t.plot.w, 1, a->measure, CX_SMALL)) < 0)
		return rc;
	t.sy = (mp_scale_t){0, (double)t.ymax * 1.04 + 1, t.plot.y + t.plot.h, t.plot.y};
	t.sf = (mp_scale_t){0, 1, t.plot.y + t.plot.h, t.plot.y};
	if (t.has_frag) {
		mp_ticks_fit(&tf, MP_AXIS_PERCENT, 0, 100, t.plot.h, 0, a->measure, CX_SMALL);
		for (size_t i = 0; i < tf.count; i++)
			tf.value[i] /= 100; /* the right axis maps 0..1 */
	}

	/* each series reduced to the plot's pixel columns */
	if ((rc = columns(&t, t0, t1)) < 0)
		goto out;

	/* the labels of the peak and of the first failed allocation, placed
	 * before anything is painted: the scale may have to make room */
	{
		double x = cx_crisp(px(&t, d->peak.time_ns)), y = mp_scale_map(&t.sy, (double)d->peak_bytes);
		const char *op = top_op(mem);
		snprintf(l1, sizeof(l1), "peak %s", mp_fmt_bytes_exact(b1, sizeof(b1), d->peak_bytes));
		snprintf(l2, sizeof(l2), "%s%s%s%s", mp_fmt_time(b2, sizeof(b2), d->peak.time_ns), steps, op[0] ? " · " : "", op);
		{
			char fit[512];
			mp_text_fit(a->measure, l2, CX_SMALL, 0, t.plot.w * 0.45, MP_ELLIPSIS_MIDDLE, fit, sizeof(fit));
			snprintf(l2, sizeof(l2), "%s", fit);
		}
		memset(&labels[0], 0, sizeof(labels[0]));
		label_size(a, l1, l2, &labels[0].w, &labels[0].h);
		candidates(&labels[0], x, &t.plot, y);
		labels[0].priority = 10;
		nlabels = 1;
	}
	if (d->oom_count) {
		const mp_solver_oom_t *o = &d->oom[0];
		double x = px(&t, o->at.time_ns);
		snprintf(o1, sizeof(o1), "failed: %s asked", mp_fmt_bytes(b1, sizeof(b1), o->requested_bytes));
		if (d->oom_total > 1)
			snprintf(o1 + strlen(o1), sizeof(o1) - strlen(o1), " (1 of %" PRIu64 ")", d->oom_total);
		snprintf(o2, sizeof(o2), "at %s%s%s", mp_fmt_time(b2, sizeof(b2), o->at.time_ns),
			 o->op ? ", op " : "", o->op ? mp_source_string(mem->source, o->op) : "");
		memset(&labels[1], 0, sizeof(labels[1]));
		label_size(a, o1, o2, &labels[1].w, &labels[1].h);
		candidates(&labels[1], x, &t.plot, t.plot.y + t.plot.h / 2);
		labels[1].priority = 5;
		nlabels = 2;
	}
	if ((rc = (int)place_labels(&t, &ty, labels, nlabels)) < 0)
		goto out;
	rc = 0;

	cx_axis_left(a, &t.plot, &ty, &t.sy, 1);
	cx_axis_bottom(a, &t.plot, &tx, &t.sx, 0);
	if (t.has_frag)
		cx_axis_right(a, &t.plot, &tf, &t.sf);
	/* stacked by painting: free from the axis, then what is in use over
	 * it, then the reserved part over that */
	if (t.has_free && (rc = column_area(&t, t.top, MP_COLOR_FREE, "area-free")) < 0)
		goto out;
	{
		/* the peak's line goes under the areas of what is in use: a spike
		 * one event long is then drawn over it, not hidden behind it */
		mp_style_t ps = cx_stroke(MP_COLOR_PEAK, 1.5, MP_DASH_SOLID);
		double x = cx_crisp(px(&t, d->peak.time_ns));
		mp_scene_tag(a->scene, mp_scene_line(a->scene, x, t.plot.y, x, t.plot.y + t.plot.h, &ps), "peak-line");
	}
	if ((rc = column_area(&t, t.use, MP_COLOR_HEAP, "area-heap")) < 0)
		goto out;
	if (t.has_stack && (rc = column_area(&t, t.stack, MP_COLOR_STACK, "area-stack")) < 0)
		goto out;
	if (d->capacity_bytes && !t.off_scale) {
		mp_style_t cs = cx_stroke(MP_COLOR_TEXT, 1, MP_DASH_DASHED);
		double y = cx_crisp(mp_scale_map(&t.sy, (double)d->capacity_bytes));
		mp_scene_tag(a->scene, mp_scene_line(a->scene, t.plot.x, y, t.plot.x + t.plot.w, y, &cs), "capacity");
	}
	if (t.has_frag && (rc = fragmentation_line(&t)) < 0)
		goto out;
	{
		mp_style_t fs = cx_stroke(MP_COLOR_AXIS, 1, MP_DASH_SOLID);
		mp_scene_tag(a->scene, mp_scene_rect(a->scene, cx_crisp(t.plot.x) - 1, cx_crisp(t.plot.y) - 1,
						      floor(t.plot.w) + 1, floor(t.plot.h) + 1, &fs), "plot");
	}

	/* failed allocations: a mark at the top, a dotted line while few */
	for (size_t i = 0; i < d->oom_count; i++) {
		double x = px(&t, d->oom[i].at.time_ns);
		mp_point_t tri[3] = {{x - 5, t.plot.y}, {x + 5, t.plot.y}, {x, t.plot.y + 9}};
		mp_style_t ms = cx_fill(MP_COLOR_OOM), ls = cx_stroke(MP_COLOR_OOM, 1, MP_DASH_DOTTED);
		if (d->oom_count <= 20)
			mp_scene_line(a->scene, cx_crisp(x), t.plot.y + 9, cx_crisp(x), t.plot.y + t.plot.h, &ls);
		mp_scene_tag(a->scene, mp_scene_path(a->scene, tri, 3, 1, &ms), "oom-mark");
	}

	{ /* the peak: a dot on its line */
		mp_style_t dot = cx_fill(MP_COLOR_PEAK);
		double x = cx_crisp(px(&t, d->peak.time_ns)), y = mp_scale_map(&t.sy, (double)d->peak_bytes);
		mp_scene_rect(a->scene, x - 3, y - 3, 6, 6, &dot);
	}
	if (t.show_steps)
		step_lane(&t);
	if (labels[0].placed)
		draw_label(a, &labels[0].box, l1, l2, MP_COLOR_PEAK, "peak-label");
	if (nlabels > 1 && d->oom_count && labels[1].placed)
		draw_label(a, &labels[1].box, o1, o2, MP_COLOR_OOM, "oom-label");
out:
	free(t.use);
	free(t.top);
	free(t.stack);
	free(t.frag);
	return rc ? rc : mp_scene_status(a->scene);
}

double mp_chart_timeline_height(void)
{
	return 420;
}
