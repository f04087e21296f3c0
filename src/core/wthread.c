/* wthread.c - the event path: per-thread rings and record encoding.
 *
 * This is the hot path of every traced program. It takes no lock, calls no
 * malloc (after a thread's first event), and touches only the calling
 * thread's own cache lines except when its ring is more than half full.
 * See writer_internal.h for the ordering protocol with the flusher.
 */
#include "clock.h"
#include "format.h"
#include "varint.h"
#include "writer_internal.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Which writer the calling thread's ring belongs to. initial-exec TLS: the
 * first access from a dlopen'ed library must not allocate. */
static __thread struct {
	uint64_t writer_id;
	mp_wthread_t *t;
} tls __attribute__((tls_model("initial-exec")));

void mp__wthread_exit(void *arg)
{
	mp_wthread_t *t = arg;

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
		t->ring = mp_map_pages(ring);
		if (!t->ring) {
			t = NULL;
			goto out;
		}
		t->ring_mask = ring - 1;
	}
	t->index = w->thread_count++;
	t->tid = (uint64_t)syscall(SYS_gettid);
	memset(&t->st, 0, sizeof(t->st));
	memset(&t->flushed, 0, sizeof(t->flushed));
	t->st.time = mp_clock_ns() - w->origin_ns;
	t->flushed = t->st;
	atomic_store_explicit(&t->pub_time, t->st.time, memory_order_relaxed);
	atomic_store_explicit(&t->pub_addr, 0, memory_order_relaxed);
	atomic_store_explicit(&t->pub_memory, 0, memory_order_relaxed);
	atomic_store_explicit(&t->pub_op, 0, memory_order_relaxed);
	atomic_store_explicit(&t->pub_dtype, 0, memory_order_relaxed);
	atomic_store_explicit(&t->pub_shape, 0, memory_order_relaxed);
	atomic_store_explicit(&t->pub_region, 0, memory_order_relaxed);
	t->announced = 0;
	t->tail_cache = atomic_load_explicit(&t->head, memory_order_relaxed);
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

mp_wthread_t *mp__wthread_get(mp_writer_t *w)
{
	if (__builtin_expect(tls.writer_id == w->id && tls.t != NULL, 1))
		return tls.t;
	tls.t = wthread_register(w);
	tls.writer_id = tls.t ? w->id : 0;
	return tls.t;
}

/* --- the protocol around one record ------------------------------------ */

static inline void rec_begin(mp_writer_t *w, mp_wthread_t *t)
{
	uint64_t s = atomic_load_explicit(&t->seq, memory_order_relaxed);

	atomic_store_explicit(&t->seq, s + 1, memory_order_relaxed);
	if (w->use_membarrier)
		atomic_signal_fence(memory_order_seq_cst); /* the flusher's membarrier does the rest */
	else
		atomic_thread_fence(memory_order_seq_cst);
}

static inline void rec_abort(mp_wthread_t *t)
{
	uint64_t s = atomic_load_explicit(&t->seq, memory_order_relaxed);

	atomic_store_explicit(&t->seq, s + 1, memory_order_release);
}

static inline uint64_t rec_time(mp_writer_t *w, mp_wthread_t *t)
{
	uint64_t now = mp_clock_ns() - w->origin_ns;

	return now < t->st.time ? t->st.time : now;
}

/* Wait until the flusher has made room for n bytes, or give up. Called with
 * seq even: the caller restarts its record (and retakes the timestamp). */
static int ring_wait(mp_writer_t *w, mp_wthread_t *t, uint64_t n)
{
	uint64_t size = t->ring_mask + 1;
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	struct timespec pause = {0, 50000};

	if (n > size)
		return -E2BIG;
	for (;;) {
		t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
		if (head - t->tail_cache + n <= size)
			return 0;
		if (atomic_load_explicit(&w->error, memory_order_relaxed))
			return atomic_load_explicit(&w->error, memory_order_relaxed);
		if (w->full_policy == MP_WRITER_DROP)
			return -ENOBUFS;
		atomic_fetch_add_explicit(&w->wake, 1, memory_order_release);
		mp__futex_wake(&w->wake);
		nanosleep(&pause, NULL);
	}
}

static void count_drop(mp_wthread_t *t, uint32_t memory)
{
	uint32_t slot = memory < MP_DROP_SLOTS - 1 ? memory : MP_DROP_SLOTS - 1;

	atomic_fetch_add_explicit(&t->dropped[slot], 1, memory_order_relaxed);
}

/* Copy an encoded record into the ring and publish it (ends the record). */
static inline int rec_commit(mp_writer_t *w, mp_wthread_t *t, const uint8_t *rec, size_t n,
			     uint64_t nevents)
{
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	uint64_t size = t->ring_mask + 1;
	uint64_t pos = head & t->ring_mask;

	if (__builtin_expect(head - t->tail_cache + n > size, 0)) {
		t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
		if (head - t->tail_cache + n > size)
			return -ENOBUFS; /* caller aborts, waits and retries */
	}
	if (__builtin_expect(pos + n <= size, 1)) {
		memcpy(t->ring + pos, rec, n);
	} else {
		size_t first = (size_t)(size - pos);
		memcpy(t->ring + pos, rec, first);
		memcpy(t->ring, rec + first, n - first);
	}
	atomic_store_explicit(&t->pub_time, t->st.time, memory_order_relaxed);
	atomic_store_explicit(&t->pub_addr, t->st.addr, memory_order_relaxed);
	atomic_store_explicit(&t->pub_memory, t->st.memory, memory_order_relaxed);
	atomic_store_explicit(&t->events, atomic_load_explicit(&t->events, memory_order_relaxed) + nevents,
			      memory_order_relaxed);
	atomic_store_explicit(&t->head, head + n, memory_order_release);
	rec_abort(t); /* seq back to even, release */
	if (__builtin_expect(head + n - t->tail_cache > size / 2, 0) &&
	    !atomic_load_explicit(&t->wake_sent, memory_order_relaxed)) {
		atomic_store_explicit(&t->wake_sent, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&w->wake, 1, memory_order_release);
		mp__futex_wake(&w->wake);
	}
	return 0;
}

/* --- encoding ------------------------------------------------------------ */

/* Address delta against the thread's previous address: in 16-byte units
 * when both are 16-byte aligned apart (the common case for malloc). */
static inline uint8_t *put_addr(uint8_t *p, uint64_t from, uint64_t to, int aligned)
{
	int64_t d = (int64_t)(to - from);

	if (aligned)
		d /= 16;
	return mp_varint_put(p, mp_zigzag(d));
}

static inline uint8_t *put_head(uint8_t *rec, uint8_t kind, mp_wthread_t *t, uint32_t memory)
{
	uint8_t *p = rec + 1;

	rec[0] = kind;
	if (memory != t->st.memory) {
		rec[0] |= MP_RECF_MEMORY;
		p = mp_varint_put(p, memory);
		t->st.memory = memory;
	}
	return p;
}

typedef struct {
	uint8_t kind;
	uint32_t memory;
	uint64_t a, b;      /* addresses (a = main/old, b = new for realloc) */
	uint64_t req, alloc;
	int64_t step;
	uint32_t label;
} ev_args_t;

static int record(mp_writer_t *w, const ev_args_t *e)
{
	mp_wthread_t *t;
	uint8_t rec[64], *p;
	uint64_t now, nev = 1;
	int rc;

	if (!w)
		return -EINVAL;
	t = mp__wthread_get(w);
	if (!t)
		return atomic_load_explicit(&w->error, memory_order_relaxed) ? atomic_load_explicit(&w->error, memory_order_relaxed) : -ENOMEM;
	for (;;) {
		mp_chunk_state_t saved = t->st;

		rec_begin(w, t);
		now = rec_time(w, t);
		p = put_head(rec, e->kind, t, e->memory);
		p = mp_varint_put(p, now - t->st.time);
		switch (e->kind) {
		case MP_REC_ALLOC:
		case MP_REC_REGION_ADD: {
			int al = ((e->a ^ t->st.addr) & 15) == 0;
			if (al)
				rec[0] |= MP_RECF_ALIGN16;
			p = put_addr(p, t->st.addr, e->a, al);
			p = mp_varint_put(p, e->req);
			if (e->kind == MP_REC_ALLOC) {
				if (e->alloc == e->req)
					rec[0] |= MP_RECF_EXACT;
				else
					p = mp_varint_put(p, mp_zigzag((int64_t)(e->alloc - e->req)));
			}
			t->st.addr = e->a;
			break;
		}
		case MP_REC_FREE:
		case MP_REC_REGION_REMOVE: {
			int al = ((e->a ^ t->st.addr) & 15) == 0;
			if (al)
				rec[0] |= MP_RECF_ALIGN16;
			p = put_addr(p, t->st.addr, e->a, al);
			t->st.addr = e->a;
			break;
		}
		case MP_REC_REALLOC: {
			int al = ((e->a ^ t->st.addr) & 15) == 0 && ((e->a ^ e->b) & 15) == 0;
			if (al)
				rec[0] |= MP_RECF_ALIGN16;
			p = put_addr(p, t->st.addr, e->a, al);
			p = put_addr(p, e->a, e->b, al);
			p = mp_varint_put(p, e->req);
			if (e->alloc == e->req)
				rec[0] |= MP_RECF_EXACT;
			else
				p = mp_varint_put(p, mp_zigzag((int64_t)(e->alloc - e->req)));
			t->st.addr = e->b;
			nev = 2;
			break;
		}
		case MP_REC_ALLOC_FAILED:
			p = mp_varint_put(p, e->req);
			break;
		case MP_REC_STEP:
			p = mp_varint_put(p, mp_zigzag(e->step));
			break;
		case MP_REC_MARK:
			p = mp_varint_put(p, e->label);
			break;
		default:
			break;
		}
		t->st.time = now;
		rc = rec_commit(w, t, rec, (size_t)(p - rec), nev);
		if (__builtin_expect(rc == 0, 1))
			return 0;
		/* Ring full: undo, let the flusher drain, retry with a new time. */
		t->st = saved;
		rec_abort(t);
		rc = ring_wait(w, t, (uint64_t)(p - rec));
		if (rc) {
			count_drop(t, e->memory);
			if (e->kind == MP_REC_REALLOC)
				count_drop(t, e->memory);
			return rc;
		}
	}
}

int mp_writer_alloc(mp_writer_t *w, uint32_t memory, uint64_t address, uint64_t requested, uint64_t allocated)
{
	ev_args_t e = {.kind = MP_REC_ALLOC, .memory = memory, .a = address, .req = requested, .alloc = allocated};
	return record(w, &e);
}

int mp_writer_free(mp_writer_t *w, uint32_t memory, uint64_t address)
{
	ev_args_t e = {.kind = MP_REC_FREE, .memory = memory, .a = address};
	return record(w, &e);
}

int mp_writer_realloc(mp_writer_t *w, uint32_t memory, uint64_t old_address, uint64_t new_address,
		      uint64_t requested, uint64_t allocated)
{
	ev_args_t e = {.kind = MP_REC_REALLOC, .memory = memory, .a = old_address, .b = new_address,
		       .req = requested, .alloc = allocated};
	return record(w, &e);
}

int mp_writer_alloc_failed(mp_writer_t *w, uint32_t memory, uint64_t requested)
{
	ev_args_t e = {.kind = MP_REC_ALLOC_FAILED, .memory = memory, .req = requested};
	return record(w, &e);
}

int mp_writer_region_add(mp_writer_t *w, uint32_t memory, uint64_t base, uint64_t size)
{
	ev_args_t e = {.kind = MP_REC_REGION_ADD, .memory = memory, .a = base, .req = size};
	return record(w, &e);
}

int mp_writer_region_remove(mp_writer_t *w, uint32_t memory, uint64_t base)
{
	ev_args_t e = {.kind = MP_REC_REGION_REMOVE, .memory = memory, .a = base};
	return record(w, &e);
}

int mp_writer_step(mp_writer_t *w, int64_t step)
{
	ev_args_t e = {.kind = MP_REC_STEP, .step = step};
	mp_wthread_t *t = w ? mp__wthread_get(w) : NULL;

	e.memory = t ? t->st.memory : 0; /* steps carry no memory id */
	return record(w, &e);
}

int mp_writer_mark(mp_writer_t *w, uint32_t label)
{
	ev_args_t e = {.kind = MP_REC_MARK, .label = label};
	mp_wthread_t *t = w ? mp__wthread_get(w) : NULL;

	e.memory = t ? t->st.memory : 0;
	return record(w, &e);
}

void mp_writer_set_context(mp_writer_t *w, uint32_t op, int region, uint32_t dtype, uint32_t shape)
{
	mp_wthread_t *t;
	uint8_t rec[1 + 4 * MP_VARINT_MAX], *p;

	if (!w || !(t = mp__wthread_get(w)))
		return;
	if (t->st.op == op && t->st.region == (uint32_t)region && t->st.dtype == dtype && t->st.shape == shape)
		return;
	for (;;) {
		mp_chunk_state_t saved = t->st;

		rec_begin(w, t);
		p = rec;
		*p++ = MP_REC_CONTEXT;
		p = mp_varint_put(p, op);
		p = mp_varint_put(p, (uint32_t)region);
		p = mp_varint_put(p, dtype);
		p = mp_varint_put(p, shape);
		t->st.op = op;
		t->st.region = (uint32_t)region;
		t->st.dtype = dtype;
		t->st.shape = shape;
		atomic_store_explicit(&t->pub_op, op, memory_order_relaxed);
		atomic_store_explicit(&t->pub_region, (uint32_t)region, memory_order_relaxed);
		atomic_store_explicit(&t->pub_dtype, dtype, memory_order_relaxed);
		atomic_store_explicit(&t->pub_shape, shape, memory_order_relaxed);
		if (rec_commit(w, t, rec, (size_t)(p - rec), 0) == 0)
			return;
		t->st = saved;
		atomic_store_explicit(&t->pub_op, saved.op, memory_order_relaxed);
		atomic_store_explicit(&t->pub_region, saved.region, memory_order_relaxed);
		atomic_store_explicit(&t->pub_dtype, saved.dtype, memory_order_relaxed);
		atomic_store_explicit(&t->pub_shape, saved.shape, memory_order_relaxed);
		rec_abort(t);
		if (ring_wait(w, t, (uint64_t)(p - rec)))
			return; /* context lost with the writer; events after it still count */
	}
}
