/* timeline.c - the memory timeline of one memory id: what was in use over
 * time, where the peak was and what made it, when allocations failed, how
 * fragmented the free space was.
 *
 * The solver's timeline is already bounded (each point the highest of its
 * bucket, the peak among them); here each series is cut once more to what
 * each pixel column of the plot shows (mp_series_columns: memory holds its
 * value until the next event, and a column's highest value is kept), so
 * the peak drawn is the peak reported and the picture's size follows its
 * width, whatever the capture's length. The plot's left edge and width are
 * whole pixels, so a column of the series is a pixel of the picture, and
 * each mark (the peak, a failed allocation) is put in the column its event
 * falls in (mp_series_column), over the value that column shows: a peak a
 * few microseconds long on an axis of seconds is drawn at its height,
 * under its mark. */
#include "timeline_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An area from the axis up to each column's highest value (lo: lowest):
 * one point pair per run of equal heights, so its size follows the plot's
 * width, never the number of events. */
static int column_area(tl_t *t, const mp_column_range_t *col, int lo, uint32_t color, const char *tag)
{
	mp_point_t *pts = malloc((2 * t->ncol + 4) * sizeof(*pts));
	mp_style_t st = cx_fill(color);
	double bottom = t->plot.y + t->plot.h, x0 = floor(t->plot.x);
	size_t k = 0;

	if (!pts)
		return MP_ENOMEM;
	pts[k++] = (mp_point_t){x0, bottom};
	for (size_t c = 0; c < t->ncol; c++) {
		double y = col[c].has ? tl_py(t, lo ? col[c].lo : col[c].hi) : bottom;
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

/* Reserved (what the regions hold) as a line along each column's highest
 * value: a step where it changes, broken where there is no region yet. */
static int reserved_line(tl_t *t)
{
	mp_point_t *pts = malloc((2 * t->ncol + 2) * sizeof(*pts));
	mp_style_t st = cx_stroke(MP_COLOR_RESERVED, 1.5, MP_DASH_SOLID);
	double x0 = t->plot.x;
	size_t k = 0;

	if (!pts)
		return MP_ENOMEM;
	for (size_t c = 0; c <= t->ncol; c++) {
		const mp_column_range_t *r = c < t->ncol ? &t->resv[c] : NULL;
		double y;
		if (!r || !r->has) {
			if (k > 1)
				mp_scene_tag(t->a->scene, mp_scene_path(t->a->scene, pts, k, 0, &st), "reserved");
			k = 0;
			continue;
		}
		y = cx_crisp(tl_py(t, r->hi));
		if (k && pts[k - 1].y == y) {
			pts[k - 1].x = x0 + (double)c + 1; /* the run goes on */
			continue;
		}
		pts[k++] = (mp_point_t){x0 + (double)c, y};
		pts[k++] = (mp_point_t){x0 + (double)c + 1, y};
	}
	free(pts);
	return 0;
}

/* The timeline reduced to the plot's columns, once per series. */
static int columns(tl_t *t, uint64_t t0, uint64_t t1)
{
	const mp_solver_device_t *d = t->d;
	size_t n = d->timeline_count;
	/* x, the three layers (stack, heap, free), their stacked tops,
	 * fragmentation and reserved: 9 series of n */
	double *buf = malloc(9 * (n ? n : 1) * sizeof(*buf));
	double *x = buf, *layer = buf + n, *tops = buf + 4 * n, *frag = buf + 7 * n, *resv = buf + 8 * n;
	const double *layers[3] = {layer, layer + n, layer + 2 * n};
	mp_column_range_t **out[5] = {&t->stack, &t->use, &t->top, &t->frag, &t->resv};

	t->ncol = (size_t)t->plot.w;
	for (int s = 0; s < 5; s++)
		*out[s] = calloc(t->ncol ? t->ncol : 1, sizeof(mp_column_range_t));
	if (!buf || !t->use || !t->top || !t->stack || !t->frag || !t->resv) {
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
		resv[i] = p->has_reserved ? (double)p->reserved_bytes : NAN;
	}
	mp_series_stack(layers, 3, n, tops); /* stack; stack + heap; + free */
	for (int s = 0; s < 3; s++)
		mp_series_columns(x, tops + (size_t)s * n, n, (double)t0, (double)t1, t->ncol, *out[s]);
	mp_series_columns(x, frag, n, (double)t0, (double)t1, t->ncol, t->frag);
	if (t->has_resv)
		mp_series_columns(x, resv, n, (double)t0, (double)t1, t->ncol, t->resv);
	free(buf);
	return 0;
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
	cx_legend_entry_t e[10];
	size_t n = 0;

	if (t->has_stack)
		e[n++] = (cx_legend_entry_t){"stack (reserved)", MP_COLOR_STACK, CX_KEY_BOX};
	e[n++] = (cx_legend_entry_t){t->has_stack ? "heap (allocated)" : t->word ? t->word
				     : t->rounds ? tl_rounds_words(t->rounds)->least /* (each column's least) */
						 : "in use (live allocations)", MP_COLOR_HEAP, CX_KEY_BOX};
	if (t->rounds)
		e[n++] = (cx_legend_entry_t){tl_rounds_words(t->rounds)->most, MP_COLOR_HEAP_BAND, CX_KEY_BOX};
	if (t->has_free)
		e[n++] = (cx_legend_entry_t){t->off_scale ? "free (up to the capacity, above the scale)"
					     : t->capacity ? "free"
							   : "free inside reserved",
					     MP_COLOR_FREE, CX_KEY_BOX};
	if (t->has_resv)
		e[n++] = (cx_legend_entry_t){"reserved", MP_COLOR_RESERVED, CX_KEY_LINE};
	if (t->has_frag)
		e[n++] = (cx_legend_entry_t){"fragmentation (right axis)", MP_COLOR_FRAGMENTATION, CX_KEY_LINE};
	if (t->capacity && !t->off_scale)
		e[n++] = (cx_legend_entry_t){"capacity", MP_COLOR_TEXT, CX_KEY_DASH};
	e[n++] = (cx_legend_entry_t){"peak", MP_COLOR_PEAK, CX_KEY_LINE};
	if (t->d->oom_count)
		e[n++] = (cx_legend_entry_t){"failed allocation", MP_COLOR_OOM, CX_KEY_MARK};
	if (t->show_steps && t->nsteps <= 40)
		e[n++] = (cx_legend_entry_t){"step start", MP_COLOR_STEP, CX_KEY_TICK};
	if (t->lanes)
		e[n++] = (cx_legend_entry_t){"phase (lanes over the plot)", MP_COLOR_PHASE, CX_KEY_BOX};
	return cx_legend(t->a, x, y, w, e, n, draw);
}

/* The words of the panel, made in one step and drawn in another: the
 * header's and the labels of the peak and of the first failed allocation. */
typedef struct tl_words {
	char word[48];   /* "allocated " or "" */
	char lsteps[96]; /* the peak's step, as its label says it */
	char l1[160], l2[512], o1[160], o2[160], pnote[800];
	mp_label_t labels[2];
	size_t nlabels;
} tl_words_t;

/* What the y axis must hold: what was used, free and reserved, the
 * capacity where it does not flatten the rest. */
static void y_range(tl_t *t)
{
	const mp_solver_device_t *d = t->d;
	uint64_t used = d->peak_bytes, all = t->capacity;

	for (size_t i = 0; i < d->timeline_count; i++) {
		const mp_solver_point_t *p = &d->timeline[i];
		t->has_stack |= p->stack_bytes != 0;
		t->has_free |= p->has_free && p->free_bytes;
		t->has_frag |= !isnan(p->fragmentation);
		t->has_resv |= !t->capacity && p->has_reserved && p->reserved_bytes;
		if (tl_in_use(p) > used)
			used = tl_in_use(p);
		if (tl_free_top(p) > all)
			all = tl_free_top(p);
		if (!t->capacity && p->has_reserved && p->reserved_bytes > all)
			all = p->reserved_bytes;
	}
	/* 144 GiB of capacity would flatten a 432 MiB peak into the axis:
	 * beyond 4x, the scale follows what was used and free is cut
	 * (what was reserved, a measure, always stays on the scale) */
	t->used = used;
	t->drawn = t->has_resv && all > used ? all : used;
	t->off_scale = t->capacity && all > 4 * used;
	t->ymax = t->off_scale ? used + used / 4 : all;
}

/* this memory id's points, on the axis its input's others share (the
 * panels line up) while they cover most of it; a memory id whose
 * history is a sliver of the run (a GPU used for 5 ms of 2.7 s) gets
 * its own span, and a strip under the axis shows where that lies in
 * the input's. Times count from the input's first event, whatever
 * clock the capture keeps (a profiler's session may start seconds
 * earlier). The last value is held to the end, as the series is a
 * step function. */
static void x_range(tl_t *t, const mp_chart_memory_t *mem)
{
	const mp_solver_device_t *d = t->d;
	uint64_t t0 = d->timeline[0].time_ns, t1 = d->timeline[d->timeline_count - 1].time_ns;

	t->base = t->unit ? 0 : t0;
	if (mem->t1_ns > mem->t0_ns) {
		uint64_t s0 = mem->t0_ns < t0 ? mem->t0_ns : t0, s1 = mem->t1_ns > t1 ? mem->t1_ns : t1;
		if (!t->unit)
			t->base = s0;
		/* (an input's phases are drawn on every panel: a PyTorch
		 * snapshot's reserved segments, made in its first 85 µs, keep the
		 * whole trace's axis and its phases) */
		if ((double)(t1 - t0) >= TL_OWN_SPAN * (double)(s1 - s0) || mem->nphases) {
			t0 = s0;
			t1 = s1;
		} else {
			t->s0 = s0;
			t->s1 = s1;
		}
	}
	if (t1 <= t0 && t->unit) { /* one entry: one either side */
		t0 = t0 > 0 ? t0 - 1 : 0;
		t1 = t0 + 2;
	} else if (t1 <= t0) { /* one instant: a microsecond around it */
		t0 = t0 > 500 ? t0 - 500 : 0;
		t1 = t0 + 1000;
	}
	if (t->base > t0)
		t->base = t0;
	t->t0 = t0;
	t->t1 = t1;
}

/* The title, the subtitle and the step note; returns the y under them. */
static double header(tl_t *t, const mp_chart_memory_t *mem, tl_words_t *w)
{
	const mp_chart_area_t *a = t->a;
	const mp_solver_device_t *d = t->d;
	char title[512], sub[512], b1[64], b2[64], b3[64], b4[64], steps[96];
	double top;

	w->word[0] = '\0';
	if (t->word)
		snprintf(w->word, sizeof(w->word), "%s ", t->word);
	if (t->capacity)
		snprintf(title, sizeof(title), "%s, capacity %s", mem->title, mp_fmt_bytes(b1, sizeof(b1), t->capacity));
	else
		snprintf(title, sizeof(title), "%s", mem->title);
	steps[0] = w->lsteps[0] = '\0';
	if (d->peak.step >= 0) {
		/* The steps' lane at the peak (drawn when it fits): the span of
		 * the last mark before it. Marks made from xplane events (the first event of each step
		 * number, of any allocator) can run ahead of this allocator's
		 * own count: then both are said, not a label that contradicts
		 * the lane above it. */
		int64_t lane = -1;
		for (size_t i = 0; i < t->nmarks && t->marks[i].time_ns <= d->peak.time_ns; i++)
			lane = t->marks[i].step;
		if (lane >= 0 && lane != d->peak.step) {
			snprintf(steps, sizeof(steps), ", step %" PRId64 " by its allocator's count (the steps' lane: %" PRId64 ")",
				 d->peak.step, lane);
			snprintf(w->lsteps, sizeof(w->lsteps), ", step %" PRId64 " (lane: %" PRId64 ")", d->peak.step, lane);
		} else {
			snprintf(steps, sizeof(steps), ", step %" PRId64, d->peak.step);
			snprintf(w->lsteps, sizeof(w->lsteps), "%s", steps);
		}
	}
	snprintf(sub, sizeof(sub), "peak %s%s at %s%s · %s allocations, %s failed%s", w->word,
		 mp_bytes_exact(b1, sizeof(b1), d->peak_bytes), cx_fmt_at(mem->source, b2, sizeof(b2), tl_rel(t, d->peak.time_ns)), steps,
		 mp_fmt_count(b3, sizeof(b3), d->allocations), mp_fmt_count(b4, sizeof(b4), d->failed_allocations),
		 d->oom_total <= d->oom_count ? "" : mem->rounds ? tl_rounds_words(mem->rounds)->oom : " (the first 1000 marked)");
	if (mem->rounds) /* what a round holds, not every event */
		snprintf(sub + strlen(sub), sizeof(sub) - strlen(sub), "%s", tl_rounds_words(mem->rounds)->from);
	if (t->base && !t->s1) /* (a panel of its own span says it under its axis) */
		snprintf(sub + strlen(sub), sizeof(sub) - strlen(sub), " · time 0: the input's first event, %s on the "
			 "capture's clock", mp_fmt_time(b2, sizeof(b2), t->base));
	top = cx_header(a, title, sub);
	if (t->step_note[0]) { /* one line under the header: the lane draws the ids as they come */
		mp_scene_tag(a->scene,
			     cx_text_fit(a, a->box.x + CX_PAD, top - 4, t->step_note, a->box.w - 2 * CX_PAD, CX_SMALL, 0,
					 MP_COLOR_OOM, MP_ALIGN_LEFT, MP_VALIGN_TOP, MP_ELLIPSIS_END),
			     "step-note");
		top += CX_SMALL * CX_LINE + 2;
	}
	return top;
}

/* The plot's box under top, its scales and ticks (the legend drawn over
 * it): MP_EUSAGE when the box is too small. */
static int plot_box(tl_t *t, double top, mp_ticks_t *ty, mp_ticks_t *tx, mp_ticks_t *tf)
{
	const mp_chart_area_t *a = t->a;
	double left_w, right_w, bottom_h;
	int rc;

	/* axes: the y ticks decide the left margin */
	if ((rc = mp_ticks_fit(ty, MP_AXIS_BYTES, 0, (double)t->ymax * 1.04 + 1, a->box.h * 0.6, 0, a->measure, CX_SMALL)) < 0)
		return rc;
	left_w = cx_ticks_width(a, ty) + 10;
	right_w = 0;
	if (t->has_frag) {
		mp_ticks_nice(tf, MP_AXIS_PERCENT, 0, 100, 6);
		right_w = cx_ticks_width(a, tf) + 10;
	}
	/* whole pixels: a column of the series is a pixel of the picture */
	t->plot.x = floor(a->box.x + CX_PAD + left_w);
	t->plot.w = floor(a->box.x + a->box.w - CX_PAD - right_w - t->plot.x);
	t->show_steps = t->nsteps > 0 && (double)t->nsteps <= t->plot.w / 4; /* before the legend: it has an entry */
	t->plot.y = top + legend(t, a->box.x + CX_PAD, top, a->box.w - 2 * CX_PAD, 0) + 8;
	bottom_h = CX_SMALL * CX_LINE + 8 + (t->unit || t->s1 ? CX_SMALL * CX_LINE + 2 : 0);
	t->plot.h = a->box.y + a->box.h - CX_PAD - bottom_h - t->plot.y;
	if (t->plot.w < 50 || t->plot.h < 40)
		return MP_EUSAGE;
	legend(t, a->box.x + CX_PAD, top, a->box.w - 2 * CX_PAD, 1);
	if (t->show_steps) { /* room for the lane of steps over the plot */
		t->plot.y += TL_LANE_H + 4;
		t->plot.h -= TL_LANE_H + 4;
	}
	if (t->lanes) { /* and for the phases' over it */
		t->plot.y += tl_lanes_height(t);
		t->plot.h -= tl_lanes_height(t);
		if (t->plot.h < 40)
			return MP_EUSAGE;
	}

	t->sx = (mp_scale_t){(double)t->t0, (double)t->t1, t->plot.x, t->plot.x + t->plot.w};
	if ((rc = tl_fit_y_ticks(t, ty, (double)t->ymax * 1.04 + 1)) < 0 ||
	    (rc = mp_ticks_fit(tx, t->unit ? MP_AXIS_INTEGER : MP_AXIS_TIME_NS, (double)(t->t0 - t->base),
			       (double)(t->t1 - t->base), t->plot.w, 1, a->measure, CX_SMALL)) < 0)
		return rc;
	for (size_t i = 0; i < tx->count; i++) /* labelled from the input's start, placed on the capture's clock */
		tx->value[i] += (double)t->base;
	t->sy = (mp_scale_t){0, (double)t->ymax * 1.04 + 1, t->plot.y + t->plot.h, t->plot.y};
	t->sf = (mp_scale_t){0, 1, t->plot.y + t->plot.h, t->plot.y};
	if (t->has_frag) {
		mp_ticks_fit(tf, MP_AXIS_PERCENT, 0, 100, t->plot.h, 0, a->measure, CX_SMALL);
		for (size_t i = 0; i < tf->count; i++)
			tf->value[i] /= 100; /* the right axis maps 0..1 */
	}
	return 0;
}

/* the labels of the peak and of the first failed allocation, placed
 * before anything is painted: the scale may have to make room */
static int mark_labels(tl_t *t, const mp_chart_memory_t *mem, mp_ticks_t *ty, tl_words_t *w)
{
	const mp_chart_area_t *a = t->a;
	const mp_solver_device_t *d = t->d;
	char b1[64], b2[64];
	int rc;

	{
		double x = tl_mark_x(t, d->peak.time_ns), y = mp_scale_map(&t->sy, (double)d->peak_bytes);
		const char *op = mem->top_name ? mem->top_name : top_op(mem);
		const char *phase = d->peak_phase && mem->source ? mp_source_string(mem->source, d->peak_phase) : "";
		snprintf(w->l1, sizeof(w->l1), "peak %s%s", w->word, mp_bytes_exact(b1, sizeof(b1), d->peak_bytes));
		snprintf(w->l2, sizeof(w->l2), "%s%s%s%s%s%s", cx_fmt_at(mem->source, b2, sizeof(b2), tl_rel(t, d->peak.time_ns)),
			 w->lsteps,
			 phase[0] ? ", in " : "", phase, op[0] ? " · " : "", op);
		snprintf(w->pnote, sizeof(w->pnote), "%s\n%s", w->l1, w->l2); /* the hover's: l2 whole */
		{
			char fit[512];
			mp_text_fit(a->measure, w->l2, CX_SMALL, 0, t->plot.w * 0.45, MP_ELLIPSIS_MIDDLE, fit, sizeof(fit));
			snprintf(w->l2, sizeof(w->l2), "%s", fit);
		}
		memset(&w->labels[0], 0, sizeof(w->labels[0]));
		tl_label_size(a, w->l1, w->l2, &w->labels[0].w, &w->labels[0].h);
		tl_candidates(&w->labels[0], x, &t->plot, y);
		w->labels[0].priority = 10;
		w->nlabels = 1;
	}
	if (d->oom_count) {
		const mp_solver_oom_t *o = &d->oom[0];
		double x = tl_mark_x(t, o->at.time_ns);
		snprintf(w->o1, sizeof(w->o1), "failed: %s asked", mp_fmt_bytes(b1, sizeof(b1), o->requested_bytes));
		if (d->oom_total > 1)
			snprintf(w->o1 + strlen(w->o1), sizeof(w->o1) - strlen(w->o1), " (1 of %" PRIu64 ")", d->oom_total);
		snprintf(w->o2, sizeof(w->o2), "at %s%s%s", cx_fmt_at(mem->source, b2, sizeof(b2), tl_rel(t, o->at.time_ns)),
			 o->op ? ", op " : "",
			 o->op ? mp_source_string(mem->source, o->op) : "");
		memset(&w->labels[1], 0, sizeof(w->labels[1]));
		tl_label_size(a, w->o1, w->o2, &w->labels[1].w, &w->labels[1].h);
		tl_candidates(&w->labels[1], x, &t->plot, t->plot.y + t->plot.h / 2);
		w->labels[1].priority = 5;
		w->nlabels = 2;
	}
	if ((rc = (int)tl_place_labels(t, ty, w->labels, w->nlabels, tl_mark_x(t, d->peak.time_ns))) < 0)
		return rc;
	return 0;
}

/* failed allocations: a mark at the top, a dotted line while few */
static void oom_marks(tl_t *t, const mp_chart_memory_t *mem)
{
	const mp_chart_area_t *a = t->a;
	const mp_solver_device_t *d = t->d;
	char b1[64], b2[64];

	for (size_t i = 0; i < d->oom_count; i++) {
		double x = tl_mark_x(t, d->oom[i].at.time_ns);
		mp_point_t tri[3] = {{x - 5, t->plot.y}, {x + 5, t->plot.y}, {x, t->plot.y + 9}};
		mp_style_t ms = cx_fill(MP_COLOR_OOM), ls = cx_stroke(MP_COLOR_OOM, 1, MP_DASH_DOTTED);
		if (d->oom_count <= 20)
			mp_scene_line(a->scene, x, t->plot.y + 9, x, t->plot.y + t->plot.h, &ls);
		long item = mp_scene_path(a->scene, tri, 3, 1, &ms);
		char note[400];
		mp_scene_tag(a->scene, item, "oom-mark");
		snprintf(note, sizeof(note), "failed allocation: %s asked\nat %s%s%s",
			 mp_bytes_exact(b1, sizeof(b1), d->oom[i].requested_bytes),
			 cx_fmt_at(mem->source, b2, sizeof(b2), tl_rel(t, d->oom[i].at.time_ns)), d->oom[i].op ? ", op " : "",
			 d->oom[i].op && mem->source ? mp_source_string(mem->source, d->oom[i].op) : "");
		mp_scene_note(a->scene, item, note, (uint32_t)i);
	}
}

/* Everything laid out, painted bottom to top. */
static int paint(tl_t *t, const mp_chart_memory_t *mem, const mp_ticks_t *ty, const mp_ticks_t *tx, const mp_ticks_t *tf,
		 const tl_words_t *w)
{
	const mp_chart_area_t *a = t->a;
	const mp_solver_device_t *d = t->d;
	char xtitle[160];
	int rc;

	cx_axis_left(a, &t->plot, ty, &t->sy, 1);
	cx_axis_bottom(a, &t->plot, tx, &t->sx, 0);
	if (t->has_frag)
		cx_axis_right(a, &t->plot, tf, &t->sf);
	if (t->unit) { /* the x axis counts entries, not time: say so under it */
		snprintf(xtitle, sizeof(xtitle), "x: %s index (the input has no times)", t->unit);
		mp_scene_tag(a->scene,
			     cx_text_fit(a, t->plot.x + t->plot.w / 2, t->plot.y + t->plot.h + 6 + CX_SMALL * CX_LINE + 2, xtitle,
					 t->plot.w, CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_CENTER, MP_VALIGN_TOP, MP_ELLIPSIS_END),
			     "x-title");
	} else if (t->s1) {
		tl_time_note(t);
	}
	/* stacked by painting: free from the axis, then what is in use over
	 * it, then the reserved part over that */
	if (t->has_free && (rc = column_area(t, t->top, 0, MP_COLOR_FREE, "area-free")) < 0)
		return rc;
	{
		/* the peak's line goes under the areas of what is in use: a spike
		 * one event long is then drawn over it, not hidden behind it */
		mp_style_t ps = cx_stroke(MP_COLOR_PEAK, 1.5, MP_DASH_SOLID);
		double x = tl_mark_x(t, d->peak.time_ns);
		mp_scene_tag(a->scene, mp_scene_line(a->scene, x, t->plot.y, x, t->plot.y + t->plot.h, &ps), "peak-line");
	}
	/* from a capture's rounds: each column's least solid, a band up to its most */
	if (t->band && (rc = column_area(t, t->band, 0, MP_COLOR_HEAP_BAND, "area-heap-band")) < 0)
		return rc;
	if ((rc = column_area(t, t->band ? t->band : t->use, t->band != NULL, MP_COLOR_HEAP, "area-heap")) < 0)
		return rc;
	if (t->has_stack && (rc = column_area(t, t->stack, 0, MP_COLOR_STACK, "area-stack")) < 0)
		return rc;
	if (t->has_resv && (rc = reserved_line(t)) < 0)
		return rc;
	if (t->capacity && !t->off_scale) {
		mp_style_t cs = cx_stroke(MP_COLOR_TEXT, 1, MP_DASH_DASHED);
		double y = cx_crisp(mp_scale_map(&t->sy, (double)t->capacity));
		mp_scene_tag(a->scene, mp_scene_line(a->scene, t->plot.x, y, t->plot.x + t->plot.w, y, &cs), "capacity");
	}
	if (t->has_frag && (rc = fragmentation_line(t)) < 0)
		return rc;
	tl_hover(t, mem); /* under the marks' own notes */
	{
		mp_style_t fs = cx_stroke(MP_COLOR_AXIS, 1, MP_DASH_SOLID);
		mp_scene_tag(a->scene, mp_scene_rect(a->scene, cx_crisp(t->plot.x) - 1, cx_crisp(t->plot.y) - 1,
						      floor(t->plot.w) + 1, floor(t->plot.h) + 1, &fs), "plot");
	}
	oom_marks(t, mem);
	{ /* the peak: a dot on its line */
		mp_style_t dot = cx_fill(MP_COLOR_PEAK);
		double x = tl_mark_x(t, d->peak.time_ns), y = mp_scale_map(&t->sy, (double)d->peak_bytes);
		long item = mp_scene_rect(a->scene, x - 3, y - 3, 6, 6, &dot);
		mp_scene_tag(a->scene, item, "peak-dot");
		mp_scene_note(a->scene, item, w->pnote, 0);
	}
	if (t->show_steps)
		tl_step_lane(t);
	if (t->lanes)
		tl_phase_lanes(t, mem);
	if (w->labels[0].placed)
		tl_draw_label(a, &w->labels[0].box, w->l1, w->l2, MP_COLOR_PEAK, "peak-label", tl_mark_x(t, d->peak.time_ns));
	if (w->nlabels > 1 && d->oom_count && w->labels[1].placed)
		tl_draw_label(a, &w->labels[1].box, w->o1, w->o2, MP_COLOR_OOM, "oom-label", tl_mark_x(t, d->oom[0].at.time_ns));
	return 0;
}

/* The steps: the ranges of the axes, the header, the plot's box and
 * scales, the series per pixel column, the labels' places, the paint. */
static int timeline(const mp_chart_area_t *a, const mp_chart_memory_t *mem, mp_chart_step_t **own)
{
	const mp_solver_device_t *d = mem->dev;
	const mp_memory_info_t *mi = mem->source ? mp_source_memory(mem->source, d->id) : NULL;
	tl_words_t w;
	mp_ticks_t ty, tx, tf;
	double top;
	tl_t t;
	int rc = 0;

	memset(&t, 0, sizeof(t));
	memset(&w, 0, sizeof(w));
	t.a = a;
	t.d = d;
	t.rounds = mem->rounds;
	if (!d->has_peak || !d->timeline_count)
		return MP_ENODATA;
	t.word = mi && mi->in_use_name && mi->in_use_name[0] ? mi->in_use_name : NULL;
	t.unit = mem->source ? mp_source_time_unit(mem->source) : NULL;
	/* a capacity is known when it was declared or the allocator reported
	 * it; the regions' bytes at the peak are what was reserved then, which
	 * later grows past them: no capacity, reserved over time instead */
	t.capacity = d->declared_capacity || d->stats_model ? d->capacity_bytes : 0;
	y_range(&t);
	x_range(&t, mem);
	t.lanes = tl_count_lanes(mem, t.t0, t.t1);
	rc = tl_steps(&t, mem);
	*own = t.own;
	if (rc < 0)
		return rc;
	top = header(&t, mem, &w);
	if ((rc = plot_box(&t, top, &ty, &tx, &tf)) < 0)
		return rc;
	/* each series reduced to the plot's pixel columns */
	if ((rc = columns(&t, t.t0, t.t1)) == 0 && (rc = tl_band(&t, mem)) == 0 &&
	    (rc = mark_labels(&t, mem, &ty, &w)) == 0)
		rc = paint(&t, mem, &ty, &tx, &tf, &w);
	free(t.band);
	free(t.use);
	free(t.top);
	free(t.stack);
	free(t.frag);
	free(t.resv);
	return rc ? rc : mp_scene_status(a->scene);
}

int mp_chart_timeline(const mp_chart_area_t *a, const mp_chart_memory_t *mem)
{
	mp_chart_step_t *own = NULL;
	int rc = timeline(a, mem, &own);

	free(own);
	return rc;
}

double mp_chart_timeline_height(void)
{
	return 420;
}
