/* fragidx_impl.h - node layout of the fragmentation index, shared by
 * fragidx.c (the nodes' pool, searches, insertion, removal),
 * fragidx_build.c (the bulk build), fragidx_life.c (creation, destruction)
 * and fragidx_check.c (invariants, for tests). Internal to memprof_solver. */
#ifndef MEMPROF_SOLVER_FRAGIDX_IMPL_H
#define MEMPROF_SOLVER_FRAGIDX_IMPL_H

#include "fragidx.h"

#define LEAF_CAP 32
#define LEAF_MIN (LEAF_CAP / 4)
#define FAN 32
#define FAN_MIN (FAN / 4)

#define PACK(addr, kind) ((addr) << 2 | (uint64_t)(kind))
#define KIND(k) ((int)((k) & 3))
#define ADDR(k) ((k) >> 2)

typedef struct fx_inner fx_inner_t;

struct fx_node {
	fx_inner_t *parent;
	uint64_t maxgap; /* largest gap in this subtree */
	uint16_t n;      /* items (leaf) or children (inner) */
	uint16_t leaf;
	uint32_t pidx;   /* index in parent->child[] */
};

struct fx_leaf {
	fx_node_t h;
	struct fx_leaf *prev, *next;
	uint64_t key[LEAF_CAP]; /* PACK(address, kind) */
	uint64_t end[LEAF_CAP];
	uint64_t gap[LEAF_CAP];
};

struct fx_inner {
	fx_node_t h;
	uint64_t key[FAN];  /* key[i]: lower bound of child i; [0] unused */
	uint64_t cmax[FAN]; /* child[i]->maxgap */
	fx_node_t *child[FAN];
};

/* h.leaf of a leaf in use / released to the pool. */
#define LEAF_LIVE 1
#define LEAF_DEAD 3

static inline uint64_t node_max(const fx_node_t *n)
{
	const uint64_t *v = n->leaf ? ((const fx_leaf_t *)n)->gap : ((const fx_inner_t *)n)->cmax;
	uint64_t m = 0;

	for (uint32_t i = 0; i < n->n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

/* Children from index `from` on get their pidx (after a shift). */
static inline void fx_fix_pidx(fx_inner_t *p, uint32_t from)
{
	for (uint32_t i = from; i < p->h.n; i++) {
		p->child[i]->pidx = i;
		p->child[i]->parent = p;
	}
}

/* fragidx.c: new nodes (empty; NULL when out of memory), and a released
 * leaf back to the pool (why leaves are pooled: see there). */
fx_leaf_t *fx_leaf_new(fx_index_t *fx);
void fx_leaf_release(fx_index_t *fx, fx_leaf_t *l);
fx_inner_t *fx_inner_new(fx_index_t *fx);

/* fragidx_life.c: free n's inner nodes, n included (leaves go with their
 * chunks). */
void fx_node_free(fx_node_t *n);

/* The free gap in front of item i of leaf l. */
static inline uint64_t calc_gap(const fx_leaf_t *l, uint32_t i)
{
	uint64_t pe, a;

	if (KIND(l->key[i]) == FX_START)
		return 0;
	if (i > 0) {
		pe = l->end[i - 1];
	} else {
		const fx_leaf_t *p = l->prev;
		while (p && p->h.n == 0)
			p = p->prev;
		if (!p)
			return 0;
		pe = p->end[p->h.n - 1];
	}
	a = ADDR(l->key[i]);
	return a > pe ? a - pe : 0;
}

#endif
