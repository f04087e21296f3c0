/* live.h - the live-set engine: the one place where the rules of a live
 * set are written (docs/architecture.md, "The live-set engine").
 *
 *   - A block's bytes are what the allocator reserved for it, else what was
 *     requested (mp_live_footprint).
 *   - An allocation at an address that is live first drops the block there
 *     (counted in `duplicates`), then adds its own.
 *   - A free of an address that is not live changes nothing (counted in
 *     `unknown_frees`).
 *   - A realloc is a free and an allocation (the sources give both).
 *   - A block of 0 bytes is live (it is freed like any other) and counts
 *     no bytes.
 *   - Regions (pools, segments, arenas) are sorted, non-overlapping
 *     [base, end) ranges: a larger declaration at a known base grows it;
 *     an empty, overflowing (end >= 2^62) or overlapping one is rejected;
 *     removing a region leaves its blocks live; a block is inside a region
 *     when all its bytes are (mp_live_region_of).
 *   - The peak is the first moment at the maximum, or the last one for a
 *     caller that asks for ties to the last (mp_live_peak_due).
 *
 * Callers: the solver (src/solver/solver.c, regions.c: it keeps its own
 * data per block in the group and pend words, and its own per-moment
 * figures), the memory map's replay (src/solver/snapshot.c), the summary
 * replay (src/core/read/capsummary_replay.c) and the report's later passes
 * (by function and the call tree: src/report/livesets.h). The writer's
 * tally (src/core/write/tally*.h) is a specialised copy, without malloc,
 * for inside traced programs; tests/solver/test_live_equiv.c proves it
 * equals this engine on the same events.
 *
 * The per-event functions are static inline: they run for every event of
 * `memprof report` (callgrind counts, docs/architecture.md). */
#ifndef MEMPROF_LIVE_H
#define MEMPROF_LIVE_H

#include <stddef.h>
#include <stdint.h>

/* ---- the block table: address -> (size, group, pend) ----
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones, so a long run of alloc/free never degrades it), 24 bytes a
 * slot, load factor at most 1/2: 48 to 96 bytes per live block (short probe
 * runs: every event looks one up, every free shifts its run back). */

#define LM_EMPTY UINT32_MAX /* group value of an empty slot */

/* lm_entry_t.pend, as the solver uses it: whether the block belongs in the
 * fragmentation index. LM_OUT: no (outside every region, or size 0);
 * LM_IN: yes, and it is there; LM_LOG + j: yes, and its insertion may still
 * wait at position j of the solver's deferred-update log (defer.c). Other
 * callers keep what they like in group (not LM_EMPTY) and pend. */
#define LM_OUT 0u
#define LM_IN 1u
#define LM_LOG 2u

typedef struct lm_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t group; /* LM_EMPTY: free slot */
	uint32_t pend;
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

/* The entry for addr, or NULL. Borrowed until the next insert/remove. */
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
/* Double the slots (lm_find_or_add's slow path). Returns 0 or MP_ENOMEM. */
int lm_grow(lm_map_t *m);
/* The entry for addr (*found = 1), or a new one for it (*found = 0: addr
 * set, the caller fills size, group and pend, and must not leave it with
 * group LM_EMPTY); NULL when the map cannot grow. One probe instead of
 * lm_find then lm_insert. Borrowed until the next insert/remove. */
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

/* ---- the live set of one memory id ---- */

typedef struct mp_live {
	lm_map_t map;           /* the live blocks (map.count of them) */
	uint64_t bytes;         /* their footprints' sum */
	uint64_t duplicates;    /* allocations at a live address */
	uint64_t unknown_frees; /* frees of an address not live */
} mp_live_t;

void mp_live_init(mp_live_t *l);
void mp_live_destroy(mp_live_t *l);

/* A block's bytes: what the allocator reserved, else what was requested. */
static inline uint64_t mp_live_footprint(uint64_t requested, uint64_t allocated)
{
	return allocated ? allocated : requested;
}

/* An allocation at addr, first step: the live block it replaces (the
 * caller releases its own data of it, then mp_live_drop), or NULL. */
static inline lm_entry_t *mp_live_alloc_replaces(mp_live_t *l, uint64_t addr)
{
	lm_entry_t *e = lm_find(&l->map, addr);

	l->duplicates += e != NULL;
	return e;
}

/* An allocation, second step: the block at addr (not live). 0 or MP_ENOMEM. */
static inline int mp_live_add(mp_live_t *l, uint64_t addr, uint64_t fp, uint32_t group, uint32_t pend)
{
	int rc = lm_insert(&l->map, addr, fp, group, pend);

	if (rc == 0)
		l->bytes += fp;
	return rc;
}

/* An allocation at an address the caller expects to be new, in one probe:
 * the new block (*found = 0, filled), or the live one there (*found = 1,
 * unchanged: the caller then takes mp_live_alloc_replaces' way); NULL on
 * MP_ENOMEM. */
static inline lm_entry_t *mp_live_add_new(mp_live_t *l, uint64_t addr, uint64_t fp, uint32_t group, uint32_t pend,
					  int *found)
{
	lm_entry_t *e = lm_find_or_add(&l->map, addr, found);

	if (e && !*found) {
		e->size = fp;
		e->group = group;
		e->pend = pend;
		l->bytes += fp;
	}
	return e;
}

/* A free of addr: the live block it ends (the caller releases its own
 * data of it, then mp_live_drop), or NULL: not live, nothing changes. */
static inline lm_entry_t *mp_live_free_finds(mp_live_t *l, uint64_t addr)
{
	lm_entry_t *e = lm_find(&l->map, addr);

	l->unknown_frees += e == NULL;
	return e;
}

/* Block e (from the two functions above) is no longer live. */
static inline void mp_live_drop(mp_live_t *l, lm_entry_t *e)
{
	l->bytes -= e->size;
	lm_remove(&l->map, e);
}

/* Both steps, for callers without data of their own to release. */
static inline int mp_live_alloc(mp_live_t *l, uint64_t addr, uint64_t fp, uint32_t group, uint32_t pend)
{
	lm_entry_t *e = mp_live_alloc_replaces(l, addr);

	if (e)
		mp_live_drop(l, e);
	return mp_live_add(l, addr, fp, group, pend);
}

static inline void mp_live_free(mp_live_t *l, uint64_t addr)
{
	lm_entry_t *e = mp_live_free_finds(l, addr);

	if (e)
		mp_live_drop(l, e);
}

/* ---- the peak rule ---- */

typedef struct mp_live_peak {
	int has;           /* a moment was looked at */
	uint64_t bytes;    /* the most at any moment */
	uint64_t time_ns;  /* of the moment it was reached */
	uint64_t index;    /* its event index */
} mp_live_peak_t;

/* Whether `now` bytes at a moment make a new peak: the first moment, or
 * more than the peak, or as much when ties go to the last moment (the
 * solver's stats model, as TensorBoard's `>=`). */
static inline int mp_live_peak_due(int has, uint64_t peak, uint64_t now, int ties_last)
{
	return !has || now > peak || (ties_last && now == peak);
}

/* A moment: 1 when it is the new peak (recorded in p), else 0. */
static inline int mp_live_peak_at(mp_live_peak_t *p, uint64_t now, uint64_t time_ns, uint64_t index, int ties_last)
{
	if (!mp_live_peak_due(p->has, p->bytes, now, ties_last))
		return 0;
	p->has = 1;
	p->bytes = now;
	p->time_ns = time_ns;
	p->index = index;
	return 1;
}

/* ---- regions ---- */

typedef struct mp_live_region {
	uint64_t base, end; /* [base, end) */
} mp_live_region_t;

typedef struct mp_live_regions {
	mp_live_region_t *r; /* owned, sorted by base, not overlapping */
	size_t n, cap;
	uint64_t bytes;      /* their sizes' sum */
	uint64_t rejected;   /* declarations and removals refused */
} mp_live_regions_t;

/* The most regions a memory id keeps (a bound on a hostile stream: the
 * declarations past it are rejected). */
#define MP_LIVE_MAX_REGIONS (65536u * 16u)

/* What mp_live_region_add did. */
enum { MP_LIVE_REGION_REJECTED = 0, MP_LIVE_REGION_NEW = 1, MP_LIVE_REGION_GROWN = 2 };

void mp_live_regions_init(mp_live_regions_t *rs);
void mp_live_regions_destroy(mp_live_regions_t *rs);
/* A region [base, base + size) declared: MP_LIVE_REGION_NEW (at *pos),
 * MP_LIVE_REGION_GROWN (the region at *pos, whose end was *old_end),
 * MP_LIVE_REGION_REJECTED (counted), or MP_ENOMEM. */
int mp_live_region_add(mp_live_regions_t *rs, uint64_t base, uint64_t size, size_t *pos, uint64_t *old_end);
/* The region at base removed: 1 (its end in *end), or 0 when none starts
 * there (counted in rejected). */
int mp_live_region_remove(mp_live_regions_t *rs, uint64_t base, uint64_t *end);

/* The region holding all of [a, a + size), or -1 (inline: every
 * allocation of the solver asks). */
static inline long mp_live_region_of(const mp_live_regions_t *rs, uint64_t a, uint64_t size)
{
	size_t lo = 0, hi = rs->n;

	while (lo < hi) { /* first region with base > a */
		size_t mid = (lo + hi) / 2;
		if (rs->r[mid].base > a)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0)
		return -1;
	lo--;
	if (size > rs->r[lo].end - a || a >= rs->r[lo].end)
		return -1;
	return (long)lo;
}

#endif
