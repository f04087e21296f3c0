/* fragidx_check.c - fx_check(): every invariant of the fragmentation
 * index, O(n). For tests only. */
#include "fragidx_impl.h"

static int check_node(const fx_node_t *n, const fx_inner_t *parent, uint32_t pidx, int depth, int *leaf_depth)
{
	if (n->parent != parent || (parent && n->pidx != pidx))
		return -1;
	if (n->maxgap != node_max(n))
		return -1;
	if (n->leaf) {
		if (*leaf_depth < 0)
			*leaf_depth = depth;
		if (*leaf_depth != depth)
			return -1;
		if (parent && n->n == 0)
			return -1;
		return 0;
	}
	{
		const fx_inner_t *in = (const fx_inner_t *)n;
		if (in->h.n < 2)
			return -1;
		for (uint32_t i = 0; i < in->h.n; i++) {
			if (in->cmax[i] != in->child[i]->maxgap)
				return -1;
			if (check_node(in->child[i], in, i, depth + 1, leaf_depth) < 0)
				return -1;
		}
	}
	return 0;
}

/* Every item of the subtree n is >= lo (if has_lo) and < hi (if has_hi). */
static int check_bounds(const fx_node_t *n, int has_lo, uint64_t lo, int has_hi, uint64_t hi)
{
	if (n->leaf) {
		const fx_leaf_t *l = (const fx_leaf_t *)n;
		for (uint32_t i = 0; i < l->h.n; i++)
			if ((has_lo && l->key[i] < lo) || (has_hi && l->key[i] >= hi))
				return -1;
		return 0;
	}
	{
		const fx_inner_t *in = (const fx_inner_t *)n;
		for (uint32_t i = 0; i < in->h.n; i++) {
			int clo = i ? 1 : has_lo, chi = i + 1 < in->h.n ? 1 : has_hi;
			uint64_t ck = i ? in->key[i] : lo, chk = i + 1 < in->h.n ? in->key[i + 1] : hi;
			if (check_bounds(in->child[i], clo, ck, chi, chk) < 0)
				return -1;
		}
	}
	return 0;
}

int fx_check(const fx_index_t *fx)
{
	const fx_node_t *n = fx->root;
	const fx_leaf_t *l, *prev = NULL;
	int leaf_depth = -1, have = 0;
	uint64_t pk = 0, sum = 0;
	size_t count = 0;

	if (!n)
		return fx->count == 0 && fx->total == 0 ? 0 : -1;
	if (check_node(n, NULL, 0, 0, &leaf_depth) < 0)
		return -1;
	if (check_bounds(n, 0, 0, 0, 0) < 0)
		return -1;
	while (!n->leaf)
		n = ((const fx_inner_t *)n)->child[0];
	for (l = (const fx_leaf_t *)n; l; prev = l, l = l->next) {
		if (l->prev != prev)
			return -1;
		for (uint32_t i = 0; i < l->h.n; i++) {
			if (have && pk >= l->key[i])
				return -1;
			if (l->gap[i] != calc_gap(l, i))
				return -1;
			sum += l->gap[i];
			pk = l->key[i];
			have = 1;
			count++;
		}
	}
	return sum == fx->total && count == fx->count ? 0 : -1;
}
