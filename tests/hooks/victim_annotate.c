/* victim_annotate.c - the annotation API inside a recorded program: a
 * custom pool "GPU_0_bfc" with one 1 MiB region, three sub-allocations
 * (4096, 8192, 16384) of which the second is freed, a step, and a host
 * malloc(555) inside a scope "conv2d" (so it carries that op). */
#include <memprof/annotate.h>

#include <stdlib.h>

int main(void)
{
	int pool = memprof_memory_declare("GPU_0_bfc", MEMPROF_MEMORY_DEVICE, 1 << 20);
	void *volatile p;

	if (pool < 0 || !memprof_enabled())
		return 3;
	memprof_region_add(pool, 0x100000, 1 << 20);
	memprof_step(1);
	memprof_alloc(pool, 0x100000, 4096, 4096);
	memprof_alloc(pool, 0x101000, 8192, 8192);
	memprof_alloc(pool, 0x103000, 16384, 16384);
	memprof_free(pool, 0x101000);
	memprof_push("conv2d", MEMPROF_REGION_TEMP, "float", "[8,64]");
	p = malloc(555);
	memprof_pop();
	free(p);
	return 0;
}
