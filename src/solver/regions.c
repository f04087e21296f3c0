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
	for (size_t i = 0; i < d->live.map.cap; i++) {
		lm_entry_t *e = &d->live.map.slots[i];
		if (e->group == LM_EMPTY || e->pend != LM_OUT || !e->size)
			continue;
		if (e->addr >= base && e->addr < end && e->size <= end - e->addr && (rc = index_block(d, e)) < 0)
			return rc;
	}
	return 0;
}

/* A REGION_ADD (the engine's rules, memprof/live.h): a new region's
 * START/END markers go into the index, a grown one's END marker moves (its
 * blocks stay in the index: a remove and an add would take every one of
 * them out and back in; heaps are declared so hundreds of times in a run),
 * and the blocks waiting for it join. */
int sv_region_add(sv_dev_t *d, uint64_t base, uint64_t size)
{
	uint64_t old_end = 0;
	size_t pos = 0;
	int rc = mp_live_region_add(&d->reg, base, size, &pos, &old_end);

	d->pub.rejected_regions = d->reg.rejected;
	if (rc == MP_LIVE_REGION_NEW)
		rc = fx_insert(&d->fx, base, base, FX_START, NULL);
	else if (rc == MP_LIVE_REGION_GROWN)
		rc = fx_remove(&d->fx, old_end, FX_END, NULL);
	else
		return rc; /* rejected (0) or MP_ENOMEM */
	if (rc < 0 || (rc = fx_insert(&d->fx, d->reg.r[pos].end, d->reg.r[pos].end, FX_END, NULL)) < 0)
		return rc;
	return index_waiting(d, d->reg.r[pos].base, d->reg.r[pos].end);
}

int sv_region_remove(sv_dev_t *d, uint64_t base)
{
	uint64_t end, k, e;
	int kind, rc;

	rc = mp_live_region_remove(&d->reg, base, &end);
	d->pub.rejected_regions = d->reg.rejected;
	if (!rc)
		return 0;
	/* Its blocks stay live but leave the index. */
	while (fx_next(&d->fx, base, FX_START, &k, &e, &kind) && kind == FX_BLOCK && k < end) {
		lm_entry_t *le = lm_find(&d->live.map, k);
		if ((rc = fx_remove(&d->fx, k, FX_BLOCK, NULL)) < 0)
			return rc;
		if (le) {
			le->pend = LM_OUT;
			d->unindexed++;
		}
	}
	if ((rc = fx_remove(&d->fx, base, FX_START, NULL)) < 0 || (rc = fx_remove(&d->fx, end, FX_END, NULL)) < 0)
		return rc;
	return 0;
}
