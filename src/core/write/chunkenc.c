/* chunkenc.c - the writer's side of memprof/format/columns.h: ring records
 * (encoder.h) to column parts (mp__chunk_encode, on the flusher thread); see
 * docs/format.md ("Columns"). The reader's side is src/core/format/columns.c. Nearly every record goes
 * through the batched loop of chunkenc_run.c; this is the general loop
 * (every kind of record) and what both share out of line. */
#include "chunkenc.h"

#include <memprof/format/cpufeat.h>

unsigned mp__chunkenc_put_long(uint8_t *h, uint8_t *t, uint64_t v)
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
		/* A fresh mapping (mp_mbuf_reserve maps one when it holds none)
		 * reads as zeros: clearing it would fault in all 64 pages of
		 * the table at a process's first round, which a short-lived
		 * one (a shell's fork, a launcher's helper) never touches. */
		int fresh = e->tab.data == NULL;
		e->tab.len = 0;
		if (mp_mbuf_reserve(&e->tab, sizeof(age_slot_t) << AGE_BITS))
			return -1;
		if (!fresh)
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
			run_t rs = {ctag, ctime, caddr, cidx, csize, cmisc, time, addr, nallocs, nfrees, 0};
#ifdef HAVE_BMI2_VARIANT
			if (bmi2)
				r = mp__chunkenc_run_bmi2(&rs, r, lim, end, memkey, table, gen, (unsigned)ages, reuse, &ccache);
			else
#endif
				r = mp__chunkenc_run_plain(&rs, r, lim, end, memkey, table, gen, (unsigned)ages, reuse, &ccache);
			ctag = rs.tag, ctime = rs.time, caddr = rs.addr, cidx = rs.idx, csize = rs.size, cmisc = rs.misc;
			time = rs.last_time, addr = rs.last_addr, nallocs = rs.nallocs, nfrees = rs.nfrees;
			events += rs.extra;
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
		/* What the batched loop left: an ALLOC or FREE it does not take
		 * (a value of 2^28 or more, WIDE, another memory id, the end of
		 * the buffer), or another kind of record */
		k = mp_ring_words(w0);
		mem = (unsigned)(w0 >> 16) & 0xffff;
		if (!k || r + k > end)
			return -1;
		if (kind != MP_REC_ALLOC && kind != MP_REC_FREE)
			goto other;
		if (mem != memory)
			MEMORY();
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

int mp__chunk_encode(mp_chunk_encoder_t *e, const uint64_t *words, size_t n, size_t limit, uint64_t *st,
		     const struct mp_capclock *clock, uint64_t lens[MP_PARTS])
{
#ifdef HAVE_BMI2_VARIANT
	const unsigned need = MP_CPU_BMI2 | MP_CPU_LZCNT | MP_CPU_FAST_PDEP;

	if ((mp__cpu_features() & need) == need)
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
