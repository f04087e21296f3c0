/* wthread_path.h - the event path, inline (internal).
 *
 * Appending one record to the calling thread's ring (the protocol is in
 * writer_internal.h) takes a few dozen instructions, so a call, its
 * prologue and the repeated argument checks of the public mp_writer_*
 * functions are a good part of it. wthread.c builds those functions from
 * what is here; the preload library's malloc hooks, the core's hottest
 * caller by far, use it directly. The rare branches (binding a thread to
 * the writer, a full ring, waking the flusher) stay out of line.
 */
#ifndef MP_WTHREAD_PATH_H
#define MP_WTHREAD_PATH_H

#include <memprof/format.h>

#include "writer_internal.h"

#include <errno.h>
#include <string.h>

/* Which writer the calling thread's ring belongs to. initial-exec TLS: the
 * first access from a dlopen'ed library must not allocate. */
typedef struct {
	uint64_t writer_id;
	mp_wthread_t *t;       /* NULL with writer_id set: registering failed */
	uint32_t retry_in;     /* ... and is tried again after this many events */
	uint32_t no_help;      /* nonzero: the caller holds a lock of its own around its
				* records (the preload's spinlock, preload.h), so this
				* thread runs no flush round (help.c) */
} mp_wthread_tls_t;

extern __thread mp_wthread_tls_t mp__wthread_tls __attribute__((tls_model("initial-exec")));

/* Out of line (wthread.c): registering the thread with w; waiting for room
 * (seq odd on entry; NULL, seq even, when the ring stays full); waking the
 * flusher once the ring is half full. */
mp_wthread_t *mp__wthread_bind(mp_writer_t *w);
/* n events of memory that the calling thread could not record because it
 * has no ring (mp__wthread_get returned NULL while w is open and sound):
 * counted as dropped, so that the capture says they are missing. */
void mp__wthread_unbound_drop(mp_writer_t *w, uint32_t memory, uint64_t n);
uint64_t *mp__rec_begin_slow(mp_writer_t *w, mp_wthread_t *t, uint32_t memory, uint64_t nevents);
void mp__rec_wake(mp_writer_t *w, mp_wthread_t *t, uint64_t head);

#define MP_RING_MAX_MEMORY 0xffff /* memory ids fit 16 bits of a record's first word */

/* The calling thread's ring for w, registering it on first use. Borrowed;
 * NULL when the writer failed or is closing. */
static inline mp_wthread_t *mp__wthread_get(mp_writer_t *w)
{
	if (__builtin_expect(mp__wthread_tls.writer_id == w->id && mp__wthread_tls.t != NULL, 1))
		return mp__wthread_tls.t;
	return mp__wthread_bind(w);
}

static inline void mp__seq_bump(mp_wthread_t *t, memory_order mo)
{
	atomic_store_explicit(&t->seq, atomic_load_explicit(&t->seq, memory_order_relaxed) + 1, mo);
}

/* The line a few records ahead, fetched for writing (prefetchw: the line
 * was last read by the flusher, on another core). */
static inline void mp__prefetch_for_write(const void *p)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/* seq odd: a record is open. Ordered before the clock reading that
 * follows (the flusher's membarrier does the rest where it has one). */
static inline void mp__rec_open(mp_writer_t *w, mp_wthread_t *t)
{
	mp__seq_bump(t, memory_order_relaxed);
	if (w->use_membarrier)
		atomic_signal_fence(memory_order_seq_cst);
	else
		atomic_thread_fence(memory_order_seq_cst);
}

/* Start a record: seq odd, room for MP_REC_MAX bytes. Returns where to
 * write its words, or NULL (seq even again) when the ring stays full. */
static inline uint64_t *mp__rec_begin(mp_writer_t *w, mp_wthread_t *t, uint32_t memory, uint64_t nevents)
{
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);

	mp__rec_open(w, t);
	if (__builtin_expect(head - t->tail_cache + MP_REC_MAX <= t->ring_mask + 1, 1)) {
		mp__prefetch_for_write(t->ring + ((head + 1024) & t->ring_mask));
		return (uint64_t *)(void *)(t->ring + (head & t->ring_mask));
	}
	return mp__rec_begin_slow(w, t, memory, nevents);
}

/* Publish the k words written at the ring's head (ends the record). */
static inline void mp__rec_commit(mp_writer_t *w, mp_wthread_t *t, unsigned k, uint64_t nevents)
{
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	uint64_t size = t->ring_mask + 1, pos = head & t->ring_mask, n = 8 * (uint64_t)k;

	if (__builtin_expect(pos + n > size, 0))
		memcpy(t->ring, t->ring + size, pos + n - size); /* the part written into the slack */
	atomic_store_explicit(&t->events, atomic_load_explicit(&t->events, memory_order_relaxed) + nevents,
			      memory_order_relaxed);
	atomic_store_explicit(&t->head, head + n, memory_order_release);
	mp__seq_bump(t, memory_order_release);
	/* Past half full (judged on the lagging tail_cache), and no wake-up
	 * sent since the flusher last took this ring: see mp__rec_wake. */
	if (__builtin_expect(head + n - t->tail_cache > size / 2, 0) &&
	    !atomic_load_explicit(&t->wake_sent, memory_order_relaxed))
		mp__rec_wake(w, t, head + n);
}

/* This thread made the last record of the serial kind, with a reading of
 * the clock (mp__rec_clock_serial below): a later one on another thread
 * reads it too. The line is written only when the thread changes. */
static inline void mp__rec_serial_own(mp_writer_t *w, mp_wthread_t *t)
{
	if (atomic_load_explicit(&w->serial_last, memory_order_relaxed) != t)
		atomic_store_explicit(&w->serial_last, t, memory_order_relaxed);
	t->serial_left = w->serial_reuse;
}

/* The record's time, read once the record is open (mp__rec_begin) and
 * before any of its words is stored: on this VM's Zen 4 `rdtsc` does not
 * overlap a store still waiting for its ring line (which the core that
 * read the ring last may hold), nor a load waiting for memory. With the
 * first word stored before it, the hooks took 0.76 CPU-s of alloc_bench
 * -t 2's 41 M events; with the clock read first, 0.68 (medians of nine
 * runs each; docs/hooks.md, "Cost"). The compiler barrier keeps the
 * stores after it. */
static inline uint64_t mp__rec_clock(mp_writer_t *w, mp_wthread_t *t)
{
	uint64_t now = mp_capclock_raw(&w->clock);

	__asm__ volatile("" : "+r"(now) : : "memory");
	t->last_time = now;
	return now;
}

/* The serial clock: the time of a record of a kind that one lock orders
 * across threads -- CPython's GIL, for pymalloc's objects (pymem.c) --
 * which may take the time of the thread's previous record instead of
 * reading the clock: `rdtsc` costs 15-20 ns on the VMs measured, a tenth
 * of what making and freeing a small Python object costs the program, and
 * each object took two. The time taken is never later than the true
 * reading, and nothing comes out of order:
 *   - on the thread, last_time is its latest record's: times never go back;
 *   - across threads, a record of the kind made after another thread's
 *     (serial_last says who came last; the lock orders the two) reads the
 *     clock, so it is later than everything that thread recorded -- an
 *     object made on one thread and freed on another is freed after it is
 *     made;
 *   - the flusher's round stores time_floor, a reading at or after its
 *     horizon, before it looks at the rings (and after, a membarrier or a
 *     fence; here the load follows the record's opening fence): a record
 *     it did not see open reads a floor at least that high, and a thread
 *     whose last time is below it reads the clock. So no record comes
 *     behind a horizon already written.
 * And never far behind: after w->serial_reuse records in a row, and after
 * every round (at most a flush interval, 90 ms by default), the clock is
 * read. Records of other kinds always read it. Every record of the kind,
 * on every thread, takes this clock, under the lock. */
static inline uint64_t mp__rec_clock_serial(mp_writer_t *w, mp_wthread_t *t)
{
	uint64_t now = t->last_time;

	if (__builtin_expect(t->serial_left != 0, 1) &&
	    atomic_load_explicit(&w->serial_last, memory_order_relaxed) == t &&
	    now >= atomic_load_explicit(&w->time_floor, memory_order_relaxed)) {
		t->serial_left--;
		__asm__ volatile("" : "+r"(now) : : "memory");
		return now;
	}
	mp__rec_serial_own(w, t);
	return mp__rec_clock(w, t);
}

/* The first word: kind, memory id, and allocated - requested when it fits
 * (WIDE otherwise: the allocated size gets its own word). */
static inline uint64_t mp__rec_word0(unsigned kind, uint32_t memory, uint64_t requested, uint64_t allocated,
				     int *wide)
{
	int64_t d = (int64_t)(allocated - requested);

	*wide = d != (int64_t)(int32_t)d;
	return kind | (*wide ? MP_RING_WIDE : 0) | ((uint64_t)memory << 16) | ((uint64_t)(uint32_t)(int32_t)d << 32);
}

/* The records of the malloc family. memory <= MP_RING_MAX_MEMORY (the
 * caller checks); t is the calling thread's ring for w. 0 or -ENOBUFS (a
 * full ring in drop mode: counted as dropped).
 *
 * ALLOC and REALLOC share a layout: the first word, the time, naddr
 * addresses (1 or 2), requested, and allocated when it does not fit the
 * first word. With stack (not NULL), the STACK record naming the
 * allocation's stack (what mp_writer_next_stack writes) goes before it in
 * the same commit: one seq bump, one fence and one head store for both;
 * 2 + 4 to 6 words, within MP_REC_MAX (a full ring in drop mode drops
 * both). serial: the time from the serial clock (mp__rec_clock_serial).
 * naddr, stack's being NULL and serial are constants where this is
 * inlined: no test of them remains. */
static inline __attribute__((always_inline)) int mp__rec_sized(mp_writer_t *w, mp_wthread_t *t, unsigned kind,
							       uint32_t memory, const uint64_t *addr,
							       unsigned naddr, uint64_t requested,
							       uint64_t allocated, const uint32_t *stack,
							       int serial)
{
	uint64_t *r, now;
	unsigned i, s = stack ? 2 : 0;
	int wide;

	if (!(r = mp__rec_begin(w, t, memory, naddr)))
		return -ENOBUFS;
	now = serial ? mp__rec_clock_serial(w, t) : mp__rec_clock(w, t);
	if (stack) {
		r[0] = MP_REC_STACK;
		r[1] = *stack;
	}
	r[s] = mp__rec_word0(kind, memory, requested, allocated, &wide);
	r[s + 1] = now;
	for (i = 0; i < naddr; i++)
		r[s + 2 + i] = addr[i];
	r[s + 2 + naddr] = requested;
	r[s + 3 + naddr] = allocated;
	mp__rec_commit(w, t, s + 3 + naddr + (unsigned)wide, naddr); /* a realloc is two events */
	return 0;
}

static inline int mp__rec_alloc(mp_writer_t *w, mp_wthread_t *t, uint32_t memory, uint64_t address,
				uint64_t requested, uint64_t allocated)
{
	return mp__rec_sized(w, t, MP_REC_ALLOC, memory, &address, 1, requested, allocated, NULL, 0);
}

static inline int mp__rec_realloc(mp_writer_t *w, mp_wthread_t *t, uint32_t memory, uint64_t old_address,
				  uint64_t new_address, uint64_t requested, uint64_t allocated)
{
	const uint64_t addr[2] = {old_address, new_address};

	return mp__rec_sized(w, t, MP_REC_REALLOC, memory, addr, 2, requested, allocated, NULL, 0);
}

/* The same, timed by the serial clock (the caller holds the serial lock:
 * pymalloc's objects, under the GIL), with the STACK record of stack when
 * it is not NULL. Inline always: a call and its argument moves were a
 * twentieth of a Python object's cost to the program. */
static inline __attribute__((always_inline)) int mp__rec_alloc_serial(mp_writer_t *w, mp_wthread_t *t,
								       uint32_t memory, uint64_t address,
								       uint64_t requested, uint64_t allocated,
								       const uint32_t *stack)
{
	return mp__rec_sized(w, t, MP_REC_ALLOC, memory, &address, 1, requested, allocated, stack, 1);
}

static inline __attribute__((always_inline)) int mp__rec_realloc_serial(mp_writer_t *w, mp_wthread_t *t,
									 uint32_t memory, uint64_t old_address,
									 uint64_t new_address, uint64_t requested,
									 uint64_t allocated, const uint32_t *stack)
{
	const uint64_t addr[2] = {old_address, new_address};

	return mp__rec_sized(w, t, MP_REC_REALLOC, memory, addr, 2, requested, allocated, stack, 1);
}

/* A record of a time and one or two values (k = 3 or 4 words); serial: as
 * mp__rec_sized's. */
static inline __attribute__((always_inline)) int mp__rec_timed(mp_writer_t *w, mp_wthread_t *t, unsigned kind,
							       uint32_t memory, uint64_t a, uint64_t b, unsigned k,
							       int serial)
{
	uint64_t *r, now;

	if (!(r = mp__rec_begin(w, t, memory, 1)))
		return -ENOBUFS;
	now = serial ? mp__rec_clock_serial(w, t) : mp__rec_clock(w, t);
	r[0] = kind | ((uint64_t)memory << 16);
	r[1] = now;
	r[2] = a;
	if (k > 3) /* k is a constant where this is inlined: no test remains */
		r[3] = b;
	mp__rec_commit(w, t, k, 1);
	return 0;
}

static inline int mp__rec_free(mp_writer_t *w, mp_wthread_t *t, uint32_t memory, uint64_t address)
{
	return mp__rec_timed(w, t, MP_REC_FREE, memory, address, 0, 3, 0);
}

/* A FREE timed by the serial clock (as mp__rec_alloc_serial). */
static inline __attribute__((always_inline)) int mp__rec_free_serial(mp_writer_t *w, mp_wthread_t *t,
								      uint32_t memory, uint64_t address)
{
	return mp__rec_timed(w, t, MP_REC_FREE, memory, address, 0, 3, 1);
}

#endif
