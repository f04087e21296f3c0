/* hooks.c - the interposed malloc family (the shape every hook has is in
 * hook_path.h).
 */
#include "hook_path.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__thread int mp__guard __attribute__((tls_model("initial-exec")));
__thread int *mp__errno_at __attribute__((tls_model("initial-exec")));
__thread mp_cxx_noted_t mp__cxx_noted __attribute__((tls_model("initial-exec")));
__thread int64_t mp__net_moved_by __attribute__((tls_model("initial-exec")));

MP_EXPORT void *malloc(size_t n)
{
	void *p;
	int e;

	if (!enter()) {
		if (mp__guard && booting())
			return mp__boot_alloc(n, 16);
		p = mp__real.malloc(n);
		if (__builtin_expect(mp__guard == MP_GUARD_CXX_NEW, 0))
			mp__cxx_noted = (mp_cxx_noted_t){p, n}; /* maybe a std::bad_alloc (preload.h) */
		return p;
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
	uint64_t mapped = 0, old_bytes;
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
	old_bytes = chunk_bytes(old);
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
	if (__builtin_expect(mp__pymem.inside, 0)) { /* (see rec_free and rec_alloc) */
		if (p && (uintptr_t)old == mp__pymem.freeing)
			mp__pymem.freeing = 0;
		if (!mp__pymem.alloc)
			mp__pymem.alloc = p ? (uintptr_t)p : n ? 1 : 0;
		mp__pymem.alloc_last = p ? (uintptr_t)p : n ? 1 : 0;
	}
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
		if ((t = ring(&w))) {
			uint64_t h = chunk_header(p); /* (read once, as rec_alloc does) */
			mp__rec_realloc(w, t, mp__host, (uintptr_t)old, (uintptr_t)p, n, usable_of(p, n, h));
			mp__net_moved(w, (int64_t)((h & ~(uint64_t)7) - old_bytes), n > old_bytes ? n : old_bytes);
		} else if (w)
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
