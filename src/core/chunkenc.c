/* chunkenc.c - the writer's side of chunkcodec.h: ring records to column
 * parts (mp__chunk_encode, on the flusher thread); see docs/format.md
 * ("Columns"). The reader's side is chunkcodec.c. */
#include "chunkcodec.h"

#include "clock.h"
#include "format.h"
#include "varint.h"

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

/* The long case of put(), out of line: values of 2^28 and more are rare.
 * Writes the head at h and the rest at t; returns how many tail bytes (the
 * cursors go by value, so that the caller's can stay in registers). */
static __attribute__((noinline)) unsigned put_long(uint8_t *h, uint8_t *t, uint64_t v)
{
	uint8_t tmp[MP_VARINT_MAX + 6];
	unsigned l;
	uint64_t y;

	if (v >> 56) {
		l = (unsigned)(mp_varint_put(tmp, v) - tmp);
	} else {
		y = venc8(v, &l);
		memcpy(tmp, &y, 8);
	}
	*h = tmp[0];
	memcpy(t, tmp + 1, l - 1);
	return l - 1;
}

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
#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_BMI2_VARIANT 1
#include <cpuid.h>
#include <stdatomic.h>
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
		c->t += put_long(c->h++, c->t, v);
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

/* mp__capclock_convert with the line it picks kept between records: a
 * thread's times only grow, so nearly every record falls on the line the
 * one before it did. The cache holds [lo, lo + span), the TSC readings for
 * which mp__capclock_convert's search ends at that line; outside it (or
 * without the TSC) the search runs, as it would. */
__extension__ typedef unsigned __int128 mp_u128;

typedef struct {
	const mp_capclock_t *c;
	const mp_tsc_line_t *line;
	uint64_t lo, span; /* [lo, lo + span), span < 2^63 */
} clock_cache_t;

static __attribute__((noinline)) uint64_t clock_miss(clock_cache_t *cc, uint64_t raw)
{
	const mp_capclock_t *c = cc->c;
	unsigned i = c->newest, k, j, m;

	cc->lo = cc->span = 0; /* empty: every reading misses */
	if (!c->use_tsc) {
		/* times as they are: through a line of slope 1 (exact below
		 * 2^62, which times since the origin are) */
		static const mp_tsc_line_t identity = {0, 0, 1ull << 32};
		cc->span = 1ull << 62;
		cc->line = &identity;
		return raw;
	}
	for (k = 1; k < c->count && (int64_t)(raw - c->line[i].tsc0) < 0; k++)
		i = (i + MP_CLOCK_LINES - 1) % MP_CLOCK_LINES;
	if ((int64_t)(raw - c->line[i].tsc0) >= 0) {
		/* raw is at or after line i's start (not merely before the
		 * oldest line): the range ends at the earliest start of the
		 * lines newer than i, or far in the future for the newest */
		uint64_t lo = c->line[i].tsc0, hi = lo + (1ull << 62);
		for (j = i, m = k - 1; m > 0; m--) {
			j = (j + 1) % MP_CLOCK_LINES;
			if ((int64_t)(c->line[j].tsc0 - hi) < 0)
				hi = c->line[j].tsc0;
		}
		if ((int64_t)(hi - lo) > 0) {
			cc->lo = lo;
			cc->span = hi - lo;
			cc->line = &c->line[i];
		}
	}
	return mp_tsc_convert(&c->line[i], raw);
}

static inline uint64_t clock_convert(clock_cache_t *cc, uint64_t raw)
{
	uint64_t d = raw - cc->lo;

	/* In the range (one unsigned compare: d, negative as int64_t, is
	 * above any span), d = raw - tsc0 >= 0: mp_tsc_convert's product in
	 * unsigned arithmetic, the same value */
	if (__builtin_expect(d < cc->span, 1))
		return (uint64_t)(cc->line->ns0 + (int64_t)(uint64_t)(((mp_u128)d * cc->line->mult) >> 32));
	return clock_miss(cc, raw);
}

/* The state the record loops carry: write cursors, delta bases, counters. */
typedef struct {
	uint8_t *tag;
	col_t time, addr, idx, size;
	uint64_t last_time, last_addr;
	uint32_t nallocs, nfrees;
	uint64_t reallocs; /* REALLOC records (two events each) */
} run_t;

/* Append n varints of values below 2^28 to a column: the second pass of
 * run_x, a loop with nothing else in it. */
static inline __attribute__((always_inline)) void put_run(col_t *c, const uint32_t *v, size_t n, const int bmi2)
{
	uint8_t *h = c->h, *t = c->t;
	size_t j;

	for (j = 0; j < n; j++) {
		unsigned tl;
		uint32_t x = venc28(v[j], &tl, bmi2);
		h[j] = (uint8_t)x;
		x >>= 8;
		memcpy(t, &x, 4);
		t += tl;
	}
	c->h = h + n;
	c->t = t;
}

/* Records per batch of run_x: its value arrays (5 KiB, on the stack of
 * whichever thread flushes: an application thread's at mp_writer_flush or
 * close) stay in L1. 512 was no faster. */
#define RUN_BATCH 256

/* run_x's tags: a FREE's by whether aged and ALIGN16; an ALLOC's by
 * whether REUSED, refreed, ALIGN16, EXACT, USABLE16. */
static const uint8_t run_free_tag[4] = {MP_REC_FREE, MP_REC_FREE | MP_RECF_ALIGN16, MP_REC_FREE_AGED,
					MP_REC_FREE_AGED};
#define TX_TAG(x)                                                                                      \
	(((x) & 1   ? MP_REC_ALLOC_REUSED                                                                \
	  : (x) & 2 ? MP_REC_ALLOC_REFREED                                                               \
		    : MP_REC_ALLOC | ((x) & 4 ? MP_RECF_ALIGN16 : 0)) |                                  \
	 ((x) & 8 ? MP_RECF_EXACT : (x) & 16 ? MP_RECF_USABLE16 : 0))
#define TX8(b)                                                                                         \
	TX_TAG(b), TX_TAG(b + 1), TX_TAG(b + 2), TX_TAG(b + 3), TX_TAG(b + 4), TX_TAG(b + 5), TX_TAG(b + 6), \
		TX_TAG(b + 7)
static const uint8_t run_alloc_tag[32] = {TX8(0), TX8(8), TX8(16), TX8(24)};
#undef TX8
#undef TX_TAG

/* Nearly every record: an ALLOC (not WIDE) or FREE of the current memory
 * id (memkey: encode's), with every value below 2^28. Encodes such records
 * from r on, up to lim (4 words before the end, so that an ALLOC's words
 * are there); returns at the first other one, for encode's general loop.
 *
 * The one branch the data decides is on the kind (ALLOC or FREE): none on
 * whether the address is in the freed-address cache or the age table, nor
 * on how the sizes relate (coin flips to a branch predictor, and with the
 * kind most of encode's time before). In two passes over a batch of
 * records: the first computes a record's values and appends each to its
 * column's array, whose length moves by whether the record has the value
 * (a store always, a branch never); the second writes each array's varints
 * (put_run). Its own function, with few values carried from record to
 * record and no write cursors in the first pass, so that the compiler
 * keeps them in registers. */
static inline __attribute__((always_inline)) const uint64_t *
run_x(run_t *st, const uint64_t *r, const uint64_t *lim, const uint64_t *end, uint64_t memkey, age_slot_t *table, uint32_t gen,
      unsigned ages, uint64_t *reuse, clock_cache_t *cc, const int bmi2)
{
	uint32_t tv[RUN_BATCH], av[RUN_BATCH], iv[RUN_BATCH], sv[2 * RUN_BATCH];
	uint64_t last_time = st->last_time, last_addr = st->last_addr;
	uint32_t nallocs = st->nallocs, nfrees = st->nfrees;
	uint64_t reallocs = 0;
	/* the second word of a slot of this chunk, less its index: the
	 * generation above, FREED below */
	uint64_t genkey = (uint64_t)gen << 32;
	uint8_t *tag = st->tag;
	int more = 1;

	while (more) {
		size_t i = 0, na = 0, ni = 0, ns = 0;
		/* at most RUN_BATCH records: each has 3 words or more */
		const uint64_t *blim = lim - r > 3 * RUN_BATCH ? r + 3 * RUN_BATCH : lim;

		for (;;) {
			uint64_t w0, a, hh, d, v, dt, now, w1;
			unsigned kind, rs, hit, al;
			int64_t dd;
			uint32_t age;
			age_slot_t *sl;

			if (r >= blim) {
				more = r < lim;
				break;
			}
			w0 = r[0];
			if (__builtin_expect((w0 & 0xffff01ffu) - memkey > MP_REC_FREE - MP_REC_ALLOC, 0)) {
				/* a REALLOC (not WIDE) of the memory id, whole in the
				 * buffer: as encode does (not so rare that it should
				 * end the batch) */
				uint64_t old, req, zd;
				int64_t d1, d2, diff = (int64_t)(int32_t)(w0 >> 32);
				unsigned tg;

				if ((w0 & 0xffff01ffu) != memkey - MP_REC_ALLOC + MP_REC_REALLOC || r + 5 > end) {
					more = 0;
					break;
				}
				old = r[2], a = r[3], req = r[4];
				now = clock_convert(cc, r[1]);
				now = now < last_time ? last_time : now;
				dt = now - last_time;
				d1 = (int64_t)(old - last_addr), d2 = (int64_t)(a - old);
				tg = MP_REC_REALLOC;
				if (((d1 | d2) & 15) == 0) { /* both in one unit */
					tg |= MP_RECF_ALIGN16;
					d1 >>= 4, d2 >>= 4;
				}
				zd = mp_zigzag(diff);
				if (diff == 0)
					tg |= MP_RECF_EXACT;
				else if (req + (uint64_t)diff == mp_usable16(req))
					tg |= MP_RECF_USABLE16;
				if ((dt | mp_zigzag(d1) | mp_zigzag(d2) | req | zd) >> 28) {
					more = 0;
					break;
				}
				sv[ns] = (uint32_t)req;
				sv[ns + 1] = (uint32_t)zd;
				ns += tg & (MP_RECF_EXACT | MP_RECF_USABLE16) ? 1 : 2;
				tag[i] = (uint8_t)tg;
				tv[i] = (uint32_t)dt;
				av[na++] = (uint32_t)mp_zigzag(d1);
				av[na++] = (uint32_t)mp_zigzag(d2);
				age_put(age_slot(table, a), a, ++nallocs, gen);
				last_addr = a;
				last_time = now;
				i++;
				reallocs++;
				r += 5;
				continue;
			}
			a = r[2], hh = addr_hash(a);
			kind = (unsigned)w0 & 0xff, rs = (unsigned)(hh >> 58);
			sl = age_slot_h(table, hh);
			dd = (int64_t)(a - last_addr);
			memcpy(&w1, &sl->index, 8);
			now = clock_convert(cc, r[1]);
			now = now < last_time ? last_time : now; /* per thread, time never goes back */
			dt = now - last_time;
			al = (dd & 15) == 0;
			d = mp_zigzag(dd >> (al << 2)); /* addr_delta */
			if (kind == MP_REC_FREE) {
				/* FREE_AGED: a block allocated in the chunk (not FREED) */
				age = nallocs + 1 - (uint32_t)w1;
				hit = ages & ((w1 ^ genkey) >> 31 == 0) & (sl->addr == a) & (unsigned)vlen_le(age, d);
				v = ((age ^ d) & -(uint64_t)hit) ^ d;
				if (__builtin_expect((dt | v) >> 28, 0)) {
					more = 0;
					break;
				}
				tag[i] = run_free_tag[hit << 1 | al];
				av[na] = (uint32_t)v;
				iv[ni] = (uint32_t)v;
				na += hit ^ 1;
				ni += hit;
				age_put(sl, a, ++nfrees | FREED, gen);
				reuse[rs] = a;
			} else {
				uint64_t req = r[3], zd, ru = reuse[rs];
				int64_t diff = (int64_t)(int32_t)(w0 >> 32);
				unsigned reused = (ru == a) & (a != 0), exact = diff == 0, tx;
				unsigned us16 = req + (uint64_t)diff == mp_usable16(req);
				/* ALLOC_REFREED: at an address freed in the chunk */
				age = nfrees + 1 - ((uint32_t)w1 & ~FREED);
				hit = ages & ((w1 ^ genkey ^ FREED) >> 31 == 0) & (sl->addr == a) &
				      (unsigned)vlen_le(age, d);
				v = ((rs ^ age) & -(uint64_t)reused) ^ age;
				v = ((v ^ d) & -(uint64_t)(hit | reused)) ^ d;
				zd = mp_zigzag(diff);
				if (__builtin_expect((dt | v | req | zd) >> 28, 0)) {
					more = 0;
					break;
				}
				tx = reused | hit << 1 | al << 2 | exact << 3 | us16 << 4;
				tag[i] = run_alloc_tag[tx];
				av[na] = (uint32_t)v;
				iv[ni] = (uint32_t)v;
				na += (hit | reused) ^ 1;
				ni += hit | reused;
				sv[ns] = (uint32_t)req;
				sv[ns + 1] = (uint32_t)zd;
				ns += 1 + ((exact | us16) ^ 1);
				age_put(sl, a, ++nallocs, gen);
			}
			tv[i] = (uint32_t)dt;
			last_addr = a;
			last_time = now;
			i++;
			r += 5 - kind; /* ALLOC 4 words, FREE 3 */
		}
		tag += i;
		put_run(&st->time, tv, i, bmi2);
		put_run(&st->addr, av, na, bmi2);
		put_run(&st->idx, iv, ni, bmi2);
		put_run(&st->size, sv, ns, bmi2);
	}
	st->tag = tag;
	st->last_time = last_time, st->last_addr = last_addr;
	st->nallocs = nallocs, st->nfrees = nfrees;
	st->reallocs = reallocs;
	return r;
}

static __attribute__((noinline)) const uint64_t *run_plain(run_t *st, const uint64_t *r, const uint64_t *lim,
							   const uint64_t *end, uint64_t memkey, age_slot_t *table, uint32_t gen,
							   unsigned ages, uint64_t *reuse, clock_cache_t *cc)
{
	return run_x(st, r, lim, end, memkey, table, gen, ages, reuse, cc, 0);
}

#ifdef HAVE_BMI2_VARIANT
__attribute__((target("bmi2,lzcnt"), noinline)) static const uint64_t *
run_bmi2(run_t *st, const uint64_t *r, const uint64_t *lim, const uint64_t *end, uint64_t memkey, age_slot_t *table, uint32_t gen,
	 unsigned ages, uint64_t *reuse, clock_cache_t *cc)
{
	return run_x(st, r, lim, end, memkey, table, gen, ages, reuse, cc, 1);
}
#endif

/* mp__chunk_encode, in two variants: bmi2 is a constant. */
#define put(c, v) put_x(c, v, bmi2)
static inline __attribute__((always_inline)) int encode(mp_chunk_encoder_t *e, const uint64_t *words, size_t n,
							 size_t limit, uint64_t *st, const struct mp_capclock *clock,
							 uint64_t lens[MP_PARTS], const int bmi2)
{
	const uint64_t *r = words, *end = words + n, *stop = words + (limit < n ? limit : n), *lim;
	uint64_t time = st[MP_ST_TIME], addr = st[MP_ST_ADDR], memory = st[MP_ST_MEMORY];
	/* events: one per record (counted at the end, from the tags), plus
	 * this: a realloc is two, CONTEXT and STACK none */
	uint64_t *reuse = st + MP_ST_REUSE_AT, events = 0;
	uint32_t nallocs = 0, nfrees = 0, gen;
	age_slot_t *table;
	mp_mbuf_t *col = e->cols;
	uint8_t *ctag;
	col_t ctime, caddr, cidx, csize, cmisc;
	int ages = !e->no_ages, c;
	clock_cache_t ccache = {clock, NULL, 0, 0};
	/* the first word of an ALLOC of the current memory id, less its size
	 * difference (a FREE's is one more) */
	uint64_t memkey = (memory << 16) + MP_REC_ALLOC;

	/* Room: a record of k words (k >= 2) never takes more than 10 k bytes
	 * in all parts together, nor 8 k in one; plus the stores' slack. */
	for (c = 0; c < MP_PARTS; c++) {
		col[c].len = 0;
		if (mp_mbuf_reserve(&col[c], n * 10 + 16))
			return -1;
	}
	ctag = col[0].data;
#define INIT(cur, k) (cur.h = col[MP_HEAD(k)].data, cur.t = col[MP_TAIL(k)].data)
	INIT(ctime, MP_COL_TIME);
	INIT(caddr, MP_COL_ADDR);
	INIT(cidx, MP_COL_IDX);
	INIT(csize, MP_COL_SIZE);
	INIT(cmisc, MP_COL_MISC);
#undef INIT
	if (!e->table) {
		e->tab.len = 0;
		if (mp_mbuf_reserve(&e->tab, sizeof(age_slot_t) << AGE_BITS))
			return -1;
		memset(e->tab.data, 0, sizeof(age_slot_t) << AGE_BITS);
		e->table = e->tab.data;
		e->gen = 0;
	}
	if ((uint32_t)++e->gen == 0) { /* generations wrapped: clear once */
		memset(e->table, 0, sizeof(age_slot_t) << AGE_BITS);
		e->gen = 1;
	}
	gen = (uint32_t)e->gen;
	table = e->table; /* in a local: the byte stores below may alias *e */
	/* run_x's records: ALLOC and REALLOC words whole in the buffer */
	lim = n < 4 || e->no_run ? words : end - 3 < stop ? end - 3 : stop;

	while (r < stop) {
		uint64_t w0, now;
		unsigned kind, k, mem, tg;

		if (r < lim) {
			run_t rs = {ctag, ctime, caddr, cidx, csize, time, addr, nallocs, nfrees, 0};
#ifdef HAVE_BMI2_VARIANT
			if (bmi2)
				r = run_bmi2(&rs, r, lim, end, memkey, table, gen, (unsigned)ages, reuse, &ccache);
			else
#endif
				r = run_plain(&rs, r, lim, end, memkey, table, gen, (unsigned)ages, reuse, &ccache);
			ctag = rs.tag, ctime = rs.time, caddr = rs.addr, cidx = rs.idx, csize = rs.size;
			time = rs.last_time, addr = rs.last_addr, nallocs = rs.nallocs, nfrees = rs.nfrees;
			events += rs.reallocs;
			if (r >= stop)
				break;
		}
		w0 = r[0];
		kind = (unsigned)w0 & 0xff;
		tg = kind; /* the tag, stored once the record is done */

		/* The time (and memory id) of a record that has them, ALLOC and
		 * FREE (nearly all records) first, with no further test. */
#define TIMED()                                                                       \
	do {                                                                          \
		now = clock_convert(&ccache, r[1]);                                   \
		if (now < time)                                                       \
			now = time; /* per thread, time never goes back */            \
		put(&ctime, now - time);                                              \
		time = now;                                                           \
	} while (0)
#define MEMORY()                                                                      \
	do {                                                                          \
		tg |= MP_RECF_MEMORY;                                                 \
		put(&cmisc, mem);                                                     \
		memory = mem;                                                         \
		memkey = (memory << 16) + MP_REC_ALLOC;                               \
	} while (0)
		/* Nearly every record: an ALLOC (not WIDE) or FREE of the current
		 * memory id, whole in the buffer -- one test for all of that */
		if (__builtin_expect((w0 & 0xffff01ffu) - memkey <= MP_REC_FREE - MP_REC_ALLOC &&
					     (uintptr_t)r + 4 * sizeof(*r) <= (uintptr_t)end,
				     1)) {
			k = 5 - kind; /* ALLOC 4 words, FREE 3 */
		} else {
			k = mp_ring_words(w0);
			mem = (unsigned)(w0 >> 16) & 0xffff;
			if (!k || r + k > end)
				return -1;
			if (kind != MP_REC_ALLOC && kind != MP_REC_FREE)
				goto other;
			if (mem != memory)
				MEMORY();
		}
		{
			TIMED();
			if (kind == MP_REC_FREE) {
				uint64_t a = r[2], hh = addr_hash(a);
				unsigned flags = 0;
				uint64_t d = addr_delta(&flags, addr, a);
				int aged = 0;
				if (ages) {
					/* FREE_AGED: the number of allocations since, instead
					 * of the address delta, when that is not longer */
					age_slot_t *sl = age_slot_h(table, hh);
					if (sl->gen == gen && sl->addr == a && !(sl->index & FREED) &&
					    vlen_le(nallocs + 1 - sl->index, d)) {
						put(&cidx, nallocs + 1 - sl->index);
						tg = ((tg & MP_RECF_MEMORY) | MP_REC_FREE_AGED);
						aged = 1;
					}
					age_put(sl, a, ++nfrees | FREED, gen);
				}
				if (!aged) {
					tg |= flags;
					put(&caddr, d);
				}
				addr = a;
				reuse[hh >> 58] = a; /* mp_reuse_slot(a) */
			} else {
				uint64_t a = r[2], req = r[3], hh = addr_hash(a);
				uint64_t alloc = ring_allocated(w0, req, r + 4);
				age_slot_t *sl = age_slot_h(table, hh);
				unsigned rs = (unsigned)(hh >> 58); /* mp_reuse_slot(a) */
				if (a != 0 && reuse[rs] == a) {
					/* allocators hand out recently freed blocks again
					 * (glibc's tcache is LIFO): no address needed */
					tg = ((tg & MP_RECF_MEMORY) | MP_REC_ALLOC_REUSED);
					*cidx.h++ = (uint8_t)rs;
				} else {
					unsigned flags = 0;
					uint64_t d = addr_delta(&flags, addr, a);
					/* ALLOC_REFREED: at an address freed earlier in the
					 * chunk, the number of frees since, when that is not
					 * longer than the delta */
					if (ages && sl->gen == gen && sl->addr == a && (sl->index & FREED) &&
					    vlen_le(nfrees + 1 - (sl->index & ~FREED), d)) {
						tg = ((tg & MP_RECF_MEMORY) | MP_REC_ALLOC_REFREED);
						put(&cidx, nfrees + 1 - (sl->index & ~FREED));
					} else {
						tg |= flags;
						put(&caddr, d);
					}
				}
				put_sizes(&csize, &tg, req, alloc, bmi2);
				addr = a;
				if (ages)
					age_put(sl, a, ++nallocs, gen);
			}
			*ctag++ = (uint8_t)tg;
			r += k;
			continue;
		}
	other:
		if (kind != MP_REC_CONTEXT && kind != MP_REC_STACK) {
			if (__builtin_expect(mem != memory, 0) && kind != MP_REC_STEP && kind != MP_REC_MARK)
				MEMORY();
			TIMED();
		}
#undef TIMED
#undef MEMORY
		switch (kind) {
		case MP_REC_REALLOC: {
			uint64_t old = r[2], a = r[3], req = r[4];
			uint64_t alloc = ring_allocated(w0, req, r + 5);
			/* both deltas in one unit: 16 only if both are multiples */
			if ((((old - addr) | (a - old)) & 15) == 0) {
				put(&caddr, addr_delta(&tg, addr, old));
				put(&caddr, mp_zigzag((int64_t)(a - old) / 16));
			} else {
				put(&caddr, mp_zigzag((int64_t)(old - addr)));
				put(&caddr, mp_zigzag((int64_t)(a - old)));
			}
			put_sizes(&csize, &tg, req, alloc, bmi2);
			addr = a;
			if (ages)
				age_put(age_slot(table, a), a, ++nallocs, gen);
			events++;
			break;
		}
		case MP_REC_ALLOC_FAILED:
			put(&csize, r[2]);
			break;
		case MP_REC_REGION_ADD:
			put(&caddr, addr_delta(&tg, addr, r[2]));
			put(&csize, r[3]);
			addr = r[2];
			break;
		case MP_REC_REGION_REMOVE:
			put(&caddr, addr_delta(&tg, addr, r[2]));
			addr = r[2];
			break;
		case MP_REC_STEP:
		case MP_REC_MARK:
			put(&cmisc, r[2]);
			break;
		case MP_REC_CONTEXT:
			put(&cmisc, r[1]);
			put(&cmisc, r[2]);
			put(&cmisc, r[3]);
			put(&cmisc, r[4]);
			st[MP_ST_OP] = r[1];
			st[MP_ST_REGION] = r[2];
			st[MP_ST_DTYPE] = r[3];
			st[MP_ST_SHAPE] = r[4];
			events--;
			break;
		case MP_REC_STACK:
			put(&cmisc, r[1]);
			events--;
			break;
		default:
			return -1;
		}
		*ctag++ = (uint8_t)tg;
		r += k;
	}
	st[MP_ST_TIME] = time;
	st[MP_ST_ADDR] = addr;
	st[MP_ST_MEMORY] = memory;
	col[0].len = (size_t)(ctag - col[0].data);
#define FINI(cur, k)                                                                \
	(col[MP_HEAD(k)].len = (size_t)(cur.h - col[MP_HEAD(k)].data),              \
	 col[MP_TAIL(k)].len = (size_t)(cur.t - col[MP_TAIL(k)].data))
	FINI(ctime, MP_COL_TIME);
	FINI(caddr, MP_COL_ADDR);
	FINI(cidx, MP_COL_IDX);
	FINI(csize, MP_COL_SIZE);
	FINI(cmisc, MP_COL_MISC);
#undef FINI
	for (c = 0; c < MP_PARTS; c++)
		lens[c] = col[c].len;
	e->events = (uint64_t)(ctag - col[0].data) + events;
	e->consumed = (size_t)(r - words);
	return 0;
}

#undef put

static int encode_plain(mp_chunk_encoder_t *e, const uint64_t *words, size_t n, size_t limit, uint64_t *st,
			const struct mp_capclock *clock, uint64_t lens[MP_PARTS])
{
	return encode(e, words, n, limit, st, clock, lens, 0);
}

#ifdef HAVE_BMI2_VARIANT
__attribute__((target("bmi2,lzcnt"))) static int encode_bmi2(mp_chunk_encoder_t *e, const uint64_t *words, size_t n,
						       size_t limit, uint64_t *st, const struct mp_capclock *clock,
						       uint64_t lens[MP_PARTS])
{
	return encode(e, words, n, limit, st, clock, lens, 1);
}
#endif

#ifdef HAVE_BMI2_VARIANT
/* AMD before Zen 3 (family 19h) has pdep in microcode, some hundred cycles
 * an instruction: far slower there than the portable variant. */
static int slow_pdep(void)
{
	unsigned a, b, c, d, family;

	if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541u) /* "Auth"enticAMD */
		return 0;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 1;
	family = (a >> 8) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	return family < 0x19;
}

/* BMI2 (CPUID 7: EBX bit 8) and LZCNT (0x80000001: ECX bit 5), asked once
 * (compilers' __builtin_cpu_supports do not all know LZCNT), on a CPU where
 * pdep is fast. */
static int have_bmi2_lzcnt(void)
{
	static _Atomic int known; /* 0 not yet, 1 no, 2 yes */
	int k = atomic_load_explicit(&known, memory_order_relaxed);

	if (!k) {
		unsigned a, b, c, d;
		int bmi2 = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 8));
		int lzcnt = __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 5));
		k = bmi2 && lzcnt && !slow_pdep() ? 2 : 1;
		atomic_store_explicit(&known, k, memory_order_relaxed);
	}
	return k == 2;
}
#endif

int mp__chunk_encode(mp_chunk_encoder_t *e, const uint64_t *words, size_t n, size_t limit, uint64_t *st,
		     const struct mp_capclock *clock, uint64_t lens[MP_PARTS])
{
#ifdef HAVE_BMI2_VARIANT
	if (!e->plain && have_bmi2_lzcnt())
		return encode_bmi2(e, words, n, limit, st, clock, lens);
#endif
	return encode_plain(e, words, n, limit, st, clock, lens);
}

void mp__chunk_encoder_release(mp_chunk_encoder_t *e)
{
	int c;

	for (c = 0; c < MP_PARTS; c++)
		mp_mbuf_release(&e->cols[c]);
	mp_mbuf_release(&e->tab);
	e->table = NULL;
}
