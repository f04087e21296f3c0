/* regions.c - the regions of a memory id (pools, segments, arenas): a sorted
 * array of non-overlapping [base, end) ranges mirrored as START/END markers
 * in the fragmentation index, and the blocks that enter or leave the index
 * when a region is declared after them or removed before them. The solver
 * applies its deferred index updates (defer.c) before each of these. */
#include "solver_impl.h"

#include <stdlib.h>
#include <string.h>

static int index_block(sv_dev_t *d, lm_entry_t *e)
{
	int rc = fx_insert(&d->fx, e->addr, e->addr + e->size, FX_BLOCK, NULL);

	if (rc == 0) {
		e->pend = LM_IN;
		d->unindexed--;
	}
	return rc;
}

/* Blocks allocated before their region was declared (or grew over them)
 * join the index. A scan of the live set, but only while unindexed blocks
 * exist. */
static int index_waiting(sv_dev_t *d, uint64_t base, uint64_t end)
{
	int rc;

	if (!d->unindexed)
		return 0;
	for (size_t i = 0; i < d->live.cap; i++) {
		lm_entry_t *e = &d->live.slots[i];
		if (e->group == LM_EMPTY || e->pend != LM_OUT || !e->size)
			continue;
		if (e->addr >= base && e->addr < end && e->size <= end - e->addr && (rc = index_block(d, e)) < 0)
			return rc;
	}
	return 0;
}

/* A REGION_ADD at the base of a declared region, larger, grows it: heaps
 * (glibc's brk heap, thread arenas) are declared so as they grow, hundreds
 * of times in a run. Only the region's END marker moves; its blocks stay
 * in the index (a remove and an add would take every one of them out and
 * back in). */
static int region_grow(sv_dev_t *d, size_t pos, uint64_t end)
{
	uint64_t old = d->rend[pos];
	int rc;

	if (pos + 1 < d->rn && d->rbase[pos + 1] < end) {
		d->pub.rejected_regions++;
		return 0;
	}
	if ((rc = fx_remove(&d->fx, old, FX_END, NULL)) < 0 || (rc = fx_insert(&d->fx, end, end, FX_END, NULL)) < 0)
		return rc;
	d->rend[pos] = end;
	d->region_bytes += end - old;
	return index_waiting(d, d->rbase[pos], end);
}

int sv_region_add(sv_dev_t *d, uint64_t base, uint64_t size)
{
	uint64_t end = base + size;
	size_t pos;
	int rc;

	if (size == 0 || end < base || end >> 62) { /* the index keys addresses below 2^62 */
		d->pub.rejected_regions++;
		return 0;
	}
	for (pos = 0; pos < d->rn && d->rbase[pos] < base; pos++)
		;
	if (pos < d->rn && d->rbase[pos] == base && end > d->rend[pos])
		return region_grow(d, pos, end);
	if ((pos > 0 && d->rend[pos - 1] > base) || (pos < d->rn && d->rbase[pos] < end)) {
		d->pub.rejected_regions++;
		return 0;
	}
	if (d->rn >= MP_SOLVER_MAX_MEMORY * 16u) { /* hostile stream: refuse, do not grow forever */
		d->pub.rejected_regions++;
		return 0;
	}
	if (MP_VEC_RESERVE(d->rbase, d->rcap, d->rn + 1) < 0 || MP_VEC_RESERVE(d->rend, d->rcap_end, d->rn + 1) < 0)
		return MP_ENOMEM;
	memmove(&d->rbase[pos + 1], &d->rbase[pos], (d->rn - pos) * sizeof(*d->rbase));
	memmove(&d->rend[pos + 1], &d->rend[pos], (d->rn - pos) * sizeof(*d->rend));
	d->rbase[pos] = base;
	d->rend[pos] = end;
	d->rn++;
	d->region_bytes += size;
	if ((rc = fx_insert(&d->fx, base, base, FX_START, NULL)) < 0 || (rc = fx_insert(&d->fx, end, end, FX_END, NULL)) < 0)
		return rc;
	return index_waiting(d, base, end);
}

int sv_region_remove(sv_dev_t *d, uint64_t base)
{
	size_t pos;
	uint64_t end, k, e;
	int kind, rc;

	for (pos = 0; pos < d->rn && d->rbase[pos] != base; pos++)
		;
	if (pos == d->rn) {
		d->pub.rejected_regions++;
		return 0;
	}
	end = d->rend[pos];
	/* Its blocks stay live but leave the index. */
	while (fx_next(&d->fx, base, FX_START, &k, &e, &kind) && kind == FX_BLOCK && k < end) {
		lm_entry_t *le = lm_find(&d->live, k);
		if ((rc = fx_remove(&d->fx, k, FX_BLOCK, NULL)) < 0)
			return rc;
		if (le) {
			le->pend = LM_OUT;
			d->unindexed++;
		}
	}
	if ((rc = fx_remove(&d->fx, base, FX_START, NULL)) < 0 || (rc = fx_remove(&d->fx, end, FX_END, NULL)) < 0)
		return rc;
	memmove(&d->rbase[pos], &d->rbase[pos + 1], (d->rn - pos - 1) * sizeof(*d->rbase));
	memmove(&d->rend[pos], &d->rend[pos + 1], (d->rn - pos - 1) * sizeof(*d->rend));
	d->rn--;
	d->region_bytes -= end - base;
	return 0;
}
