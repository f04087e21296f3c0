/* seed.c - a solver started from a known state (memprof/solver.h,
 * "Seeding"): the live set and regions of a checkpoint, and the figures of
 * the events before it, so that a seek feeds only the events after it.
 * Each block goes through the same path as an allocation event
 * (sv_apply_alloc: live set, group, fragmentation index), without being
 * counted or sampled: the counters are the seed's. */
#include "solver_impl.h"

#include <inttypes.h>
#include <string.h>

static int seed_regions(sv_dev_t *d, const mp_solver_seed_memory_t *m, mp_diag_t *diag)
{
	for (size_t i = 0; i < m->nregions; i++) {
		const mp_solver_seed_region_t *r = &m->regions[i];
		uint64_t before = d->reg.rejected;
		int rc = sv_region_add(d, r->base, r->size);

		if (rc < 0)
			return mp_diag_set(diag, rc, -1, -1, "seed: out of memory");
		if (d->reg.rejected != before)
			return mp_diag_set(diag, MP_EUSAGE, -1, -1,
					   "seed: memory id %" PRIu32 ": region at 0x%" PRIx64 " of %" PRIu64
					   " bytes is empty or overlaps another",
					   m->id, r->base, r->size);
	}
	return 0;
}

static int seed_blocks(sv_dev_t *d, const mp_solver_seed_memory_t *m, uint64_t index, mp_diag_t *diag)
{
	for (size_t i = 0; i < m->nblocks; i++) {
		const mp_solver_seed_block_t *b = &m->blocks[i];
		mp_event_t ev = {0};
		int rc;

		ev.kind = MP_EV_ALLOC;
		ev.memory = m->id;
		ev.index = index;
		ev.address = b->address;
		ev.requested_bytes = b->requested_bytes;
		ev.allocated_bytes = b->allocated_bytes;
		ev.op = b->op;
		ev.dtype = b->dtype;
		ev.shape = b->shape;
		ev.metadata = b->metadata;
		ev.region = b->region;
		if (lm_find(&d->live.map, b->address))
			return mp_diag_set(diag, MP_EUSAGE, -1, -1,
					   "seed: memory id %" PRIu32 ": two blocks at 0x%" PRIx64, m->id, b->address);
		if ((rc = sv_apply_alloc(d, &ev)) < 0)
			return mp_diag_set(diag, rc, -1, -1, "seed: out of memory");
	}
	return 0;
}

/* The figures of the events before the seed. */
static void seed_figures(sv_dev_t *d, const mp_solver_seed_memory_t *m)
{
	mp_solver_device_t *p = &d->pub;

	p->events = m->events;
	p->allocations = m->allocations;
	p->deallocations = m->deallocations;
	p->failed_allocations = m->failed_allocations;
	p->oom_total = m->failed_allocations;
	p->dropped_events = m->dropped_events;
	d->live.unknown_frees = m->unknown_frees;
	d->live.duplicates = m->duplicate_allocations;
	d->reg.rejected = m->rejected_regions;
	p->rejected_regions = m->rejected_regions;
	p->lifetime_peak_bytes = m->lifetime_peak_bytes;
	d->regions_seen = m->regions_seen || m->nregions;
	if (m->has_peak) {
		p->has_peak = 1;
		p->peak_bytes = m->peak_bytes;
		d->peak_seeded = 1;
	}
	p->has_reserved_peak = m->has_reserved_peak;
	p->reserved_peak_bytes = m->reserved_peak_bytes;
	p->reserved_peak_time_ns = m->reserved_peak_time_ns;
	p->reserved_peak_event = m->reserved_peak_event;
}

int mp_solver_seed(mp_solver_t *s, const mp_solver_seed_t *seed, mp_diag_t *diag)
{
	if (s->pass != 1 || s->ordinal || s->events || s->seeded)
		return mp_diag_set(diag, MP_EUSAGE, -1, -1, "seed: the solver has already started");
	s->seeded = 1;
	for (size_t i = 0; i < seed->nmemories; i++) {
		const mp_solver_seed_memory_t *m = &seed->memories[i];
		int rc;
		sv_dev_t *d = sv_get_dev(s, m->id, &rc);

		if (!d)
			return mp_diag_set(diag, rc, -1, -1, "seed: memory id %" PRIu32 " %s", m->id,
					   rc == MP_ELIMIT ? "is out of range" : ": out of memory");
		if ((rc = seed_regions(d, m, diag)) < 0 || (rc = seed_blocks(d, m, seed->events, diag)) < 0)
			return rc;
		/* (the groups the blocks made stay dirty: the first peak after the
		 * seed takes their counts) */
		seed_figures(d, m);
	}
	s->events = s->ordinal = seed->events;
	s->dropped_unattributed = seed->dropped_unattributed;
	s->last_mark = seed->last_mark;
	s->nphase = seed->nphases;
	for (uint32_t i = 0; i < seed->nphases && i < SV_MAX_PHASES; i++)
		s->phase[i] = seed->phases[i];
	s->phase_marks = seed->phase_marks;
	return 0;
}

int mp_solver_seed_totals(mp_solver_t *s, const mp_solver_seed_t *totals)
{
	if (s->pass != 2)
		return MP_EUSAGE;
	for (size_t i = 0; i < totals->nmemories; i++) {
		const mp_solver_seed_memory_t *m = &totals->memories[i];
		mp_solver_device_t *p;
		if (m->id >= s->ndev || !s->dev[m->id])
			return MP_ENOTFOUND;
		p = &s->dev[m->id]->pub;
		p->events = m->events;
		p->allocations = m->allocations;
		p->deallocations = m->deallocations;
		p->failed_allocations = p->oom_total = m->failed_allocations;
		p->dropped_events = m->dropped_events;
		p->unknown_frees = m->unknown_frees;
		p->duplicate_allocations = m->duplicate_allocations;
		p->rejected_regions = m->rejected_regions;
		p->lifetime_peak_bytes = m->lifetime_peak_bytes;
	}
	s->events = s->ordinal = totals->events;
	s->dropped_unattributed = totals->dropped_unattributed;
	return 0;
}

int mp_solver_seed_missed(const mp_solver_t *s)
{
	for (uint32_t i = 0; i < s->ndev; i++)
		if (s->dev[i] && s->dev[i]->peak_seeded)
			return 1;
	return 0;
}

int mp_solver_swap_memory(mp_solver_t *dst, mp_solver_t *src, uint32_t id)
{
	sv_dev_t *d;
	int rc;

	if (dst->pass != 2 || src->pass != 2)
		return MP_EUSAGE;
	if (id >= dst->ndev || id >= src->ndev || !dst->dev[id] || !src->dev[id])
		return MP_ENOTFOUND;
	d = dst->dev[id];
	dst->dev[id] = src->dev[id];
	src->dev[id] = d;
	/* the lists point at the devices' results: both again */
	if ((rc = sv_list_results(dst)) < 0 || (rc = sv_list_results(src)) < 0)
		return rc;
	return 0;
}

static void swap_bytes(void *a, void *b, size_t n)
{
	unsigned char t[sizeof(mp_solver_point_t) > 64 ? sizeof(mp_solver_point_t) : 64];

	memcpy(t, a, n);
	memcpy(a, b, n);
	memcpy(b, t, n);
}

#define SWAP(a, b) swap_bytes(&(a), &(b), sizeof(a))

int mp_solver_swap_peak(mp_solver_t *dst, mp_solver_t *src, uint32_t id)
{
	sv_dev_t *a, *b;

	if (dst->pass != 2 || src->pass != 2)
		return MP_EUSAGE;
	if (id >= dst->ndev || id >= src->ndev || !dst->dev[id] || !src->dev[id])
		return MP_ENOTFOUND;
	a = dst->dev[id];
	b = src->dev[id];
	/* what mp_solver_device_t says of the peak, and what the peak's
	 * figures rest on; the rest (counters, leaks, OOM records, the
	 * timeline) stays each solver's */
	SWAP(a->peak_tracked, b->peak_tracked);
	SWAP(a->peak_seeded, b->peak_seeded);
	SWAP(a->pub.stats_model, b->pub.stats_model);
	SWAP(a->pub.capacity_bytes, b->pub.capacity_bytes);
	SWAP(a->pub.lifetime_peak_bytes, b->pub.lifetime_peak_bytes);
	SWAP(a->pub.has_peak, b->pub.has_peak);
	SWAP(a->pub.peak_bytes, b->pub.peak_bytes);
	SWAP(a->pub.peak_mark, b->pub.peak_mark);
	SWAP(a->pub.peak_phase, b->pub.peak_phase);
	SWAP(a->pub.peak, b->pub.peak);
	SWAP(a->pub.fragmentation_reason, b->pub.fragmentation_reason);
	SWAP(a->pub.breakdown, b->pub.breakdown);
	SWAP(a->pub.breakdown_count, b->pub.breakdown_count);
	SWAP(a->pub.has_breakdown, b->pub.has_breakdown);
	SWAP(a->pub.has_reserved_peak, b->pub.has_reserved_peak);
	SWAP(a->pub.reserved_peak_bytes, b->pub.reserved_peak_bytes);
	SWAP(a->pub.reserved_peak_time_ns, b->pub.reserved_peak_time_ns);
	SWAP(a->pub.reserved_peak_event, b->pub.reserved_peak_event);
	return 0;
}
