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
 * Per record this is a few loads, a clock conversion and, for the malloc
 * family, one probe of the live blocks' table: a few ns on the flusher.
 */
#include "tally.h"
#include "writer_internal.h"

typedef struct {
	mp_wthread_t *t;
	uint64_t pos, end;  /* ring bytes: the next record, where the round stops */
	uint64_t ahead;     /* the record LOOK_AHEAD records past pos (or end) */
	uint64_t last;      /* the thread's time so far (times never go back) */
	uint64_t ns;        /* the time of the record at pos, when ready */
	uint32_t index;
	int ready;          /* a record earlier than the horizon is at pos */
} cursor_t;

/* Up to this many threads the merge looks at each in turn for the
 * earliest record; past it (a program that starts and ends threads by the
 * hundred: victim_churn's rounds hold a thousand) through a binary heap. */
#define SCAN_MAX 8

/* The live blocks' table is larger than the caches hold once a program
 * keeps a few thousand blocks (alloc_bench: 4096), and a probe that misses
 * them costs more than the rest of a record's tally: the slot of each
 * thread's record this many ahead is fetched early. */
#define LOOK_AHEAD 16

/* Start fetching the table slot(s) of the record at ring position pos. */
static inline void prefetch_slot(const mp_tally_t *ty, const mp_wthread_t *t, uint64_t pos)
{
	const uint64_t *r = (const uint64_t *)(const void *)(t->ring + (pos & t->ring_mask));
	unsigned kind = (unsigned)r[0] & 0xff;
	uint32_t mem = (uint32_t)(r[0] >> 16) & 0xffff;

	if (!ty->slot || kind == 0 || kind > MP_REC_REALLOC || (kind > MP_REC_FREE && kind != MP_REC_REALLOC))
		return;
	__builtin_prefetch(&ty->slot[mp__tally_hash(r[2], mem) >> ty->shift], 1, 3);
	if (kind == MP_REC_REALLOC)
		__builtin_prefetch(&ty->slot[mp__tally_hash(r[3], mem) >> ty->shift], 1, 3);
}

/* Move c->ahead one record on (up to c->end), fetching that one's slot. */
static inline void step_ahead(const mp_tally_t *ty, cursor_t *c)
{
	if (c->ahead < c->end) {
		unsigned k = mp_ring_words(*(const uint64_t *)(const void *)(c->t->ring + (c->ahead & c->t->ring_mask)));
		if (!k) { /* a record that does not parse: advance() says so */
			c->ahead = c->end;
			return;
		}
		c->ahead += 8 * (uint64_t)k;
		if (c->ahead < c->end)
			prefetch_slot(ty, c->t, c->ahead);
	}
}

/* The allocated size of a ring record (encoder.h's layout). */
static inline uint64_t ring_allocated(uint64_t w0, uint64_t req, const uint64_t *wide)
{
	return (w0 & MP_RING_WIDE) ? *wide : req + (uint64_t)(int64_t)(int32_t)(w0 >> 32);
}

/* Move c to its next timed record; ready when it is earlier than horizon.
 * Returns -1 on a record that does not parse (a writer bug), else 0. */
static inline int advance(cursor_t *c, const mp_capclock_t *clock, uint64_t horizon)
{
	while (c->pos < c->end) {
		const uint64_t *r = (const uint64_t *)(const void *)(c->t->ring + (c->pos & c->t->ring_mask));
		unsigned k = mp_ring_words(r[0]), kind = (unsigned)r[0] & 0xff;
		uint64_t ns;
		if (!k || c->pos + 8 * (uint64_t)k > c->end)
			return -1;
		if (kind == MP_REC_CONTEXT || kind == MP_REC_STACK) { /* not events */
			c->pos += 8 * (uint64_t)k;
			continue;
		}
		ns = mp__capclock_convert(clock, r[1]);
		if (ns < c->last)
			ns = c->last;
		c->ns = ns;
		c->ready = ns < horizon;
		return 0;
	}
	c->ready = 0;
	return 0;
}

/* The record at c->pos into the tally; 0 or -ENOMEM. */
static inline int apply(mp_tally_t *ty, const cursor_t *c)
{
	const uint64_t *r = (const uint64_t *)(const void *)(c->t->ring + (c->pos & c->t->ring_mask));
	uint64_t w0 = r[0];
	unsigned kind = (unsigned)w0 & 0xff;
	uint32_t mem = (uint32_t)(w0 >> 16) & 0xffff;

	ty->events += kind == MP_REC_REALLOC ? 2 : 1;
	if (mem >= MP_TALLY_MEMS) /* no writer declares it (mp_writer_memory) */
		return 0;
	switch (kind) {
	case MP_REC_ALLOC:
		return mp__tally_alloc(ty, mem, c->ns, r[2], r[3], ring_allocated(w0, r[3], r + 4), 0);
	case MP_REC_FREE:
		mp__tally_free(ty, mem, c->ns, r[2], 0);
		return 0;
	case MP_REC_REALLOC:
		mp__tally_free(ty, mem, c->ns, r[2], 1);
		return mp__tally_alloc(ty, mem, c->ns, r[3], r[4], ring_allocated(w0, r[4], r + 5), 1);
	case MP_REC_ALLOC_FAILED:
		mp__tally_other(ty, mem, c->ns, 1);
		return 0;
	case MP_REC_REGION_ADD:
	case MP_REC_REGION_REMOVE:
		mp__tally_other(ty, mem, c->ns, 0);
		return 0;
	default: /* steps and marks: events, not of a memory id */
		return 0;
	}
}

/* (ns, index) of a before b's */
static inline int before(const cursor_t *a, const cursor_t *b)
{
	return a->ns < b->ns || (a->ns == b->ns && a->index < b->index);
}

/* A lane's records carry ns already (wlane.c): the identity line, as the
 * encoder converts them (flush.c). */
static const mp_capclock_t lane_clock = {0};

static inline const mp_capclock_t *clock_of(const mp_writer_t *w, const cursor_t *c)
{
	return c->t->lane ? &lane_clock : &w->clock;
}

/* Take c's record and move on to its next one. */
static inline int take(mp_writer_t *w, cursor_t *c, uint64_t horizon)
{
	int rc = apply(&w->tally, c);

	if (rc)
		return rc;
	c->last = c->ns;
	c->pos += 8 * (uint64_t)mp_ring_words(*(const uint64_t *)(const void *)(c->t->ring + (c->pos & c->t->ring_mask)));
	step_ahead(&w->tally, c);
	return advance(c, clock_of(w, c), horizon);
}

/* h[0..n) a min-heap of cursors by (time, thread index) but for the root,
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

/* The merge over many cursors, through a heap of those ready (h: room for n). */
static int merge_heap(mp_writer_t *w, cursor_t *cur, cursor_t **h, size_t n, uint64_t horizon)
{
	size_t hn = 0, i;
	int rc;

	for (i = 0; i < n; i++) {
		if (!cur[i].ready)
			continue;
		/* sift up */
		size_t j = hn++;
		while (j > 0 && before(&cur[i], h[(j - 1) / 2])) {
			h[j] = h[(j - 1) / 2];
			j = (j - 1) / 2;
		}
		h[j] = &cur[i];
	}
	while (hn) {
		if ((rc = take(w, h[0], horizon)))
			return rc;
		if (!h[0]->ready)
			h[0] = h[--hn];
		if (hn)
			sift_down(h, hn);
	}
	return 0;
}

/* The merge over n cursors: the earliest ready one, run until another's
 * record comes first (with two threads that is a compare per record). */
static int merge(mp_writer_t *w, cursor_t *cur, size_t n, uint64_t horizon)
{
	size_t i;
	int rc;

	for (;;) {
		cursor_t *best = NULL, *next = NULL;
		for (i = 0; i < n; i++) {
			if (!cur[i].ready)
				continue;
			if (!best || before(&cur[i], best)) {
				next = best;
				best = &cur[i];
			} else if (!next || before(&cur[i], next)) {
				next = &cur[i];
			}
		}
		if (!best)
			return 0;
		do {
			if ((rc = take(w, best, horizon)))
				return rc;
		} while (best->ready && (!next || before(best, next)));
	}
}

int mp__tally_round(mp_writer_t *w, const mp_tally_src_t *src, size_t n, uint64_t horizon)
{
	mp_tally_t *ty = &w->tally;
	cursor_t *cur;
	size_t i;
	int rc = 0, k;

	if (!n)
		return 0;
	ty->cursors.len = 0;
	if (!ty->failed && mp_mbuf_reserve(&ty->cursors, n * (sizeof(cursor_t) + sizeof(cursor_t *))))
		ty->failed = 1;
	cur = (cursor_t *)(void *)ty->cursors.data;
	for (i = 0; i < n && !ty->failed; i++) {
		mp_wthread_t *t = src[i].t;
		cur[i].t = t;
		cur[i].pos = t->tallied;
		cur[i].end = src[i].end;
		cur[i].last = t->tally_time;
		cur[i].index = t->index;
		cur[i].ready = 0;
		cur[i].ahead = cur[i].pos;
		if (advance(&cur[i], clock_of(w, &cur[i]), horizon))
			rc = -1;
		for (k = 0; k < LOOK_AHEAD; k++)
			step_ahead(ty, &cur[i]);
	}
	if (!rc && !ty->failed)
		rc = n <= SCAN_MAX ? merge(w, cur, n, horizon)
				   : merge_heap(w, cur, (cursor_t **)(void *)(cur + n), n, horizon);
	if (rc)
		ty->failed = 1; /* the figures stop here: the rings must still drain */
	for (i = 0; i < n; i++) {
		mp_wthread_t *t = src[i].t;
		if (ty->failed) {
			t->tallied = src[i].end;
		} else {
			t->tallied = cur[i].pos;
			t->tally_time = cur[i].last;
		}
	}
	return rc;
}
