/* victim_stripped.c - a program whose installed copy is stripped
 * (victim_stripped_s: no symbol names its functions), recorded with
 * --stacks by test_stacks_cli.c: its frames must read as
 * victim_stripped_s+0xOFFSET in every report, never crash one. Two call
 * sites of known sizes, held together at the peak, then freed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile held[64];

static __attribute__((noinline)) void *leaf(size_t n)
{
	void *p = malloc(n);
	if (p)
		memset(p, 1, n);
	return p;
}

static __attribute__((noinline)) void build_small(void)
{
	for (int i = 0; i < 32; i++)
		held[i] = leaf(4096);
}

static __attribute__((noinline)) void build_big(void)
{
	for (int i = 32; i < 40; i++)
		held[i] = leaf(1 << 20);
}

int main(void)
{
	build_small();
	build_big();
	for (int i = 0; i < 64; i++)
		free(held[i]);
	puts("done");
	return 0;
}
