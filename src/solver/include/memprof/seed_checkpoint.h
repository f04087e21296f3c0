/* memprof/seed_checkpoint.h - a solver seed (memprof/solver.h, "Seeding")
 * from a capture's checkpoint (memprof/checkpoint.h): what `memprof
 * report` seeks with (src/cli/report_seek.c), and what reports a window of
 * a capture that starts at a checkpoint (a flight recorder's segment). */
#ifndef MEMPROF_SEED_CHECKPOINT_H
#define MEMPROF_SEED_CHECKPOINT_H

#include <memprof/checkpoint.h>
#include <memprof/solver.h>

/* A seed and the arrays it points into (owned). */
typedef struct mp_checkpoint_seed {
	mp_solver_seed_t seed;
	mp_solver_seed_memory_t *mem;
	mp_solver_seed_block_t *blocks;
	mp_solver_seed_region_t *regions;
} mp_checkpoint_seed_t;

/* The seed of ck into *out (zeroed by the caller; free it with
 * mp_checkpoint_seed_free, also after an error): every memory id its
 * round's SUMMARY names or that has blocks or regions, with its blocks
 * and their tags (use it when ck->flags has MP_CKPT_F_TAGS, or
 * MP_CKPT_F_UNTAGGED: no block has any), its regions, and the figures of the events
 * before it the solver prints (allocations, frees, failures, the peak;
 * with the 2.5 SUMMARY fields: region events, frees of an address not
 * live, rejected regions, the reserved peak, and the allocations at a
 * live address that follow); seed.events = ck->events, the last mark.
 * reserved_index[id] (may be NULL) is the index of the event of id's
 * reserved peak, when the caller found it (UINT64_MAX: unknown; then
 * mp_solver_device_t.reserved_peak_event stays UINT64_MAX unless a later
 * event makes a new one). Returns 0 or MP_ENOMEM. */
int mp_checkpoint_seed(const mp_checkpoint_t *ck, const uint64_t *reserved_index, mp_checkpoint_seed_t *out);
void mp_checkpoint_seed_free(mp_checkpoint_seed_t *s);

#endif
