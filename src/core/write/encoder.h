/* encoder.h - the writer's rings' records and the flusher's encoder that
 * turns them into a chunk's column parts (chunkenc.c; the layout it writes
 * is memprof/format/columns.h) (internal).
 */
#ifndef MP_WRITE_ENCODER_H
#define MP_WRITE_ENCODER_H

#include <memprof/format/columns.h>
#include <memprof/format/mbuf.h>

#include <stddef.h>
#include <stdint.h>

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
