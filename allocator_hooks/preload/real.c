/* real.c - the allocator we forward to.
 *
 * On glibc the originals are its exported __libc_* entry points, bound at
 * load time: no dlsym on the first malloc, so no bootstrap recursion. When
 * another allocator (jemalloc, tcmalloc, mimalloc) sits below us in the
 * symbol search order, dlsym(RTLD_NEXT) finds its functions instead; while
 * dlsym runs, any allocation it makes is served from a small static arena
 * that free() ignores (heaptrack's DummyPool idea).
 */
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

mp_real_t mp__real = {
	.malloc = __libc_malloc,
	.free = __libc_free,
	.calloc = __libc_calloc,
	.realloc = __libc_realloc,
	.memalign = __libc_memalign,
	.valloc = __libc_valloc,
	.pvalloc = __libc_pvalloc,
};
int mp__real_is_glibc = 1;
_Atomic int mp__bootstrapping;

/* --- bootstrap arena ---------------------------------------------------- */

_Alignas(64) unsigned char mp__boot_arena[MP_BOOT_BYTES];
static _Atomic size_t boot_used;

/* Each block is preceded by its size (for realloc of a bootstrap block). */
void *mp__boot_alloc(size_t size, size_t align)
{
	size_t old, start;

	if (align < 16)
		align = 16;
	old = atomic_load(&boot_used);
	do {
		start = (old + 16 + align - 1) & ~(align - 1);
		if (start > MP_BOOT_BYTES || size > MP_BOOT_BYTES - start)
			return NULL;
	} while (!atomic_compare_exchange_weak(&boot_used, &old, start + size));
	memcpy(mp__boot_arena + start - sizeof(size_t), &size, sizeof(size));
	return mp__boot_arena + start; /* static storage: already zeroed, as calloc needs */
}

size_t mp__boot_size(const void *p)
{
	size_t n;

	memcpy(&n, (const unsigned char *)p - sizeof(size_t), sizeof(n));
	return n;
}


/* --- resolution --------------------------------------------------------- */

int mp__same_object(const void *a, const void *b)
{
	Dl_info x, y;

	return a && b && dladdr(a, &x) && dladdr(b, &y) && x.dli_fbase == y.dli_fbase;
}

/* Whether fn is defined in glibc itself (the object that defines
 * gnu_get_libc_version). Comparing with the __libc_* set is not enough:
 * tcmalloc exports __libc_malloc and friends too, as aliases of its own
 * functions, to catch glibc's internal calls, so after it is loaded they
 * bind to tcmalloc as well. */
static int in_glibc(void *fn)
{
	return mp__same_object(fn, (void *)(uintptr_t)gnu_get_libc_version);
}

int mp__real_resolve(void)
{
	mp_real_t next;
	int saved = errno;

	memset(&next, 0, sizeof(next));
	atomic_store(&mp__bootstrapping, 1);
#define MP__RESOLVE(name, ret, params, req) \
	*(void **)&next.name = dlsym(RTLD_NEXT, #name);
	MP_REAL_FUNCTIONS(MP__RESOLVE)
#undef MP__RESOLVE
	atomic_store(&mp__bootstrapping, 0);
	errno = saved;

	if (!next.malloc || (in_glibc((void *)(uintptr_t)next.malloc) && in_glibc((void *)(uintptr_t)__libc_malloc))) {
		/* glibc's own: keep the __libc_* set, add what has no __libc_ name. */
		mp__real.posix_memalign = next.posix_memalign;
		mp__real.aligned_alloc = next.aligned_alloc;
		mp__real.reallocarray = next.reallocarray;
		mp__real.malloc_usable_size = next.malloc_usable_size;
		mp__real_is_glibc = 1;
		return 0;
	}
#define MP__REQUIRED(name, ret, params, req) \
	if (req && !next.name)              \
		return -1;
	MP_REAL_FUNCTIONS(MP__REQUIRED)
#undef MP__REQUIRED
	mp__real = next;
	mp__real_is_glibc = 0;
	return 0;
}
