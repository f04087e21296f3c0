/* bfc_pool.h - a small best-fit pool allocator in the style of TensorFlow's
 * BFC allocator, for the bundled demo. It hands out addresses inside the
 * regions it is given (no real memory behind them: the demo simulates a
 * device), rounds sizes up to 256 bytes, splits and coalesces chunks, and
 * reports everything through <memprof/annotate.h>. */
#ifndef MP_DEMO_BFC_POOL_H
#define MP_DEMO_BFC_POOL_H

#include <stdint.h>

#define BFC_MAX_CHUNKS 1024
#define BFC_ALIGN 256u

typedef struct bfc_chunk {
	uint64_t addr, size;
	uint64_t requested; /* 0 when free */
	int region;         /* index into regions */
	int used;
} bfc_chunk_t;

typedef struct bfc_pool {
	int memory; /* memprof memory id */
	bfc_chunk_t chunks[BFC_MAX_CHUNKS]; /* address order */
	int nchunks;
	int nregions;
} bfc_pool_t;

void bfc_init(bfc_pool_t *p, const char *name, uint64_t capacity);
void bfc_add_region(bfc_pool_t *p, uint64_t base, uint64_t size);
/* Best fit (smallest free chunk that fits, lowest address on ties); returns
 * the address, or 0 when no free chunk is large enough (reported as a failed
 * allocation). */
uint64_t bfc_alloc(bfc_pool_t *p, uint64_t requested);
void bfc_free(bfc_pool_t *p, uint64_t addr);

#endif
