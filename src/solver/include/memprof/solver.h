/* memprof/solver.h - peak, fragmentation, timeline, breakdown, leaks and
 * out-of-memory states of an event stream, per memory id, in memory
 * proportional to the live set and the number of distinct groups (never to
 * the number of events). Pure computation: no I/O.
 *
 * Driving it
 *   The easy way: mp_solver_run(solver, source, diag) reads an mp_source_t
 *   once. By hand (tests, importers that hold events in memory):
 *
 *     mp_solver_t *s = mp_solver_new(&opts);            // opts may be NULL
 *     mp_solver_declare_memory(s, id, capacity);        // optional, per id
 *     for each event: mp_solver_feed(s, &ev, diag);     // in stream order
 *     mp_solver_finish(s);
 *     read results with mp_solver_device_count() / mp_solver_device();
 *     mp_solver_free(s);
 *
 *   One pass computes everything, the breakdown at the peak included: the
 *   solver keeps per group its live count at the current peak and, on each
 *   new peak, updates only the groups changed since the previous one
 *   (amortised O(1) per event). Memory: the live set (48 to 96 B per live
 *   block), the fragmentation index (about 35 B per block inside a region,
 *   plus a log of deferred updates of at most 4 MiB per memory id), the
 *   groups (about 70 B each), the timeline and the OOM records.
 *
 * Two models of "in use", chosen per memory id
 *   Address model (.memprof captures, any source without allocator stats):
 *     heap  = sum of allocated_bytes (requested_bytes when allocated is 0)
 *             of the live allocations (ALLOC minus matching FREE by address);
 *     stack = 0 (no event of the model declares reserved bytes yet);
 *     capacity = the declared capacity (mp_solver_declare_memory), else the
 *             sum of the sizes of the regions live at that moment, else unknown;
 *     free  = capacity - stack - heap (clamped at 0) when capacity is known;
 *     fragmentation = 1 - largest free chunk / total free over the free space
 *             inside the memory id's regions (REGION_ADD/REGION_REMOVE),
 *             exact at every event; 0 when regions exist but have no free
 *             byte; unknown (NAN) without regions. Allocations not wholly
 *             inside one region count in heap but not in fragmentation.
 *   Stats model (sources whose events carry MP_EVENT_F_STATS, e.g. xplane
 *   imports of TF's BFC allocator): from the first event of a memory id that
 *   has MP_EVENT_F_STATS on, its figures at an event are the last reported
 *   stats: stack = stats.stack_bytes, heap = stats.heap_bytes, free =
 *   stats.free_bytes, capacity = stack + heap + free (at the peak: the
 *   reference's "memory capacity"), fragmentation = stats.fragmentation
 *   (clamped to [0,1], NAN if not finite). Allocations are still tracked by
 *   address for the breakdown; whatever part of the reported heap is not
 *   covered by tracked allocations gets one "unknown origin" row.
 *   Lifetime peak: the largest of in-use and stats.peak_bytes ever seen.
 *
 * In use = stack + heap. The peak is the first event where in use reaches
 * its maximum (ties: the first wins) -- in the address model. In the stats
 * model the last event at the maximum wins, as in TensorBoard's Memory
 * Profile, so that the peak time users compare with it is the same.
 *
 * Steps window (opts.steps_set): events whose step is outside [first, last]
 * still update the live set (allocations made before the window are live in
 * it), but only events inside the window count, make peaks, timeline points
 * and OOM records. Leaks are what is live at the end of the window (at the
 * first event whose step is > last, or at the end of the stream).
 */
#ifndef MEMPROF_SOLVER_H
#define MEMPROF_SOLVER_H

#include <memprof/error.h>
#include <memprof/event.h>
#include <memprof/source.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_solver mp_solver_t;

typedef struct mp_solver_options {
	uint32_t timeline_points; /* at most this many timeline points; 0 = 1000; 1 allowed */
	uint32_t top;             /* live rows kept per OOM record; 0 = 10 */
	uint32_t max_oom_records; /* detailed OOM records per memory id; 0 = 1000 (the rest are counted) */
	int breakdown;            /* build the breakdown rows at the peak; default 1 */
	int steps_set;            /* restrict to steps [step_first, step_last] */
	int64_t step_first, step_last;
	int timeline;             /* build the timeline; default 1 (0 saves time when it is not shown) */
} mp_solver_options_t;

/* Defaults: {1000, 10, 1000, 1, 0, 0, 0, 1}. */
void mp_solver_options_init(mp_solver_options_t *opts);

/* A group of allocations: identical (op, region, dtype, shape, metadata,
 * requested, allocated). String ids are the source's (resolve with
 * mp_source_string). */
typedef struct mp_solver_row {
	uint32_t op, dtype, shape;   /* string ids, 0 = none */
	uint32_t metadata;           /* string id, 0 = none (mp_event_t.metadata) */
	uint8_t region;              /* mp_region_type_t */
	uint8_t unknown_origin;      /* 1: bytes the source reports in use but no tracked
	                              * allocation explains (made before the capture) */
	uint64_t requested_bytes;    /* per allocation */
	uint64_t allocated_bytes;    /* per allocation (requested when the source gave none) */
	uint64_t occurrences;        /* live allocations in this group */
	uint64_t total_bytes;        /* allocated_bytes * occurrences: rows sum to heap */
} mp_solver_row_t;

/* The state of a memory id at one event. */
typedef struct mp_solver_point {
	uint64_t time_ns;
	uint64_t event_index;   /* the event's own index (mp_event_t.index) */
	int64_t step;
	uint64_t stack_bytes;
	uint64_t heap_bytes;
	uint64_t free_bytes;    /* valid when has_free */
	uint64_t largest_free_bytes; /* largest free chunk inside regions; valid when has_largest */
	uint64_t region_free_bytes;  /* all free bytes inside regions; valid when has_largest */
	double fragmentation;   /* in [0,1]; NAN when unknown */
	uint64_t reserved_bytes; /* bytes of the live regions (segments, pools, arenas the
				  * allocator holds); valid when has_reserved */
	uint8_t has_free;
	uint8_t has_largest;
	uint8_t has_reserved;   /* the memory id has had regions (REGION_ADD) by then */
} mp_solver_point_t;

/* One failed allocation and the state at that instant. */
typedef struct mp_solver_oom {
	mp_solver_point_t at;       /* heap/free/largest/fragmentation at the failure */
	uint32_t op;                /* string id of the op that asked */
	uint64_t requested_bytes;
	mp_solver_row_t *top;       /* the largest live groups at that instant; borrowed */
	size_t top_count;
} mp_solver_oom_t;

/* Everything computed for one memory id. Borrowed from the solver; valid
 * until mp_solver_free(). */
typedef struct mp_solver_device {
	uint32_t id;
	int stats_model;                /* 1 when the stats model is in force */
	uint64_t capacity_bytes;        /* at the peak (see the models above); 0 = unknown */
	uint64_t declared_capacity;     /* from mp_solver_declare_memory, 0 if none */
	uint64_t events;                /* events of this memory id, whole stream */
	uint64_t allocations, deallocations, failed_allocations, dropped_events;
	uint64_t unknown_frees;         /* FREE of an address not live (counted, ignored) */
	uint64_t duplicate_allocations; /* ALLOC at an address already live (the old one is dropped) */
	uint64_t rejected_regions;      /* REGION_ADD overlapping a live region, or unknown REGION_REMOVE */
	uint64_t lifetime_peak_bytes;   /* the true maximum of in use over the whole stream */
	int has_peak;                   /* 0: no event of this id inside the window */
	uint64_t peak_bytes;            /* stack + heap at the peak */
	uint32_t peak_mark;             /* label (string id) of the last MARK of the stream before
	                                 * the peak, any memory id's; 0 = none */
	uint32_t peak_phase;            /* label (string id) of the innermost phase open at the
	                                 * peak (MARK events with MP_EVENT_F_PHASE_BEGIN/END,
	                                 * any memory id's); 0 = none */
	mp_solver_point_t peak;
	const char *fragmentation_reason; /* why peak.fragmentation is NAN, else NULL; static */
	mp_solver_point_t *timeline;    /* time-ordered, includes the peak */
	size_t timeline_count;
	mp_solver_row_t *breakdown;     /* live at the peak, by total_bytes descending */
	size_t breakdown_count;
	int has_breakdown;              /* breakdown computed (opts.breakdown and a peak) */
	mp_solver_row_t *leaks;         /* live at the end of the window */
	size_t leak_count;
	uint64_t leak_bytes;
	mp_solver_oom_t *oom;
	size_t oom_count;               /* records kept */
	uint64_t oom_total;             /* failed allocations in the window (>= oom_count) */
	/* Reserved vs allocated: the most bytes its live regions held (what
	 * an allocator reserved: a CUDA program's segments and pools, an
	 * arena), the first time it was reached, inside the window. Heap is
	 * what was handed out of them. has_reserved_peak: a region was live in
	 * the window. */
	int has_reserved_peak;
	uint64_t reserved_peak_bytes;
	uint64_t reserved_peak_time_ns;
	uint64_t reserved_peak_event;   /* the event's index */
} mp_solver_device_t;

/* Create a solver. Returns NULL on allocation failure. Caller owns; free
 * with mp_solver_free(). */
mp_solver_t *mp_solver_new(const mp_solver_options_t *opts);
void mp_solver_free(mp_solver_t *s);

/* Declare a memory id and its capacity (0 = unknown). Optional: ids seen in
 * events are created on first use. Ids up to MP_SOLVER_MAX_MEMORY-1. */
#define MP_SOLVER_MAX_MEMORY 65536u
int mp_solver_declare_memory(mp_solver_t *s, uint32_t id, uint64_t capacity_bytes);

/* Feed the next event. Returns 0, MP_ENOMEM, MP_EUSAGE after
 * mp_solver_finish(), or MP_ELIMIT for a memory id >= MP_SOLVER_MAX_MEMORY
 * (diag says which event). Never fails for odd events (unknown frees,
 * overlapping regions, ...): those are counted. */
int mp_solver_feed(mp_solver_t *s, const mp_event_t *ev, mp_diag_t *diag);

/* Feed ev[0..n) in order; the same as n calls of mp_solver_feed, but
 * faster with large live sets (it prefetches what the batch will touch).
 * Stops at the first error. */
int mp_solver_feed_many(mp_solver_t *s, const mp_event_t *ev, size_t n, mp_diag_t *diag);

/* End of the stream: computes what is due at the end (timeline, leaks,
 * breakdown rows). Returns 0 or MP_ENOMEM. */
int mp_solver_finish(mp_solver_t *s);

/* Feed every event of a source and finish. Returns 0 or the source's /
 * solver's error with diag filled. */
int mp_solver_run(mp_solver_t *s, mp_source_t *src, mp_diag_t *diag);
/* The same on the calling thread alone (no reader thread): for callers
 * that run one solver per core themselves (a parallel replay). */
int mp_solver_run_inline(mp_solver_t *s, mp_source_t *src, mp_diag_t *diag);

/* Results, in increasing memory id order; only ids that were declared or
 * seen in an event. Borrowed; valid until mp_solver_free(). */
size_t mp_solver_device_count(const mp_solver_t *s);
const mp_solver_device_t *mp_solver_device(const mp_solver_t *s, size_t i);
/* The device for a memory id, or NULL. */
const mp_solver_device_t *mp_solver_find(const mp_solver_t *s, uint32_t id);

/* Why an allocation failed, judged from the state at that instant:
 * "full" (the request exceeds the free bytes, or all the free bytes inside
 * the regions), "fragmented" (enough bytes free inside the regions, but no
 * free chunk that large), "fits" (a free chunk was large enough: a limit
 * outside the tracked regions), or NULL when there is nothing to compare
 * with (no capacity and no regions). Static strings. */
const char *mp_solver_oom_cause(const mp_solver_oom_t *o);

/* How the source ended, as recorded by mp_solver_run(); MP_END_CLEAN when
 * the solver was driven by hand. */
mp_end_status_t mp_solver_end_status(const mp_solver_t *s);

/* Events fed; dropped events not attributable to a memory id. */
uint64_t mp_solver_event_count(const mp_solver_t *s);
uint64_t mp_solver_dropped_unattributed(const mp_solver_t *s);
/* MARK events with MP_EVENT_F_PHASE_BEGIN or _END fed (0: the stream has
 * no phases; a chart need not read it again to draw them). */
uint64_t mp_solver_phase_marks(const mp_solver_t *s);

/* ---- Seeding: starting from a known state instead of the first event ----
 *
 * A seek (issue 43: `memprof report --peak` of a long capture) starts the
 * solver from a checkpoint -- the live set after the stream's first
 * `events` events -- and feeds only the events after it. The seed is that
 * state, with the whole-prefix figures the results print: given a seed
 * equal to the state a full replay has after those events, feeding the
 * rest gives results equal to the full replay's, byte for byte in the
 * report, for every figure that depends only on the state and what
 * follows: the peak and its breakdown and fragmentation when the peak is
 * after the seed (mp_solver_seed_missed says when it is not), the leaks,
 * the OOM records after the seed, the counters. Not the timeline (its
 * points are down-sampled from the first event fed). The address model
 * only. With a steps window, seed a state before the window's first step,
 * its window counters and peaks zero: the window's results (timeline
 * included) are then the full replay's (src/cli/report_seek_steps.c).
 *
 * Call mp_solver_seed once, after mp_solver_declare_memory and before
 * the first mp_solver_feed; the first event fed then has index
 * seed->events (the source must give it that index). */

/* A live block: what an allocation record gave it (string ids of the
 * source the events come from). */
typedef struct mp_solver_seed_block {
	uint64_t address;
	uint64_t requested_bytes;
	uint64_t allocated_bytes;    /* 0: requested_bytes counts (mp_live_footprint) */
	uint32_t op, dtype, shape;   /* string ids, 0 = none */
	uint32_t metadata;           /* string id, 0 = none */
	uint8_t region;              /* mp_region_type_t */
	uint32_t stack;              /* call stack id, 0 = none (the solver keeps none: later passes) */
} mp_solver_seed_block_t;

typedef struct mp_solver_seed_region {
	uint64_t base, size;
} mp_solver_seed_region_t;

/* One memory id at the seed: its state and its figures over the events
 * before it (what mp_solver_device_t would say of them). */
typedef struct mp_solver_seed_memory {
	uint32_t id;
	const mp_solver_seed_block_t *blocks;   /* distinct addresses, any order */
	size_t nblocks;
	const mp_solver_seed_region_t *regions; /* live regions, not overlapping, any order */
	size_t nregions;
	int regions_seen;                       /* a region was declared before (even if none is live) */
	uint64_t events, allocations, deallocations, failed_allocations, dropped_events;
	uint64_t unknown_frees, duplicate_allocations, rejected_regions;
	uint64_t lifetime_peak_bytes;
	/* The most in use before the seed (has_peak: any event): a later
	 * moment is the peak only above it (ties: the first moment wins). */
	int has_peak;
	uint64_t peak_bytes;
	/* The reserved peak before the seed, as mp_solver_device_t has it. */
	int has_reserved_peak;
	uint64_t reserved_peak_bytes, reserved_peak_time_ns, reserved_peak_event;
} mp_solver_seed_memory_t;

typedef struct mp_solver_seed {
	uint64_t events;               /* events before the seed: the next one's index */
	uint64_t dropped_unattributed;
	uint32_t last_mark;            /* label of the last MARK before it, 0 = none */
	const uint32_t *phases;        /* labels of the open phases, outermost first */
	uint32_t nphases;
	uint64_t phase_marks;          /* phase MARKs before it */
	const mp_solver_seed_memory_t *memories;
	size_t nmemories;
} mp_solver_seed_t;

/* Start s from seed (borrowed for the call). Returns 0, MP_EUSAGE (after
 * a feed, a second seed; two blocks at one address, an
 * empty or overlapping region: diag says which), MP_ELIMIT (a memory id
 * out of range) or MP_ENOMEM. */
int mp_solver_seed(mp_solver_t *s, const mp_solver_seed_t *seed, mp_diag_t *diag);

/* A seek that stops after the moment it needs (the peak) has not seen the
 * events after it: after mp_solver_finish, the whole stream's counters
 * are set from `totals` (per memory id: events, allocations,
 * deallocations, failed_allocations (and oom_total), dropped_events,
 * unknown_frees, duplicate_allocations, rejected_regions,
 * lifetime_peak_bytes; the stream's events and dropped_unattributed).
 * Leaks, the timeline and OOM records after the stop stay unknown: not
 * for those. Returns 0, MP_EUSAGE (before finish), or MP_ENOTFOUND (a
 * memory id the solver has not seen). */
int mp_solver_seed_totals(mp_solver_t *s, const mp_solver_seed_t *totals);

/* After mp_solver_finish of a seeded solver: 1 when a memory id's peak is
 * the seed's (nothing after the seed reached it: its point, breakdown and
 * fragmentation are unknown; seed from an earlier state), else 0. */
int mp_solver_seed_missed(const mp_solver_t *s);

/* After mp_solver_finish of both: dst's results for memory id `id` become
 * src's, and src's become dst's (the two swap that id's state). A report
 * seeks from a late checkpoint while a memory id peaked before it (a
 * program's early mappings): a second solver, read from the start up to
 * that early peak, gives that id's peak and breakdown, the seeded one the
 * rest. Returns 0, MP_EUSAGE (not both finished) or MP_ENOTFOUND (the id
 * missing from either). */
int mp_solver_swap_memory(mp_solver_t *dst, mp_solver_t *src, uint32_t id);

/* The same for the peak alone: its point, breakdown, mark and phase, the
 * capacity and model at it, the lifetime and reserved peaks. The rest --
 * counters, leaks, OOM records, timeline -- stays each solver's: a report
 * that reads to the end (--leaks, --oom) takes an early memory id's peak
 * from the solver read from the start, its end from the seeded one. */
int mp_solver_swap_peak(mp_solver_t *dst, mp_solver_t *src, uint32_t id);

/* A stream solved in consecutive segments, one solver each: w[0] fed
 * from the first event, w[i] (i > 0) seeded (mp_solver_seed, its
 * reserved_peak_event unknown: UINT64_MAX) with the state at the end of
 * w[i-1]'s segment and fed the events after it, up to the next
 * segment's start, the last to the end; all finished, no steps window.
 * w[n-1] then holds the results a single solver fed every event gives:
 * its own counters, leaks and end state, with the peak (point,
 * breakdown, mark, phase, capacity, lifetime peak) of the last segment
 * that went above its seed's peak (ties: the first moment wins, as in one
 * pass), the reserved peak likewise, and every segment's OOM records in
 * stream order (at most opts.max_oom_records; the earlier solvers lose
 * theirs). The address model only. Returns 0, MP_EUSAGE (a solver not
 * finished or not seeded, a steps window, the stats model), MP_ENOTFOUND
 * (no segment saw a memory id's peak: a seed that disagrees) or
 * MP_ENOMEM; on error the results are not to be used. */
int mp_solver_merge_segments(mp_solver_t *const *w, size_t n);

/* Bytes the solver holds now (live maps, indexes, groups, results). */
size_t mp_solver_memory_bytes(const mp_solver_t *s);

#ifdef __cplusplus
}
#endif
#endif
