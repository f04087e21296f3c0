/* mmap.c - anonymous memory a program maps itself (pymalloc's arenas, JIT
 * code heaps, custom pools, the address space runtimes reserve) as the
 * memory id "host_mmap".
 *
 * Only calls through the interposable symbols are seen: glibc's malloc and
 * the dynamic loader map memory with internal calls, so nothing is counted
 * twice with "host". Only MAP_ANONYMOUS mappings are recorded (file
 * mappings are not heap).
 *
 * What counts is memory the program can use, not address space: the JVM
 * reserves its whole heap (6 GiB here) and V8 its pointer cage with
 * PROT_NONE mappings and makes pieces usable later with mprotect() or a
 * MAP_FIXED mapping on top; counting the reservations put a small Java
 * program at a 7.5 GiB peak. So the anonymous memory is kept as a sorted
 * set of ranges, each either accessible -- an allocation in the capture --
 * or a reservation (PROT_NONE), which is not. A mapping, mprotect(),
 * munmap() and mremap() change any part of it: a range that loses part of
 * itself is freed, and its remaining head and tail are recorded again as
 * blocks of their own; a reserved part made accessible is an allocation.
 * mprotect() of memory that is not in the set (file mappings, stacks,
 * glibc's heaps) changes nothing. The set is a fixed array under a spinlock
 * (binary search, then a move of what follows): these calls are system
 * calls, a few hundred ns at least, and rare next to malloc. A change that
 * finds the array full records what it can and leaves the rest out (less
 * is counted, never more). MEMPROF_MMAP=0 turns this off.
 */
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_RANGES 16384 /* ranges at once (384 KiB, untouched until used) */

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);
typedef int (*mprotect_fn)(void *, size_t, int);

static mmap_fn real_mmap;
static munmap_fn real_munmap;
static mremap_fn real_mremap;
static mprotect_fn real_mprotect;
int mp__mmap_on = 1;
static _Atomic int mem_id = -1;
static _Atomic int lock;

enum { RESERVED = 0, ACCESSIBLE = 1, ANY = 2, GONE = -1 };

typedef struct {
	uint64_t base, end; /* [base, end), page-aligned */
	int kind;           /* RESERVED or ACCESSIBLE */
} range_t;

static range_t ranges[MAX_RANGES]; /* sorted, disjoint */
static size_t nranges;

static void resolve(void)
{
	if (!real_mmap)
		*(void **)&real_mmap = dlsym(RTLD_NEXT, "mmap");
	if (!real_munmap)
		*(void **)&real_munmap = dlsym(RTLD_NEXT, "munmap");
	if (!real_mremap)
		*(void **)&real_mremap = dlsym(RTLD_NEXT, "mremap");
	if (!real_mprotect)
		*(void **)&real_mprotect = dlsym(RTLD_NEXT, "mprotect");
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

static int do_mprotect(void *a, size_t n, int prot)
{
	if (real_mprotect)
		return real_mprotect(a, n, prot);
	return (int)syscall(SYS_mprotect, a, n, prot);
}

void *mp__mmap_real(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	if (!real_mmap)
		resolve();
	return do_mmap(a, n, prot, flags, fd, off);
}

int mp__munmap_real(void *a, size_t n)
{
	if (!real_munmap)
		resolve();
	return do_munmap(a, n);
}

static uint64_t page_up(uint64_t n)
{
	uint64_t ps = (uint64_t)sysconf(_SC_PAGESIZE);

	return (n + ps - 1) & ~(ps - 1);
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

/* --- the ranges (under the lock) ---------------------------------------- */

/* The first range that ends after a. */
static size_t first_after(uint64_t a)
{
	size_t lo = 0, hi = nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ranges[mid].end > a)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Insert [base, end) of kind at i (the sorted place), or remove range i;
 * nothing recorded. insert: 0, or -1 when the array is full. */
static int insert(size_t i, uint64_t base, uint64_t end, int kind)
{
	if (nranges == MAX_RANGES)
		return -1;
	memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof(ranges[0]));
	ranges[i] = (range_t){base, end, kind};
	nranges++;
	return 0;
}

static void drop(size_t i)
{
	memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof(ranges[0]));
	nranges--;
}

/* insert, and an accessible range is an allocation of requested bytes (a
 * range the array has no room for is not recorded); stack: its STACK's id
 * (--stacks; NULL: none), written only with the ALLOC it names. */
static int put(uint32_t id, size_t i, uint64_t base, uint64_t end, int kind, uint64_t requested, const uint32_t *stack)
{
	if (insert(i, base, end, kind))
		return -1;
	if (kind == ACCESSIBLE) {
		mp_writer_t *w = mp__writer; /* (NULL once a close began: hook_path.h, ring) */
		if (stack)
			mp_writer_next_stack(w, *stack);
		mp_writer_alloc(w, id, base, requested, end - base);
		mp__net_moved(w, (int64_t)(end - base), 0); /* (4 MiB or more: the record asked) */
	}
	return 0;
}

/* Each part of [s, e) that lies in a range of kind `which` (or ANY) leaves
 * its range and becomes kind `to` (GONE: out of the set). A changed
 * accessible range is freed, and what remains of it on either side is
 * recorded again (without a stack). stack: the STACK of the first part
 * made accessible (a commit's; NULL: none). */
static void change(uint32_t id, uint64_t s, uint64_t e, int which, int to, const uint32_t *stack)
{
	size_t i = first_after(s);

	while (i < nranges && ranges[i].base < e) {
		range_t r = ranges[i];
		uint64_t ps = r.base > s ? r.base : s, pe = r.end < e ? r.end : e;

		if ((which != ANY && r.kind != which) || r.kind == to) {
			i++;
			continue;
		}
		if (r.kind == ACCESSIBLE) {
			mp_writer_t *w = mp__writer;
			mp_writer_free(w, id, r.base);
			mp__net_moved(w, -(int64_t)(r.end - r.base), r.end - r.base);
		}
		drop(i);
		/* what is left, in address order: head, the part, tail */
		if (r.base < ps && put(id, i, r.base, ps, r.kind, ps - r.base, NULL) == 0)
			i++;
		if (to != GONE && put(id, i, ps, pe, to, pe - ps, to == ACCESSIBLE ? stack : NULL) == 0) {
			i++;
			stack = to == ACCESSIBLE ? NULL : stack; /* (the first one only) */
		}
		if (pe < r.end && put(id, i, pe, r.end, r.kind, r.end - pe, NULL) == 0)
			i++;
	}
}

/* Whether a reservation meets [s, e) (lock held). */
static int reserved_in(uint64_t s, uint64_t e)
{
	for (size_t i = first_after(s); i < nranges && ranges[i].base < e; i++)
		if (ranges[i].kind == RESERVED)
			return 1;
	return 0;
}

/* A new anonymous mapping at [base, base + len) of requested bytes: what
 * it replaced (MAP_FIXED) is gone first; stack: its call stack's id (with
 * --stacks; NULL: none), for its ALLOC (not for the remainders of what it
 * replaced, recorded again before it). */
static void mapped(uint32_t id, uint64_t base, uint64_t len, uint64_t requested, int kind, const uint32_t *stack)
{
	change(id, base, base + len, ANY, GONE, NULL);
	put(id, first_after(base), base, base + len, kind, requested, stack);
}

/* With --stacks, the calling thread's stack for the allocation an
 * accessible mapping (or commit) makes, unwound before the lock is taken
 * (the guard is held): 1 and *sid. An arena of a Python whose allocator is
 * not wrapped (MEMPROF_PYMALLOC=0) then names the line that asked for it. */
static int stack_of(int prot, uint32_t *sid)
{
	return __builtin_expect(mp__stacks_on, 0) && prot != PROT_NONE && mp__stacks_id(sid);
}

/* In a forked child: another thread of the parent may have held the lock
 * at fork, and no thread of the child will ever give it back. */
void mp__mmap_reset_child(void)
{
	atomic_store(&lock, 0);
}

/* A new capture (fork child, reopened after exec): ids and ranges restart
 * (what is mapped already is not in the new capture). */
void mp__mmap_reset(void)
{
	atomic_store(&mem_id, -1);
	nranges = 0;
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

	/* inside a wrapped Python allocator call: one of pymalloc's arenas */
	if (__builtin_expect(mp__pymem.inside, 0) && (flags & MAP_ANONYMOUS) && !(flags & MAP_FIXED) && !mp__guard)
		return mp__pymem_arena_map(a, n, prot, flags, fd, off);
	if (__builtin_expect(mp__pymem_watch, 0) && (flags & MAP_ANONYMOUS) && !mp__guard)
		mp__pymem_check_replaced(n);
	/* a file mapping counts only where it replaces anonymous memory */
	if (!(flags & (MAP_ANONYMOUS | MAP_FIXED)) || !enter())
		return do_mmap(a, n, prot, flags, fd, off);
	p = do_mmap(a, n, prot, flags, fd, off);
	e = errno;
	if (p != MAP_FAILED) {
		/* the memory id is declared with the first anonymous mapping */
		int id = flags & MAP_ANONYMOUS ? (int)memory() : atomic_load_explicit(&mem_id, memory_order_acquire);
		uint32_t sid;
		int stacked = id >= 0 && (flags & MAP_ANONYMOUS) && stack_of(prot, &sid);
		if (id >= 0) {
			take();
			if (flags & MAP_ANONYMOUS)
				mapped((uint32_t)id, (uintptr_t)p, page_up(n), n, prot == PROT_NONE ? RESERVED : ACCESSIBLE,
				       stacked ? &sid : NULL);
			else
				change((uint32_t)id, (uintptr_t)p, (uintptr_t)p + page_up(n), ANY, GONE, NULL);
			give();
		}
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
	int rc, e, id;

	if (__builtin_expect(mp__pymem.inside, 0) && !mp__guard && mp__pymem_arena_unmap(a, n, &rc))
		return rc; /* one of pymalloc's arenas */
	if (!enter())
		return do_munmap(a, n);
	id = atomic_load_explicit(&mem_id, memory_order_acquire);
	if (id >= 0) {
		/* Recorded before the unmap: the range cannot be handed out again
		 * before its FREE is in the ring. */
		take();
		change((uint32_t)id, (uintptr_t)a, (uintptr_t)a + page_up(n), ANY, GONE, NULL);
		give();
	}
	rc = do_munmap(a, n);
	e = errno;
	leave(e);
	return rc;
}

/* Reservations made usable (the JVM's and V8's commit) and usable memory
 * made a reservation again (their uncommit). */
MP_EXPORT int mprotect(void *a, size_t n, int prot)
{
	int rc, e, id;

	if (!enter())
		return do_mprotect(a, n, prot);
	rc = do_mprotect(a, n, prot);
	e = errno;
	id = atomic_load_explicit(&mem_id, memory_order_acquire);
	if (rc == 0 && id >= 0) {
		uint64_t s = (uintptr_t)a, end = s + page_up(n);
		uint32_t sid;
		int stacked = 0;
		if (__builtin_expect(mp__stacks_on, 0) && prot != PROT_NONE) {
			/* a commit's stack, unwound outside the lock, and only for
			 * a commit (a JIT's write/execute flips commit nothing) */
			take();
			stacked = reserved_in(s, end);
			give();
			stacked = stacked && mp__stacks_id(&sid); /* (stack_of's test, made above) */
		}
		take();
		if (prot == PROT_NONE)
			change((uint32_t)id, s, end, ACCESSIBLE, RESERVED, NULL);
		else
			change((uint32_t)id, s, end, RESERVED, ACCESSIBLE, stacked ? &sid : NULL);
		give();
	}
	leave(e);
	return rc;
}

MP_EXPORT void *mremap(void *old, size_t old_n, size_t n, int flags, ...)
{
	uint64_t o = (uintptr_t)old, olen = page_up(old_n), len = page_up(n);
	void *want = NULL, *p;
	int e, id;
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
		uint64_t q = (uintptr_t)p;
		size_t i;
		take();
		i = first_after(o);
		if (i < nranges && ranges[i].base == o && ranges[i].end == o + olen && ranges[i].kind == ACCESSIBLE) {
			/* a whole block, moved or resized: one record */
			drop(i);
			change((uint32_t)id, q, q + len, ANY, GONE, NULL); /* what MREMAP_FIXED replaced */
			if (insert(first_after(q), q, q + len, ACCESSIBLE) == 0)
				mp_writer_realloc(mp__writer, (uint32_t)id, o, q, n, len);
			else
				mp_writer_free(mp__writer, (uint32_t)id, o);
		} else if (i < nranges && ranges[i].base < o + olen) {
			/* part of a block, or several: what left is freed, and the
			 * new place is a block of its own if any of it was usable */
			int usable = 0;
			size_t k;
			for (k = i; k < nranges && ranges[k].base < o + olen; k++)
				usable |= ranges[k].kind == ACCESSIBLE;
			change((uint32_t)id, o, o + olen, ANY, GONE, NULL);
			mapped((uint32_t)id, q, len, n, usable ? ACCESSIBLE : RESERVED, NULL);
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
