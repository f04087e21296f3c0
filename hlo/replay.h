/* replay.h - the trace replay shared by analyze.c and replay.c. */
#ifndef MEMPROF_HLO_REPLAY_H
#define MEMPROF_HLO_REPLAY_H

#include "internal.h"

typedef struct live_entry {
	int32_t lb;
	uint32_t epoch;
} live_entry_t;

typedef struct replay {
	const mp_hlo_module_t *m;
	const Xla__HeapSimulatorTrace *tr;
	int compat;
	int32_t *rc, *canon, *display;
	int32_t *root_cache;  /* last root found for a buffer, valid while cache_gen == gen */
	uint32_t *cache_gen, gen;
	uint32_t *epoch;
	int64_t *span_start, *span_limit;
	uint8_t *has_span;
	live_entry_t *live;
	size_t n_live, cap_live;
	int64_t heap, unpadded, peak, peak_unpadded, peak_pos;
	int32_t seen_alloc;
	/* first pass only */
	int64_t *heap_tl, *unpadded_tl;
	size_t n_unknown;
	int64_t first_unknown;
} replay_t;

/* Allocate the state for a trace; timeline != 0 also records the series.
 * Free with mp_hlo_replay_free() even on failure. */
int mp_hlo_replay_init(replay_t *r, const mp_hlo_module_t *m, const Xla__HeapSimulatorTrace *tr, int compat,
		       int timeline);
void mp_hlo_replay_free(replay_t *r);
/* Replay events [0, stop). 0, or MP_EHLO / MP_ELIMIT / MP_ENOMEM with diag naming the event. */
int mp_hlo_replay_run(replay_t *r, size_t stop, mp_diag_t *diag);
/* The trace of a colour: that of the first non-indefinite allocation of the
 * colour with one, else the trace with most events on its buffers; -1 if none. */
int64_t mp_hlo_pick_trace(const mp_hlo_module_t *m, int64_t color);
int mp_hlo_is_indefinite(const Xla__BufferAllocationProto *a);
mp_hlo_category_t mp_hlo_category(const Xla__BufferAllocationProto *a);

#endif
