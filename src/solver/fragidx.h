/* fragidx.h - address-ordered index of live blocks and region bounds, with
 * the free gaps between them maintained so that "largest free chunk" and
 * "total free" are O(1) reads and every update is O(log n).
 *
 * Internal to memprof_solver. The index holds three kinds of items, ordered
 * by (address, kind): a region's END marker at base+size, a region's START
 * marker at base, and live blocks [key, end). Only blocks that lie wholly
 * inside a region are inserted (the solver checks), so the items between a
 * START and the next END are that region's blocks, and the free gap in front
 * of an item is:
 *   START: 0 (what lies before a region is not free space of any region)
 *   BLOCK or END: item.key - previous item's end (0 if they overlap)
 * Each item stores its gap; a B+ tree keeps, per child, the largest gap of
 * the child's subtree, and a running sum gives the total. Leaves are arrays
 * (cache-friendly: one binary search over contiguous keys per level).
 */
#ifndef MEMPROF_SOLVER_FRAGIDX_H
#define MEMPROF_SOLVER_FRAGIDX_H

#include <stddef.h>
#include <stdint.h>

/* Item kinds, in their order at equal addresses: a region that ends at X
 * sorts before one that starts at X, which sorts before a block at X. */
enum { FX_END = 0, FX_START = 1, FX_BLOCK = 2 };

typedef struct fx_node fx_node_t;

typedef struct fx_leaf fx_leaf_t;

typedef struct fx_index {
	fx_node_t *root;  /* owned; NULL when empty and never used */
	void **chunks;    /* owned: leaves are carved from these, freed at destroy */
	size_t nchunks, chunk_cap;
	fx_leaf_t *free_leaves;
	uint64_t total;   /* sum of all gaps = free bytes inside regions */
	size_t count;     /* items */
	size_t nodes;     /* allocated nodes (for memory accounting) */
} fx_index_t;

void fx_init(fx_index_t *fx);
void fx_destroy(fx_index_t *fx);

/* Insert an item. Returns 0, MP_ELIMIT for an address >= 2^62 (items are
 * ordered by address << 2 | kind), or MP_ENOMEM (then the index may be
 * inconsistent and must only be destroyed). The caller guarantees (key,
 * kind) is not present already. where (may be NULL) holds a hint on entry
 * (NULL, or a leaf an earlier call gave: it saves the descent when the key
 * falls inside it, as with keys inserted in order) and receives one for
 * this item, for fx_remove or the next fx_insert: the leaf the item went
 * to, valid (as a hint) until fx_destroy(). */
int fx_insert(fx_index_t *fx, uint64_t key, uint64_t end, int kind, void **where);

/* Remove the item (key, kind). hint: what fx_insert stored in *where for
 * it, or NULL; a stale hint is detected and costs only a normal search.
 * Returns 0, or MP_ENOTFOUND. */
int fx_remove(fx_index_t *fx, uint64_t key, int kind, void *hint);

/* An item for fx_build. */
typedef struct fx_item {
	uint64_t addr, end;
	int kind;
} fx_item_t;

/* Replace everything in the index by items[0..n), sorted by (addr, kind)
 * with no duplicate, addresses below 2^62: O(n), cheaper than n insertions
 * when most of the index changes at once. Returns 0 or MP_ENOMEM (then the
 * index must only be destroyed). Earlier hints stay safe to pass (stale). */
int fx_build(fx_index_t *fx, const fx_item_t *items, size_t n);

/* The first item strictly after (key, kind): returns 1 and fills the outputs,
 * or 0 when there is none. */
int fx_next(const fx_index_t *fx, uint64_t key, int kind, uint64_t *okey, uint64_t *oend, int *okind);

/* Start loading the leaf a hint points to (no effect on contents). */
void fx_prefetch(const void *hint);

/* Largest gap (the largest free chunk inside any region), O(1). */
uint64_t fx_largest(const fx_index_t *fx);

/* Bytes held by the index's nodes. */
size_t fx_memory_bytes(const fx_index_t *fx);

/* Verify every invariant (order, stored gaps, maxima, parents, sum); returns
 * 0 or -1. For tests only: O(n). */
int fx_check(const fx_index_t *fx);

#endif
