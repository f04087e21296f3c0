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

	/* Unbind first: anything this thread records later (another key's
	 * destructor that frees memory) registers afresh instead of writing into
	 * a ring that another thread may now reuse. */
	if (tls.t == t) {
		tls.t = NULL;
		tls.writer_id = 0;
	}
	atomic_store_explicit(&t->exited, 1, memory_order_release);
}

static mp_wthread_t *wthread_register(mp_writer_t *w)
{
	mp_wthread_t *t = NULL, *it;
	uint64_t ring = w->ring_bytes;
	int reused = 0, i;

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
	for (i = 0; i < MP_ST_COUNT; i++)
		atomic_store_explicit(&t->st[i], 0, memory_order_relaxed);
	atomic_store_explicit(&t->st[MP_ST_TIME], mp_clock_ns() - w->origin_ns, memory_order_relaxed);
	for (i = 0; i < MP_ST_COUNT; i++)
		t->flushed.v[i] = atomic_load_explicit(&t->st[i], memory_order_relaxed);
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

#define LD(t, f) atomic_load_explicit(&(t)->st[f], memory_order_relaxed)
#define ST(t, f, v) atomic_store_explicit(&(t)->st[f], (v), memory_order_relaxed)

static inline void seq_bump(mp_wthread_t *t, memory_order mo)
{
	atomic_store_explicit(&t->seq, atomic_load_explicit(&t->seq, memory_order_relaxed) + 1, mo);
}

/* Wait until the flusher has made room, or give up. Called with seq even:
 * the caller then restarts its record (and retakes the timestamp). */
static int ring_wait(mp_writer_t *w, mp_wthread_t *t)
{
	uint64_t size = t->ring_mask + 1;
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	struct timespec pause = {0, 50000};

	for (;;) {
		t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
		if (head - t->tail_cache + MP_REC_MAX <= size)
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

static void count_drop(mp_wthread_t *t, uint32_t memory, uint64_t n)
{
	uint32_t slot = memory < MP_DROP_SLOTS - 1 ? memory : MP_DROP_SLOTS - 1;

	atomic_fetch_add_explicit(&t->dropped[slot], n, memory_order_relaxed);
}

/* Start a record: seq odd, room for MP_REC_MAX bytes. Returns where to
 * encode, or NULL (seq even again) when the ring stays full. */
static inline uint8_t *rec_begin(mp_writer_t *w, mp_wthread_t *t, uint32_t memory, uint64_t nevents)
{
	for (;;) {
		uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
		seq_bump(t, memory_order_relaxed);
		if (w->use_membarrier)
			atomic_signal_fence(memory_order_seq_cst); /* the flusher's membarrier does the rest */
		else
			atomic_thread_fence(memory_order_seq_cst);
		if (__builtin_expect(head - t->tail_cache + MP_REC_MAX <= t->ring_mask + 1, 1))
			return t->ring + (head & t->ring_mask);
		t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
		if (head - t->tail_cache + MP_REC_MAX <= t->ring_mask + 1)
			return t->ring + (head & t->ring_mask);
		seq_bump(t, memory_order_release);
		if (ring_wait(w, t)) {
			count_drop(t, memory, nevents);
			return NULL;
		}
	}
}

/* Publish the n bytes encoded at the ring's head (ends the record). */
static inline void rec_commit(mp_writer_t *w, mp_wthread_t *t, size_t n, uint64_t nevents)
{
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	uint64_t size = t->ring_mask + 1, pos = head & t->ring_mask;

	if (__builtin_expect(pos + n > size, 0))
		memcpy(t->ring, t->ring + size, pos + n - size); /* the part written into the slack */
	atomic_store_explicit(&t->events, atomic_load_explicit(&t->events, memory_order_relaxed) + nevents,
			      memory_order_relaxed);
	atomic_store_explicit(&t->head, head + n, memory_order_release);
	seq_bump(t, memory_order_release);
	if (__builtin_expect(head + n - t->tail_cache > size / 2, 0) &&
	    !atomic_load_explicit(&t->wake_sent, memory_order_relaxed)) {
		atomic_store_explicit(&t->wake_sent, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&w->wake, 1, memory_order_release);
		mp__futex_wake(&w->wake);
	}
}

/* --- encoding ------------------------------------------------------------ */

static inline uint64_t rec_time(mp_writer_t *w, mp_wthread_t *t, uint8_t **p)
{
	uint64_t prev = LD(t, MP_ST_TIME), now = mp_clock_ns() - w->origin_ns;

	if (now < prev)
		now = prev;
	*p = mp_varint_put(*p, now - prev);
	ST(t, MP_ST_TIME, now);
	return now;
}

/* The tag byte and, when the memory id changes, its varint. */
static inline uint8_t *rec_head(mp_wthread_t *t, uint8_t *rec, uint8_t kind, uint32_t memory)
{
	rec[0] = kind;
	if (__builtin_expect(memory != LD(t, MP_ST_MEMORY), 0)) {
		rec[0] |= MP_RECF_MEMORY;
		ST(t, MP_ST_MEMORY, memory);
		return mp_varint_put(rec + 1, memory);
	}
	return rec + 1;
}

/* Address delta against the thread's previous address, in 16-byte units
 * when the two are a multiple of 16 apart (the common case for malloc). */
static inline uint8_t *put_addr(uint8_t *p, uint8_t *tag, uint64_t from, uint64_t to)
{
	int64_t d = (int64_t)(to - from);

	if ((d & 15) == 0) {
		*tag |= MP_RECF_ALIGN16;
		d /= 16;
	}
	return mp_varint_put(p, mp_zigzag(d));
}

static inline uint8_t *put_sizes(uint8_t *p, uint8_t *tag, uint64_t req, uint64_t alloc)
{
	p = mp_varint_put(p, req);
	if (alloc == req)
		*tag |= MP_RECF_EXACT;
	else if (alloc == mp_usable16(req))
		*tag |= MP_RECF_USABLE16;
	else
		p = mp_varint_put(p, mp_zigzag((int64_t)(alloc - req)));
	return p;
}

/* Allocators hand out recently freed blocks again (glibc's tcache is LIFO):
 * an allocation at an address a FREE left in its cache slot needs no address. */
static inline int reuse_hit(mp_wthread_t *t, uint64_t addr)
{
	return LD(t, MP_ST_REUSE + mp_reuse_slot(addr)) == addr;
}

static inline void reuse_push(mp_wthread_t *t, uint64_t addr)
{
	ST(t, MP_ST_REUSE + mp_reuse_slot(addr), addr);
}

#define GET_THREAD(w, t)                                                                     \
	mp_wthread_t *t;                                                                      \
	if (__builtin_expect(!(w), 0))                                                        \
		return -EINVAL;                                                               \
	t = mp__wthread_get(w);                                                               \
	if (__builtin_expect(!t, 0))                                                          \
		return atomic_load_explicit(&(w)->error, memory_order_relaxed) ? atomic_load_explicit(&(w)->error, memory_order_relaxed) : -ENOMEM

int mp_writer_alloc(mp_writer_t *w, uint32_t memory, uint64_t address, uint64_t requested, uint64_t allocated)
{
	uint8_t *rec, *p;
	int hit;
	GET_THREAD(w, t);

	if (!(rec = rec_begin(w, t, memory, 1)))
		return -ENOBUFS;
	hit = address != 0 && reuse_hit(t, address);
	p = rec_head(t, rec, hit ? MP_REC_ALLOC_REUSED : MP_REC_ALLOC, memory);
	rec_time(w, t, &p);
	if (hit)
		*p++ = (uint8_t)mp_reuse_slot(address);
	else
		p = put_addr(p, rec, LD(t, MP_ST_ADDR), address);
	p = put_sizes(p, rec, requested, allocated);
	ST(t, MP_ST_ADDR, address);
	rec_commit(w, t, (size_t)(p - rec), 1);
	return 0;
}

int mp_writer_realloc(mp_writer_t *w, uint32_t memory, uint64_t old_address, uint64_t new_address,
		      uint64_t requested, uint64_t allocated)
{
	uint8_t *rec, *p, tag2 = 0;
	GET_THREAD(w, t);

	if (!(rec = rec_begin(w, t, memory, 2)))
		return -ENOBUFS;
	p = rec_head(t, rec, MP_REC_REALLOC, memory);
	rec_time(w, t, &p);
	/* Both deltas must agree on the unit: ALIGN16 only if both are aligned. */
	if ((((old_address - LD(t, MP_ST_ADDR)) | (new_address - old_address)) & 15) == 0) {
		p = put_addr(p, rec, LD(t, MP_ST_ADDR), old_address);
		p = put_addr(p, &tag2, old_address, new_address);
	} else {
		p = mp_varint_put(p, mp_zigzag((int64_t)(old_address - LD(t, MP_ST_ADDR))));
		p = mp_varint_put(p, mp_zigzag((int64_t)(new_address - old_address)));
	}
	p = put_sizes(p, rec, requested, allocated);
	ST(t, MP_ST_ADDR, new_address);
	rec_commit(w, t, (size_t)(p - rec), 2);
	return 0;
}

int mp_writer_alloc_failed(mp_writer_t *w, uint32_t memory, uint64_t requested)
{
	uint8_t *rec, *p;
	GET_THREAD(w, t);

	if (!(rec = rec_begin(w, t, memory, 1)))
		return -ENOBUFS;
	p = rec_head(t, rec, MP_REC_ALLOC_FAILED, memory);
	rec_time(w, t, &p);
	p = mp_varint_put(p, requested);
	rec_commit(w, t, (size_t)(p - rec), 1);
	return 0;
}

/* FREE, REGION_ADD, REGION_REMOVE: a time and an address (and a size). */
static inline int addr_rec(mp_writer_t *w, uint8_t kind, uint32_t memory, uint64_t addr, uint64_t size)
{
	uint8_t *rec, *p;
	GET_THREAD(w, t);

	if (!(rec = rec_begin(w, t, memory, 1)))
		return -ENOBUFS;
	p = rec_head(t, rec, kind, memory);
	rec_time(w, t, &p);
	p = put_addr(p, rec, LD(t, MP_ST_ADDR), addr);
	if (kind == MP_REC_REGION_ADD)
		p = mp_varint_put(p, size);
	ST(t, MP_ST_ADDR, addr);
	if (kind == MP_REC_FREE)
		reuse_push(t, addr);
	rec_commit(w, t, (size_t)(p - rec), 1);
	return 0;
}

int mp_writer_free(mp_writer_t *w, uint32_t memory, uint64_t address)
{
	return addr_rec(w, MP_REC_FREE, memory, address, 0);
}

int mp_writer_region_add(mp_writer_t *w, uint32_t memory, uint64_t base, uint64_t size)
{
	return addr_rec(w, MP_REC_REGION_ADD, memory, base, size);
}

int mp_writer_region_remove(mp_writer_t *w, uint32_t memory, uint64_t base)
{
	return addr_rec(w, MP_REC_REGION_REMOVE, memory, base, 0);
}

/* STEP and MARK belong to no memory id: they keep the thread's current one. */
static int timed_rec(mp_writer_t *w, uint8_t kind, uint64_t value)
{
	uint8_t *rec, *p;
	uint32_t memory;
	GET_THREAD(w, t);

	memory = (uint32_t)LD(t, MP_ST_MEMORY);
	if (!(rec = rec_begin(w, t, memory, 1)))
		return -ENOBUFS;
	p = rec_head(t, rec, kind, memory);
	rec_time(w, t, &p);
	p = mp_varint_put(p, value);
	rec_commit(w, t, (size_t)(p - rec), 1);
	return 0;
}

int mp_writer_step(mp_writer_t *w, int64_t step)
{
	return timed_rec(w, MP_REC_STEP, mp_zigzag(step));
}

int mp_writer_mark(mp_writer_t *w, uint32_t label)
{
	return timed_rec(w, MP_REC_MARK, label);
}

void mp_writer_set_context(mp_writer_t *w, uint32_t op, int region, uint32_t dtype, uint32_t shape)
{
	mp_wthread_t *t;
	uint8_t *rec, *p;

	if (!w || !(t = mp__wthread_get(w)))
		return;
	if (LD(t, MP_ST_OP) == op && LD(t, MP_ST_REGION) == (uint32_t)region && LD(t, MP_ST_DTYPE) == dtype &&
	    LD(t, MP_ST_SHAPE) == shape)
		return;
	if (!(rec = rec_begin(w, t, (uint32_t)LD(t, MP_ST_MEMORY), 0)))
		return; /* context lost with a full ring in drop mode; later events still count */
	p = rec;
	*p++ = MP_REC_CONTEXT;
	p = mp_varint_put(p, op);
	p = mp_varint_put(p, (uint32_t)region);
	p = mp_varint_put(p, dtype);
	p = mp_varint_put(p, shape);
	ST(t, MP_ST_OP, op);
	ST(t, MP_ST_REGION, (uint32_t)region);
	ST(t, MP_ST_DTYPE, dtype);
	ST(t, MP_ST_SHAPE, shape);
	rec_commit(w, t, (size_t)(p - rec), 0);
}

/* STACK: the stack id of the thread's next ALLOC / REALLOC / ALLOC_FAILED
 * (no time, not an event). Its own record: a flush round may fall between
 * it and the allocation, so the reader carries it into the thread's next
 * chunk (docs/format.md). */
int mp_writer_next_stack(mp_writer_t *w, uint32_t id)
{
	uint8_t *rec, *p;
	GET_THREAD(w, t);

	if (!(rec = rec_begin(w, t, (uint32_t)LD(t, MP_ST_MEMORY), 0)))
		return -ENOBUFS;
	p = rec;
	*p++ = MP_REC_STACK;
	p = mp_varint_put(p, id);
	rec_commit(w, t, (size_t)(p - rec), 0);
	return 0;
}
