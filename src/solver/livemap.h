/* livemap.h - the solver's group table, internal to memprof_solver (the
 * live set itself is the live-set engine's, memprof/live.h).
 *
 * Group table: interns (op, region, dtype, shape, metadata, requested,
 * allocated) to a
 * dense id and keeps how many allocations of each group are live, so the
 * breakdown at any instant is a scan of the groups, not of the live set.
 */
#ifndef MEMPROF_SOLVER_LIVEMAP_H
#define MEMPROF_SOLVER_LIVEMAP_H

#include <stddef.h>
#include <stdint.h>

#include <memprof/live.h>

typedef struct grp_key {
	uint64_t requested;
	uint64_t allocated;
	uint32_t op, dtype, shape;
	uint32_t region;
	uint32_t metadata;
} grp_key_t;

typedef struct grp {
	grp_key_t key;
	uint64_t live;    /* live allocations of this group now */
	uint64_t at_peak; /* ... at the current peak (up to date when not dirty) */
	uint32_t dirty;   /* live changed since the peak was last synced */
} grp_t;

typedef struct grp_table {
	grp_t *g;          /* owned, n used of gcap */
	size_t n, gcap;
	uint32_t *slot;    /* owned hash: group index + 1, 0 = empty */
	size_t scap;
} grp_table_t;

void grp_init(grp_table_t *t);
void grp_destroy(grp_table_t *t);
static inline uint64_t grp_hash(const grp_key_t *k)
{
	uint64_t h = k->requested * 0x9E3779B97F4A7C15ull;

	h ^= (k->allocated + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
	h ^= ((uint64_t)k->op << 32 | k->dtype) * 0x165667B19E3779F9ull;
	h ^= ((uint64_t)k->shape << 8 | k->region) * 0x27D4EB2F165667C5ull;
	h ^= (uint64_t)k->metadata * 0x9E3779B185EBCA87ull;
	return h ^ (h >> 29);
}

static inline int grp_eq(const grp_key_t *a, const grp_key_t *b)
{
	return a->requested == b->requested && a->allocated == b->allocated && a->op == b->op &&
	       a->dtype == b->dtype && a->shape == b->shape && a->region == b->region &&
	       a->metadata == b->metadata;
}

/* A key not in the table yet: add it (grp_intern). */
uint32_t grp_add(grp_table_t *t, const grp_key_t *key);

/* The id of key, adding it if new; LM_EMPTY on allocation failure. */
static inline uint32_t grp_intern(grp_table_t *t, const grp_key_t *key)
{
	if (t->scap) {
		for (size_t j = (size_t)grp_hash(key) & (t->scap - 1); t->slot[j]; j = (j + 1) & (t->scap - 1))
			if (grp_eq(&t->g[t->slot[j] - 1].key, key))
				return t->slot[j] - 1;
	}
	return grp_add(t, key);
}

#endif
