/* chunkcodec.h - the columnar layout of a chunk's records, and the ring
 * records they are made from (internal).
 *
 * In the file, records are rows of varints (a tag, then the record's
 * fields; docs/format.md), laid out as five columns -- tags, time deltas,
 * addresses, sizes, everything else -- so that each column is homogeneous
 * and compresses well on its own (tags and time deltas shrink by 3-5x;
 * interleaved, deflate barely helps). The flusher writes the columns
 * straight from the ring's fixed-width records; the reader joins them back
 * into rows.
 */
#ifndef MP_CHUNKCODEC_H
#define MP_CHUNKCODEC_H

#include "mbuf.h"

#include <stddef.h>
#include <stdint.h>

/* The delta-encoding state of a thread's records, as a chunk header
 * carries it (docs/format.md, CHUNK). */
enum {
	MP_ST_TIME,      /* time of the previous record */
	MP_ST_ADDR,      /* address of the previous record */
	MP_ST_MEMORY,    /* current memory id */
	MP_ST_OP,        /* current context */
	MP_ST_REGION,
	MP_ST_DTYPE,
	MP_ST_SHAPE,
	MP_ST_REUSE,     /* the freed-address cache, MP_REUSE_SLOTS entries */
	MP_ST_COUNT = MP_ST_REUSE + 64
};
#define MP_ST_REUSE_AT MP_ST_REUSE

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

/* The ring's records (written by wthread.c, encoded by mp__chunk_encode):
 * 64-bit words, the first one
 *   bits 0-7 record kind (MP_REC_*), bit 8 MP_RING_WIDE,
 *   bits 16-31 memory id, bits 32-63 allocated - requested (int32) unless WIDE,
 * then by kind: ALLOC time, address, requested, [allocated if WIDE];
 * FREE / REGION_REMOVE time, address; ALLOC_FAILED time, requested;
 * REGION_ADD time, base, size; STEP time, zz(step); MARK time, label;
 * REALLOC time, old, new, requested, [allocated]; CONTEXT op, region,
 * dtype, shape; STACK stack id. Times are raw clock readings (clock.h). */
#define MP_RING_WIDE 0x100u

/* Words of a record by the low 9 bits of its first word (kind and WIDE;
 * 0: not a record). */
static const uint8_t mp_ring_words_tab[512] = {
	[1] = 4, [2] = 3, [3] = 3, [4] = 4, [5] = 3, [6] = 3, [7] = 3, [8] = 5, [9] = 5, [11] = 2,
	[256 + 1] = 5, [256 + 8] = 6,
};

static inline unsigned mp_ring_words(uint64_t w0)
{
	return mp_ring_words_tab[w0 & 0x1ff];
}

struct mp_capclock;

/* The flusher's side, in one pass over a chunk's ring records: converts
 * times (clock), delta-encodes against and updates the thread's state st
 * (MP_ST_*: the chunk header's state on entry, the next chunk's on
 * return), finds allocations at addresses its freed-address cache holds
 * (ALLOC_REUSED), turns each FREE of a block allocated earlier in the same
 * chunk into a FREE_AGED record (the number of allocations since, instead
 * of an address delta: frees are half of all events and their addresses
 * the least predictable field), and writes the varint records split into
 * columns, left in e->cols with their lengths in lens. words must have 8
 * readable words past n (the ring's slack). The encoder keeps its working
 * memory between chunks. Returns 0, or -1 (out of memory, or records that
 * do not parse: a writer bug). */
typedef struct mp_chunk_encoder {
	mp_mbuf_t cols[MP_COLS];
	mp_mbuf_t tab;
	void *table;     /* the age table (AGE_SLOTS entries) */
	uint64_t gen;
	uint64_t events; /* events in the last chunk encoded (a realloc counts 2) */
	int no_ages;     /* set by the caller: skip the aged frees (cheaper, larger) */
} mp_chunk_encoder_t;

int mp__chunk_encode(mp_chunk_encoder_t *e, const uint64_t *words, size_t n, uint64_t *st,
		     const struct mp_capclock *clock, uint64_t lens[MP_COLS]);
void mp__chunk_encoder_release(mp_chunk_encoder_t *e);

#endif
