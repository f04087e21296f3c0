/* memprof/rounds.h - a capture's timeline at round resolution (format
 * 2.5 ROUND sections, docs/format.md "Round"), read without decoding a
 * single event.
 *
 * The writer ends every flush round (about 90 ms) with a block holding
 * its HORIZON, SUMMARY and ROUND sections (and, at intervals, a
 * CHECKPOINT). mp_capture_rounds_read() walks the blocks' 24-byte frame
 * headers, inflates the first bytes of each block to tell those round
 * blocks from the event blocks, and reads the SUMMARY and ROUND of each
 * round block: O(rounds + blocks) small reads, never O(events). So
 * `memprof plot --chart timeline` of an hour-long capture reads a few MB.
 *
 * Each ROUND is checked against the SUMMARY before it in its block (the
 * same horizon and event count; per memory id, the live bytes at the
 * horizon equal the summary's, least <= live <= most <= the summary's
 * peak). One that disagrees, or does not parse, is not handed out: it is
 * counted and the first ones said with their block's index and offset.
 */
#ifndef MEMPROF_ROUNDS_H
#define MEMPROF_ROUNDS_H

#include <memprof/capsummary.h>
#include <memprof/error.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One memory id in one round (the live-set engine's live bytes: allocated
 * sizes, or requested where none was given). Least and most count the
 * live bytes at the round's start too (held from then on), so a round
 * where nothing went lower says least = the live bytes at its start. */
typedef struct mp_round_memory {
	uint32_t id;
	uint64_t live;                     /* live bytes at the round's horizon */
	uint64_t min, min_ns;              /* least live bytes in the round, first time */
	uint64_t max, max_ns;              /* most, first time */
	int64_t max_step;                  /* the step then (-1: none yet) */
	uint64_t first_ns, last_ns;        /* the round's first and last moments of this memory id */
	uint64_t reserved;                 /* live regions' bytes at the horizon */
	uint64_t reserved_max, reserved_max_ns; /* their most in the round, first time */
	uint64_t failed;                   /* failed allocations in the round */
	uint64_t failed_ns, failed_req;    /* the first one's time and request */
} mp_round_memory_t;

typedef struct mp_round {
	uint64_t start_ns;   /* the previous round's horizon (0 for the first) */
	uint64_t horizon_ns; /* every event before it is counted; UINT64_MAX: the final round */
	int64_t step;        /* the last step at the horizon, -1 before the first */
	uint64_t events;     /* events counted so far (the SUMMARY's) */
	uint64_t block, offset; /* where its block is */
	size_t first, n;     /* its memory ids: memories[first .. first + n), by id */
	int step_back;       /* (3.0) a step in it went lower than the one before (MP_ROUND_F_STEP_BACK) */
} mp_round_t;

#define MP_ROUNDS_SAID 8 /* bad rounds said in full (the rest counted) */

typedef struct mp_capture_rounds {
	mp_capture_summary_t summary; /* the capture's summary (mp_capture_summary_read) */
	mp_round_t *rounds;           /* time order; owned */
	size_t nrounds;
	mp_round_memory_t *memories;  /* owned */
	size_t nmemories;
	uint64_t blocks;              /* complete blocks walked */
	uint64_t inflated;            /* of them, inflated whole (the others: their first bytes) */
	uint64_t *capacity;           /* by memory id: the capacity its MEMORY section declared (0:
					 none), where the definitions at the start of a block held it;
					 owned */
	size_t ncapacity;
	uint64_t bad;                 /* ROUND sections ignored (said in bad_said) */
	char bad_said[MP_ROUNDS_SAID][192]; /* "block 7 at offset 81234: bad round: ..." */
} mp_capture_rounds_t;

/* Read path's rounds into *out (zeroed first; free with
 * mp_capture_rounds_free, also after an error). Returns 0 -- with
 * out->nrounds 0 when the capture has no ROUND section (written before
 * 2.5) -- or a negative error code, diag naming the file, the offset and
 * what is wrong (not a capture, a damaged frame; a damaged round block
 * is a bad round, not an error). A capture cut off mid-run gives the
 * rounds of its complete blocks. */
int mp_capture_rounds_read(const char *path, mp_capture_rounds_t *out, mp_diag_t *diag);

/* The figures of memory id `id` in round r, or NULL when it had no moment
 * in r. Borrowed from c. */
const mp_round_memory_t *mp_round_memory(const mp_capture_rounds_t *c, const mp_round_t *r, uint32_t id);

void mp_capture_rounds_free(mp_capture_rounds_t *c);

#ifdef __cplusplus
}
#endif
#endif
