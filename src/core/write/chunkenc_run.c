/* chunkenc_run.c - the encoder's batched loop (chunkenc.h): ALLOC, FREE
 * and REALLOC records of the current memory id, nearly all of a capture,
 * with no branch on the data but the record's kind; with --stacks the
 * STACK record before each allocation too. */
#include "chunkenc.h"

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

/* Records per batch of run_x, at most: its value arrays (6 KiB, on the
 * stack of whichever thread flushes: an application thread's at
 * mp_writer_flush or close) stay in L1. 512 was no faster. */
#define RUN_BATCH 256

/* The age table (256 KiB) does not stay in L2 beside the rings streaming
 * through it: run_x fetches a record's slot this many records before it
 * gets there (alloc_bench -t 2, perf: the encoder's CPU time 0.60-0.63 s
 * against 0.64-0.65 s, three runs each). */
#define AHEAD 16

/* Fetch the age slot of the record at *q and step *q to the next record:
 * 0, and *q left, at end or at a word that is no record (any record: a
 * wrong guess is a wasted fetch; it never reads past end). */
static inline __attribute__((always_inline)) int fetch_ahead(const uint64_t **q, const uint64_t *end,
							     age_slot_t *table)
{
	unsigned k;

	if (__builtin_expect(*q + 3 > end || (k = mp_ring_words((*q)[0])) == 0, 0))
		return 0;
	__builtin_prefetch(age_slot(table, (*q)[2]), 1, 3);
	*q += k;
	return 1;
}

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
	/* per record at most one tag, time and index, two addresses (a
	 * REALLOC: 154 of them in a row overflowed an array of RUN_BATCH)
	 * and two sizes */
	uint32_t tv[RUN_BATCH], av[2 * RUN_BATCH], iv[RUN_BATCH], sv[2 * RUN_BATCH];
	/* STACK ids: two words a record, so up to 3 * RUN_BATCH / 2 of them.
	 * Before, a STACK record ended the batch: with --stacks every other
	 * record went through the general loop and this one restarted for
	 * one record each time (its fetches ahead included), and the encoder
	 * took 3.1 times its CPU time without stacks (perf, alloc_bench). */
	uint32_t mv[3 * RUN_BATCH / 2];
	uint64_t last_time = st->last_time, last_addr = st->last_addr;
	uint32_t nallocs = st->nallocs, nfrees = st->nfrees;
	uint64_t extra = 0;
	/* the second word of a slot of this chunk, less its index: the
	 * generation above, FREED below */
	uint64_t genkey = (uint64_t)gen << 32;
	uint8_t *tag = st->tag;
	int more = 1;
	/* the record AHEAD records on, whose age slot is fetched next */
	const uint64_t *q = r;
	unsigned j;

	for (j = 0; j < AHEAD && fetch_ahead(&q, end, table); j++)
		;
	while (more) {
		size_t i = 0, nt = 0, na = 0, ni = 0, ns = 0, nm = 0;
		/* at most RUN_BATCH timed records (3 words or more each) and
		 * 3 * RUN_BATCH / 2 STACK records (2 words) */
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
			fetch_ahead(&q, end, table);
			w0 = r[0];
			if (__builtin_expect((w0 & 0xffff01ffu) - memkey > MP_REC_FREE - MP_REC_ALLOC, 0)) {
				/* a STACK record (no time, no memory id, not an
				 * event): its id to the MISC column */
				if (w0 == MP_REC_STACK && r[1] < (1u << 28)) {
					tag[i++] = MP_REC_STACK;
					mv[nm++] = (uint32_t)r[1];
					extra--;
					r += 2;
					continue;
				}
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
				tv[nt++] = (uint32_t)dt;
				av[na++] = (uint32_t)mp_zigzag(d1);
				av[na++] = (uint32_t)mp_zigzag(d2);
				age_put(age_slot(table, a), a, ++nallocs, gen);
				last_addr = a;
				last_time = now;
				i++;
				extra++;
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
			tv[nt++] = (uint32_t)dt;
			last_addr = a;
			last_time = now;
			i++;
			r += 5 - kind; /* ALLOC 4 words, FREE 3 */
		}
		tag += i;
		put_run(&st->time, tv, nt, bmi2);
		put_run(&st->addr, av, na, bmi2);
		put_run(&st->idx, iv, ni, bmi2);
		put_run(&st->size, sv, ns, bmi2);
		put_run(&st->misc, mv, nm, bmi2);
	}
	st->tag = tag;
	st->last_time = last_time, st->last_addr = last_addr;
	st->nallocs = nallocs, st->nfrees = nfrees;
	st->extra = extra;
	return r;
}

const uint64_t *mp__chunkenc_run_plain(run_t *st, const uint64_t *r, const uint64_t *lim, const uint64_t *end,
				       uint64_t memkey, age_slot_t *table, uint32_t gen, unsigned ages, uint64_t *reuse,
				       clock_cache_t *cc)
{
	return run_x(st, r, lim, end, memkey, table, gen, ages, reuse, cc, 0);
}

#ifdef HAVE_BMI2_VARIANT
__attribute__((target("bmi2,lzcnt"))) const uint64_t *
mp__chunkenc_run_bmi2(run_t *st, const uint64_t *r, const uint64_t *lim, const uint64_t *end, uint64_t memkey,
		      age_slot_t *table, uint32_t gen, unsigned ages, uint64_t *reuse, clock_cache_t *cc)
{
	return run_x(st, r, lim, end, memkey, table, gen, ages, reuse, cc, 1);
}
#endif

