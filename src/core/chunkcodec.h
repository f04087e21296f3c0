/* chunkcodec.h - the columnar layout of a chunk's records, and the ring
 * records they are made from (internal).
 *
 * In the file, records are rows of varints (a tag, then the record's
 * fields; docs/format.md), laid out as columns -- tags, time deltas,
 * address deltas, indices (reuse slots and ages), sizes, everything else
 * -- so that each column is homogeneous and compresses well on its own.
 * Since format 2.0 each varint column is stored as two parts: the first
 * byte of every varint (its "head") and the bytes after it ("tails"). The
 * heads say most about a value and the tails are alike in another way;
 * with a Huffman table each, they code smaller than the whole varints do
 * (time deltas by about 15%). The flusher writes the parts straight from
 * the ring's fixed-width records; the reader decodes records from them in
 * place. 1.x chunks (five columns of whole varints) are rewritten into the
 * 2.0 parts when they are read (mp__chunk_upgrade), so one decoder serves
 * both.
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

/* The columns of the 2.0 layout. */
enum { MP_COL_TAG, MP_COL_TIME, MP_COL_ADDR, MP_COL_IDX, MP_COL_SIZE, MP_COL_MISC, MP_COLS };
/* Its parts, in file order: the tag bytes, then per varint column its
 * heads and its tails. */
#define MP_PARTS (2 * MP_COLS - 1)
#define MP_HEAD(c) (2 * (c) - 1)
#define MP_TAIL(c) (2 * (c))
/* The five columns of the 1.x layout (whole varints; reuse slots and ages
 * in the address column). */
enum { MP_COL1_TAG, MP_COL1_TIME, MP_COL1_ADDR, MP_COL1_SIZE, MP_COL1_MISC, MP_COLS1 };

/* The reader's check of a 2.0 chunk's parts (lengths lens, summing to n)
 * before it decodes them in place: known record kinds, in each column
 * exactly one head per varint its records need, and tails that hold
 * exactly one terminated run per head that says it continues -- so that
 * records decoded part by part (decode.c) use every byte and never run past
 * a part. Returns 0, or -1 when the parts are inconsistent. Varints longer
 * than 10 bytes are left to the decoder (a corrupted record). */
int mp__chunk_check(const uint8_t *parts, const uint64_t lens[MP_PARTS], size_t n);

/* A 1.x chunk's columns (lengths lens1, summing to n) rewritten in the 2.0
 * layout: out (n bytes: the same varints, split and regrouped) and the part
 * lengths. Returns 0, -1 when the columns are inconsistent (a record kind
 * 1.x did not have, a column that ends early or has bytes left), or -2 when
 * out of memory. */
int mp__chunk_upgrade(const uint8_t *cols, const uint64_t lens1[MP_COLS1], size_t n, uint8_t *out,
		      uint64_t lens[MP_PARTS]);

/* The rest of a split varint whose head h has the high bit set, from the
 * tails at [*tp, te): 0 and *v, or -1 when the tails end inside it or the
 * value does not fit in 64 bits (the checks of mp_varint_get). Varints of
 * three bytes and more go out of line (mp__varint_rest_long). */
int mp__varint_rest_long(uint64_t h, const uint8_t **tp, const uint8_t *te, uint64_t *v);

static inline __attribute__((always_inline)) int mp_varint_rest(uint64_t h, const uint8_t **tp,
								 const uint8_t *te, uint64_t *v)
{
	const uint8_t *p = *tp;

	if (__builtin_expect(p < te && *p < 0x80, 1)) { /* two bytes in all */
		*v = (h & 0x7f) | (uint64_t)*p << 7;
		*tp = p + 1;
		return 0;
	}
	if (p + 1 < te && p[1] < 0x80) { /* three (address deltas often) */
		*v = (h & 0x7f) | (uint64_t)(p[0] & 0x7f) << 7 | (uint64_t)p[1] << 14;
		*tp = p + 2;
		return 0;
	}
	return mp__varint_rest_long(h, tp, te, v);
}

/* The next split varint of a column: head at [*hp, he), tails at [*tp, te). */
static inline __attribute__((always_inline)) int mp_varint_get2(const uint8_t **hp, const uint8_t *he,
								const uint8_t **tp, const uint8_t *te, uint64_t *v)
{
	const uint8_t *h = *hp;

	if (h >= he)
		return -1;
	*hp = h + 1;
	if (*h < 0x80) {
		*v = *h;
		return 0;
	}
	return mp_varint_rest(*h, tp, te, v);
}

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
 * the least predictable field), and each other allocation at an address
 * freed earlier in the chunk into ALLOC_REFREED (the number of frees
 * since), and writes the varint records split into parts, left in e->cols
 * with their lengths in lens. It stops at the
 * first record boundary at or past limit words (limit <= n); e->consumed
 * says where. The encoder keeps its working memory between chunks.
 * Returns 0, or -1 (out of memory, or records that do not parse: a writer
 * bug). */
#define MP_HINT_THREADS 256

typedef struct mp_chunk_encoder {
	mp_mbuf_t cols[MP_PARTS];
	mp_mbuf_t tab;
	void *table;     /* the age table (AGE_SLOTS entries): allocations and frees */
	uint64_t gen;
	uint64_t events; /* events in the last chunk encoded (a realloc counts 2) */
	size_t consumed; /* words of it taken */
	int no_ages;     /* set by the caller: skip the aged frees and refreed allocations (cheaper, larger) */
	int no_run;      /* set by tests: every record through encode's general loop, none through the
			  * batched ALLOC/FREE/REALLOC one (chunkenc.c, run_x; same output) */
	/* flush.c's: per thread (index mod MP_HINT_THREADS) and part, 0 to
	 * Huffman-analyse its next segment, or how many in a row have been
	 * stored without a look since one looked like noise (MP_DH_NOISE) */
	uint8_t stored_hint[MP_HINT_THREADS][MP_PARTS];
} mp_chunk_encoder_t;

int mp__chunk_encode(mp_chunk_encoder_t *e, const uint64_t *words, size_t n, size_t limit, uint64_t *st,
		     const struct mp_capclock *clock, uint64_t lens[MP_PARTS]);
void mp__chunk_encoder_release(mp_chunk_encoder_t *e);

#endif
