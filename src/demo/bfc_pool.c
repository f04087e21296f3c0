/* bfc_pool.c - best-fit pool allocator for the demo; see bfc_pool.h. */
#include "bfc_pool.h"

#include <memprof/annotate.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bfc_init(bfc_pool_t *p, const char *name, uint64_t capacity)
{
	memset(p, 0, sizeof(*p));
	p->memory = memprof_memory_declare(name, MEMPROF_MEMORY_DEVICE, capacity);
}

void bfc_add_region(bfc_pool_t *p, uint64_t base, uint64_t size)
{
	int i = p->nchunks;

	/* Regions are added in increasing address order in this demo. */
	p->chunks[i] = (bfc_chunk_t){base, size, 0, p->nregions++, 0};
	p->nchunks++;
	memprof_region_add(p->memory, base, size);
}

uint64_t bfc_alloc(bfc_pool_t *p, uint64_t requested)
{
	uint64_t size = (requested + BFC_ALIGN - 1) / BFC_ALIGN * BFC_ALIGN;
	int best = -1, i;

	for (i = 0; i < p->nchunks; i++) {
		const bfc_chunk_t *c = &p->chunks[i];
		if (!c->used && c->size >= size && (best < 0 || c->size < p->chunks[best].size))
			best = i;
	}
	if (best < 0) {
		memprof_alloc_failed(p->memory, requested);
		return 0;
	}
	if (p->chunks[best].size > size) {
		if (p->nchunks == BFC_MAX_CHUNKS) {
			fprintf(stderr, "bfc_demo: too many chunks\n");
			exit(1);
		}
		memmove(&p->chunks[best + 2], &p->chunks[best + 1],
			(size_t)(p->nchunks - best - 1) * sizeof(bfc_chunk_t));
		p->chunks[best + 1] = (bfc_chunk_t){p->chunks[best].addr + size, p->chunks[best].size - size, 0,
						    p->chunks[best].region, 0};
		p->chunks[best].size = size;
		p->nchunks++;
	}
	p->chunks[best].used = 1;
	p->chunks[best].requested = requested;
	memprof_alloc(p->memory, p->chunks[best].addr, requested, size);
	return p->chunks[best].addr;
}

static void merge_with_next(bfc_pool_t *p, int i)
{
	bfc_chunk_t *a = &p->chunks[i], *b = &p->chunks[i + 1];

	if (i + 1 >= p->nchunks || a->used || b->used || a->region != b->region)
		return;
	a->size += b->size;
	memmove(&p->chunks[i + 1], &p->chunks[i + 2], (size_t)(p->nchunks - i - 2) * sizeof(bfc_chunk_t));
	p->nchunks--;
}

void bfc_free(bfc_pool_t *p, uint64_t addr)
{
	int i;

	for (i = 0; i < p->nchunks; i++) {
		if (p->chunks[i].addr == addr && p->chunks[i].used) {
			memprof_free(p->memory, addr);
			p->chunks[i].used = 0;
			p->chunks[i].requested = 0;
			merge_with_next(p, i);
			if (i > 0)
				merge_with_next(p, i - 1);
			return;
		}
	}
	fprintf(stderr, "bfc_demo: free of unknown address %#llx\n", (unsigned long long)addr);
	exit(1);
}
