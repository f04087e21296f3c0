/* snapshot.c - replay a source and hand over the regions and live blocks of
 * memory ids at chosen events (memprof/snapshot.h).
 *
 * The live set is the solver's own map (livemap.h), with the op in the
 * group field and the region type in pend; regions follow sv_region_add /
 * sv_region_remove's rules exactly, without the fragmentation index: the
 * map's picture is sorted once per target instead. */
#include <memprof/snapshot.h>
#include <memprof/vec.h>

#include "livemap.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct snap_mem {
	uint32_t id;
	lm_map_t live;
	mp_snapshot_region_t *reg;
	size_t nreg, capreg;
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

/* sv_region_add's rules: a larger declaration at a known base grows it;
 * empty, overflowing (the index keys addresses below 2^62) or overlapping
 * ones are ignored. */
static int region_add(snap_mem_t *m, uint64_t base, uint64_t size)
{
	uint64_t end = base + size;
	size_t pos;

	if (size == 0 || end < base || end >> 62)
		return 0;
	for (pos = 0; pos < m->nreg && m->reg[pos].base < base; pos++)
		;
	if (pos < m->nreg && m->reg[pos].base == base && end > m->reg[pos].end) {
		if (pos + 1 < m->nreg && m->reg[pos + 1].base < end)
			return 0;
		m->reg[pos].end = end;
		return 0;
	}
	if ((pos > 0 && m->reg[pos - 1].end > base) || (pos < m->nreg && m->reg[pos].base < end))
		return 0;
	if (m->nreg >= 65536u * 16u) /* the solver's bound on a hostile stream */
		return 0;
	if (MP_VEC_RESERVE(m->reg, m->capreg, m->nreg + 1) < 0)
		return MP_ENOMEM;
	memmove(&m->reg[pos + 1], &m->reg[pos], (m->nreg - pos) * sizeof(*m->reg));
	m->reg[pos].base = base;
	m->reg[pos].end = end;
	m->nreg++;
	return 0;
}

static void region_remove(snap_mem_t *m, uint64_t base)
{
	for (size_t pos = 0; pos < m->nreg; pos++) {
		if (m->reg[pos].base == base) {
			memmove(&m->reg[pos], &m->reg[pos + 1], (m->nreg - pos - 1) * sizeof(*m->reg));
			m->nreg--;
			return;
		}
	}
}

static int apply(snap_mem_t *m, const mp_event_t *ev)
{
	lm_entry_t *e;

	switch (ev->kind) {
	case MP_EV_ALLOC: {
		uint64_t fp = ev->allocated_bytes ? ev->allocated_bytes : ev->requested_bytes;
		int found;
		if (!(e = lm_find_or_add(&m->live, ev->address, &found)))
			return MP_ENOMEM;
		e->size = fp;
		/* the op id in `group`: LM_EMPTY marks a free slot, and no source
		 * has that many strings */
		e->group = ev->op == LM_EMPTY ? 0 : ev->op;
		e->pend = ev->region;
		return 0;
	}
	case MP_EV_FREE:
		if ((e = lm_find(&m->live, ev->address)))
			lm_remove(&m->live, e);
		return 0;
	case MP_EV_REGION_ADD:
		return region_add(m, ev->address, ev->requested_bytes);
	case MP_EV_REGION_REMOVE:
		region_remove(m, ev->address);
		return 0;
	default:
		return 0;
	}
}

static int take(snap_mem_t *m, const mp_event_t *ev, size_t target, mp_snapshot_fn fn, void *ctx)
{
	mp_snapshot_block_t *b = malloc((m->live.count ? m->live.count : 1) * sizeof(*b));
	mp_snapshot_t snap;
	size_t k = 0;
	int rc;

	if (!b)
		return MP_ENOMEM;
	for (size_t i = 0; i < m->live.cap; i++) {
		const lm_entry_t *e = &m->live.slots[i];
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
	snap.regions = m->reg;
	snap.nregions = m->nreg;
	snap.blocks = b;
	snap.nblocks = k;
	rc = fn(ctx, target, &snap);
	free(b);
	return rc;
}

enum { BATCH = 4096 };

int mp_snapshot_run(mp_source_t *src, const mp_snapshot_target_t *targets, size_t n, mp_snapshot_fn fn, void *ctx,
		    mp_diag_t *diag)
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
			lm_init(&mem[nmem].live);
			nmem++;
		}
	}
	qsort(ord, n, sizeof(*ord), by_index);
	if (n && (rc = mp_source_rewind(src, diag)) < 0)
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
		lm_destroy(&mem[j].live);
		free(mem[j].reg);
	}
	free(mem);
	free(ord);
	free(ev);
	return rc;
}
