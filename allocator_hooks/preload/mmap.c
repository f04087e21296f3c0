/* mmap.c - anonymous memory a program maps itself (pymalloc's arenas, JIT
 * code heaps, custom pools) as the memory id "host_mmap".
 *
 * Only calls through the interposable symbols are seen: glibc's malloc and
 * the dynamic loader map memory with internal calls, so nothing is counted
 * twice with "host". Only MAP_ANONYMOUS mappings are recorded (file
 * mappings are not heap). A mapping is an ALLOC of its length (allocated:
 * rounded up to pages); munmap from a recorded start is a FREE (a shorter
 * length frees the head and re-records the tail); mremap of a recorded
 * mapping is a REALLOC. Unmapping that starts inside a mapping is not
 * tracked (the mapping keeps its recorded size until unmapped from its
 * start). The bases are kept in a fixed table under a spinlock: these
 * calls are system calls, a few hundred ns at least, and rare next to
 * malloc. MEMPROF_MMAP=0 turns this off.
 */
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAPS 8192 /* recorded mappings at once; beyond, new ones are not recorded */

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);

static mmap_fn real_mmap;
static munmap_fn real_munmap;
static mremap_fn real_mremap;
int mp__mmap_on = 1;
static _Atomic int mem_id = -1;
static _Atomic int lock;
static struct {
	uint64_t base, len; /* base 0: free; UINT64_MAX: deleted */
} maps[MAPS];

static void resolve(void)
{
	if (!real_mmap)
		*(void **)&real_mmap = dlsym(RTLD_NEXT, "mmap");
	if (!real_munmap)
		*(void **)&real_munmap = dlsym(RTLD_NEXT, "munmap");
	if (!real_mremap)
		*(void **)&real_mremap = dlsym(RTLD_NEXT, "mremap");
}

/* Until resolved (dlsym may itself run inside a hook), the system calls. */
static void *do_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	if (real_mmap)
		return real_mmap(a, n, prot, flags, fd, off);
	return (void *)syscall(SYS_mmap, a, n, prot, flags, fd, off);
}

static int do_munmap(void *a, size_t n)
{
	if (real_munmap)
		return real_munmap(a, n);
	return (int)syscall(SYS_munmap, a, n);
}

static uint64_t page_up(uint64_t n)
{
	uint64_t ps = (uint64_t)sysconf(_SC_PAGESIZE);

	return (n + ps - 1) & ~(ps - 1);
}

static unsigned slot_of(uint64_t base)
{
	return (unsigned)((base >> 12) * 0x9e3779b97f4a7c15ull >> 40) & (MAPS - 1);
}

/* Under the lock. Returns the slot of base, or -1. */
static int find(uint64_t base)
{
	unsigned i = slot_of(base), k;

	for (k = 0; k < MAPS; k++, i = (i + 1) & (MAPS - 1)) {
		if (maps[i].base == base)
			return (int)i;
		if (maps[i].base == 0)
			return -1;
	}
	return -1;
}

static int insert(uint64_t base, uint64_t len)
{
	unsigned i = slot_of(base), k;

	for (k = 0; k < MAPS; k++, i = (i + 1) & (MAPS - 1)) {
		if (maps[i].base == 0 || maps[i].base == UINT64_MAX) {
			maps[i].base = base;
			maps[i].len = len;
			return 0;
		}
	}
	return -1;
}

static void take(void)
{
	mp__spin_take(&lock);
}

static void give(void)
{
	mp__spin_give(&lock);
}

static uint32_t memory(void)
{
	int id = atomic_load_explicit(&mem_id, memory_order_acquire);

	if (id < 0) {
		id = mp_writer_memory(mp__writer, "host_mmap", MP_MEMORY_HOST, 0);
		if (id >= 0)
			atomic_store_explicit(&mem_id, id, memory_order_release);
	}
	return (uint32_t)id;
}

/* In a forked child: another thread of the parent may have held the lock
 * at fork, and no thread of the child will ever give it back. */
void mp__mmap_reset_child(void)
{
	atomic_store(&lock, 0);
}

/* A new capture (fork child, reopened after exec): ids and table restart. */
void mp__mmap_reset(void)
{
	int i;

	atomic_store(&mem_id, -1);
	for (i = 0; i < MAPS; i++)
		maps[i].base = maps[i].len = 0;
}

/* Enter like hooks.c does; 1 = record. */
static int enter(void)
{
	if (mp__guard || mp__session_idle(atomic_load_explicit(&mp__state, memory_order_relaxed)))
		return 0;
	mp__guard = 1;
	mp__busy_begin();
	if (mp__mmap_on && mp__writer &&
	    (atomic_load_explicit(&mp__state, memory_order_acquire) == MP_ST_ACTIVE || mp__session_slow()) &&
	    mp__writer) {
		if (!real_mmap)
			resolve();
		return 1;
	}
	mp__busy_end();
	mp__guard = 0;
	return 0;
}

static void leave(int e)
{
	mp__busy_end();
	errno = e;
	mp__guard = 0;
}

MP_EXPORT void *mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	void *p;
	int e;

	if (!(flags & MAP_ANONYMOUS) || !enter())
		return do_mmap(a, n, prot, flags, fd, off);
	p = do_mmap(a, n, prot, flags, fd, off);
	e = errno;
	if (p != MAP_FAILED) {
		int id = (int)memory();
		take();
		if (id >= 0 && find((uintptr_t)p) < 0 && insert((uintptr_t)p, page_up(n)) == 0)
			mp_writer_alloc(mp__writer, (uint32_t)id, (uintptr_t)p, n, page_up(n));
		give();
	}
	leave(e);
	return p;
}

MP_EXPORT void *mmap64(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	return mmap(a, n, prot, flags, fd, off);
}

MP_EXPORT int munmap(void *a, size_t n)
{
	int rc, e, s, id;

	if (!enter())
		return do_munmap(a, n);
	id = atomic_load_explicit(&mem_id, memory_order_acquire);
	take();
	s = id >= 0 ? find((uintptr_t)a) : -1;
	if (s >= 0) {
		/* Recorded before the unmap: the range cannot be handed out again
		 * before its FREE is in the ring. */
		uint64_t len = maps[s].len, gone = page_up(n);
		mp_writer_free(mp__writer, (uint32_t)id, (uintptr_t)a);
		maps[s].base = UINT64_MAX;
		if (gone < len && insert((uintptr_t)a + gone, len - gone) == 0)
			mp_writer_alloc(mp__writer, (uint32_t)id, (uintptr_t)a + gone, len - gone, len - gone);
	}
	give();
	rc = do_munmap(a, n);
	e = errno;
	leave(e);
	return rc;
}

MP_EXPORT void *mremap(void *old, size_t old_n, size_t n, int flags, ...)
{
	void *want = NULL, *p;
	int e, s, id;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (!enter()) {
		if (!real_mremap)
			return (void *)syscall(SYS_mremap, old, old_n, n, flags, want);
		return real_mremap(old, old_n, n, flags, want);
	}
	p = real_mremap ? real_mremap(old, old_n, n, flags, want)
			: (void *)syscall(SYS_mremap, old, old_n, n, flags, want);
	e = errno;
	id = atomic_load_explicit(&mem_id, memory_order_acquire);
	if (p != MAP_FAILED && id >= 0) {
		take();
		s = find((uintptr_t)old);
		if (s >= 0) {
			maps[s].base = UINT64_MAX;
			if (insert((uintptr_t)p, page_up(n)) == 0)
				mp_writer_realloc(mp__writer, (uint32_t)id, (uintptr_t)old, (uintptr_t)p, n,
						  page_up(n));
			else
				mp_writer_free(mp__writer, (uint32_t)id, (uintptr_t)old);
		}
		give();
	}
	leave(e);
	return p;
}

/* The capture core's own mappings (rings, buffers) must not come back here:
 * they would be recorded, and could re-enter the writer while it holds a
 * lock. The library is linked with --wrap=mmap,munmap,mremap, which sends
 * the core's calls to these, straight to the kernel. */
void *__wrap_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off);
int __wrap_munmap(void *a, size_t n);
void *__wrap_mremap(void *old, size_t old_n, size_t n, int flags, ...);

void *__wrap_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, a, n, prot, flags, fd, off);
}

int __wrap_munmap(void *a, size_t n)
{
	return (int)syscall(SYS_munmap, a, n);
}

void *__wrap_mremap(void *old, size_t old_n, size_t n, int flags, ...)
{
	void *want = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	return (void *)syscall(SYS_mremap, old, old_n, n, flags, want);
}
