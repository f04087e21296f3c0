/* tally_regions.c - the live regions and the step the checkpoints hold
 * (format 2.4; tally.h), kept on the flusher in the reader's order of the
 * events, by the live-set engine's rules (src/core/live/live.c,
 * mp_live_region_add/remove), without malloc: the table is mapped pages,
 * sorted by memory id then base, and grows by mapping one twice larger. */
#include "arena.h"
#include "tally.h"

#include <string.h>

#define MAX_REGIONS (65536u * 16u) /* per memory id: the engine's MP_LIVE_MAX_REGIONS */

/* The first position not below (mem, base). */
static uint64_t lower(const mp_tally_t *t, uint64_t mem, uint64_t base)
{
	uint64_t lo = 0, hi = t->nreg;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const mp_tally_region_t *r = &t->reg[mid];
		if (r->mem < mem || (r->mem == mem && r->base < base))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int grow(mp_tally_t *t)
{
	uint64_t cap = t->capreg ? 2 * t->capreg : 256;
	mp_tally_region_t *r = mp_map_pages(cap * sizeof(*r));

	if (!r) {
		t->failed = 1;
		return -ENOMEM;
	}
	if (t->reg) {
		memcpy(r, t->reg, t->nreg * sizeof(*r));
		mp_unmap_pages(t->reg, t->capreg * sizeof(*r));
	}
	t->reg = r;
	t->capreg = cap;
	return 0;
}

/* (2.5) after a region event of m: the reserved peak as the solver samples
 * it (the first event at the most bytes of live regions; rejected ones as
 * the engine counts them), and the round's most for its ROUND */
static void reserved_moment(mp_tally_mem_t *m, uint64_t ns)
{
	uint64_t *v = m->v;

	if (m->reserved > m->rsv_max) { /* the round's most, first time (its ROUND) */
		m->rsv_max = m->reserved;
		m->rsv_max_ns = ns;
	}
	if ((v[MP_SUMF_REGION_FLAGS] & MP_SUMF_REGION_F_SEEN) &&
	    (!(v[MP_SUMF_REGION_FLAGS] & MP_SUMF_REGION_F_RESERVED_PEAK) || m->reserved > v[MP_SUMF_RESERVED_PEAK])) {
		v[MP_SUMF_REGION_FLAGS] |= MP_SUMF_REGION_F_RESERVED_PEAK;
		v[MP_SUMF_RESERVED_PEAK] = m->reserved;
		v[MP_SUMF_RESERVED_PEAK_NS] = ns;
	}
}

static int add(mp_tally_t *t, uint64_t mem, uint64_t base, uint64_t size)
{
	uint64_t end = base + size, pos, first, n;
	mp_tally_mem_t *m = &t->mem[mem];
	mp_tally_region_t *r;

	if (size == 0 || end < base || end >> 62)
		goto rejected; /* the engine rejects it */
	pos = lower(t, mem, base);
	r = t->reg;
	/* a larger declaration at a known base grows the region (heaps) */
	if (pos < t->nreg && r[pos].mem == mem && r[pos].base == base && end > r[pos].end) {
		if (pos + 1 < t->nreg && r[pos + 1].mem == mem && r[pos + 1].base < end)
			goto rejected;
		m->reserved += end - r[pos].end;
		r[pos].end = end;
		return 0;
	}
	if ((pos > 0 && r[pos - 1].mem == mem && r[pos - 1].end > base) ||
	    (pos < t->nreg && r[pos].mem == mem && r[pos].base < end))
		goto rejected; /* overlaps: counted and ignored */
	first = lower(t, mem, 0);
	n = lower(t, mem + 1, 0) - first;
	if (n >= MAX_REGIONS)
		goto rejected;
	if (t->nreg == t->capreg && grow(t))
		return -ENOMEM;
	r = t->reg;
	memmove(&r[pos + 1], &r[pos], (t->nreg - pos) * sizeof(*r));
	r[pos] = (mp_tally_region_t){mem, base, end};
	t->nreg++;
	m->reserved += size;
	return 0;
rejected:
	m->v[MP_SUMF_REJECTED]++;
	return 0;
}

int mp__tally_other(mp_tally_t *t, const mp_tally_ev_t *e)
{
	mp_tally_mem_t *m = &t->mem[e->mem];
	uint64_t pos;
	int rc = 0;

	switch (e->op) {
	case MP_TALLY_STEP: {
		int64_t step = (int64_t)(e->fp >> 1) ^ -(int64_t)(e->fp & 1);
		if (step < t->step) /* (the ROUND says so: a steps window cannot seek across it) */
			t->step_back[0] = t->step_back[1] = 1;
		t->step = step;
		return 0;
	}
	case MP_TALLY_MARK:
		t->last_mark = (uint32_t)e->fp;
		return 0;
	case MP_TALLY_REGION_ADD:
		m->v[MP_SUMF_REGION_EVENTS]++;
		m->v[MP_SUMF_REGION_FLAGS] |= MP_SUMF_REGION_F_SEEN;
		rc = add(t, e->mem, e->addr, e->fp);
		break;
	case MP_TALLY_REGION_REMOVE:
		m->v[MP_SUMF_REGION_EVENTS]++;
		pos = lower(t, e->mem, e->addr);
		if (pos < t->nreg && t->reg[pos].mem == e->mem && t->reg[pos].base == e->addr) {
			m->reserved -= t->reg[pos].end - t->reg[pos].base;
			memmove(&t->reg[pos], &t->reg[pos + 1], (t->nreg - pos - 1) * sizeof(*t->reg));
			t->nreg--;
		} else {
			m->v[MP_SUMF_REJECTED]++; /* the engine counts a removal of a region not live */
		}
		break;
	default:
		return 0;
	}
	reserved_moment(m, e->ns);
	return rc;
}
