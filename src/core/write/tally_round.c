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
 * so it is built as three tight loops, bound by instructions and memory
 * (about 230 instructions an event, decoding included, and 15.8 ns, on a
 * micro-benchmark of two threads' records, scripts/bench_tally.sh; 300
 * and 19.6 ns before blocks had one-word keys, events four words and the
 * ring was fetched ahead: docs/hooks.md, "Cost"). Each thread's records
 * are decoded a batch at a time into events of four words
 * (mp_tally_tev_t, tally_decode.c), starting the fetch of their table
 * buckets; the batches are merged by (time, thread index); each event
 * goes into the table without a branch on its kind (take), with the
 * figures of one memory id kept in registers (mp_tally_figs_t: nothing of
 * the loop's is passed to a call, which would keep it in memory). With
 * two threads the merge has no branch either: the order of two threads'
 * events is a coin flip to a branch predictor. With more, a heap of the
 * threads by their next event. Whatever is not an allocation or free of
 * that memory id, with its block in its buckets, goes the general way:
 * mp__tally_apply (tally.h).
 */
#include "tally_round.h"

/* Events decoded ahead per thread: enough for the buckets' fetches to
 * land before the merge takes them, little enough to stay in L1 (32 was
 * a little faster than 128 in place). */
#define BATCH 32
/* Past this many threads in a round (a program that starts and ends
 * threads by the hundred: victim_churn's rounds hold a thousand), a
 * shorter batch each. */
#define MANY_THREADS 16
#define SMALL_BATCH 8

/* c's next event, decoding more when it has none left: 1 if there is
 * one, 0 if not, or refill's error. */
static inline int has_next(mp_tally_t *ty, mp_tally_cursor_t *c, uint64_t horizon)
{
	int rc;

	while (c->head == c->n) {
		if (c->done)
			return 0;
		if ((rc = mp__tally_refill(ty, c, horizon)))
			return rc;
	}
	return 1;
}

/* e as mp__tally_apply takes it */
static mp_tally_ev_t whole(const mp_tally_tev_t *e)
{
	uint64_t is_free = e->fp >> 63;
	mp_tally_ev_t x;

	if (!e->key)
		return *(const mp_tally_ev_t *)(uintptr_t)e->fp;
	x = mp__tally_event(e->ns, e->key & MP_TALLY_ADDR_MASK, is_free ? 0 : e->fp & MP_TALLY_FP_MASK, e->req,
			    (uint32_t)(e->key >> MP_TALLY_KEY_BITS) - 1, is_free ? MP_TALLY_FREE : MP_TALLY_ALLOC);
	x.tag = is_free ? 0 : (uint32_t)(e->fp >> MP_TALLY_FP_BITS);
	return x;
}

/* The general way, out of line (x is the slow branch's own: nothing of
 * the loop's is passed to a call, which would keep it in memory). */
static __attribute__((noinline)) int apply_out(mp_tally_t *ty, const mp_tally_ev_t *x)
{
	return mp__tally_apply(ty, x);
}

/* Event e into the tally: an allocation or free of f's memory id whose
 * block (or room for it) is in its buckets here, by the rules of
 * mp__tally_apply (f kept in registers by the loops); the rest by
 * mp__tally_apply itself, f put back first and the figures of e's memory
 * id taken after (and the table: the far path may grow it). 0 or
 * -ENOMEM. */
static inline int take(mp_tally_t *ty, mp_tally_figs_t *f, mp_tally_tab_t *tab, const mp_tally_tev_t *e)
{
	uint64_t key = e->key, found, full, is_free = e->fp >> 63, is_alloc = is_free ^ 1, fp = e->fp & MP_TALLY_FP_MASK;
	mp_tally_slot_t *s = mp__tally_lanes(*tab, key, &found, &full);

	/* another memory id (or a side event: key 0), or not in the buckets
	 * (a free of an address not live; an allocation finding both full) */
	if (__builtin_expect(((key >> MP_TALLY_KEY_BITS) != f->memhi) | ((found ^ 1) & (is_free | full)), 0)) {
		mp_tally_ev_t x = whole(e);
		int rc;
		mp__tally_figs_store(f, ty);
		rc = apply_out(ty, &x);
		mp__tally_figs_load(f, ty, x.mem);
		*tab = mp__tally_tab(ty);
		return rc;
	}
	mp__tally_account(f, is_alloc, fp, e->req, s, found);
	mp__tally_put(s, is_alloc, key, fp, e->req, (e->fp >> MP_TALLY_FP_BITS) & (MP_TALLY_TAG_FAST - 1)); /* (2.5) its tag */
	if (!f->has_peak) /* (never here: memhi says it has one; the compiler need not test it) */
		__builtin_unreachable();
	mp__tally_sample(f, e->ns);
	return 0;
}

/* Every event of one thread, in its order. */
static int run_one(mp_tally_t *ty, mp_tally_cursor_t *c, uint64_t horizon)
{
	mp_tally_tab_t tab;
	mp_tally_figs_t f;
	int rc;

	f.mem = 0;
	for (;;) {
		if ((rc = has_next(ty, c, horizon)) != 1)
			break;
		mp__tally_figs_load(&f, ty, f.mem);
		tab = mp__tally_tab(ty);
		for (rc = 0; c->head < c->n && !rc; c->head++)
			rc = take(ty, &f, &tab, &c->ev[c->head]);
		mp__tally_figs_store(&f, ty); /* (refill reserves room in the table on ty->n) */
		if (rc)
			break;
	}
	return rc;
}

/* Two threads' events merged, a (a->index < b->index) first on equal
 * times: the event to take is picked by arithmetic, not by a branch. */
static int run_two(mp_tally_t *ty, mp_tally_cursor_t *a, mp_tally_cursor_t *b, uint64_t horizon)
{
	mp_tally_tab_t tab;
	mp_tally_figs_t f;
	int ra = 0, rb = 0, rc = 0;

	f.mem = 0;
	for (;;) {
		const mp_tally_tev_t *ea, *eb, *enda, *endb;

		if ((ra = has_next(ty, a, horizon)) < 0 || (rb = has_next(ty, b, horizon)) < 0) {
			rc = ra < 0 ? ra : rb;
			break;
		}
		if (!ra || !rb)
			break;
		mp__tally_figs_load(&f, ty, f.mem);
		tab = mp__tally_tab(ty);
		ea = a->ev + a->head, enda = a->ev + a->n;
		eb = b->ev + b->head, endb = b->ev + b->n;
		while (ea < enda && eb < endb && !rc) {
			uintptr_t take_b = eb->ns < ea->ns;
			const mp_tally_tev_t *e =
				(const mp_tally_tev_t *)(((uintptr_t)ea & (take_b - 1)) | ((uintptr_t)eb & -take_b));
			ea += take_b ^ 1;
			eb += take_b;
			rc = take(ty, &f, &tab, e);
		}
		mp__tally_figs_store(&f, ty);
		a->head = (uint32_t)(ea - a->ev);
		b->head = (uint32_t)(eb - b->ev);
		if (rc)
			break;
	}
	if (rc || (!ra && !rb))
		return rc;
	return run_one(ty, ra ? a : b, horizon);
}

/* (time, thread index) of a's next event before b's */
static inline int before(const mp_tally_cursor_t *a, const mp_tally_cursor_t *b)
{
	const mp_tally_tev_t *x = &a->ev[a->head], *y = &b->ev[b->head];

	return x->ns < y->ns || (x->ns == y->ns && a->index < b->index);
}

/* h[0..n) a min-heap of cursors by their next event but for the root,
 * which is sifted down into place. */
static void sift_down(mp_tally_cursor_t **h, size_t n)
{
	size_t i = 0;
	mp_tally_cursor_t *x = h[0];

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
static int run_heap(mp_tally_t *ty, mp_tally_cursor_t *cur, mp_tally_cursor_t **h, size_t n, uint64_t horizon)
{
	mp_tally_tab_t tab;
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
	tab = mp__tally_tab(ty);
	while (hn && !rc) {
		mp_tally_cursor_t *c = h[0];
		if ((rc = take(ty, &f, &tab, &c->ev[c->head++])))
			break;
		if (c->head == c->n) { /* (refill reserves room in the table on ty->n) */
			mp__tally_figs_store(&f, ty);
			if ((rc = has_next(ty, c, horizon)) < 0)
				break;
			mp__tally_figs_load(&f, ty, f.mem);
			tab = mp__tally_tab(ty);
			if (!rc)
				h[0] = h[--hn];
		}
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
	mp_tally_tev_t *evs;
	mp_tally_ev_t *sides;
	mp_tally_cursor_t *cur;
	size_t i;
	int rc = 0;

	if (!n)
		return 0;
	ty->cursors.len = 0;
	if (!ty->failed && mp_mbuf_reserve(&ty->cursors, n * (sizeof(mp_tally_cursor_t) + sizeof(mp_tally_cursor_t *) +
							       cap * (sizeof(mp_tally_tev_t) + sizeof(mp_tally_ev_t)))))
		ty->failed = 1;
	if (!ty->failed) {
		cur = (mp_tally_cursor_t *)(void *)ty->cursors.data;
		sides = (mp_tally_ev_t *)(void *)(cur + n);
		evs = (mp_tally_tev_t *)(void *)(sides + n * cap);
		for (i = 0; i < n; i++) {
			mp_wthread_t *t = src[i].t;
			cur[i] = (mp_tally_cursor_t){.t = t,
					    .pos = t->tallied,
					    .end = src[i].end,
					    .last = t->tally_time,
					    .cc = {mp__ring_clock(w, t), NULL, 0, 0},
					    .ev = evs + i * cap,
					    .side = sides + i * cap,
					    .cap = cap,
					    .index = t->index};
		}
		if (n == 2 && cur[0].index > cur[1].index) { /* run_two's ties: a first */
			mp_tally_cursor_t c = cur[0];
			cur[0] = cur[1];
			cur[1] = c;
		}
		if (n == 1)
			rc = run_one(ty, &cur[0], horizon);
		else if (n == 2)
			rc = run_two(ty, &cur[0], &cur[1], horizon);
		else
			rc = run_heap(ty, cur, (mp_tally_cursor_t **)(void *)(evs + n * cap), n, horizon);
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
