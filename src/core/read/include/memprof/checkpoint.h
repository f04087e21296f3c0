/* checkpoint.h - the CHECKPOINT sections of a capture (format 2.4,
 * docs/format.md "Checkpoint"): the live blocks of every memory id as of a
 * round's horizon, which the writer records at intervals so that a reader
 * can start there instead of replaying every event before it.
 *
 * The reader checks every checkpoint it meets: a malformed one, or one
 * that disagrees with the SUMMARY of its block, is skipped and said
 * (mp_capture_checkpoints_bad: block index, offset, why), never handed
 * out, and the events read the same; only a section whose length runs
 * past its block is a corrupt block. A caller that wants them asks for a
 * callback; `memprof report` seeks from them (src/cli/report_seek.c). */
#ifndef MEMPROF_CHECKPOINT_H
#define MEMPROF_CHECKPOINT_H

#include <memprof/reader.h>

#include <stddef.h>
#include <stdint.h>

typedef struct mp_checkpoint_block {
	uint64_t address;
	uint64_t bytes;     /* the footprint: allocated size, or requested where that is 0 */
	uint64_t requested;
	/* (2.5, MP_CKPT_F_TAGS) what its allocation carried: op, dtype, shape
	 * (string ids), region type, call stack id; 0 without the flag */
	uint32_t op, dtype, shape, stack;
	uint8_t region;
} mp_checkpoint_block_t;

typedef struct mp_checkpoint_memory {
	uint32_t id;
	size_t nblocks;
	const mp_checkpoint_block_t *blocks; /* in increasing address order; borrowed from the checkpoint */
} mp_checkpoint_memory_t;

typedef struct mp_checkpoint_region {
	uint32_t memory;
	uint64_t base, end; /* [base, end) */
} mp_checkpoint_region_t;

/* One memory id's figures over the events before a checkpoint, from its
 * round's SUMMARY (has_figures: the 2.5 fields, region events ... reserved
 * peak, were there). */
typedef struct mp_checkpoint_figures {
	int in_summary;                 /* the SUMMARY names this id */
	uint64_t allocations, frees, reallocs, failed, dropped; /* as mp_summary_memory_t */
	int has_peak;
	uint64_t peak_bytes, peak_ns;
	int has_figures;
	uint64_t region_events, unknown_frees, rejected_regions;
	int regions_seen, has_reserved_peak;
	uint64_t reserved_peak_bytes, reserved_peak_ns;
} mp_checkpoint_figures_t;

typedef struct mp_checkpoint {
	uint32_t flags;          /* MP_CKPT_F_* (memprof/format.h) */
	uint64_t horizon_ns;     /* the state after every event earlier than this */
	uint64_t events;         /* ... i.e. after the capture's first `events` events (a realloc counts 2) */
	uint64_t block_index;    /* the block that holds it */
	uint64_t block_offset;   /* that block's file offset */
	size_t nmemories;        /* memory ids with live blocks, increasing */
	mp_checkpoint_memory_t *memories;
	size_t nblocks;          /* all ids' blocks */
	mp_checkpoint_block_t *blocks; /* memories[i].blocks point into it */
	int64_t step;            /* the current step (-1: none yet) */
	size_t nregions;         /* live regions, by memory id then base */
	mp_checkpoint_region_t *regions;
	uint32_t last_mark;      /* (2.5, MP_CKPT_F_LAST_MARK) label of the last mark, 0: none */
	uint64_t back;           /* (2.5, MP_CKPT_F_BACK) the first block holding an event it does not
				    cover is block_index - back (0: none before its own) */
	size_t nfigures;         /* figures[id] for ids below it */
	mp_checkpoint_figures_t *figures;
} mp_checkpoint_t;

/* Called for each checkpoint, in file order, once its block has been
 * checked (before that block's events are returned). ck is borrowed for
 * the call (mp_checkpoint_copy keeps one). A non-zero return stops the
 * read with that error. */
typedef int (*mp_checkpoint_fn)(void *ctx, const mp_checkpoint_t *ck);
void mp_capture_on_checkpoint(mp_capture_t *cap, mp_checkpoint_fn fn, void *ctx);

/* The checkpoints the reader has met so far (the good ones). */
uint64_t mp_capture_checkpoints_seen(const mp_capture_t *cap);

/* The checkpoints that did not parse or disagreed with their round's
 * SUMMARY, which the reader skipped (a checkpoint is a shortcut: the
 * events read the same without it); *first (when not NULL and any) says
 * the first one: MP_ECORRUPT, its block index and offset, and why. */
uint64_t mp_capture_checkpoints_bad(const mp_capture_t *cap, mp_diag_t *first);

/* A copy of src into *dst (owned by the caller: mp_checkpoint_free);
 * 0 or -ENOMEM. */
int mp_checkpoint_copy(mp_checkpoint_t *dst, const mp_checkpoint_t *src);
void mp_checkpoint_free(mp_checkpoint_t *ck);

/* ---- Seeking (issue 43): reading from a checkpoint on ---- */

/* A block that ends a flush round (it starts with the round's HORIZON;
 * it holds the round's SUMMARY, and its CHECKPOINT when one was due). */
typedef struct mp_capture_round_end {
	uint64_t block_index;
	uint64_t offset;     /* the block's frame in the file */
	uint64_t horizon_ns; /* its round's horizon */
} mp_capture_round_end_t;

/* The capture's round ends, in file order, into *out (owned by the
 * caller: free()), found by walking the frames and inflating a few bytes
 * of each block: milliseconds for a capture of gigabytes. Before any event
 * is read. Returns 0 or a negative error (diag set); damage ends the walk
 * (the read finds it). */
int mp_capture_round_ends(mp_capture_t *cap, mp_capture_round_end_t **out, size_t *n, mp_diag_t *diag);

/* The checkpoint of round end re: 1 and *ck (owned: mp_checkpoint_free),
 * 0 when it holds none or a bad one (mp_capture_checkpoints_bad says it,
 * with its offset), or a negative error. Before any event is read. */
int mp_capture_checkpoint_at(mp_capture_t *cap, const mp_capture_round_end_t *re, mp_checkpoint_t *ck,
			     mp_diag_t *diag);

/* Read cap from checkpoint ck on (one of its own, by
 * mp_capture_checkpoint_at): the events returned are those of the full
 * read from ck's horizon on, with the same indices (the first: ck->events
 * plus the synthetic events before it) and steps, after the synthetic
 * events (memory declarations, dropped counts) of the full read before
 * them, numbered from ck->events. The blocks before are
 * read for their definitions only. A rewind reads from ck again. Before
 * any event is read; 0 or MP_EUSAGE. The state at ck goes to the solver
 * (mp_solver_seed). */
int mp_capture_seek(mp_capture_t *cap, const mp_checkpoint_t *ck, mp_diag_t *diag);

/* Before any event is read (after mp_capture_seek, or without one: a read
 * from the start): end the read before the first event later than
 * after_ns (what the caller needs is up to there: a peak), the source
 * then saying it ended as `end` (the capture's SUMMARY knows). 0 or
 * MP_EUSAGE (the capture has been read from already). */
int mp_capture_seek_stop(mp_capture_t *cap, uint64_t after_ns, mp_end_status_t end);

#endif
