/* tally_round.c - a flush round's share of the tally (tally.h): the ring
 * records earlier than the round's horizon, of every thread, in the order
 * the reader returns them.
 *
 * The reader (merge.c) emits the events earlier than the last horizon it
 * read, merged by time with ties to the lower thread index, each thread's
 * own order kept; at the end, all the rest in the same way. The round
 * that writes horizon F has every event earlier than F in the rings it
 * copied (writer_internal.h), so tallying, round after round, the records
 * earlier than F merged by (time, thread index) sees them in the reader's
 * order. The time is the one the encoder writes: the raw reading
 * converted by the capture clock (the same line for the same reading,
 * round after round: a line holds from its round on) and never before the
 * thread's previous time (the encoder's rule, "time never goes back").
 *
 * A thread's records from `tallied` on wait for a later round: the ring
 * space up to min(encoded, tallied) is handed back (flush.c), so records
 * at or past the horizon stay in the ring, and a record that wraps the
 * ring's end stays whole in its slack (the writer cannot come round to it).
 * The round encodes first; each batch decoded here is handed back at once
 * (its events are copied out), so a thread that waits for room waits for
 * a batch, not for the round.
 *
 * This runs on the flusher for every event the program makes, beside the
 * program's own threads (on a machine with as many cores as the program
 * has busy threads, each of its ns is an ns of the program's wall time):
 * so it is built as three tight loops. Each thread's records are decoded
 * a batch at a time into fixed-size events (mp_tally_ev_t), starting the
 * fetch of their table buckets; the batches are merged by (time, thread
 * index); each event goes into the table without a branch on its kind
 * (take, with its memory id's figures in registers). With two threads the merge has no branch either: the
 * order of two threads' events is a coin flip to a branch predictor. With
 * more, a heap of the threads by their next event.
 */
#include "tally.h"
#include "writer_internal.h"

/* refill counts a FREE at MP_SUMF_ALLOCS + 1 */
_Static_assert(MP_SUMF_FREES == MP_SUMF_ALLOCS + 1, "MP_SUMF_FREES follows MP_SUMF_ALLOCS");

/* Events decoded ahead per thread: enough for the buckets' fetches to
 * land before the merge takes them, little enough to stay in L1 (32 was
 * a little faster than 128 in place). */
#define BATCH 32
/* Past this many threads in a round (a program that starts and ends
 * threads by the hundred: victim_churn's rounds hold a thousand), a
 * shorter batch each. */
#define MANY_THREADS 16
#define SMALL_BATCH 8

typedef struct {
	mp_wthread_t *t;
	uint64_t pos, end;   /* ring bytes: the next record to decode, where the round stops */
	uint64_t last;       /* the time of the last record decoded (times never go back) */
	clock_cache_t cc;
	mp_tally_ev_t *ev;   /* decoded, not yet taken: ev[head..n) */
	uint32_t head, n, cap;
	uint32_t index;      /* the thread's */
	int done;            /* no record earlier than the horizon left to decode */
} cursor_t;

/* Start fetching the table buckets of hash h. */
static inline void prefetch_buckets(const mp_tally_t *ty, uint64_t h)
{
	if (ty->bucket) {
		__builtin_prefetch(mp__tally_b1(ty, h), 1, 3);
		__builtin_prefetch(mp__tally_b2(ty, h), 1, 3);
	}
}

/* Decode c's records into c->ev (emptied first) until it holds cap - 1
 * events or more (a REALLOC gives two), or no record earlier than the
 * horizon is left (c->done), counting allocations, frees and reallocs.
 * Room in the table is made for them first. Returns -1 on a record that
 * does not parse (a writer bug), -ENOMEM, else 0. */
static int refill(mp_tally_t *ty, cursor_t *c, uint64_t horizon)
{
	const uint8_t *ring = c->t->ring;
	uint64_t mask = c->t->ring_mask, pos = c->pos, end = c->end, last = c->last, events = 0;
	mp_tally_ev_t *e = c->ev, *full = c->ev + c->cap - 1;
	int rc = 0;

	if (mp__tally_reserve(ty, c->cap))
		return -ENOMEM;
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
		w0 = r[0];
		k = mp_ring_words(w0);
		kind = (unsigned)w0 & 0xff;
		mem = (uint32_t)(w0 >> 16) & 0xffff;
		if (!k || pos + 8 * (uint64_t)k > end) {
			rc = -1;
			break;
		}
		if (kind == MP_REC_CONTEXT || kind == MP_REC_STACK) { /* not events */
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
		if (__builtin_expect((kind == MP_REC_ALLOC || kind == MP_REC_FREE) && mem < MP_TALLY_MEMS, 1)) {
			/* nearly every record: an ALLOC (4 words, 5 if WIDE) or a
			 * FREE (3), without a branch between them; a FREE's r[3]
			 * is the next record's word or the ring's slack, masked */
			uint64_t is_free = kind == MP_REC_FREE, req = r[3] & (is_free - 1);
			uint64_t alloc = (w0 & MP_RING_WIDE) ? r[4] : req + (uint64_t)(int64_t)(int32_t)(w0 >> 32);
			alloc &= is_free - 1;
			mp__tally_mem(ty, mem)->v[MP_SUMF_ALLOCS + is_free]++; /* (MP_SUMF_FREES next) */
			e->ns = ns;
			e->addr = r[2];
			e->req = req;
			e->fp = alloc ? alloc : req;
			e->hash = mp__tally_hash(r[2], mem);
			e->mem = mem;
			e->op = (uint32_t)is_free;
			prefetch_buckets(ty, e->hash);
			e++;
			events++;
			continue;
		}
		events += kind == MP_REC_REALLOC ? 2 : 1;
		if (mem >= MP_TALLY_MEMS) /* no writer declares it (mp_writer_memory) */
			continue;
		switch (kind) {
		case MP_REC_REALLOC: { /* old, new, requested, [allocated] */
			uint64_t alloc = (w0 & MP_RING_WIDE) ? r[5] : r[4] + (uint64_t)(int64_t)(int32_t)(w0 >> 32);
			mp__tally_mem(ty, mem)->v[MP_SUMF_REALLOCS]++;
			e[0] = (mp_tally_ev_t){ns, r[2], 0, 0, mp__tally_hash(r[2], mem), mem, MP_TALLY_FREE};
			e[1] = (mp_tally_ev_t){ns, r[3], alloc ? alloc : r[4], r[4], mp__tally_hash(r[3], mem), mem,
					       MP_TALLY_ALLOC};
			prefetch_buckets(ty, e[0].hash);
			prefetch_buckets(ty, e[1].hash);
			e += 2;
			break;
		}
		case MP_REC_ALLOC_FAILED:
			mp__tally_mem(ty, mem);
			*e++ = (mp_tally_ev_t){ns, 0, 0, 0, 0, mem, MP_TALLY_FAILED};
			break;
		case MP_REC_REGION_ADD:
		case MP_REC_REGION_REMOVE:
			mp__tally_mem(ty, mem);
			*e++ = (mp_tally_ev_t){ns, 0, 0, 0, 0, mem, MP_TALLY_MOMENT};
			break;
		default: /* steps and marks: events, not of a memory id */
			break;
		}
	}
	ty->events += events;
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

/* c's next event, decoding more when it has none left: 1 if there is
 * one, 0 if not, or refill's error. */
static inline int has_next(mp_tally_t *ty, cursor_t *c, uint64_t horizon)
{
	int rc;

	while (c->head == c->n) {
		if (c->done)
			return 0;
		if ((rc = refill(ty, c, horizon)))
			return rc;
	}
	return 1;
}

/* mp__tally_apply, out of line (the rare events) */
static __attribute__((noinline)) int apply_out(mp_tally_t *ty, const mp_tally_ev_t *e)
{
	return mp__tally_apply(ty, e);
}

/* Event e into the tally, f holding the figures of the memory id of the
 * events before it (in registers: f's address is not passed on). An
 * allocation or free of that id whose block is in its buckets is taken
 * here; the rest (another id, the far path, failed allocations and
 * regions) by mp__tally_apply, with f put back before and the figures of
 * e's id taken after. 0 or -ENOMEM. */
static inline int take(mp_tally_t *ty, mp_tally_figs_t *f, const mp_tally_ev_t *e)
{
	mp_tally_slot_t *s;
	uint64_t found;
	int rc;

	if (__builtin_expect(e->mem != f->mem || e->op > MP_TALLY_FREE || !(s = mp__tally_find(ty, e, &found)), 0)) {
		mp__tally_figs_store(f, ty);
		rc = apply_out(ty, e);
		mp__tally_figs_load(f, ty, e->mem);
		return rc;
	}
	mp__tally_account(f, e, s, found);
	mp__tally_put(s, e);
	mp__tally_sample(f, e->ns);
	return 0;
}

/* Every event of one thread, in its order. */
static int run_one(mp_tally_t *ty, cursor_t *c, uint64_t horizon)
{
	mp_tally_figs_t a;
	int rc;

	mp__tally_figs_load(&a, ty, 0);
	for (;;) {
		ty->n = a.n; /* (refill reserves room in the table on it) */
		if ((rc = has_next(ty, c, horizon)) != 1)
			break;
		for (rc = 0; c->head < c->n && !rc; c->head++)
			rc = take(ty, &a, &c->ev[c->head]);
		if (rc)
			break;
	}
	mp__tally_figs_store(&a, ty);
	return rc;
}

/* Two threads' events merged, a (a->index < b->index) first on equal
 * times: the event to take is picked by arithmetic, not by a branch. */
static int run_two(mp_tally_t *ty, cursor_t *a, cursor_t *b, uint64_t horizon)
{
	mp_tally_figs_t acc;
	int ra = 0, rb = 0, rc = 0;

	mp__tally_figs_load(&acc, ty, 0);
	for (;;) {
		const mp_tally_ev_t *ea, *eb, *enda, *endb;

		ty->n = acc.n; /* (refill reserves room in the table on it) */
		if ((ra = has_next(ty, a, horizon)) < 0 || (rb = has_next(ty, b, horizon)) < 0) {
			rc = ra < 0 ? ra : rb;
			break;
		}
		if (!ra || !rb)
			break;
		ea = a->ev + a->head, enda = a->ev + a->n;
		eb = b->ev + b->head, endb = b->ev + b->n;
		while (ea < enda && eb < endb && !rc) {
			uintptr_t take_b = eb->ns < ea->ns;
			const mp_tally_ev_t *e = (const mp_tally_ev_t *)(((uintptr_t)ea & (take_b - 1)) |
									 ((uintptr_t)eb & -take_b));
			ea += take_b ^ 1;
			eb += take_b;
			rc = take(ty, &acc, e);
		}
		a->head = (uint32_t)(ea - a->ev);
		b->head = (uint32_t)(eb - b->ev);
		if (rc)
			break;
	}
	mp__tally_figs_store(&acc, ty);
	if (rc || (!ra && !rb))
		return rc;
	return run_one(ty, ra ? a : b, horizon);
}

/* (time, thread index) of a's next event before b's */
static inline int before(const cursor_t *a, const cursor_t *b)
{
	const mp_tally_ev_t *x = &a->ev[a->head], *y = &b->ev[b->head];

	return x->ns < y->ns || (x->ns == y->ns && a->index < b->index);
}

/* h[0..n) a min-heap of cursors by their next event but for the root,
 * which is sifted down into place. */
static void sift_down(cursor_t **h, size_t n)
{
	size_t i = 0;
	cursor_t *x = h[0];

	for (;;) {
		size_t l = 2 * i + 1, m = l;
		if (l >= n)
			break;
		if (l + 1 < n && before(h[l + 1], h[l]))
			m = l + 1;
		if (!before(h[m], x))
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = x;
}

/* Any number of threads, through a heap of those with events (h: room
 * for n). */
static int run_heap(mp_tally_t *ty, cursor_t *cur, cursor_t **h, size_t n, uint64_t horizon)
{
	mp_tally_figs_t f;
	size_t hn = 0, i, j;
	int rc = 0;

	for (i = 0; i < n && rc >= 0; i++) {
		if ((rc = has_next(ty, &cur[i], horizon)) <= 0)
			continue;
		for (j = hn++; j > 0 && before(&cur[i], h[(j - 1) / 2]); j = (j - 1) / 2) /* sift up */
			h[j] = h[(j - 1) / 2];
		h[j] = &cur[i];
	}
	if (rc < 0)
		return rc;
	rc = 0;
	mp__tally_figs_load(&f, ty, 0);
	while (hn && !rc) {
		cursor_t *c = h[0];
		if ((rc = take(ty, &f, &c->ev[c->head++])))
			break;
		ty->n = f.n; /* (refill reserves room in the table on it) */
		if ((rc = has_next(ty, c, horizon)) < 0)
			break;
		if (!rc)
			h[0] = h[--hn];
		if (hn)
			sift_down(h, hn);
		rc = 0;
	}
	mp__tally_figs_store(&f, ty);
	return rc;
}

int mp__tally_round(mp_writer_t *w, const mp_tally_src_t *src, size_t n, uint64_t horizon)
{
	mp_tally_t *ty = &w->tally;
	uint32_t cap = n > MANY_THREADS ? SMALL_BATCH : BATCH;
	mp_tally_ev_t *evs;
	cursor_t *cur;
	size_t i;
	int rc = 0;

	if (!n)
		return 0;
	ty->cursors.len = 0;
	if (!ty->failed && mp_mbuf_reserve(&ty->cursors, n * (sizeof(cursor_t) + sizeof(cursor_t *) +
							       cap * sizeof(mp_tally_ev_t))))
		ty->failed = 1;
	if (!ty->failed) {
		cur = (cursor_t *)(void *)ty->cursors.data;
		evs = (mp_tally_ev_t *)(void *)(cur + n);
		for (i = 0; i < n; i++) {
			mp_wthread_t *t = src[i].t;
			cur[i] = (cursor_t){.t = t,
					    .pos = t->tallied,
					    .end = src[i].end,
					    .last = t->tally_time,
					    .cc = {mp__ring_clock(w, t), NULL, 0, 0},
					    .ev = evs + i * cap,
					    .cap = cap,
					    .index = t->index};
		}
		if (n == 2 && cur[0].index > cur[1].index) { /* run_two's ties: a first */
			cursor_t c = cur[0];
			cur[0] = cur[1];
			cur[1] = c;
		}
		if (n == 1)
			rc = run_one(ty, &cur[0], horizon);
		else if (n == 2)
			rc = run_two(ty, &cur[0], &cur[1], horizon);
		else
			rc = run_heap(ty, cur, (cursor_t **)(void *)(evs + n * cap), n, horizon);
		if (rc)
			ty->failed = 1; /* the figures stop here: the rings must still drain */
	}
	if (ty->failed) {
		for (i = 0; i < n; i++)
			src[i].t->tallied = src[i].end;
		return rc ? rc : -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		cur[i].t->tallied = cur[i].pos;
		cur[i].t->tally_time = cur[i].last;
	}
	return 0;
}
