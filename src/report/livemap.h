/* livemap.h - live blocks by (memory id, address), for the passes of the
 * report that replay a source after the solver (functions.c, calltree.c):
 * linear probing, half full at most, backward-shift deletion. Each block
 * keeps its allocated bytes and a reference of its owner's (row + 1; 0 is
 * an empty slot). Internal to memprof_report. */
#ifndef MP_LIVEMAP_H
#define MP_LIVEMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline uint64_t rp_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

typedef struct live_slot {
	uint64_t addr;
	uint32_t memory, row; /* row + 1; 0 = empty */
	uint64_t bytes;
	uint64_t requested; /* the block's requested bytes (functions.c) */
} live_slot_t;

typedef struct live_map {
	live_slot_t *s; /* owned: free(s) */
	size_t mask, n;
} live_map_t;

static inline size_t live_hash(const live_map_t *m, uint32_t memory, uint64_t addr)
{
	return (size_t)(rp_mix(addr ^ ((uint64_t)memory << 56)) & m->mask);
}

/* Double the table (1024 slots the first time). 0, or -1 when out of memory. */
static inline int live_grow(live_map_t *m)
{
	size_t cap = m->mask ? (m->mask + 1) * 2 : 1024, j;
	live_map_t nm = {(live_slot_t *)calloc(cap, sizeof(live_slot_t)), cap - 1, 0};

	if (!nm.s)
		return -1;
	for (j = 0; m->s && j <= m->mask; j++) {
		size_t k;
		if (!m->s[j].row)
			continue;
		for (k = live_hash(&nm, m->s[j].memory, m->s[j].addr); nm.s[k].row; k = (k + 1) & nm.mask)
			;
		nm.s[k] = m->s[j];
		nm.n++;
	}
	free(m->s);
	*m = nm;
	return 0;
}

static inline live_slot_t *live_find(live_map_t *m, uint32_t memory, uint64_t addr)
{
	size_t i;

	if (!m->s)
		return NULL;
	for (i = live_hash(m, memory, addr); m->s[i].row; i = (i + 1) & m->mask)
		if (m->s[i].addr == addr && m->s[i].memory == memory)
			return &m->s[i];
	return NULL;
}

/* A new block (not live: live_find first); the map grows first when it
 * would be more than half full. Its slot, or NULL when out of memory. */
static inline live_slot_t *live_insert(live_map_t *m, uint32_t memory, uint64_t addr)
{
	size_t k;

	if ((m->n + 1) * 2 > m->mask + 1 && live_grow(m))
		return NULL;
	for (k = live_hash(m, memory, addr); m->s[k].row; k = (k + 1) & m->mask)
		;
	m->s[k].addr = addr;
	m->s[k].memory = memory;
	m->n++;
	return &m->s[k];
}

static inline void live_remove(live_map_t *m, live_slot_t *slot)
{
	size_t i = (size_t)(slot - m->s), j = i;

	m->s[i].row = 0;
	m->n--;
	for (;;) {
		size_t home;
		j = (j + 1) & m->mask;
		if (!m->s[j].row)
			return;
		home = live_hash(m, m->s[j].memory, m->s[j].addr);
		/* move j back to i when i lies cyclically in [home, j) */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->s[i] = m->s[j];
			m->s[j].row = 0;
			i = j;
		}
	}
}

#endif
