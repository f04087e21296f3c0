/* fragidx_build.c - the fragmentation index built at once from sorted
 * items, bottom up (fx_build in fragidx.h): O(n), for when most of the
 * index changes at once. */
#include "fragidx_impl.h"

#include <memprof/error.h>

#include <stdlib.h>

/* Release every node (leaves back to the pool, inner nodes freed). */
static void release_all(fx_index_t *fx)
{
	fx_node_t *n = fx->root;
	fx_leaf_t *l;

	if (!n)
		return;
	while (!n->leaf)
		n = ((fx_inner_t *)n)->child[0];
	for (l = (fx_leaf_t *)n; l;) {
		fx_leaf_t *next = l->next;
		fx_leaf_release(fx, l);
		l = next;
	}
	fx_node_free(fx->root); /* inner nodes only: leaves go with their chunks */
	fx->root = NULL;
	fx->nodes = 0;
	fx->count = 0;
	fx->total = 0;
}

/* Split n things into ceil(n / per) groups as evenly as possible: the size
 * of group g. Groups of 3/4 of the capacity leave room to grow and stay
 * above the quarter-full minimum. */
static uint32_t share(size_t n, size_t groups, size_t g)
{
	return (uint32_t)(n / groups + (g < n % groups));
}

int fx_build(fx_index_t *fx, const fx_item_t *items, size_t n)
{
	const size_t lfill = LEAF_CAP * 3 / 4, ifill = FAN * 3 / 4;
	size_t nl = (n + lfill - 1) / lfill, at = 0, m;
	fx_node_t **level;
	uint64_t *low, prev_end = 0;
	fx_leaf_t *prev = NULL;

	release_all(fx);
	if (!n)
		return 0;
	level = malloc(nl * sizeof(*level));
	low = malloc(nl * sizeof(*low));
	if (!level || !low) {
		free(level);
		free(low);
		return MP_ENOMEM;
	}
	for (size_t g = 0; g < nl; g++) {
		fx_leaf_t *l = fx_leaf_new(fx);
		uint32_t k = share(n, nl, g);
		uint64_t mx = 0;
		if (!l) {
			free(level);
			free(low);
			return MP_ENOMEM;
		}
		for (uint32_t i = 0; i < k; i++, at++) {
			uint64_t key = PACK(items[at].addr, items[at].kind), a = items[at].addr, gap;
			gap = items[at].kind == FX_START || at == 0 || a <= prev_end ? 0 : a - prev_end;
			l->key[i] = key;
			l->end[i] = items[at].end;
			l->gap[i] = gap;
			fx->total += gap;
			mx = gap > mx ? gap : mx;
			prev_end = items[at].end;
		}
		l->h.n = (uint16_t)k;
		l->h.maxgap = mx;
		l->prev = prev;
		if (prev)
			prev->next = l;
		prev = l;
		level[g] = &l->h;
		low[g] = l->key[0];
	}
	fx->count = n;
	/* Inner levels, bottom up, in place: parents replace their children. */
	for (m = nl; m > 1;) {
		size_t np = (m + ifill - 1) / ifill, c = 0;
		for (size_t g = 0; g < np; g++) {
			fx_inner_t *in = fx_inner_new(fx);
			uint32_t k = share(m, np, g);
			uint64_t mx = 0, lo = low[c];
			if (!in) {
				free(level);
				free(low);
				return MP_ENOMEM;
			}
			for (uint32_t i = 0; i < k; i++, c++) {
				in->child[i] = level[c];
				in->key[i] = low[c];
				in->cmax[i] = level[c]->maxgap;
				mx = level[c]->maxgap > mx ? level[c]->maxgap : mx;
			}
			in->h.n = (uint16_t)k;
			in->h.maxgap = mx;
			fx_fix_pidx(in, 0);
			level[g] = &in->h;
			low[g] = lo;
		}
		m = np;
	}
	fx->root = level[0];
	fx->root->parent = NULL;
	fx->root->pidx = 0;
	free(level);
	free(low);
	return 0;
}
