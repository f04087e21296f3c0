/* tally_decode.c - a thread's ring records decoded into the events a
 * flush round's tally takes (tally_round.h), a batch at a time. Nearly
 * every record is an ALLOC or FREE of the memory id of the one before it:
 * those take one short path without a branch between them; the rest, the
 * general one. */
#include "tally_round.h"

/* Start fetching the table buckets of key k (a table there: refill
 * reserves room first). */
static inline void prefetch_buckets(mp_tally_tab_t tab, uint64_t k)
{
	uint64_t h = mp__tally_hash(k);

	__builtin_prefetch(mp__tally_b1(tab, h), 1, 3);
	__builtin_prefetch(mp__tally_b2(tab, h), 1, 3);
}

/* n allocations and m frees of memory id mem */
static inline void count(mp_tally_t *ty, uint32_t mem, uint64_t n, uint64_t m)
{
	if (n | m) {
		mp_tally_mem_t *x = mp__tally_mem(ty, mem);
		x->v[MP_SUMF_ALLOCS] += n;
		x->v[MP_SUMF_FREES] += m;
	}
}

/* (2.5) not a fast kind: no record's first word minus it is 0 or 1 */
#define NO_FAST (1ull << 63)

/* (2.5) the tag of thread th's next allocation: its CONTEXT's, or with a
 * STACK in force that one interned, the STACK being for that one
 * allocation only (the free half of a realloc keeps none), after which
 * the thread's records may go the fast way again (*slow, *fastkind). */
static uint32_t take_tag(mp_tally_t *ty, mp_wthread_t *th, int *slow, uint64_t *fastkind, uint32_t cmem)
{
	mp_tally_tag_t x = {th->tally_ctx[0], th->tally_ctx[1], th->tally_ctx[2], th->tally_ctx[3], th->tally_stack};
	uint32_t id;

	if (!th->tally_stack)
		return th->tally_ctxtag;
	id = mp__tally_tag(ty, &x);
	th->tally_stack = 0;
	*slow = th->tally_ctxtag >= MP_TALLY_TAG_FAST;
	*fastkind = *slow ? NO_FAST : MP_REC_ALLOC | (uint64_t)cmem << 16;
	return id;
}

/* e, an allocation or free whose key is below MP_TALLY_HIGH (a free: req
 * 0; its fp is not read, but for the top bit set here) */
static inline void put_ev(mp_tally_tev_t *e, uint64_t ns, uint64_t key, uint64_t fp, uint64_t req, uint64_t is_free)
{
	e->ns = ns;
	e->key = key;
	e->fp = fp | is_free << 63;
	e->req = req;
}

/* e, any event: whole in the side array (c's next entry) */
static inline void put_side(mp_tally_cursor_t *c, uint32_t *nside, mp_tally_tev_t *e, mp_tally_ev_t x)
{
	mp_tally_ev_t *s = &c->side[(*nside)++];

	*s = x;
	e->ns = x.ns;
	e->key = 0;
	e->fp = (uint64_t)(uintptr_t)s;
	e->req = 0;
}

/* An allocation or free (a free: fp and req 0) the fast way when it can go
 * (its address below 2^53, its footprint below 2^40, its tag (2.5) below
 * MP_TALLY_TAG_FAST), else through the side array. */
static inline void put_any(mp_tally_cursor_t *c, uint32_t *nside, mp_tally_tev_t *e, uint64_t ns, uint64_t addr,
			   uint32_t mem, uint64_t fp, uint64_t req, uint64_t is_free, uint32_t tag)
{
	if (__builtin_expect((addr >> MP_TALLY_KEY_BITS) == 0 && (fp >> MP_TALLY_FP_BITS) == 0 && tag < MP_TALLY_TAG_FAST,
			     1)) {
		put_ev(e, ns, mp__tally_key(addr, mem), fp | (uint64_t)tag << MP_TALLY_FP_BITS, req, is_free);
	} else {
		mp_tally_ev_t x = mp__tally_event(ns, addr, is_free ? 0 : fp, is_free ? 0 : req, mem,
						  is_free ? MP_TALLY_FREE : MP_TALLY_ALLOC);
		x.tag = tag;
		put_side(c, nside, e, x);
	}
}

int mp__tally_refill(mp_tally_t *ty, mp_tally_cursor_t *c, uint64_t horizon)
{
	const uint8_t *ring = c->t->ring;
	uint64_t mask = c->t->ring_mask, pos = c->pos, end = c->end, last = c->last, events = 0;
	mp_tally_tev_t *e = c->ev, *full = c->ev + c->cap - 1;
	mp_tally_tab_t tab;
	/* the fast records: ALLOC or FREE (not WIDE) of memory id cmem, its
	 * allocations and frees counted here */
	uint32_t cmem = c->mem, nside = 0;
	mp_wthread_t *th = c->t;
	/* (2.5) the tag of the thread's CONTEXT rides in the fast records' fp
	 * (tagbits); a STACK (one allocation's) or a tag past the fast ids
	 * sends them the general way (NO_FAST) */
	int slow = th->tally_stack || th->tally_ctxtag >= MP_TALLY_TAG_FAST;
	uint64_t tagbits = (uint64_t)th->tally_ctxtag << MP_TALLY_FP_BITS;
	uint64_t fastkind = slow ? NO_FAST : MP_REC_ALLOC | (uint64_t)cmem << 16, memtop = mp__tally_key(0, cmem);
	uint64_t nalloc = 0, nfree = 0;
	int rc = 0;

	_Static_assert(MP_REC_FREE == MP_REC_ALLOC + 1, "FREE follows ALLOC");
	if (mp__tally_reserve(ty, c->cap))
		return -ENOMEM;
	tab = mp__tally_tab(ty);
	while (e < full) {
		const uint64_t *r;
		uint64_t w0, ns;
		unsigned k, kind;
		uint32_t mem;

		if (pos >= end) {
			c->done = 1;
			break;
		}
		r = (const uint64_t *)(const void *)(ring + (pos & mask));
		/* the ring's lines a few records ahead: the hardware's own
		 * prefetch does not keep up with two threads' rings read a
		 * batch (1 KiB) at a time each (0.33 s to 0.25 s of the flusher
		 * for alloc_bench's 41 M events, docs/hooks.md "Cost") */
		__builtin_prefetch(ring + ((pos + 512) & mask), 0, 3);
		w0 = r[0];
		if (__builtin_expect((w0 & 0xffff01ffu) - fastkind <= MP_REC_FREE - MP_REC_ALLOC, 1)) {
			/* nearly every record: ALLOC (4 words) or FREE (3), without
			 * a branch between them; a FREE's r[3] is the next
			 * record's word or the ring's slack, masked */
			uint64_t is_free = (w0 & 0xff) - MP_REC_ALLOC, a = r[2], req = r[3] & (is_free - 1), fp;

			ns = clock_convert(&c->cc, r[1]);
			ns = ns < last ? last : ns;
			if (ns >= horizon) {
				c->done = 1;
				break;
			}
			if (__builtin_expect(pos + 32 - 8 * is_free > end, 0)) {
				rc = -1;
				break;
			}
			last = ns;
			pos += 32 - 8 * is_free;
			fp = req + (uint64_t)(int64_t)(int32_t)(w0 >> 32); /* (a FREE's: 0) */
			fp = fp ? fp : req;
			nalloc += is_free ^ 1;
			nfree += is_free;
			events++;
			if (__builtin_expect((a >> MP_TALLY_KEY_BITS) == 0 && (fp >> MP_TALLY_FP_BITS) == 0, 1)) {
				put_ev(e, ns, a ^ memtop, fp | tagbits, req, is_free);
				prefetch_buckets(tab, e->key);
			} else {
				put_any(c, &nside, e, ns, a, cmem, fp, req, is_free, th->tally_ctxtag);
			}
			e++;
			continue;
		}
		k = mp_ring_words(w0);
		kind = (unsigned)w0 & 0xff;
		mem = (uint32_t)(w0 >> 16) & 0xffff;
		if (!k || pos + 8 * (uint64_t)k > end) {
			rc = -1;
			break;
		}
		if (kind == MP_REC_CONTEXT || kind == MP_REC_STACK) { /* not events */
			ty->tagged = 1; /* (2.5) the checkpoints' blocks may have tags from here on */
			if (kind == MP_REC_CONTEXT) {
				mp_tally_tag_t x = {(uint32_t)r[1], (uint32_t)r[2], (uint32_t)r[3], (uint32_t)r[4], 0};
				for (int i = 0; i < 4; i++)
					th->tally_ctx[i] = (uint32_t)r[1 + i];
				th->tally_ctxtag = mp__tally_tag(ty, &x);
				tagbits = (uint64_t)th->tally_ctxtag << MP_TALLY_FP_BITS;
			} else {
				th->tally_stack = (uint32_t)r[1];
			}
			slow = th->tally_stack || th->tally_ctxtag >= MP_TALLY_TAG_FAST;
			fastkind = slow ? NO_FAST : MP_REC_ALLOC | (uint64_t)cmem << 16;
			pos += 8 * (uint64_t)k;
			continue;
		}
		ns = clock_convert(&c->cc, r[1]);
		ns = ns < last ? last : ns;
		if (ns >= horizon) {
			c->done = 1;
			break;
		}
		last = ns;
		pos += 8 * (uint64_t)k;
		events += kind == MP_REC_REALLOC ? 2 : 1;
		if (kind == MP_REC_STEP) { /* (2.4) the checkpoints' step */
			put_side(c, &nside, e++, mp__tally_event(ns, 0, r[2], 0, 0, MP_TALLY_STEP));
			continue;
		}
		if (kind == MP_REC_MARK) { /* (2.5) the checkpoints' last mark */
			put_side(c, &nside, e++, mp__tally_event(ns, 0, r[2], 0, 0, MP_TALLY_MARK));
			continue;
		}
		if (th->tally_stack && (kind == MP_REC_ALLOC || kind == MP_REC_REALLOC || kind == MP_REC_ALLOC_FAILED) &&
		    (mem >= MP_TALLY_MEMS || kind == MP_REC_ALLOC_FAILED))
			(void)take_tag(ty, th, &slow, &fastkind, cmem); /* (2.5) its STACK is used up */
		if (mem >= MP_TALLY_MEMS) /* no writer declares it (mp_writer_memory) */
			continue;
		switch (kind) {
		case MP_REC_ALLOC: /* WIDE, or of another memory id: that id's records the fast way next */
		case MP_REC_FREE: {
			uint64_t is_free = kind == MP_REC_FREE, req = is_free ? 0 : r[3];
			uint64_t alloc = is_free ? 0 : (w0 & MP_RING_WIDE) ? r[4] : req + (uint64_t)(int64_t)(int32_t)(w0 >> 32);
			if (mem != cmem) {
				count(ty, cmem, nalloc, nfree);
				cmem = mem, nalloc = nfree = 0;
				fastkind = slow ? NO_FAST : MP_REC_ALLOC | (uint64_t)cmem << 16;
				memtop = mp__tally_key(0, cmem);
			}
			nalloc += is_free ^ 1;
			nfree += is_free;
			put_any(c, &nside, e, ns, r[2], mem, alloc ? alloc : req, req, is_free,
				is_free ? 0 : take_tag(ty, th, &slow, &fastkind, cmem));
			prefetch_buckets(tab, e->key);
			e++;
			break;
		}
		case MP_REC_REALLOC: { /* old, new, requested, [allocated] */
			uint64_t alloc = (w0 & MP_RING_WIDE) ? r[5] : r[4] + (uint64_t)(int64_t)(int32_t)(w0 >> 32);
			mp__tally_mem(ty, mem)->v[MP_SUMF_REALLOCS]++;
			put_any(c, &nside, &e[0], ns, r[2], mem, 0, 0, 1, 0);
			put_any(c, &nside, &e[1], ns, r[3], mem, alloc ? alloc : r[4], r[4], 0,
				take_tag(ty, th, &slow, &fastkind, cmem));
			prefetch_buckets(tab, e[0].key);
			prefetch_buckets(tab, e[1].key);
			e += 2;
			break;
		}
		case MP_REC_ALLOC_FAILED:
			mp__tally_mem(ty, mem);
			put_side(c, &nside, e++, mp__tally_event(ns, 0, 0, r[2], mem, MP_TALLY_FAILED)); /* r[2]: requested */
			break;
		case MP_REC_REGION_ADD: /* base, size: moments, kept for the checkpoints */
		case MP_REC_REGION_REMOVE:
			mp__tally_mem(ty, mem);
			put_side(c, &nside, e++,
				 mp__tally_event(ns, r[2], kind == MP_REC_REGION_ADD ? r[3] : 0, 0, mem,
						 kind == MP_REC_REGION_ADD ? MP_TALLY_REGION_ADD : MP_TALLY_REGION_REMOVE));
			break;
		default: /* steps and marks: events, not of a memory id */
			break;
		}
	}
	count(ty, cmem, nalloc, nfree);
	ty->events += events;
	c->mem = cmem;
	c->pos = pos;
	c->last = last;
	c->head = 0;
	c->n = (uint32_t)(e - c->ev);
	/* the records decoded are in c->ev now: their ring space can go */
	if (!rc && !ty->failed) {
		c->t->tallied = pos;
		mp__writer_give_back(c->t);
	}
	return rc;
}
