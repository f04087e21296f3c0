/* annotated.c - a framework's allocator instrumented with
 * <memprof/annotate.h>, built against an installed memprof: once with
 * `pkg-config --cflags --libs memprof`, once with find_package(memprof)
 * (consumer/CMakeLists.txt). test_install_prefix records it with the
 * installed `memprof record` and checks the report against these figures,
 * worked out by hand:
 *
 *   pool "GPU_0_bfc" (device), capacity 16 MiB = 16777216 B, one region
 *   [0x10000000, +16 MiB):
 *     step 1, op embedding (persist, float32, [1000,64]): A at +0,
 *             250000 B asked, 262144 B reserved; live to the end
 *     step 2, op attention (temp, float32, [8,2048]): B at +0x40000 and
 *             C at +0x50000, 65536 B each; in use 262144 + 131072 =
 *             393216 B; both freed at the end of the step
 *     step 3, op mlp (temp, bfloat16, [8,8192]): D at +0x40000, 500000 B
 *             asked, 524288 B reserved; in use 262144 + 524288 = 786432 B,
 *             the peak; then freed
 *   => 4 allocations, 3 frees; peak 786432 B at step 3, free 16777216 -
 *      786432 = 15990784 B in one piece (A and D are adjacent from the
 *      region's start): fragmentation 0; within steps 2..2, 393216 B.
 *   host: inside attention, malloc(123457), never freed: a leak of op
 *   attention (the host allocation carries the scope's op).
 *   A mark "done" at the end. Exit 3 when not recording. */
#include <memprof/annotate.h>

#include <stdlib.h>

#define BASE 0x10000000ull

int main(void)
{
	int pool = memprof_memory_declare("GPU_0_bfc", MEMPROF_MEMORY_DEVICE, 16u << 20);
	void *volatile host;

	if (pool < 0 || !memprof_enabled())
		return 3;
	memprof_region_add(pool, BASE, 16u << 20);

	memprof_step(1);
	memprof_push("embedding", MEMPROF_REGION_PERSIST, "float32", "[1000,64]");
	memprof_alloc(pool, BASE, 250000, 262144);
	memprof_pop();

	memprof_step(2);
	memprof_push("attention", MEMPROF_REGION_TEMP, "float32", "[8,2048]");
	memprof_alloc(pool, BASE + 0x40000, 65536, 65536);
	memprof_alloc(pool, BASE + 0x50000, 65536, 65536);
	host = malloc(123457);
	memprof_pop();
	memprof_free(pool, BASE + 0x40000);
	memprof_free(pool, BASE + 0x50000);

	memprof_step(3);
	memprof_push("mlp", MEMPROF_REGION_TEMP, "bfloat16", "[8,8192]");
	memprof_alloc(pool, BASE + 0x40000, 500000, 524288);
	memprof_pop();
	memprof_free(pool, BASE + 0x40000);

	memprof_mark("done");
	return host ? 0 : 1;
}
