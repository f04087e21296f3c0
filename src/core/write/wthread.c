/* wthread.c - the event path: per-thread rings and record encoding.
 *
 * This is the hot path of every traced program. It takes no lock, calls no
 * malloc (after a thread's first event), and touches only the calling
 * thread's own cache lines except when its ring is more than half full.
 * See writer_internal.h for the ordering protocol with the flusher.
 */
#include <memprof/format.h>
#include <memprof/format/varint.h>

#include "clock.h"
#include "wthread_path.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Which writer the calling thread's ring belongs to (wthread_path.h). */
__thread mp_wthread_tls_t mp__wthread_tls __attribute__((tls_model("initial-exec")));

void mp__wthread_exit(void *arg)
{
	mp_wthread_t *t = arg;

	/* Unbind first: anything this thread records later (another key's
	 * destructor that frees memory) registers afresh instead of writing into
	 * a ring that another thread may now reuse. */
	if (mp__wthread_tls.t == t) {
		mp__wthread_tls.t = NULL;
		mp__wthread_tls.writer_id = 0;
	}
	atomic_store_explicit(&t->exited, 1, memory_order_release);
}

static mp_wthread_t *wthread_register(mp_writer_t *w)
{
	mp_wthread_t *t = NULL, *it;
	uint64_t ring = w->ring_bytes;
	int reused = 0;

	if (atomic_load_explicit(&w->error, memory_order_relaxed) ||
	    atomic_load_explicit(&w->closing, memory_order_relaxed))
		return NULL;
	pthread_mutex_lock(&w->reg_mu);
	/* Reuse the slot of a thread that exited and whose ring is drained, so
	 * thread churn does not grow memory. */
	for (it = atomic_load_explicit(&w->threads, memory_order_acquire); it; it = it->next) {
		if (atomic_load_explicit(&it->exited, memory_order_acquire) == 1 &&
		    atomic_load_explicit(&it->tail, memory_order_acquire) ==
			    atomic_load_explicit(&it->head, memory_order_relaxed) &&
		    it->announced) {
			t = it;
			break;
		}
	}
	if (t) {
		reused = 1;
		/* exited = 2 marks "being reused": the flusher skips it until the
		 * new owner is set up. */
		atomic_store_explicit(&t->exited, 2, memory_order_relaxed);
	} else {
		t = mp_arena_alloc(&w->arena, sizeof(*t));
		if (!t)
			goto out;
		t->ring = mp_map_pages(ring + MP_RING_SLACK);
		if (!t->ring) {
			t = NULL;
			goto out;
		}
		t->ring_mask = ring - 1;
	}
	t->index = w->thread_count++;
	t->tid = (uint64_t)syscall(SYS_gettid);
	/* The flusher's encoding state for this thread. Any time not after the
	 * thread's first event will do as the base of its time deltas: the
	 * last horizon is. */
	memset(&t->flushed, 0, sizeof(t->flushed));
	t->flushed.v[MP_ST_TIME] = atomic_load_explicit(&w->last_horizon, memory_order_relaxed);
	memset(t->ctx, 0, sizeof(t->ctx));
	memset(t->tally_ctx, 0, sizeof(t->tally_ctx));
	t->tally_stack = t->tally_ctxtag = 0;
	t->announced = 0;
	t->tail_cache = atomic_load_explicit(&t->head, memory_order_relaxed);
	t->encoded = t->tallied = t->tail_cache;
	t->tally_time = t->flushed.v[MP_ST_TIME]; /* the encoder's base: the same times */
	atomic_store_explicit(&t->tail, t->tail_cache, memory_order_relaxed);
	if (!reused) {
		t->next = atomic_load_explicit(&w->threads, memory_order_relaxed);
		atomic_store_explicit(&w->threads, t, memory_order_release);
	}
	atomic_store_explicit(&t->exited, 0, memory_order_release);
out:
	pthread_mutex_unlock(&w->reg_mu);
	if (t && w->key_ok)
		pthread_setspecific(w->key, t);
	return t;
}

static void count_drop(mp_wthread_t *t, uint32_t memory, uint64_t n)
{
	uint32_t slot = memory < MP_DROP_SLOTS - 1 ? memory : MP_DROP_SLOTS - 1;

	atomic_fetch_add_explicit(&t->dropped[slot], n, memory_order_relaxed);
}

/* A thread whose registration failed tries again every this many events:
 * each try maps a ring (a system call), too dear for every event of a
 * thread that is likely to fail again. */
#define BIND_RETRY_EVERY 1024

mp_wthread_t *mp__wthread_bind(mp_writer_t *w)
{
	mp_wthread_tls_t *tls = &mp__wthread_tls;

	if (tls->writer_id == w->id && !tls->t && tls->retry_in) {
		tls->retry_in--;
		return NULL;
	}
	tls->t = wthread_register(w);
	tls->writer_id = w->id;
	tls->retry_in = tls->t ? 0 : BIND_RETRY_EVERY;
	return tls->t;
}

void mp__wthread_unbound_drop(mp_writer_t *w, uint32_t memory, uint64_t n)
{
	mp_wthread_t *u = w->unbound;

	if (!u || atomic_load_explicit(&w->error, memory_order_relaxed) ||
	    atomic_load_explicit(&w->closing, memory_order_relaxed))
		return;
	if (!atomic_load_explicit(&w->unbound_listed, memory_order_acquire)) {
		pthread_mutex_lock(&w->reg_mu);
		if (!atomic_load_explicit(&w->unbound_listed, memory_order_relaxed)) {
			u->index = w->thread_count++;
			u->next = atomic_load_explicit(&w->threads, memory_order_relaxed);
			atomic_store_explicit(&w->threads, u, memory_order_release);
			atomic_store_explicit(&w->unbound_listed, 1, memory_order_release);
		}
		pthread_mutex_unlock(&w->reg_mu);
	}
	count_drop(u, memory, n);
}

/* --- the rare branches of the event path (wthread_path.h) --------------- */

/* Whether a round may run on this thread for t's ring (help.c): help is
 * on, the ring is a thread's (not a lane's, whose caller holds its own
 * lock), and the thread holds no lock around its records. */
static int help_here(mp_writer_t *w, const mp_wthread_t *t)
{
	return atomic_load_explicit(&w->help.on, memory_order_relaxed) && !t->lane && !mp__wthread_tls.no_help;
}

/* Wait until the flusher has made room, or give up. Called with seq even:
 * the caller then restarts its record (and retakes the timestamp). The
 * flusher wakes the thread as soon as it has taken its records (futex on
 * `space`; the timeout only guards against a lost wake-up). */
static int ring_wait(mp_writer_t *w, mp_wthread_t *t)
{
	uint64_t size = t->ring_mask + 1;
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	int rc = 0;

	atomic_store_explicit(&t->waiting, 1, memory_order_seq_cst);
	for (;;) {
		uint32_t seen = atomic_load_explicit(&t->space, memory_order_acquire);
		t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
		if (head - t->tail_cache + MP_REC_MAX <= size)
			break;
		if ((rc = atomic_load_explicit(&w->error, memory_order_relaxed)))
			break;
		if (w->full_policy == MP_WRITER_DROP) {
			rc = -ENOBUFS;
			break;
		}
		/* Help on (help.c): the round here, or, when one runs, room from
		 * it (or from the one this thread runs next time round). */
		if (help_here(w, t)) {
			if (mp__help_round(w) == 0)
				continue;
		} else {
			mp__flusher_wake(w);
		}
		mp__futex_wait(&t->space, seen, 2);
	}
	atomic_store_explicit(&t->waiting, 0, memory_order_relaxed);
	return rc;
}

/* The ring looked full on the lagging tail_cache (seq odd): look at the
 * real tail, and wait for room when it is full indeed. */
uint64_t *mp__rec_begin_slow(mp_writer_t *w, mp_wthread_t *t, uint32_t memory, uint64_t nevents)
{
	for (;;) {
		uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
		t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
		if (head - t->tail_cache + MP_REC_MAX <= t->ring_mask + 1)
			return (uint64_t *)(void *)(t->ring + (head & t->ring_mask));
		mp__seq_bump(t, memory_order_release);
		if (ring_wait(w, t)) {
			count_drop(t, memory, nevents);
			return NULL;
		}
		mp__rec_open(w, t); /* the record starts again */
	}
}

/* Wake the flusher at half full, or with help on (help.c) run the round
 * here, unless a CPU idles right now (the flusher takes it there): when
 * one runs already, it or the next takes this ring (the round
 * that ends clears wake_sent: this thread looks again then). tail_cache
 * lags (it is refreshed only when the ring looks full), so it is refreshed
 * first: judged on a stale tail, every record after the first half-fill
 * would start a round again, of a few thousand events, each paying its
 * membarrier, Huffman tables and block framing. */
void mp__rec_wake(mp_writer_t *w, mp_wthread_t *t, uint64_t head)
{
	if (head - (t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire)) > (t->ring_mask + 1) / 2) {
		atomic_store_explicit(&t->wake_sent, 1, memory_order_relaxed);
		if (help_here(w, t) && !mp__help_spare(w)) {
			if (mp__help_round(w) == 0) /* (the round moved the tail) */
				t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
			return;
		}
		mp__flusher_wake(w);
	}
}

/* --- records --------------------------------------------------------------
 * Raw values only (encoder.h has the layout): the flusher encodes. */

/* The calling thread has no ring: its event is dropped (counted, unless
 * the writer failed or is closing). The writer's error, or -ENOMEM. */
static int unbound(mp_writer_t *w, uint32_t memory, uint64_t nevents)
{
	int rc = atomic_load_explicit(&w->error, memory_order_relaxed);

	if (nevents)
		mp__wthread_unbound_drop(w, memory, nevents);
	return rc ? rc : -ENOMEM;
}

#define GET_THREAD(w, t, memory, nevents)                                                                     \
	mp_wthread_t *t;                                                                      \
	if (__builtin_expect(!(w), 0))                                                        \
		return -EINVAL;                                                               \
	t = mp__wthread_get(w);                                                               \
	if (__builtin_expect(!t, 0))                                                          \
		return unbound(w, memory, nevents)

int mp_writer_alloc(mp_writer_t *w, uint32_t memory, uint64_t address, uint64_t requested, uint64_t allocated)
{
	GET_THREAD(w, t, memory, 1);
	int rc;

	if (memory > MP_RING_MAX_MEMORY)
		return -EINVAL;
	rc = mp__rec_alloc(w, t, memory, address, requested, allocated);
	if (rc == 0)
		mp__prompt_if_large(w, requested > allocated ? requested : allocated);
	return rc;
}

int mp_writer_realloc(mp_writer_t *w, uint32_t memory, uint64_t old_address, uint64_t new_address,
		      uint64_t requested, uint64_t allocated)
{
	GET_THREAD(w, t, memory, 2);
	int rc;

	if (memory > MP_RING_MAX_MEMORY)
		return -EINVAL;
	rc = mp__rec_realloc(w, t, memory, old_address, new_address, requested, allocated);
	if (rc == 0)
		mp__prompt_if_large(w, requested > allocated ? requested : allocated);
	return rc;
}

static inline int timed_rec(mp_writer_t *w, unsigned kind, uint32_t memory, uint64_t a, uint64_t b, unsigned k)
{
	GET_THREAD(w, t, memory, 1);

	if (memory > MP_RING_MAX_MEMORY)
		return -EINVAL;
	return mp__rec_timed(w, t, kind, memory, a, b, k, 0);
}

int mp_writer_free(mp_writer_t *w, uint32_t memory, uint64_t address)
{
	return timed_rec(w, MP_REC_FREE, memory, address, 0, 3);
}

int mp_writer_alloc_failed(mp_writer_t *w, uint32_t memory, uint64_t requested)
{
	int rc = timed_rec(w, MP_REC_ALLOC_FAILED, memory, requested, 0, 3);

	if (rc == 0)
		mp__writer_prompt(w);
	return rc;
}

int mp_writer_region_add(mp_writer_t *w, uint32_t memory, uint64_t base, uint64_t size)
{
	return timed_rec(w, MP_REC_REGION_ADD, memory, base, size, 4);
}

int mp_writer_region_remove(mp_writer_t *w, uint32_t memory, uint64_t base)
{
	return timed_rec(w, MP_REC_REGION_REMOVE, memory, base, 0, 3);
}

/* STEP and MARK belong to no memory id (the encoder ignores the field). */
int mp_writer_step(mp_writer_t *w, int64_t step)
{
	return timed_rec(w, MP_REC_STEP, 0, mp_zigzag(step), 0, 3);
}

int mp_writer_mark(mp_writer_t *w, uint32_t label)
{
	return timed_rec(w, MP_REC_MARK, 0, label, 0, 3);
}

void mp_writer_set_context(mp_writer_t *w, uint32_t op, int region, uint32_t dtype, uint32_t shape)
{
	mp_wthread_t *t;
	uint64_t *r;

	if (!w || !(t = mp__wthread_get(w)))
		return;
	if (t->ctx[0] == op && t->ctx[1] == (uint32_t)region && t->ctx[2] == dtype && t->ctx[3] == shape)
		return;
	if (!(r = mp__rec_begin(w, t, 0, 0)))
		return; /* context lost with a full ring in drop mode; later events still count */
	r[0] = MP_REC_CONTEXT;
	r[1] = op;
	r[2] = (uint32_t)region;
	r[3] = dtype;
	r[4] = shape;
	t->ctx[0] = op;
	t->ctx[1] = (uint32_t)region;
	t->ctx[2] = dtype;
	t->ctx[3] = shape;
	mp__rec_commit(w, t, 5, 0);
}

/* STACK: the stack id of the thread's next ALLOC / REALLOC / ALLOC_FAILED
 * (no time, not an event). Its own record: a flush round may fall between
 * it and the allocation, so the reader carries it into the thread's next
 * chunk (docs/format.md). */
int mp_writer_next_stack(mp_writer_t *w, uint32_t id)
{
	uint64_t *r;
	GET_THREAD(w, t, 0, 0); /* not an event */

	if (!(r = mp__rec_begin(w, t, 0, 0)))
		return -ENOBUFS;
	r[0] = MP_REC_STACK;
	r[1] = id;
	mp__rec_commit(w, t, 2, 0);
	return 0;
}
