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
 * the common path, inline in preload.h, is a header read and one compare.
 */
#include "preload.h"
#include "procfs.h" /* start_brk, from /proc/self/stat */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static mp_writer_t *W;
static uint32_t host;
static uint64_t start_brk;
static _Atomic uint64_t main_end;
_Atomic uint64_t mp__regions_brk_seen;
struct mp_heap_slot mp__regions_heaps[MP_REGION_HEAPS];
static _Atomic int lock;

static void lock_take(void)
{
	mp__spin_take(&lock);
}

static void lock_give(void)
{
	mp__spin_give(&lock);
}

/* start_brk: field 47 of /proc/self/stat (Linux >= 3.3). */
static uint64_t read_start_brk(void)
{
	char buf[2048];
	const char *p;
	int field = 3;

	if (mp__read_head("/proc/self/stat", buf, sizeof(buf)) <= 0 || !(p = mp__stat_state(buf)))
		return 0;
	while (*p && field < 47) {
		if (*p == ' ')
			field++;
		p++;
	}
	return field == 47 ? strtoull(p, NULL, 10) : 0;
}

static inline uint64_t cur_brk(void)
{
	void *b = __curbrk;

	return (uint64_t)(uintptr_t)(b ? b : sbrk(0));
}

static void main_check(void)
{
	uint64_t seen, end;

	lock_take();
	seen = (uint64_t)(uintptr_t)__curbrk; /* the fast path's key: set last */
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
	atomic_store_explicit(&mp__regions_brk_seen, seen, memory_order_relaxed);
	lock_give();
}

/* The slot of heap `base` in the table, or the empty slot it would take;
 * -1 when the table is full. */
static int heap_slot(uint64_t base)
{
	unsigned i = mp__regions_heap_home(base), k;

	for (k = 0; k < MP_REGION_HEAPS; k++, i = (i + 1) & (MP_REGION_HEAPS - 1)) {
		uint64_t b = atomic_load_explicit(&mp__regions_heaps[i].base, memory_order_acquire);
		if (b == base || b == 0)
			return (int)i;
	}
	return -1;
}

/* Declare thread heap `base` at its current size if it is not. The table
 * is probed again under the lock: another heap may have taken the slot. */
static void heap_check(uint64_t base)
{
	uint64_t size = ((const uint64_t *)(uintptr_t)base)[2]; /* heap_info.size */
	struct mp_heap_slot *h;
	int i = heap_slot(base);

	if (i < 0 || (atomic_load_explicit(&mp__regions_heaps[i].base, memory_order_relaxed) == base &&
		      atomic_load_explicit(&mp__regions_heaps[i].size, memory_order_relaxed) == size))
		return; /* declared (or the table is full: this heap stays undeclared) */
	lock_take();
	size = ((const uint64_t *)(uintptr_t)base)[2];
	if ((i = heap_slot(base)) >= 0) {
		h = &mp__regions_heaps[i];
		if (atomic_load_explicit(&h->base, memory_order_relaxed) == base) {
			if (atomic_load_explicit(&h->size, memory_order_relaxed) != size) {
				if (size < atomic_load_explicit(&h->size, memory_order_relaxed))
					mp_writer_region_remove(W, host, base); /* shrinking (growing: see main_check) */
				mp_writer_region_add(W, host, base, size);
				atomic_store_explicit(&h->size, size, memory_order_relaxed);
			}
		} else {
			mp_writer_region_add(W, host, base, size);
			atomic_store_explicit(&h->size, size, memory_order_relaxed);
			atomic_store_explicit(&h->base, base, memory_order_release);
		}
	}
	lock_give();
}

/* In a forked child: another thread of the parent may have held the lock
 * at fork (inside a region change), and no thread of the child will ever
 * give it back; the first allocation of the child's own capture would spin
 * on it for good. */
void mp__regions_reset_child(void)
{
	mp__regions_on = 0;
	atomic_store(&lock, 0);
}

void mp__regions_start(mp_writer_t *w, uint32_t h)
{
	int i;

	W = w;
	host = h;
	start_brk = read_start_brk();
	atomic_store(&main_end, 0);
	for (i = 0; i < MP_REGION_HEAPS; i++) {
		atomic_store(&mp__regions_heaps[i].base, 0);
		atomic_store(&mp__regions_heaps[i].size, 0);
	}
	if (!start_brk)
		return;
	main_check();
	mp__regions_on = 1;
}

/* The slow paths of preload.h's mp__regions_alloc / _free_after. */
void mp__regions_alloc_slow(const void *p)
{
	uint64_t sz = ((const uint64_t *)p)[-1], chunk = (uint64_t)(uintptr_t)p - 16;

	if (sz & MP_CHUNK_IS_MMAPPED) {
		uint64_t pre = ((const uint64_t *)p)[-2];
		mp_writer_region_add(W, host, chunk - pre, pre + (sz & ~(uint64_t)7));
	} else if (sz & MP_CHUNK_NON_MAIN_ARENA) {
		heap_check(mp__regions_heap_of(p));
	} else {
		main_check();
	}
}

void mp__regions_free_slow(uint64_t info)
{
	switch (info & 0xfff) {
	case MP_REGION_TAG_MMAP:
		mp_writer_region_remove(W, host, info & ~(uint64_t)0xfff);
		break;
	case MP_REGION_TAG_MAIN:
		main_check();
		break;
	default:
		break;
	}
}
