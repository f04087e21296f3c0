/* solver_impl.h - the solver's private state, shared by solver.c (the pass
 * over the events), solver_life.c (creation, accessors, freeing) and
 * results.c (rows, timeline). */
#ifndef MEMPROF_SOLVER_IMPL_H
#define MEMPROF_SOLVER_IMPL_H

#include <memprof/solver.h>
#include <memprof/vec.h>

#include "fragidx.h"
#include "livemap.h"

/* An entry of the deferred-update log (defer.c): insert [key, end) into
 * the fragmentation index, or remove the block at key when end is 0. */
typedef struct sv_log {
	uint64_t key;
	uint64_t end;
} sv_log_t;

enum { SV_MARK_PEAK, SV_MARK_CAND, SV_MARKS };

typedef struct sv_dev {
	mp_solver_device_t pub; /* results; pub.* arrays owned here */
	mp_live_t live;         /* the live blocks; live.bytes: the tracked heap */
	grp_table_t groups;
	fx_index_t fx;
	mp_live_regions_t reg;  /* the regions (reg.bytes: reserved) */
	int regions_seen;       /* a REGION_ADD was applied: reserved bytes are known */
	uint64_t unindexed;     /* live blocks with size > 0 not in fx */
	mp_allocator_stats_t st; /* last reported stats (stats model) */
	uint64_t peak_tracked;  /* tracked heap at the peak */
	int peak_seeded;        /* the peak is still the seed's (seed.c): its point is unknown */
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
	/* Deferred index updates (defer.c). */
	sv_log_t *lg;
	uint32_t lg_n, lg_cap;
	uint32_t seg;                        /* position of the latest mark */
	uint32_t epoch;                      /* number of the log, modulo NEPOCH */
	uint32_t mk_at[SV_MARKS];            /* log position of each mark */
	mp_solver_point_t *mk_pt[SV_MARKS];  /* the point it fills; NULL = none */
} sv_dev_t;

/* Phases open at once that the solver names (deeper ones are counted). */
#define SV_MAX_PHASES 64u

struct mp_solver {
	mp_solver_options_t opt;
	sv_dev_t **dev;    /* indexed by memory id; NULL = not seen */
	uint32_t ndev;     /* slots in dev */
	int pass;          /* 1 while feeding, 2 once ended */
	uint64_t ordinal;  /* events fed */
	uint64_t events;   /* events fed (excluding failed feeds) */
	uint64_t dropped_unattributed;
	uint32_t last_mark; /* label of the last MARK fed, 0 = none */
	uint32_t phase[SV_MAX_PHASES]; /* labels of the open phases, outermost first */
	uint32_t nphase;    /* open phases (those past SV_MAX_PHASES are counted, not kept) */
	uint64_t phase_marks; /* MARK events with a phase flag fed */
	int window_ended;
	int seeded;         /* mp_solver_seed was called (seed.c) */
	mp_end_status_t end_status; /* recorded by mp_solver_run after pass 1 */
	const mp_solver_device_t **list; /* results in id order */
	size_t nlist;
};

/* solver.c: the results' list (mp_solver_device) from s->dev, in id order;
 * 0 or MP_ENOMEM. */
int sv_list_results(mp_solver_t *s);

/* regions.c: the region holding [a, a+size), or -1 (inline: every
 * allocation asks); REGION_ADD/REMOVE (odd ones are counted in
 * rejected_regions). Return 0 or MP_ENOMEM. */
static inline long sv_region_of(const sv_dev_t *d, uint64_t a, uint64_t size)
{
	return mp_live_region_of(&d->reg, a, size);
}
int sv_region_add(sv_dev_t *d, uint64_t base, uint64_t size);
int sv_region_remove(sv_dev_t *d, uint64_t base);

/* defer.c: the fragmentation index lags behind the live set by a log of
 * insertions and removals, applied when a figure is due. The per-event
 * calls are inline; their rare cases (log full, a mark in the way) are in
 * defer.c. */
#define SV_LOG_FIRST 4096u
#define SV_LOG_MAX (1u << 18) /* 4 MiB per memory id with regions */
#define SV_KEEP (1ull << 63)  /* key flag: insert even if the block is gone */
#define SV_NEPOCH ((UINT32_MAX - LM_LOG) / SV_LOG_MAX)

int sv_fx_add_slow(sv_dev_t *d, uint64_t addr, uint64_t end, uint32_t *pend);
int sv_fx_drop_slow(sv_dev_t *d, const lm_entry_t *e);

/* Log entries are written once and read back only when the log is
 * applied, possibly megabytes later: on x86-64 they bypass the cache
 * (non-temporal stores), which otherwise they would sweep, evicting the
 * live map that every event needs. */
static inline void sv_put_entry(sv_log_t *l, uint64_t key, uint64_t end)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_ia32_movnti64((long long *)&l->key, (long long)key);
	__builtin_ia32_movnti64((long long *)&l->end, (long long)end);
#else
	l->key = key;
	l->end = end;
#endif
}

static inline uint32_t sv_pend_of(const sv_dev_t *d, uint32_t j)
{
	return LM_LOG + d->epoch * SV_LOG_MAX + j;
}

/* Log the insertion of block [addr, end); *pend: what its live-map entry
 * must hold. Returns 0 or MP_ENOMEM. */
static inline int sv_fx_add(sv_dev_t *d, uint64_t addr, uint64_t end, uint32_t *pend)
{
	if (d->lg_n == d->lg_cap)
		return sv_fx_add_slow(d, addr, end, pend);
	sv_put_entry(&d->lg[d->lg_n], addr, end);
	*pend = sv_pend_of(d, d->lg_n);
	d->lg_n++;
	return 0;
}

/* Block e (in the index, or logged to be) is freed: cancel its logged
 * insertion, or log its removal. Returns 0 or MP_ENOMEM. */
static inline int sv_fx_drop(sv_dev_t *d, const lm_entry_t *e)
{
	if (e->pend >= LM_LOG && (e->pend - LM_LOG) / SV_LOG_MAX == d->epoch) {
		if ((e->pend - LM_LOG) % SV_LOG_MAX >= d->seg)
			return 0; /* its insertion waits in this log, after the last mark: it will not happen */
		return sv_fx_drop_slow(d, e); /* a mark needs the insertion */
	}
	if (d->lg_n == d->lg_cap)
		return sv_fx_drop_slow(d, e);
	sv_put_entry(&d->lg[d->lg_n], e->addr, 0);
	d->lg_n++;
	return 0;
}
/* p's fragmentation figures are due at this event: fill them now, or when
 * the log is applied (p must stay where it is until then). A newer mark of
 * the same kind replaces the older one. Returns 0 or MP_ENOMEM. */
int sv_mark(sv_dev_t *d, int which, mp_solver_point_t *p);
/* Apply the whole log, filling the pending marks on the way. */
int sv_flush(sv_dev_t *d);
/* p's fragmentation figures from the index as it is. */
void sv_fill_point(const sv_dev_t *d, mp_solver_point_t *p);
size_t sv_log_bytes(const sv_dev_t *d);

/* solver.c, for seed.c: the memory id's state (created on first use:
 * NULL and *rc set when it cannot be), and an allocation applied to the
 * live set, the groups and the index without counting it or sampling. */
sv_dev_t *sv_get_dev(mp_solver_t *s, uint32_t id, int *rc);
int sv_apply_alloc(sv_dev_t *d, const mp_event_t *ev);
/* results.c */
int sv_rows_live(sv_dev_t *d, uint64_t unknown_bytes, mp_solver_row_t **out, size_t *n);
int sv_rows_at_peak(sv_dev_t *d, uint64_t unknown_bytes, mp_solver_row_t **out, size_t *n);
int sv_rows_top(sv_dev_t *d, uint32_t top, mp_solver_row_t **out, size_t *n);
int sv_timeline_push(sv_dev_t *d, const mp_solver_point_t *p, uint64_t inuse, uint32_t max_points);
int sv_timeline_finish(sv_dev_t *d, uint32_t max_points);

#endif
