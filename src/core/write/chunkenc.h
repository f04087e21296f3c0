/* chunkenc.h - the writer's encoder, its parts shared by the general loop
 * (chunkenc.c) and the batched loop for ALLOC/FREE/REALLOC (chunkenc_run.c):
 * varints split into heads and tails, the chunk's age table, the clock
 * cache (internal). */
#ifndef MP_CHUNKENC_H
#define MP_CHUNKENC_H

#include <memprof/format.h>
#include <memprof/format/varint.h>

#include "clock.h"
#include "encoder.h"

#include <string.h>

/* Everything the event path left undone happens here, on the flusher's
 * core, so this must keep up with a thread recording tens of millions of
 * events a second: fixed-width input (no parsing chain), varints written
 * with one unaligned store each, and a direct-mapped age table small enough
 * to stay in cache. */

/* The varint bytes of v as one word and their count (v < 2^56); longer
 * values are written by the caller the slow way. */
static inline uint64_t venc8(uint64_t v, unsigned *len)
{
	unsigned l = (unsigned)(64 - __builtin_clzll(v | 1) + 6) / 7;
	uint64_t x = (v & 0x7f) | ((v << 1) & (0x7full << 8)) | ((v << 2) & (0x7full << 16)) |
		     ((v << 3) & (0x7full << 24)) | ((v << 4) & (0x7full << 32)) | ((v << 5) & (0x7full << 40)) |
		     ((v << 6) & (0x7full << 48)) | ((v << 7) & (0x7full << 56));

	*len = l;
	return x | (0x8080808080808080ull & ((1ull << (8 * (l - 1))) - 1));
}

/* The largest value whose varint is as long as that of a value with these
 * leading zeros. */
static const uint64_t vmax_by_clz[64] = {
#define M(l) ((l) >= 10 ? ~0ull : (1ull << ((7 * (l)) & 63)) - 1)
#define X(z) M((64 - (z) + 6) / 7),
	X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
	X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
	X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47)
	X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) X(60) X(61) X(62) X(63)
#undef X
#undef M
};

/* vlen(v) <= vlen(w), with one lookup */
static inline int vlen_le(uint64_t v, uint64_t w)
{
	return v <= vmax_by_clz[__builtin_clzll(w | 1)];
}

/* A varint column's two write cursors: heads and tails. */
typedef struct {
	uint8_t *h, *t;
} col_t;

/* The long case of put(), out of line (chunkenc.c): values of 2^28 and
 * more are rare. Writes the head at h and the rest at t; returns how many
 * tail bytes (the cursors go by value, so that the caller's can stay in
 * registers). */
unsigned mp__chunkenc_put_long(uint8_t *h, uint8_t *t, uint64_t v);

/* By the leading zeros of v (v < 2^28, as 32 bits; 32 for v = 0): the
 * continuation bits of its varint bytes (low half) and how many bytes
 * follow the first (high half). */
#define ENT(z) ((31 - (z) < 7 ? 0ull : 31 - (z) < 14 ? 0x80ull : 31 - (z) < 21 ? 0x8080ull : 0x808080ull) | \
		((uint64_t)((z) >= 32 ? 0 : (31 - (z)) / 7) << 32))
static const uint64_t varint_by_clz[33] = {
	ENT(0),  ENT(1),  ENT(2),  ENT(3),  ENT(4),  ENT(5),  ENT(6),  ENT(7),  ENT(8),  ENT(9),  ENT(10),
	ENT(11), ENT(12), ENT(13), ENT(14), ENT(15), ENT(16), ENT(17), ENT(18), ENT(19), ENT(20), ENT(21),
	ENT(22), ENT(23), ENT(24), ENT(25), ENT(26), ENT(27), ENT(28), ENT(29), ENT(30), ENT(31), ENT(32),
};
#undef ENT

/* x86-64 CPUs with BMI2 and LZCNT (nearly all since 2013) spread the
 * groups with one instruction (pdep) and count leading zeros without the
 * zero case (lzcnt); mp__chunk_encode picks that variant at run time. Both
 * are inline assembly, so that the file compiles without -mbmi2 (only the
 * variant that may run them has the target attribute). */
#include <memprof/format/cpufeat.h>
#ifdef MP_HAVE_X86_VARIANTS
#define HAVE_BMI2_VARIANT 1
#endif

/* The varint of v < 2^28 as one word (its head in the low byte, the tail
 * bytes above) and how many tail bytes. */
static inline __attribute__((always_inline)) uint32_t venc28(uint32_t v, unsigned *tl, const int bmi2)
{
	uint64_t ent;
	uint32_t x;

#ifdef HAVE_BMI2_VARIANT
	if (bmi2) {
		unsigned z;
		__asm__("pdep %2, %1, %0" : "=r"(x) : "r"(v), "r"(0x7f7f7f7fu));
		__asm__("lzcnt %1, %0" : "=r"(z) : "r"(v)); /* 32 for 0 */
		ent = varint_by_clz[z];
	} else
#endif
	{
		/* the 7-bit groups to bytes: adding x's bits above a group to
		 * themselves moves them up one */
		(void)bmi2;
		x = v;
		x += x & ~0x7fu;
		x += x & ~0x7fffu;
		x += x & ~0x7fffffu;
		ent = varint_by_clz[__builtin_clz(v | 1)];
	}
	*tl = (unsigned)(ent >> 32);
	return x | (uint32_t)ent;
}

/* Append varint v split: its first byte to the heads, the rest to the
 * tails (8 bytes of slack past each). Values below 2^28 (nearly all: time
 * deltas, sizes, most address deltas, every index) take the short path:
 * one store each, no branch on the length. */
static inline __attribute__((always_inline)) void put_x(col_t *c, uint64_t v, const int bmi2)
{
	unsigned tl;
	uint32_t x;

	if (__builtin_expect(v >> 28, 0)) {
		c->t += mp__chunkenc_put_long(c->h++, c->t, v);
		return;
	}
	x = venc28((uint32_t)v, &tl, bmi2);
	*c->h++ = (uint8_t)x;
	x >>= 8;
	memcpy(c->t, &x, 4);
	c->t += tl;
}

/* Chunk-local age table, keyed by address: for a block allocated in the
 * chunk its allocation number, for an address freed in the chunk (and not
 * allocated again since) its free number with FREED set. Direct-mapped (a
 * collision just loses an entry: its record keeps its address delta).
 * Entries carry the chunk's generation, so a new chunk needs no clearing. */
#define AGE_BITS 14
#define FREED 0x80000000u

typedef struct {
	uint64_t addr;
	uint32_t index;
	uint32_t gen;
} age_slot_t;

/* The hash of an address both the freed-address cache (its top 6 bits:
 * mp_reuse_slot) and the age table (its top AGE_BITS) use. */
static inline uint64_t addr_hash(uint64_t addr)
{
	return (addr >> 4) * 0x9E3779B97F4A7C15ull;
}

static inline age_slot_t *age_slot_h(age_slot_t *table, uint64_t hh)
{
	return table + (hh >> (64 - AGE_BITS));
}

static inline age_slot_t *age_slot(age_slot_t *table, uint64_t addr)
{
	return age_slot_h(table, addr_hash(addr));
}

static inline void age_put(age_slot_t *sl, uint64_t addr, uint32_t index, uint32_t gen)
{
	sl->addr = addr;
	sl->index = index;
	sl->gen = gen;
}

/* The allocated size of a ring record: requested plus the first word's
 * difference, or for a WIDE record its extra word at *wide (read only
 * then: a record without it may end the chunk). */
static inline uint64_t ring_allocated(uint64_t w0, uint64_t req, const uint64_t *wide)
{
	return (w0 & MP_RING_WIDE) ? *wide : req + (uint64_t)(int64_t)(int32_t)(w0 >> 32);
}

/* An address delta's varint value: the delta from the previous address,
 * in 16-byte units when both are (the common case for malloc; the tag
 * says so). */
static inline uint64_t addr_delta(unsigned *tag, uint64_t from, uint64_t to)
{
	int64_t d = (int64_t)(to - from);

	if ((d & 15) == 0) {
		*tag |= MP_RECF_ALIGN16;
		d >>= 4; /* exact: an arithmetic shift, not a division's fix-ups */
	}
	return mp_zigzag(d);
}

static inline __attribute__((always_inline)) void put_sizes(col_t *c, unsigned *tag, uint64_t req, uint64_t alloc,
								const int bmi2)
{
	put_x(c, req, bmi2);
	if (alloc == req)
		*tag |= MP_RECF_EXACT;
	else if (alloc == mp_usable16(req))
		*tag |= MP_RECF_USABLE16;
	else
		put_x(c, mp_zigzag((int64_t)(alloc - req)), bmi2);
}

/* The state the record loops carry: write cursors, delta bases, counters. */
typedef struct {
	uint8_t *tag;
	col_t time, addr, idx, size, misc;
	uint64_t last_time, last_addr;
	uint32_t nallocs, nfrees;
	/* events beyond one a record (mod 2^64): + REALLOC records (two
	 * events each), - STACK records (none) */
	uint64_t extra;
} run_t;

/* The batched loop over ALLOC/FREE/REALLOC records of the current memory
 * id, and the STACK records between them (--stacks: one before each ALLOC) (chunkenc_run.c), in two variants: with BMI2 and LZCNT, and portable.
 * Encodes records from r on, up to lim, into st; returns where it stopped
 * (the first record it does not take, for the general loop). */
const uint64_t *mp__chunkenc_run_plain(run_t *st, const uint64_t *r, const uint64_t *lim, const uint64_t *end,
				       uint64_t memkey, age_slot_t *table, uint32_t gen, unsigned ages, uint64_t *reuse,
				       clock_cache_t *cc);
#ifdef HAVE_BMI2_VARIANT
const uint64_t *mp__chunkenc_run_bmi2(run_t *st, const uint64_t *r, const uint64_t *lim, const uint64_t *end,
				      uint64_t memkey, age_slot_t *table, uint32_t gen, unsigned ages, uint64_t *reuse,
				      clock_cache_t *cc);
#endif

#endif
