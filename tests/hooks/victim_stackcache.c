/* victim_stackcache.c - call stacks that the thread's stack cache
 * (allocator_hooks/preload/stackcache.c) must tell apart.
 *
 * 100 rounds of: outer_x() and outer_y(), which both call leaf() from
 * frames of one size, so that leaf calls malloc with the same return
 * address and stack pointer under two outer stacks (leaf(111) and
 * leaf(222)); deep(3, 333) and deep(5, 555), the same frames at two
 * depths. All 400 blocks stay live until the end, then are freed. Built
 * without frame pointers (-O2): rbp holds data, libunwind reads the CFI.
 * Expected, at the peak (requested): main -> outer_x -> leaf 11100 B in 100 blocks,
 * main -> outer_y -> leaf 22200 B, main -> deep -> 4 x deep -> leaf
 * 33300 B, main -> deep -> 6 x deep -> leaf 55500 B.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define BARRIER() __asm__ volatile("" ::: "memory")

static void *blocks[400];
static int nblocks;

NOINLINE void leaf(size_t n);
NOINLINE void outer_x(void);
NOINLINE void outer_y(void);
NOINLINE void deep(int d, size_t n);

NOINLINE void leaf(size_t n)
{
	blocks[nblocks++] = malloc(n);
	BARRIER();
}

NOINLINE void outer_x(void)
{
	leaf(111);
	BARRIER();
}

NOINLINE void outer_y(void)
{
	leaf(222);
	BARRIER();
}

NOINLINE void deep(int d, size_t n)
{
	if (d > 0)
		deep(d - 1, n);
	else
		leaf(n);
	BARRIER();
}

int main(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		outer_x();
		outer_y();
		deep(3, 333);
		deep(5, 555);
	}
	for (i = 0; i < nblocks; i++)
		free(blocks[i]);
	return 0;
}
