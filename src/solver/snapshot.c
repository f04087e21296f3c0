/* snapshot.c - replay a source and hand over the regions and live blocks of
 * memory ids at chosen events (memprof/snapshot.h).
 *
 * The live set and the regions are the live-set engine's (memprof/live.h),
 * the solver's rules, with the op in the group field and the region type
 * in pend, without the fragmentation index: the map's picture is sorted
 * once per target instead. */
#include <memprof/checkpoint.h>
#include <memprof/live.h>
#include <memprof/snapshot.h>
#include <memprof/vec.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct snap_mem {
	uint32_t id;
	mp_live_t live;
	mp_live_regions_t reg;
} snap_mem_t;

typedef struct order {
	size_t target;
	uint64_t index;
} order_t;

static int by_index(const void *a, const void *b)
{
	const order_t *x = a, *y = b;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->target < y->target ? -1 : x->target > y->target;
}

static int by_addr(const void *a, const void *b)
{
	const mp_snapshot_block_t *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int apply(snap_mem_t *m, const mp_event_t *ev)
{
	size_t pos;
	uint64_t end;
	int rc;

	switch (ev->kind) {
	case MP_EV_ALLOC:
		/* the op id in `group` (LM_EMPTY marks a free slot, and no
		 * source has that many strings), the region type in pend */
		return mp_live_alloc(&m->live, ev->address, mp_live_footprint(ev->requested_bytes, ev->allocated_bytes),
				     ev->op == LM_EMPTY ? 0 : ev->op, ev->region);
	case MP_EV_FREE:
		mp_live_free(&m->live, ev->address);
		return 0;
	case MP_EV_REGION_ADD:
		rc = mp_live_region_add(&m->reg, ev->address, ev->requested_bytes, &pos, &end);
		return rc < 0 ? rc : 0;
	case MP_EV_REGION_REMOVE:
		mp_live_region_remove(&m->reg, ev->address, &end);
		return 0;
	default:
		return 0;
	}
}

static int take(snap_mem_t *m, const mp_event_t *ev, size_t target, mp_snapshot_fn fn, void *ctx)
{
	mp_snapshot_block_t *b = malloc((m->live.map.count ? m->live.map.count : 1) * sizeof(*b));
	mp_snapshot_region_t *r = malloc((m->reg.n ? m->reg.n : 1) * sizeof(*r));
	mp_snapshot_t snap;
	size_t k = 0;
	int rc;

	if (!b || !r) {
		free(b);
		free(r);
		return MP_ENOMEM;
	}
	for (size_t i = 0; i < m->reg.n; i++) {
		r[i].base = m->reg.r[i].base;
		r[i].end = m->reg.r[i].end;
	}
	for (size_t i = 0; i < m->live.map.cap; i++) {
		const lm_entry_t *e = &m->live.map.slots[i];
		if (e->group == LM_EMPTY || !e->size)
			continue;
		b[k].addr = e->addr;
		b[k].size = e->size;
		b[k].op = e->group;
		b[k].region = (uint8_t)e->pend;
		k++;
	}
	qsort(b, k, sizeof(*b), by_addr);
	snap.memory = m->id;
	snap.event_index = ev->index;
	snap.time_ns = ev->time_ns;
	snap.step = ev->step;
	snap.regions = r;
	snap.nregions = m->reg.n;
	snap.blocks = b;
	snap.nblocks = k;
	rc = fn(ctx, target, &snap);
	free(b);
	free(r);
	return rc;
}

enum { BATCH = 4096 };

/* m's blocks and regions at checkpoint ck, as the replay before it left
 * them: a block's footprint, op and region type; the regions by base. */
static int seed(snap_mem_t *m, const mp_checkpoint_t *ck)
{
	for (size_t i = 0; i < ck->nmemories; i++) {
		const mp_checkpoint_memory_t *cm = &ck->memories[i];
		for (size_t k = 0; cm->id == m->id && k < cm->nblocks; k++) {
			const mp_checkpoint_block_t *b = &cm->blocks[k];
			int rc = mp_live_alloc(&m->live, b->address, b->bytes, b->op == LM_EMPTY ? 0 : b->op, b->region);
			if (rc < 0)
				return rc;
		}
	}
	for (size_t i = 0; i < ck->nregions; i++) {
		size_t pos;
		uint64_t end;
		int rc = ck->regions[i].memory != m->id ? 0
			 : mp_live_region_add(&m->reg, ck->regions[i].base, ck->regions[i].end - ck->regions[i].base, &pos, &end);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int mp_snapshot_run(mp_source_t *src, const mp_snapshot_target_t *targets, size_t n, mp_snapshot_fn fn, void *ctx,
		    mp_diag_t *diag)
{
	return mp_snapshot_run_from(src, NULL, targets, n, fn, ctx, diag);
}

int mp_snapshot_run_from(mp_source_t *src, const mp_checkpoint_t *from, const mp_snapshot_target_t *targets, size_t n,
			 mp_snapshot_fn fn, void *ctx, mp_diag_t *diag)
{
	order_t *ord = calloc(n ? n : 1, sizeof(*ord));
	snap_mem_t *mem = calloc(n ? n : 1, sizeof(*mem));
	mp_event_t *ev = malloc(BATCH * sizeof(*ev));
	size_t nmem = 0, next = 0;
	int rc = 0, more = 1;

	if (!ord || !mem || !ev) {
		rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t j;
		ord[i].target = i;
		ord[i].index = targets[i].event_index;
		for (j = 0; j < nmem && mem[j].id != targets[i].memory; j++)
			;
		if (j == nmem) {
			mem[nmem].id = targets[i].memory;
			mp_live_init(&mem[nmem].live);
			mp_live_regions_init(&mem[nmem].reg);
			nmem++;
		}
	}
	for (size_t j = 0; from && j < nmem; j++)
		if ((rc = seed(&mem[j], from)) < 0) {
			mp_diag_set(diag, rc, -1, -1, "out of memory");
			goto out;
		}
	qsort(ord, n, sizeof(*ord), by_index);
	/* a sought source is read from its checkpoint as it stands: its
	 * rewind would pass over every block before it again, inflated */
	if (n && !from && (rc = mp_source_rewind(src, diag)) < 0)
		goto out;
	while (next < n && more > 0) {
		size_t got = 0;
		more = mp_source_next_batch(src, ev, BATCH, &got, diag);
		if (more < 0) {
			rc = more;
			goto out;
		}
		for (size_t i = 0; i < got && next < n; i++) {
			const mp_event_t *e = &ev[i];
			snap_mem_t *m = NULL;
			for (size_t j = 0; j < nmem; j++)
				if (mem[j].id == e->memory)
					m = &mem[j];
			if (m && (rc = apply(m, e)) < 0) {
				mp_diag_set(diag, rc, -1, (int64_t)e->index, "out of memory at event %" PRIu64, e->index);
				goto out;
			}
			for (; next < n && ord[next].index == e->index; next++) {
				const mp_snapshot_target_t *t = &targets[ord[next].target];
				snap_mem_t *tm = NULL;
				for (size_t j = 0; j < nmem; j++)
					if (mem[j].id == t->memory)
						tm = &mem[j];
				if ((rc = take(tm, e, ord[next].target, fn, ctx)) < 0)
					goto out;
			}
			if (next < n && ord[next].index < e->index)
				break; /* a target between events: not in the stream */
		}
		if (next < n && ord[next].index < (got ? ev[got - 1].index : 0))
			break;
	}
	if (next < n)
		rc = mp_diag_set(diag, MP_ENOTFOUND, -1, (int64_t)ord[next].index,
				 "event %" PRIu64 " of memory id %" PRIu32 " is not in the stream", ord[next].index,
				 targets[ord[next].target].memory);
out:
	for (size_t j = 0; j < nmem; j++) {
		mp_live_destroy(&mem[j].live);
		mp_live_regions_destroy(&mem[j].reg);
	}
	free(mem);
	free(ord);
	free(ev);
	return rc;
}
