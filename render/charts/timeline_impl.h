/* timeline_impl.h - what the timeline's files share (timeline.c: the
 * series, the axes and the marks; timeline_lanes.c: the steps' and the
 * phases' lanes over the plot; timeline_labels.c: the labels of the peak
 * and of the first failed allocation). Internal to memprof_layout. */
#ifndef MEMPROF_TIMELINE_IMPL_H
#define MEMPROF_TIMELINE_IMPL_H

#include "charts_impl.h"

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
	mp_column_range_t *resv;   /* per column: reserved (the regions' bytes) */
	uint64_t t0, t1;           /* the x axis */
	uint64_t base;             /* time 0 on the axis and in the labels: the input's first event */
	uint64_t s0, s1;           /* the input's span, when this panel's axis is only its own part of it */
	int has_stack, has_free, has_frag, has_resv, show_steps;
	int rounds;                /* from a capture's rounds (mp_chart_memory_t) */
	mp_column_range_t *band;   /* per column: in use's least and most, from the rounds (or NULL) */
	int off_scale;             /* the capacity is far above what was used: free is cut at the top */
	uint64_t capacity;         /* known capacity (declared, or the allocator's), else 0 */
	const char *word;          /* the memory's word for what is in use ("allocated"), or NULL */
	const char *unit;          /* what time_ns counts when not time ("trace entry"), or NULL */
	size_t nsteps;             /* steps with a span on the axis */
	const mp_chart_step_t *marks; /* the step marks: the input's, or made from this id's points */
	size_t nmarks;
	mp_chart_step_t *own;      /* the latter (freed by the chart) */
	size_t own_cap;
	char step_note[200];       /* "": the step ids never go backwards */
	uint32_t lanes;            /* lanes of phases over the plot (nesting depths drawn) */
	uint64_t ymax;
	uint64_t used;             /* the most in use at any point */
	uint64_t drawn;            /* the highest line drawn over it: used, or reserved */
} tl_t;

static inline uint64_t tl_in_use(const mp_solver_point_t *p)
{
	return p->stack_bytes + p->heap_bytes;
}

static inline uint64_t tl_free_top(const mp_solver_point_t *p)
{
	return tl_in_use(p) + (p->has_free ? p->free_bytes : 0);
}

static inline double tl_px(const tl_t *t, uint64_t time_ns)
{
	return mp_scale_map(&t->sx, (double)time_ns);
}

/* The middle of the pixel column an event at time_ns is counted in: where
 * its mark goes, over what the column shows. */
static inline double tl_mark_x(const tl_t *t, uint64_t time_ns)
{
	return t->plot.x + (double)mp_series_column((double)time_ns, (double)t->t0, (double)t->t1, t->ncol) + 0.5;
}

/* y of a byte count, cut at the plot's top (free above the scale). */
static inline double tl_py(const tl_t *t, double bytes)
{
	double y = floor(mp_scale_map(&t->sy, bytes) * 2 + 0.5) / 2;

	return y < t->plot.y ? t->plot.y : y;
}

/* ---- lanes over the plot (timeline_lanes.c) ---- */

#define TL_LANE_H 15.0  /* the steps' lane */
#define TL_MAX_LANES 3  /* phases: nesting depths drawn */
#define TL_PHASE_H 14.0 /* a phases' lane */

/* The step marks (mem's, else made from this id's points), the spans
 * on the axis and the note when the ids go backwards. MP_ENOMEM or 0. */
int tl_steps(tl_t *t, const mp_chart_memory_t *mem);
void tl_step_lane(tl_t *t);
/* Lanes the phases of mem that meet [t0, t1] need. */
uint32_t tl_count_lanes(const mp_chart_memory_t *mem, uint64_t t0, uint64_t t1);
/* Height they take over the plot (over the steps' lane). */
double tl_lanes_height(const tl_t *t);
void tl_phase_lanes(tl_t *t, const mp_chart_memory_t *mem);

/* ---- the time axis' span (timeline_span.c) ---- */

/* A memory id whose points cover less than this share of its input's span
 * gets an axis of its own span (a strip under it shows the input's). */
#define TL_OWN_SPAN 0.6
#define TL_OVERVIEW_W 120.0 /* the strip's width */

/* time_ns as the chart gives it: from the input's first event. */
static inline uint64_t tl_rel(const tl_t *t, uint64_t time_ns)
{
	return time_ns > t->base ? time_ns - t->base : 0;
}

/* The line under the x axis of a panel of its own span (t->s1 set):
 * where it lies in the input's span, and what time 0 is. */
void tl_time_note(tl_t *t);
/* Hit areas over the plot's columns, noted for hover (timeline_hover.c);
 * painted as nothing. */
void tl_hover(tl_t *t, const mp_chart_memory_t *mem);

/* In use per column from mem's rounds (its bands) and t->use, into
 * t->band (nothing without bands). 0 or MP_ENOMEM (timeline_band.c). */
int tl_band(tl_t *t, const mp_chart_memory_t *mem);

/* What a timeline from rounds calls its areas and its source, by
 * mp_chart_memory_t.rounds (1: a capture's rounds, 2: a kept run's spans
 * of rounds; static strings; timeline_band.c). */
typedef struct tl_rounds_words {
	const char *least, *most, *from, *oom;
} tl_rounds_words_t;
const tl_rounds_words_t *tl_rounds_words(int rounds);

/* ---- labels (timeline_labels.c) ---- */

void tl_label_size(const mp_chart_area_t *a, const char *l1, const char *l2, double *w, double *h);
/* With a leader line from the label to its mark's line at anchor_x when
 * the label was put away from it. */
void tl_draw_label(const mp_chart_area_t *a, const mp_box_t *b, const char *l1, const char *l2, uint32_t color,
		   const char *tag, double anchor_x);
void tl_candidates(mp_label_t *l, double x, const mp_box_t *plot, double y_hint);
long tl_place_labels(tl_t *t, mp_ticks_t *ty, mp_label_t *labels, size_t n, double peak_x);
/* The y axis' ticks from 0 to top along the plot, as dense as fits and no
 * wider than the left margin the plot left them. Returns 0 or MP_EUSAGE. */
int tl_fit_y_ticks(tl_t *t, mp_ticks_t *ty, double top);

#endif
