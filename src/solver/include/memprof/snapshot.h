/* memprof/snapshot.h - what a memory id held at chosen events: its regions
 * and its live blocks with their addresses, the input of the memory map.
 *
 * The solver keeps figures, not addresses, so a snapshot is a second pass
 * over the source: mp_snapshot_run() rewinds it and replays the events with
 * the solver's rules for blocks and regions (an ALLOC at a live address
 * replaces the block, a FREE of an unknown address is ignored, a region
 * declared again at its base grows it, overlapping or unknown regions are
 * ignored), so the free bytes and the largest free chunk a snapshot shows
 * are the ones the solver reports at that event. Memory: the live sets of
 * the memory ids asked for, plus one sorted copy at each target.
 */
#ifndef MEMPROF_SNAPSHOT_H
#define MEMPROF_SNAPSHOT_H

#include <memprof/error.h>
#include <memprof/source.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_snapshot_block {
	uint64_t addr;
	uint64_t size;   /* allocated bytes (requested when the source gave none); > 0 */
	uint32_t op;     /* string id of the op that allocated it */
	uint8_t region;  /* mp_region_type_t */
} mp_snapshot_block_t;

typedef struct mp_snapshot_region {
	uint64_t base, end; /* [base, end) */
} mp_snapshot_region_t;

/* The state of one memory id just after one event. Borrowed by the
 * callback; valid only during the call. */
typedef struct mp_snapshot {
	uint32_t memory;
	uint64_t event_index;
	uint64_t time_ns;
	int64_t step;
	const mp_snapshot_region_t *regions; /* sorted by base, not overlapping */
	size_t nregions;
	const mp_snapshot_block_t *blocks;   /* live, sorted by address */
	size_t nblocks;
} mp_snapshot_t;

typedef struct mp_snapshot_target {
	uint32_t memory;
	uint64_t event_index; /* mp_event_t.index: e.g. the solver's peak or an OOM record */
} mp_snapshot_target_t;

/* Called once per target, in stream order (targets at the same event in
 * the order of the targets array), with the target's index in that array.
 * Return 0 to go on, or a negative code to stop mp_snapshot_run with it. */
typedef int (*mp_snapshot_fn)(void *ctx, size_t target, const mp_snapshot_t *snap);

/* Rewind src, replay it and call fn at each target. Returns 0; the source's
 * error; MP_ENOMEM; MP_ENOTFOUND when a target's event is not in the
 * stream (diag names it); or fn's code. */
int mp_snapshot_run(mp_source_t *src, const mp_snapshot_target_t *targets, size_t n, mp_snapshot_fn fn, void *ctx,
		    mp_diag_t *diag);

/* mp_snapshot_run of a capture sought to checkpoint `from` and not read
 * since (mp_capture_seek; issue 43; src is not rewound: a sought
 * capture's rewind inflates every block before the checkpoint again):
 * the live sets start as the checkpoint's
 * blocks (footprint, op, region type: one with MP_CKPT_F_TAGS or
 * MP_CKPT_F_UNTAGGED) and regions, then src's events from there apply;
 * every target must be at or after its horizon. from NULL: as
 * mp_snapshot_run. */
struct mp_checkpoint;
int mp_snapshot_run_from(mp_source_t *src, const struct mp_checkpoint *from, const mp_snapshot_target_t *targets,
			 size_t n, mp_snapshot_fn fn, void *ctx, mp_diag_t *diag);

#ifdef __cplusplus
}
#endif
#endif
