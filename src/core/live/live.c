/* live.c - the live-set engine's block table, live sets and regions
 * (memprof/live.h). */
#include <memprof/live.h>

#include <memprof/error.h>

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

/* ---- live sets ---- */

void mp_live_init(mp_live_t *l)
{
	memset(l, 0, sizeof(*l));
}

void mp_live_destroy(mp_live_t *l)
{
	lm_destroy(&l->map);
	memset(l, 0, sizeof(*l));
}

/* ---- regions ---- */

void mp_live_regions_init(mp_live_regions_t *rs)
{
	memset(rs, 0, sizeof(*rs));
}

void mp_live_regions_destroy(mp_live_regions_t *rs)
{
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}

int mp_live_region_add(mp_live_regions_t *rs, uint64_t base, uint64_t size, size_t *pos_out, uint64_t *old_end)
{
	uint64_t end = base + size;
	size_t pos;

	if (size == 0 || end < base || end >> 62) /* the solver's index keys addresses below 2^62 */
		goto rejected;
	for (pos = 0; pos < rs->n && rs->r[pos].base < base; pos++)
		;
	/* heaps (glibc's brk heap, thread arenas) are declared so as they
	 * grow: a larger declaration at a known base grows it */
	if (pos < rs->n && rs->r[pos].base == base && end > rs->r[pos].end) {
		if (pos + 1 < rs->n && rs->r[pos + 1].base < end)
			goto rejected;
		*pos_out = pos;
		*old_end = rs->r[pos].end;
		rs->bytes += end - rs->r[pos].end;
		rs->r[pos].end = end;
		return MP_LIVE_REGION_GROWN;
	}
	if ((pos > 0 && rs->r[pos - 1].end > base) || (pos < rs->n && rs->r[pos].base < end))
		goto rejected;
	if (rs->n == rs->cap) {
		size_t nc = rs->cap ? rs->cap * 2 : 8;
		mp_live_region_t *n;
		if (nc > MP_LIVE_MAX_REGIONS) /* hostile stream: refuse, do not grow forever */
			goto rejected;
		if (!(n = realloc(rs->r, nc * sizeof(*n))))
			return MP_ENOMEM;
		rs->r = n;
		rs->cap = nc;
	}
	memmove(&rs->r[pos + 1], &rs->r[pos], (rs->n - pos) * sizeof(*rs->r));
	rs->r[pos].base = base;
	rs->r[pos].end = end;
	rs->n++;
	rs->bytes += size;
	*pos_out = pos;
	return MP_LIVE_REGION_NEW;
rejected:
	rs->rejected++;
	return MP_LIVE_REGION_REJECTED;
}

int mp_live_region_remove(mp_live_regions_t *rs, uint64_t base, uint64_t *end)
{
	for (size_t pos = 0; pos < rs->n; pos++) {
		if (rs->r[pos].base == base) {
			*end = rs->r[pos].end;
			rs->bytes -= *end - base;
			memmove(&rs->r[pos], &rs->r[pos + 1], (rs->n - pos - 1) * sizeof(*rs->r));
			rs->n--;
			return 1;
		}
	}
	rs->rejected++;
	return 0;
}
