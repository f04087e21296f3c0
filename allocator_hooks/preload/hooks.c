/* hooks.c - the interposed malloc family.
 *
 * Every hook has the same shape:
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
#include "preload.h"
#include "wthread_path.h" /* the event path inline: the core's hottest caller */

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__thread int mp__guard __attribute__((tls_model("initial-exec")));

/* errno, read and written twice a hook, through a pointer kept per thread:
 * glibc's errno is a call to __errno_location through the PLT. (The
 * address never changes for a thread, also not in a fork child.) */
static __thread int *errno_at __attribute__((tls_model("initial-exec")));

static inline int *hook_errno(void)
{
	int *p = errno_at;

	if (__builtin_expect(!p, 0))
		p = errno_at = &errno;
	return p;
}
#undef errno
#define errno (*hook_errno())

/* Enter a hook: 1 = record this call (guard now held), 0 = just forward. */
static inline int enter(void)
{
	if (__builtin_expect(mp__guard, 0))
		return 0;
	mp__guard = 1;
	mp__busy_begin(); /* before the state is read: see quiesce.c */
	if (__builtin_expect(atomic_load_explicit(&mp__state, memory_order_acquire) == MP_ST_ACTIVE &&
				     mp__window_end_ns == 0,
			     1))
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
static inline uint64_t usable(void *p, uint64_t requested)
{
	if (mp__real_is_glibc) {
		uint64_t h = ((const uint64_t *)p)[-1];
		return (h & ~(uint64_t)7) - ((h & 2) ? 16 : 8);
	}
	return mp__real.malloc_usable_size ? mp__real.malloc_usable_size(p) : requested;
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

static inline __attribute__((always_inline)) void rec_free(void *p)
{
	mp_writer_t *w;
	mp_wthread_t *t = ring(&w);

	if (t)
		mp__rec_free(w, t, mp__host, (uintptr_t)p);
	else if (w)
		mp__wthread_unbound_drop(w, mp__host, 1); /* no ring for this thread */
}

static inline __attribute__((always_inline)) void rec_alloc(void *p, uint64_t requested)
{
	if (p) {
		mp_writer_t *w;
		mp_wthread_t *t;
		if (mp__regions_on)
			mp__regions_alloc(p);
		rec_stack(); /* right before its allocation: not before a region record */
		if ((t = ring(&w)))
			mp__rec_alloc(w, t, mp__host, (uintptr_t)p, requested, usable(p, requested));
		else if (w)
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

MP_EXPORT void *malloc(size_t n)
{
	void *p;
	int e;

	if (!enter()) {
		if (mp__guard && booting())
			return mp__boot_alloc(n, 16);
		return mp__real.malloc(n);
	}
	p = mp__real.malloc(n);
	e = errno;
	rec_alloc(p, n);
	leave(e);
	return p;
}

MP_EXPORT void free(void *p)
{
	uint64_t mapped = 0;
	int e;

	if (!p || mp__boot_owns(p))
		return;
	if (!enter()) {
		mp__real.free(p);
		return;
	}
	e = errno;
	if (mp__regions_on)
		mapped = mp__regions_free_before(p);
	rec_free(p);
	mp__real.free(p);
	if (mp__regions_on)
		mp__regions_free_after(mapped);
	leave(e);
}

MP_EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;
	void *p;
	int e;

	if (!enter()) {
		if (mp__guard && booting())
			return __builtin_mul_overflow(n, size, &total) ? NULL : mp__boot_alloc(total, 16);
		return mp__real.calloc(n, size);
	}
	p = mp__real.calloc(n, size);
	e = errno;
	rec_alloc(p, __builtin_mul_overflow(n, size, &total) ? UINT64_MAX : total);
	leave(e);
	return p;
}

/* realloc of a block from the bootstrap arena: move it to the real heap. */
static void *boot_realloc(void *old, size_t n)
{
	size_t have = mp__boot_size(old);
	void *p = malloc(n);

	if (p)
		memcpy(p, old, have < n ? have : n);
	return p;
}

MP_EXPORT void *realloc(void *old, size_t n)
{
	uint64_t mapped = 0;
	void *p;
	int e;

	if (old && mp__boot_owns(old))
		return boot_realloc(old, n);
	if (!enter()) {
		if (mp__guard && booting() && !old)
			return mp__boot_alloc(n, 16);
		return mp__real.realloc(old, n);
	}
	if (!old) {
		p = mp__real.realloc(NULL, n);
		e = errno;
		rec_alloc(p, n);
		leave(e);
		return p;
	}
	e = errno;
	if (mp__regions_on)
		mapped = mp__regions_free_before(old);
	if (n == 0 && mp__real_is_glibc) {
		/* glibc frees and returns NULL: a free, recorded before it happens. */
		rec_free(old);
		errno = e;
		p = mp__real.realloc(old, 0);
		e = errno;
		if (mp__regions_on)
			mp__regions_free_after(mapped);
		leave(e);
		return p;
	}
	errno = e;
	p = mp__real.realloc(old, n);
	e = errno;
	if (p) {
		/* Moved or resized in place: one record with both addresses. */
		if (mp__regions_on) {
			if ((mapped & 0xfff) == MP_REGION_TAG_MMAP) /* an mmapped chunk: its mapping changed */
				mp__regions_free_after(mapped);
			mp__regions_alloc(p);
		}
		mp_writer_t *w;
		mp_wthread_t *t;
		rec_stack();
		if ((t = ring(&w)))
			mp__rec_realloc(w, t, mp__host, (uintptr_t)old, (uintptr_t)p, n, usable(p, n));
		else if (w)
			mp__wthread_unbound_drop(w, mp__host, 2);
	} else if (n == 0) {
		rec_free(old); /* freed, NULL returned */
		if (mp__regions_on)
			mp__regions_free_after(mapped);
	} else {
		rec_stack();
		mp_writer_alloc_failed(mp__writer, mp__host, n); /* the old block is still live */
	}
	leave(e);
	return p;
}

MP_EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		if (!enter()) {
			errno = ENOMEM;
			return NULL;
		}
		rec_stack();
		mp_writer_alloc_failed(mp__writer, mp__host, UINT64_MAX);
		leave(ENOMEM);
		return NULL;
	}
	return realloc(old, total);
}

static void *aligned_common(size_t align, size_t n)
{
	void *p;
	int e;

	if (!enter()) {
		if (mp__guard && booting())
			return mp__boot_alloc(n, align);
		return mp__real.memalign(align, n);
	}
	p = mp__real.memalign(align, n);
	e = errno;
	rec_alloc(p, n);
	leave(e);
	return p;
}

MP_EXPORT void *memalign(size_t align, size_t n)
{
	return aligned_common(align, n);
}

MP_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	void *p;
	int e;

	if (!mp__real.aligned_alloc)
		return aligned_common(align, n);
	if (!enter())
		return mp__real.aligned_alloc(align, n);
	p = mp__real.aligned_alloc(align, n);
	e = errno;
	rec_alloc(p, n);
	leave(e);
	return p;
}

MP_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = NULL;
	int rc, e;

	if (!enter()) {
		if (mp__guard && booting()) {
			*out = mp__boot_alloc(n, align);
			return *out ? 0 : ENOMEM;
		}
		if (mp__real.posix_memalign)
			return mp__real.posix_memalign(out, align, n);
		if (align % sizeof(void *) || (align & (align - 1)) || !align)
			return EINVAL;
		*out = mp__real.memalign(align, n);
		return *out ? 0 : ENOMEM;
	}
	e = errno;
	if (mp__real.posix_memalign) {
		errno = e;
		rc = mp__real.posix_memalign(&p, align, n);
		e = errno;
	} else if (align % sizeof(void *) || (align & (align - 1)) || !align) {
		rc = EINVAL;
	} else {
		p = mp__real.memalign(align, n);
		e = errno;
		rc = p ? 0 : ENOMEM;
	}
	if (rc == 0) {
		*out = p;
		rec_alloc(p, n);
	} else if (rc == ENOMEM) {
		rec_alloc(NULL, n); /* EINVAL (a bad alignment) is a usage error, not a failed allocation */
	}
	leave(e);
	return rc;
}

static size_t page_size(void)
{
	static size_t ps;

	if (!ps)
		ps = (size_t)sysconf(_SC_PAGESIZE);
	return ps;
}

MP_EXPORT void *valloc(size_t n)
{
	void *p;
	int e;

	if (!enter()) {
		if (mp__guard && booting())
			return mp__boot_alloc(n, 4096);
		return mp__real.valloc ? mp__real.valloc(n) : mp__real.memalign(page_size(), n);
	}
	p = mp__real.valloc ? mp__real.valloc(n) : mp__real.memalign(page_size(), n);
	e = errno;
	rec_alloc(p, n);
	leave(e);
	return p;
}

MP_EXPORT void *pvalloc(size_t n)
{
	size_t ps = page_size(), rounded = n ? (n + ps - 1) & ~(ps - 1) : ps;
	void *p;
	int e;

	if (!enter()) {
		if (mp__guard && booting())
			return mp__boot_alloc(rounded, 4096);
		return mp__real.pvalloc ? mp__real.pvalloc(n) : mp__real.memalign(ps, rounded);
	}
	p = mp__real.pvalloc ? mp__real.pvalloc(n) : mp__real.memalign(ps, rounded);
	e = errno;
	rec_alloc(p, n);
	leave(e);
	return p;
}
