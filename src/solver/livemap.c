/* livemap.c - live-set hash map and group table (see livemap.h). */
#include "livemap.h"

#include <memprof/error.h>
#include <memprof/vec.h>

#include <stdlib.h>
#include <string.h>

void lm_init(lm_map_t *m)
{
	memset(m, 0, sizeof(*m));
}

void lm_destroy(lm_map_t *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

void lm_clear(lm_map_t *m)
{
	for (size_t i = 0; i < m->cap; i++)
		m->slots[i].group = LM_EMPTY;
	m->count = 0;
}

static void lm_put(lm_map_t *m, const lm_entry_t *src)
{
	size_t i, mask = m->cap - 1;

	for (i = lm_hash(m, src->addr); m->slots[i].group != LM_EMPTY; i = (i + 1) & mask)
		;
	m->slots[i] = *src;
}

int lm_grow(lm_map_t *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64, i;
	lm_entry_t *old = m->slots, *ns;
	size_t ocap = m->cap;
	unsigned sh = 64;

	if (ncap > SIZE_MAX / sizeof(*ns))
		return MP_ENOMEM;
	ns = malloc(ncap * sizeof(*ns));
	if (!ns)
		return MP_ENOMEM;
	for (i = 0; i < ncap; i++)
		ns[i].group = LM_EMPTY;
	for (size_t c = ncap; c > 1; c >>= 1)
		sh--;
	m->slots = ns;
	m->cap = ncap;
	m->shift = sh;
	for (i = 0; i < ocap; i++)
		if (old[i].group != LM_EMPTY)
			lm_put(m, &old[i]);
	free(old);
	return 0;
}

int lm_insert(lm_map_t *m, uint64_t addr, uint64_t size, uint32_t group, uint32_t pend)
{
	lm_entry_t e = {addr, size, group, pend};

	/* Grow at half full: probe runs stay short, which lookups and the
	 * backward shift of every removal pay for; a sparser map would be a
	 * larger cache footprint. */
	if ((m->count + 1) * 2 > m->cap) {
		int rc = lm_grow(m);
		if (rc < 0)
			return rc;
	}
	lm_put(m, &e);
	m->count++;
	return 0;
}

void lm_remove(lm_map_t *m, lm_entry_t *e)
{
	size_t mask = m->cap - 1, i = (size_t)(e - m->slots), j = i;

	/* Backward-shift: pull a later entry of the probe run into the hole
	 * when the hole lies cyclically in [its home, its slot), i.e. when it
	 * is at least as far from its home as from the hole. */
	for (;;) {
		size_t home;
		j = (j + 1) & mask;
		if (m->slots[j].group == LM_EMPTY)
			break;
		home = lm_hash(m, m->slots[j].addr);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].group = LM_EMPTY;
	m->count--;
}

/* ---- groups ---- */

void grp_init(grp_table_t *t)
{
	memset(t, 0, sizeof(*t));
}

void grp_destroy(grp_table_t *t)
{
	free(t->g);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static int grp_rehash(grp_table_t *t, size_t ncap)
{
	uint32_t *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return MP_ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = (size_t)grp_hash(&t->g[i].key) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = (uint32_t)(i + 1);
	}
	free(t->slot);
	t->slot = ns;
	t->scap = ncap;
	return 0;
}

uint32_t grp_add(grp_table_t *t, const grp_key_t *key)
{
	size_t j;

	if (t->n >= UINT32_MAX - 2)
		return LM_EMPTY;
	if ((t->n + 1) * 2 > t->scap && grp_rehash(t, t->scap ? t->scap * 2 : 64) < 0)
		return LM_EMPTY;
	if (MP_VEC_RESERVE(t->g, t->gcap, t->n + 1) < 0)
		return LM_EMPTY;
	t->g[t->n].key = *key;
	t->g[t->n].live = 0;
	t->g[t->n].at_peak = 0;
	t->g[t->n].dirty = 0;
	for (j = (size_t)grp_hash(key) & (t->scap - 1); t->slot[j]; j = (j + 1) & (t->scap - 1))
		;
	t->slot[j] = (uint32_t)(t->n + 1);
	return (uint32_t)t->n++;
}
