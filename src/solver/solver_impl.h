/* solver_impl.h - the solver's private state, shared by solver.c (events)
 * and results.c (rows, timeline, driver). */
#ifndef MEMPROF_SOLVER_IMPL_H
#define MEMPROF_SOLVER_IMPL_H

#include <memprof/solver.h>

#include "fragidx.h"
#include "livemap.h"

typedef struct sv_dev {
	mp_solver_device_t pub; /* results; pub.* arrays owned here */
	lm_map_t live;
	grp_table_t groups;
	fx_index_t fx;
	/* Regions, sorted by base, not overlapping. */
	uint64_t *rbase, *rend;
	size_t rn, rcap;
	uint64_t region_bytes;
	uint64_t heap;          /* tracked heap: sum of live sizes */
	uint64_t unindexed;     /* live blocks with size > 0 not in fx */
	mp_allocator_stats_t st; /* last reported stats (stats model) */
	uint64_t peak_tracked;  /* tracked heap at the peak */
	uint32_t *dirty;        /* groups changed since the last peak (grp_t.dirty) */
	size_t ndirty, dirty_cap;
	/* Timeline: buckets of `width` samples, each keeping its maximum. */
	mp_solver_point_t *tl;
	size_t tl_n, tl_cap;
	uint64_t tl_width, tl_fill;
	mp_solver_point_t cand;
	uint64_t cand_inuse;
	uint64_t *tl_inuse; /* in use of each kept point (for merging) */
	size_t oom_cap;
	int leaks_done;
} sv_dev_t;

struct mp_solver {
	mp_solver_options_t opt;
	sv_dev_t **dev;    /* indexed by memory id; NULL = not seen */
	uint32_t ndev;     /* slots in dev */
	int pass;          /* 1 while feeding, 2 once ended */
	uint64_t ordinal;  /* events fed */
	uint64_t events;   /* events fed (excluding failed feeds) */
	uint64_t dropped_unattributed;
	int window_ended;
	mp_end_status_t end_status; /* recorded by mp_solver_run after pass 1 */
	const mp_solver_device_t **list; /* results in id order */
	size_t nlist;
};

/* regions.c: the region holding [a, a+size), or -1; REGION_ADD/REMOVE
 * (odd ones are counted in rejected_regions). Return 0 or MP_ENOMEM. */
long sv_region_of(const sv_dev_t *d, uint64_t a, uint64_t size);
int sv_region_add(sv_dev_t *d, uint64_t base, uint64_t size);
int sv_region_remove(sv_dev_t *d, uint64_t base);

/* results.c */
int sv_rows_live(sv_dev_t *d, uint64_t unknown_bytes, mp_solver_row_t **out, size_t *n);
int sv_rows_at_peak(sv_dev_t *d, uint64_t unknown_bytes, mp_solver_row_t **out, size_t *n);
int sv_rows_top(sv_dev_t *d, uint32_t top, mp_solver_row_t **out, size_t *n);
int sv_timeline_push(sv_dev_t *d, const mp_solver_point_t *p, uint64_t inuse, uint32_t max_points);
int sv_timeline_finish(sv_dev_t *d, uint32_t max_points);

#endif
