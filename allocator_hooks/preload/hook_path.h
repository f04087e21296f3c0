/* hook_path.h - what every allocation hook does around the call it
 * forwards (internal to the preload; hooks.c for the malloc family, cxx.c
 * for C++ operator new and delete):
 *   1. a thread already inside a hook (recursion from the writer, dlsym,
 *      glibc, or a signal handler that interrupted a hook) forwards to the
 *      original and records nothing;
 *   2. a free is recorded *before* the real free, so another thread cannot
 *      be handed the same address and record it first; an allocation is
 *      recorded *after* the real call, with the address it got;
 *   3. errno is saved after the real call and restored after recording, so
 *      the program sees exactly what the allocator did.
 * Nothing here allocates or takes a lock: the writer appends to the calling
 * thread's ring.
 */
#ifndef MP_HOOK_PATH_H
#define MP_HOOK_PATH_H

#include "preload.h"
#include "wthread_path.h" /* the event path inline: the core's hottest caller */

#include <errno.h>
#include <stdint.h>

/* errno, read and written twice a hook, through a pointer kept per thread
 * (hooks.c): glibc's errno is a call to __errno_location through the PLT.
 * (The address never changes for a thread, also not in a fork child.) */
extern __thread int *mp__errno_at __attribute__((tls_model("initial-exec")));

static inline int *hook_errno(void)
{
	int *p = mp__errno_at;

	if (__builtin_expect(!p, 0))
		p = mp__errno_at = &errno;
	return p;
}
#undef errno
#define errno (*hook_errno())

/* Enter a hook: 1 = record this call (guard now held), 0 = just forward. */
static inline int enter(void)
{
	int st;

	if (__builtin_expect(mp__guard, 0))
		return 0;
	st = atomic_load_explicit(&mp__state, memory_order_relaxed);
	if (__builtin_expect(st != MP_ST_ACTIVE, 0) && mp__session_idle(st))
		return 0;
	mp__guard = 1;
	mp__busy_begin(); /* before the state is read again: see quiesce.c */
	if (__builtin_expect(atomic_load_explicit(&mp__state, memory_order_acquire) == MP_ST_ACTIVE, 1))
		return 1;
	if (mp__session_slow())
		return 1;
	mp__busy_end();
	mp__guard = 0;
	return 0;
}

static inline void leave(int saved_errno)
{
	mp__busy_end();
	errno = saved_errno;
	mp__guard = 0;
}

/* What malloc_usable_size(p) returns, for a block just allocated. On glibc
 * it is read straight from the chunk header (the size field before p: the
 * chunk size in 16-byte steps, bit 1 set for mmapped chunks, whose header
 * takes 16 bytes instead of 8), saving a call and a read of the next chunk;
 * tests/hooks checks the figures against glibc's documented rounding. */
static inline uint64_t usable_of(void *p, uint64_t requested, uint64_t h)
{
	if (mp__real_is_glibc)
		return (h & ~(uint64_t)7) - ((h & 2) ? 16 : 8);
	return mp__real.malloc_usable_size ? mp__real.malloc_usable_size(p) : requested;
}

/* The header word before p where the allocator is glibc's, else 0. */
static inline uint64_t chunk_header(const void *p)
{
	return mp__real_is_glibc ? ((const uint64_t *)p)[-1] : 0;
}

static inline uint64_t usable(void *p, uint64_t requested)
{
	return usable_of(p, requested, chunk_header(p));
}

/* With --stacks: the STACK record of the allocation about to be recorded. */
static inline void rec_stack(void)
{
	if (__builtin_expect(mp__stacks_on, 0))
		mp__stacks_record();
}

/* The records go through the core's event path inline (wthread_path.h).
 * *w is the writer, read once: a capture closing while this thread is
 * inside a hook sets mp__writer to NULL, then waits for the thread to leave
 * (quiesce.c), so the writer read here stays valid until then. The ring is
 * NULL when there is no writer any more, or it failed: nothing is
 * recorded. The host is the writer's first memory id, so it fits a ring
 * record (MP_RING_MAX_MEMORY). */
static inline mp_wthread_t *ring(mp_writer_t **w)
{
	*w = mp__writer;
	return *w ? mp__wthread_get(*w) : NULL;
}

/* The size of p's chunk where the allocator is glibc's (the header before
 * it; 0 otherwise: nothing cheap tells), read while p is live. */
static inline uint64_t chunk_bytes(const void *p)
{
	return chunk_header(p) & ~(uint64_t)7;
}

static inline __attribute__((always_inline)) void rec_free(void *p)
{
	mp_writer_t *w;
	mp_wthread_t *t = ring(&w);

	/* inside a wrapped Python call only (pymem.c): elsewhere none of it is
	 * read, and a program that is not a Python pays one load and branch */
	if (__builtin_expect(mp__pymem.inside, 0) && (uintptr_t)p == mp__pymem.freeing)
		mp__pymem.freeing = 0; /* a wrapped Python free's object was malloc's (preload.h) */
	if (t) {
		uint64_t bytes;
		mp__rec_free(w, t, mp__host, (uintptr_t)p);
		/* (the header read after the record: the record's clock reading
		 * would wait for it, were it a miss; wthread_path.h) */
		bytes = chunk_bytes(p);
		mp__net_moved(w, -(int64_t)bytes, bytes);
	} else if (w) {
		mp__wthread_unbound_drop(w, mp__host, 1); /* no ring for this thread */
	}
}

static inline __attribute__((always_inline)) void rec_alloc(void *p, uint64_t requested)
{
	if (__builtin_expect(mp__pymem.inside, 0)) { /* for a wrapped Python allocation (preload.h) */
		uintptr_t noted = p ? (uintptr_t)p : 1;
		if (!mp__pymem.alloc)
			mp__pymem.alloc = noted;
		mp__pymem.alloc_last = noted;
	}
	if (p) {
		mp_writer_t *w;
		mp_wthread_t *t;
		if (mp__regions_on)
			mp__regions_alloc(p);
		rec_stack(); /* right before its allocation: not before a region record */
		if ((t = ring(&w))) {
			uint64_t h = chunk_header(p); /* (read once: the record's stores may alias it) */
			mp__rec_alloc(w, t, mp__host, (uintptr_t)p, requested, usable_of(p, requested, h));
			mp__net_moved(w, (int64_t)(h & ~(uint64_t)7), requested);
		} else if (w)
			mp__wthread_unbound_drop(w, mp__host, 1);
	} else {
		rec_stack();
		mp_writer_alloc_failed(mp__writer, mp__host, requested);
	}
}

/* While dlsym runs during resolution, allocations come from the static arena. */
static inline int booting(void)
{
	return __builtin_expect(atomic_load_explicit(&mp__bootstrapping, memory_order_relaxed), 0);
}

#endif
