/* chunkcodec.h - the columnar layout of a chunk's records (internal).
 *
 * Threads write their records row by row (tag, then the record's fields).
 * Before compressing, the flusher splits a chunk's records into five
 * columns -- tags, time deltas, addresses, sizes, everything else -- so that
 * each column is homogeneous and compresses well on its own (tags and time
 * deltas shrink by 3-5x; interleaved, deflate barely helps). The reader
 * joins the columns back into rows. Same bytes, reordered: the split never
 * grows a chunk.
 */
#ifndef MP_CHUNKCODEC_H
#define MP_CHUNKCODEC_H

#include "mbuf.h"

#include <stddef.h>
#include <stdint.h>

/* Where the freed-address cache starts in a chunk's state (MP_ST_REUSE). */
#define MP_ST_REUSE_AT 7

enum { MP_COL_TAG, MP_COL_TIME, MP_COL_ADDR, MP_COL_SIZE, MP_COL_MISC, MP_COLS };

/* The inverse of the writer's encoding: n bytes of columns (lengths lens,
 * summing to n) into rows. Returns 0, or -1 when the columns are
 * inconsistent (corrupted input). */
int mp__chunk_join(const uint8_t *cols, const uint64_t lens[MP_COLS], uint8_t *rows, size_t n);

/* The reader's check of a chunk's columns without joining them: lengths
 * summing to n, known record kinds, and in each column exactly the number
 * of complete varints its records need, so that records decoded column by
 * column (merge.c) use every byte and never run past a column. Returns 0,
 * or -1 when the columns are inconsistent. Varints longer than 10 bytes are
 * left to the decoder (a corrupted record). */
int mp__chunk_check(const uint8_t *cols, const uint64_t lens[MP_COLS], size_t n);

/* The writer's side, in one pass over a chunk's records: each FREE of a
 * block allocated earlier in the same chunk becomes a FREE_AGED record (the
 * number of allocations since, instead of an address delta: frees are half
 * of all events and their addresses the least predictable field), and the
 * records are split into columns, left in e->cols with their lengths in
 * lens. st is the chunk's start state (MP_ST_*). The encoder keeps its
 * working memory between chunks. Returns 0, or -1 (out of memory, or
 * records that do not parse: a writer bug). */
typedef struct mp_chunk_encoder {
	mp_mbuf_t cols[MP_COLS];
	mp_mbuf_t tab;
	void *table;
	uint64_t mask, gen;
	uint64_t events; /* events in the last chunk encoded (a realloc counts 2) */
	int no_ages;     /* set by the caller: skip the aged frees (cheaper, larger) */
} mp_chunk_encoder_t;

int mp__chunk_encode(mp_chunk_encoder_t *e, const uint8_t *rows, size_t n, const uint64_t *st,
		     uint64_t lens[MP_COLS]);
void mp__chunk_encoder_release(mp_chunk_encoder_t *e);

#endif
