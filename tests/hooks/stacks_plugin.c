/* stacks_plugin.c - a library victim_stacks dlopens after the capture has
 * started: its code is not in the module map read at start, so the first
 * stack through it must make the writer describe it (docs/hooks.md).
 * plugin_alloc(): 2 x malloc(777); plugin_free() frees them. */
#include <stdlib.h>

void plugin_alloc(void);
void plugin_free(void);

static void *blocks[2];
static volatile int two = 2;

__attribute__((visibility("default"), noinline)) void plugin_alloc(void)
{
	for (int i = 0; i < two; i++)
		blocks[i] = malloc(777);
	__asm__ volatile("" ::: "memory");
}

__attribute__((visibility("default"), noinline)) void plugin_free(void)
{
	for (int i = 0; i < two; i++)
		free(blocks[i]);
}
