/* livesets.h - the live sets of the report's later passes (functions.c,
 * calltree.c), which replay a source after the solver: one live-set engine
 * set (<memprof/live.h>) per memory id, so that the rules of a live block
 * (born, freed, reallocated, replaced at a live address, a free of an
 * unknown address) are the engine's. A block's group is its owner's row
 * (aggregate) index; functions.c keeps its requested bytes in pend, or in
 * the memory id's `big` table (keyed by address, requested in size) when
 * they do not fit 32 bits. Internal to memprof_report. */
#ifndef MP_LIVESETS_H
#define MP_LIVESETS_H

#include <memprof/live.h>
#include <memprof/solver.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* pend of a block whose requested bytes are in the `big` table */
#define RP_REQ_BIG UINT32_MAX

typedef struct rp_live {
	mp_live_t live;
	lm_map_t big; /* requested bytes >= RP_REQ_BIG: address -> size */
} rp_live_t;

typedef struct rp_lives {
	rp_live_t *by_mem; /* owned: rp_lives_free; index = memory id */
	uint32_t n;
} rp_lives_t;

/* The slow path of rp_lives_of: room for memory ids up to `memory` (below
 * MP_SOLVER_MAX_MEMORY: the solver read the same source first). */
static inline rp_live_t *rp_lives_grow(rp_lives_t *ls, uint32_t memory)
{
	uint32_t n = ls->n ? ls->n : 4;
	rp_live_t *nb;

	if (memory >= MP_SOLVER_MAX_MEMORY)
		return NULL;
	while (n <= memory)
		n *= 2;
	if (!(nb = realloc(ls->by_mem, n * sizeof(*nb))))
		return NULL;
	memset(nb + ls->n, 0, (n - ls->n) * sizeof(*nb)); /* = mp_live_init, lm_init */
	ls->by_mem = nb;
	ls->n = n;
	return &nb[memory];
}

/* The live set of a memory id, or NULL when out of memory. Borrowed until
 * the next call. */
static inline rp_live_t *rp_lives_of(rp_lives_t *ls, uint32_t memory)
{
	return memory < ls->n ? &ls->by_mem[memory] : rp_lives_grow(ls, memory);
}

static inline void rp_lives_free(rp_lives_t *ls)
{
	for (uint32_t i = 0; i < ls->n; i++) {
		mp_live_destroy(&ls->by_mem[i].live);
		lm_destroy(&ls->by_mem[i].big);
	}
	free(ls->by_mem);
	ls->by_mem = NULL;
	ls->n = 0;
}

#endif
