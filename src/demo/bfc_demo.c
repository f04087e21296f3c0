/* bfc_demo.c - the example `memprof demo` records: a few steps of a training
 * loop of a 4-layer dense network over a BFC-style device pool.
 *
 * The figures below are chosen so a person can check the report by hand
 * (MiB = 1048576 bytes):
 *   - pool "GPU_0_bfc", capacity 64 MiB, two regions of 32 MiB: A at
 *     0x10000000 (from the start) and B at 0x20000000 (added in step 1);
 *   - step 0: four weights dense_<i>/kernel [1024,1024] float, 4 MiB each,
 *     persist: 16 MiB live for the whole run (and still live at exit);
 *   - steps 1, 2 and 4: forward (1000000-byte activations kept, rounded to
 *     1000192 bytes, plus a 2 MiB temp workspace per layer), backward (a
 *     4 MiB gradient per layer), optimizer, then everything but the weights
 *     is freed: 16 + 4 x 1000192 + 16 MiB = 36 MiB + 4 x 1000192 B at most;
 *   - step 3, "fragmented": the input pipeline fills 47 x 1 MiB shuffle
 *     blocks (the peak: 16 + 47 = 63 MiB in use, 1 MiB free), then frees
 *     every other one (blocks 0, 2, ..., 46): 39 MiB in use and 25 MiB free,
 *     but the largest free chunk is 2 MiB (block 46 next to the 1 MiB left
 *     at the end of B), so a 6 MiB attention workspace FAILS although 25 MiB
 *     are free: fragmentation 1 - 2/25 = 0.92. The pipeline then releases
 *     its blocks and the retry succeeds.
 */
#include "bfc_pool.h"

#include <memprof/annotate.h>

#include <stdio.h>

#define MiB 1048576ull
#define LAYERS 4

static bfc_pool_t pool;
static uint64_t weights[LAYERS];

static uint64_t must_alloc(uint64_t n)
{
	uint64_t a = bfc_alloc(&pool, n);

	if (!a) {
		fprintf(stderr, "bfc_demo: unexpected allocation failure (%llu bytes)\n", (unsigned long long)n);
		return 0;
	}
	return a;
}

static void train_step(int64_t step)
{
	uint64_t act[LAYERS], grad[LAYERS];
	char op[64];
	int i;

	memprof_step(step);
	for (i = 0; i < LAYERS; i++) {
		uint64_t ws;
		snprintf(op, sizeof(op), "dense_%d/MatMul", i);
		memprof_push(op, MEMPROF_REGION_OUTPUT, "float", "[256,1000]");
		act[i] = must_alloc(1000000);
		memprof_pop();
		memprof_push(op, MEMPROF_REGION_TEMP, "uint8", "[2097152]");
		ws = must_alloc(2 * MiB);
		bfc_free(&pool, ws);
		memprof_pop();
	}
	for (i = LAYERS - 1; i >= 0; i--) {
		snprintf(op, sizeof(op), "gradients/dense_%d/MatMul_grad", i);
		memprof_push(op, MEMPROF_REGION_OUTPUT, "float", "[1024,1024]");
		grad[i] = must_alloc(4 * MiB);
		memprof_pop();
	}
	for (i = 0; i < LAYERS; i++) {
		bfc_free(&pool, grad[i]);
		bfc_free(&pool, act[i]);
	}
}

static void fragmented_step(int64_t step)
{
	uint64_t shuffle[47], ws;
	int i;

	memprof_step(step);
	memprof_push("data/shuffle_buffer", MEMPROF_REGION_DYNAMIC, "uint8", "[1048576]");
	for (i = 0; i < 47; i++)
		shuffle[i] = must_alloc(MiB);
	for (i = 0; i < 47; i += 2)
		bfc_free(&pool, shuffle[i]);
	memprof_pop();

	memprof_push("attention/softmax", MEMPROF_REGION_TEMP, "float", "[8,16,128,96]");
	ws = bfc_alloc(&pool, 6 * MiB); /* fails: 25 MiB free, largest chunk 2 MiB */
	memprof_pop();
	if (ws)
		fprintf(stderr, "bfc_demo: the 6 MiB request was expected to fail\n");

	memprof_push("data/shuffle_buffer", MEMPROF_REGION_DYNAMIC, "uint8", "[1048576]");
	for (i = 1; i < 47; i += 2)
		bfc_free(&pool, shuffle[i]);
	memprof_pop();

	memprof_push("attention/softmax", MEMPROF_REGION_TEMP, "float", "[8,16,128,96]");
	ws = must_alloc(6 * MiB); /* the retry fits */
	memprof_pop();
	bfc_free(&pool, ws);
}

int main(void)
{
	int i;

	bfc_init(&pool, "GPU_0_bfc", 64 * MiB);
	bfc_add_region(&pool, 0x10000000, 32 * MiB);

	memprof_step(0);
	for (i = 0; i < LAYERS; i++) {
		char op[64];
		snprintf(op, sizeof(op), "dense_%d/kernel/Initializer", i);
		memprof_push(op, MEMPROF_REGION_PERSIST, "float", "[1024,1024]");
		weights[i] = must_alloc(4 * MiB);
		memprof_pop();
	}
	bfc_add_region(&pool, 0x20000000, 32 * MiB); /* the pool grows */
	train_step(1);
	train_step(2);
	fragmented_step(3);
	train_step(4);
	memprof_mark("training done");
	printf("bfc_demo: 5 steps done (pool GPU_0_bfc, 64 MiB)\n");
	return 0;
}
