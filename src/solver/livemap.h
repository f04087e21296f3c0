/* livemap.h - the live set (address -> size, group) and the group table,
 * internal to memprof_solver.
 *
 * Live map: open addressing with linear probing and backward-shift deletion
 * (no tombstones, so a long run of alloc/free never degrades it), 24 bytes a
 * slot, load factor at most 1/2: 48 to 96 bytes per live block (short probe
 * runs: every event looks one up, every free shifts its run back).
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

#define LM_EMPTY UINT32_MAX /* group value of an empty slot */

/* lm_entry_t.pend: whether the block belongs in the fragmentation index.
 * LM_OUT: no (outside every region, or size 0); LM_IN: yes, and it is there;
 * LM_LOG + j: yes, and its insertion may still wait at position j of the
 * solver's deferred-update log (see defer.c: the log says whether it does). */
#define LM_OUT 0u
#define LM_IN 1u
#define LM_LOG 2u

typedef struct lm_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t group; /* LM_EMPTY: free slot */
	uint32_t pend;  /* LM_OUT, LM_IN or LM_LOG + log position */
} lm_entry_t;

typedef struct lm_map {
	lm_entry_t *slots; /* owned */
	size_t cap;        /* power of two, 0 before first insert */
	size_t count;
	unsigned shift;    /* 64 - log2(cap) */
} lm_map_t;

void lm_init(lm_map_t *m);
void lm_destroy(lm_map_t *m);
/* Empty the map (keeps its storage). */
void lm_clear(lm_map_t *m);
/* Fibonacci hashing: addresses are aligned, so their low bits carry little;
 * the multiply spreads every bit into the top ones we keep. */
static inline size_t lm_hash(const lm_map_t *m, uint64_t addr)
{
	return (size_t)((addr * 0x9E3779B97F4A7C15ull) >> m->shift);
}

/* The entry for addr, or NULL. Borrowed until the next insert/remove.
 * (Inline, as the next functions: they run for every event.) */
static inline lm_entry_t *lm_find(const lm_map_t *m, uint64_t addr)
{
	size_t i, mask = m->cap - 1;

	if (!m->cap)
		return NULL;
	for (i = lm_hash(m, addr);; i = (i + 1) & mask) {
		lm_entry_t *e = &m->slots[i];
		if (e->group == LM_EMPTY)
			return NULL;
		if (e->addr == addr)
			return e;
	}
}

/* Ask the CPU to start loading addr's home slot (no effect on contents). */
static inline void lm_prefetch(const lm_map_t *m, uint64_t addr)
{
	if (m->cap)
		__builtin_prefetch(&m->slots[lm_hash(m, addr)]);
}

/* Add addr (must be absent). Returns 0 or MP_ENOMEM. */
int lm_insert(lm_map_t *m, uint64_t addr, uint64_t size, uint32_t group, uint32_t pend);
/* The entry for addr (*found = 1), or a new one for it (*found = 0: addr
 * set, the caller fills size, group and pend, and must not leave it with
 * group LM_EMPTY); NULL when the map cannot grow. One probe instead of
 * lm_find then lm_insert. Borrowed until the next insert/remove. */
/* Double the slots (lm_find_or_add's slow path). Returns 0 or MP_ENOMEM. */
int lm_grow(lm_map_t *m);
static inline lm_entry_t *lm_find_or_add(lm_map_t *m, uint64_t addr, int *found)
{
	size_t i, mask;

	if ((m->count + 1) * 2 > m->cap && lm_grow(m) < 0)
		return NULL;
	mask = m->cap - 1;
	for (i = lm_hash(m, addr);; i = (i + 1) & mask) {
		lm_entry_t *e = &m->slots[i];
		if (e->group == LM_EMPTY) {
			*found = 0;
			e->addr = addr;
			m->count++;
			return e;
		}
		if (e->addr == addr) {
			*found = 1;
			return e;
		}
	}
}
/* Remove an entry returned by lm_find. */
void lm_remove(lm_map_t *m, lm_entry_t *e);

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
