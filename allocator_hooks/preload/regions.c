/* regions.c - the host memory id's regions: what glibc's ptmalloc really
 * holds, so that fragmentation of the host heap means something.
 *
 * The basis (docs/hooks.md): three kinds of region, read from ptmalloc's
 * chunk headers (only when forwarding to glibc):
 *   - the main arena's brk heap, [start_brk, current brk);
 *   - each thread arena heap (64 MiB-aligned mappings), [heap, heap + size);
 *   - each mmapped chunk (large allocations), its whole mapping.
 * Free space inside them is everything the program does not hold: free
 * chunks, tcache and fastbin entries, the top chunk, chunk headers, arena
 * metadata. A region that changes size is re-declared (remove, then add
 * with the same base). Changes are rare, so they take a small spinlock;
 * the common path is a header read and one compare.
 */
#include "preload.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IS_MMAPPED 0x2u
#define NON_MAIN_ARENA 0x4u
#define HEAP_MAX (64u << 20) /* glibc HEAP_MAX_SIZE on 64-bit */
#define HEAPS 1024           /* thread heaps tracked (open addressing) */

enum { TAG_MMAP = 1, TAG_HEAP = 2, TAG_MAIN = 3 };

static mp_writer_t *W;
static uint32_t host;
static uint64_t start_brk;
static _Atomic uint64_t main_end;
static _Atomic int lock;
static struct {
	_Atomic uint64_t base, size;
} heaps[HEAPS];

static void lock_take(void)
{
	while (atomic_exchange_explicit(&lock, 1, memory_order_acquire))
		;
}

static void lock_give(void)
{
	atomic_store_explicit(&lock, 0, memory_order_release);
}

/* start_brk: field 47 of /proc/self/stat (Linux >= 3.3). */
static uint64_t read_start_brk(void)
{
	char buf[2048], *p;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field = 2;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may contain anything */
	if (!p)
		return 0;
	while (*p && field < 47) {
		if (*p == ' ')
			field++;
		p++;
	}
	return field == 47 ? strtoull(p, NULL, 10) : 0;
}

/* glibc keeps the current break in __curbrk (exported; what sbrk(0)
 * returns once it is set): one load instead of a call per event. */
extern void *__curbrk;

static inline uint64_t cur_brk(void)
{
	void *b = __curbrk;

	return (uint64_t)(uintptr_t)(b ? b : sbrk(0));
}

static void main_check(void)
{
	uint64_t end = cur_brk();

	if (end == atomic_load_explicit(&main_end, memory_order_relaxed))
		return;
	lock_take();
	end = cur_brk();
	if (end != atomic_load_explicit(&main_end, memory_order_relaxed)) {
		/* growing: a larger REGION_ADD at the same base (docs/format.md);
		 * shrinking: remove, then declare again */
		if (atomic_load_explicit(&main_end, memory_order_relaxed) > start_brk &&
		    end < atomic_load_explicit(&main_end, memory_order_relaxed))
			mp_writer_region_remove(W, host, start_brk);
		if (end > start_brk)
			mp_writer_region_add(W, host, start_brk, end - start_brk);
		atomic_store_explicit(&main_end, end, memory_order_relaxed);
	}
	lock_give();
}

static void heap_check(uint64_t base)
{
	uint64_t size = ((const uint64_t *)(uintptr_t)base)[2]; /* heap_info.size */
	unsigned i = (unsigned)(base / HEAP_MAX) & (HEAPS - 1), k;

	for (k = 0; k < HEAPS; k++, i = (i + 1) & (HEAPS - 1)) {
		uint64_t b = atomic_load_explicit(&heaps[i].base, memory_order_acquire);
		if (b == base && atomic_load_explicit(&heaps[i].size, memory_order_relaxed) == size)
			return;
		if (b == base || b == 0)
			break;
	}
	if (k == HEAPS)
		return; /* table full: this heap stays undeclared */
	lock_take();
	size = ((const uint64_t *)(uintptr_t)base)[2];
	if (atomic_load_explicit(&heaps[i].base, memory_order_relaxed) == base) {
		if (atomic_load_explicit(&heaps[i].size, memory_order_relaxed) != size) {
			if (size < atomic_load_explicit(&heaps[i].size, memory_order_relaxed))
				mp_writer_region_remove(W, host, base); /* shrinking (growing: see main_check) */
			mp_writer_region_add(W, host, base, size);
			atomic_store_explicit(&heaps[i].size, size, memory_order_relaxed);
		}
	} else if (atomic_load_explicit(&heaps[i].base, memory_order_relaxed) == 0) {
		mp_writer_region_add(W, host, base, size);
		atomic_store_explicit(&heaps[i].size, size, memory_order_relaxed);
		atomic_store_explicit(&heaps[i].base, base, memory_order_release);
	}
	lock_give();
}

void mp__regions_start(mp_writer_t *w, uint32_t h)
{
	int i;

	W = w;
	host = h;
	start_brk = read_start_brk();
	atomic_store(&main_end, 0);
	for (i = 0; i < HEAPS; i++) {
		atomic_store(&heaps[i].base, 0);
		atomic_store(&heaps[i].size, 0);
	}
	if (!start_brk)
		return;
	main_check();
	mp__regions_on = 1;
}

static inline uint64_t hdr_size(const void *p)
{
	return ((const uint64_t *)p)[-1];
}

void mp__regions_alloc(const void *p)
{
	uint64_t sz = hdr_size(p), chunk = (uint64_t)(uintptr_t)p - 16;

	if (sz & IS_MMAPPED) {
		uint64_t pre = ((const uint64_t *)p)[-2];
		mp_writer_region_add(W, host, chunk - pre, pre + (sz & ~(uint64_t)7));
	} else if (sz & NON_MAIN_ARENA) {
		heap_check(chunk & ~(uint64_t)(HEAP_MAX - 1));
	} else {
		main_check();
	}
}

void mp__regions_free_before(const void *p, uint64_t *info)
{
	uint64_t sz = hdr_size(p), chunk = (uint64_t)(uintptr_t)p - 16;

	if (sz & IS_MMAPPED)
		*info = (chunk - ((const uint64_t *)p)[-2]) | TAG_MMAP;
	else if (sz & NON_MAIN_ARENA)
		*info = (chunk & ~(uint64_t)(HEAP_MAX - 1)) | TAG_HEAP;
	else
		*info = TAG_MAIN;
}

void mp__regions_free_after(uint64_t info)
{
	if (!mp__regions_on)
		return;
	switch (info & 0xfff) {
	case TAG_MMAP:
		mp_writer_region_remove(W, host, info & ~(uint64_t)0xfff);
		break;
	case TAG_HEAP:
		/* Not re-read here: a free can unmap a thread heap entirely. Its
		 * size is refreshed by the next allocation in it. */
		break;
	case TAG_MAIN:
		main_check();
		break;
	default:
		break;
	}
}
