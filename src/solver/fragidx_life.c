/* fragidx_life.c - an empty fragmentation index, and its destruction (its
 * nodes come and go with fragidx.c's pool). */
#include "fragidx_impl.h"

#include <stdlib.h>
#include <string.h>

void fx_init(fx_index_t *fx)
{
	memset(fx, 0, sizeof(*fx));
}

void fx_node_free(fx_node_t *n)
{
	if (!n || n->leaf) /* leaves go with their chunks */
		return;
	for (uint32_t i = 0; i < n->n; i++)
		fx_node_free(((fx_inner_t *)n)->child[i]);
	free(n);
}

void fx_destroy(fx_index_t *fx)
{
	fx_node_free(fx->root);
	for (size_t i = 0; i < fx->nchunks; i++)
		free(fx->chunks[i]);
	free(fx->chunks);
	memset(fx, 0, sizeof(*fx));
}
