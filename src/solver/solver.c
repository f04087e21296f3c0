/* solver.c - the pass over the events, from the first fed to
 * mp_solver_finish(): the event-at-a-time state of every memory id (the
 * live set, the regions, the fragmentation index, peaks, timeline samples,
 * OOM records, the group counts at the peak), then the results it leaves.
 * What comes before and after the pass (options, creation, reading the
 * results, freeing) is solver_life.c. See memprof/solver.h for the models. */
#include "solver_impl.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

sv_dev_t *sv_get_dev(mp_solver_t *s, uint32_t id, int *rc)
{
	sv_dev_t *d;

	*rc = 0;
	if (id >= MP_SOLVER_MAX_MEMORY) {
		*rc = MP_ELIMIT;
		return NULL;
	}
	if (id >= s->ndev) { /* the new slots NULL */
		size_t n = s->ndev;

		s->dev = mp_vec_grow(s->dev, &n, (size_t)id + 1, sizeof(*s->dev));
		if (n <= id) {
			*rc = MP_ENOMEM;
			return NULL;
		}
		memset(s->dev + s->ndev, 0, (n - s->ndev) * sizeof(*s->dev));
		s->ndev = (uint32_t)n;
	}
	d = s->dev[id];
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d) {
			*rc = MP_ENOMEM;
			return NULL;
		}
		d->pub.id = id;
		d->pub.peak.fragmentation = NAN;
		d->leaks_done = s->window_ended; /* first seen after the window: no leaks in it */
		d->tl_width = 1;
		mp_live_init(&d->live);
		mp_live_regions_init(&d->reg);
		grp_init(&d->groups);
		fx_init(&d->fx);
		s->dev[id] = d;
	}
	return d;
}

int mp_solver_declare_memory(mp_solver_t *s, uint32_t id, uint64_t capacity_bytes)
{
	int rc;
	sv_dev_t *d = sv_get_dev(s, id, &rc);

	if (!d)
		return rc;
	if (capacity_bytes)
		d->pub.declared_capacity = capacity_bytes;
	return 0;
}

/* ---- live set: the engine's rules (memprof/live.h), with the solver's
 * own data of each block (its group, its place in the fragmentation
 * index) ---- */

/* A group's live count changed: remember it for the next peak (see sync_peak). */
static int touch_group(sv_dev_t *d, uint32_t gid)
{
	grp_t *g = &d->groups.g[gid];

	if (g->dirty)
		return 0;
	if (MP_VEC_RESERVE(d->dirty, d->dirty_cap, d->ndirty + 1) < 0)
		return MP_ENOMEM;
	g->dirty = 1;
	d->dirty[d->ndirty++] = gid;
	return 0;
}

/* A new peak: bring at_peak up to date for the groups changed since the
 * previous one. Every event changes at most one group and each change is
 * copied once, so this is amortised O(1) per event, and the breakdown at the
 * peak needs no second pass over the input. */
static void sync_peak(sv_dev_t *d)
{
	for (size_t i = 0; i < d->ndirty; i++) {
		grp_t *g = &d->groups.g[d->dirty[i]];
		g->at_peak = g->live;
		g->dirty = 0;
	}
	d->ndirty = 0;
}

/* Block e out of the fragmentation index, or out of the count of those
 * waiting for a region (place_block undone). */
static inline int unplace_block(sv_dev_t *d, const lm_entry_t *e)
{
	if (e->pend != LM_OUT)
		return sv_fx_drop(d, e);
	if (e->size)
		d->unindexed--;
	return 0;
}

/* Block e, which the engine says an event ends: out of the solver's own
 * data, then out of the live set. */
static int drop_block(sv_dev_t *d, lm_entry_t *e)
{
	uint32_t gid = e->group;
	int rc;

	if ((rc = unplace_block(d, e)) < 0)
		return rc;
	d->groups.g[gid].live--;
	mp_live_drop(&d->live, e);
	return touch_group(d, gid);
}

/* A new block of fp bytes at addr: into the fragmentation index (*pend says
 * how) when a region holds it, else counted as waiting for one. */
static inline int place_block(sv_dev_t *d, uint64_t addr, uint64_t fp, uint32_t *pend)
{
	if (!fp)
		return 0;
	if (d->reg.n && sv_region_of(d, addr, fp) >= 0)
		return sv_fx_add(d, addr, addr + fp, pend);
	d->unindexed++;
	return 0;
}

/* The new block of an allocation: its footprint, its group and its place
 * in the index (place_block). */
static inline int new_block(sv_dev_t *d, const mp_event_t *ev, uint64_t *fp, uint32_t *gid, uint32_t *pend)
{
	grp_key_t key = {ev->requested_bytes, 0, ev->op, ev->dtype, ev->shape, ev->region, ev->metadata};

	*fp = key.allocated = mp_live_footprint(ev->requested_bytes, ev->allocated_bytes);
	*gid = grp_intern(&d->groups, &key);
	if (*gid == LM_EMPTY)
		return MP_ENOMEM;
	*pend = LM_OUT;
	return place_block(d, ev->address, *fp, pend);
}

int sv_apply_alloc(sv_dev_t *d, const mp_event_t *ev)
{
	lm_entry_t *e = mp_live_alloc_replaces(&d->live, ev->address);
	uint32_t gid, pend;
	uint64_t fp;
	int rc;

	if (e && (rc = drop_block(d, e)) < 0)
		return rc;
	if ((rc = new_block(d, ev, &fp, &gid, &pend)) < 0)
		return rc;
	if ((rc = mp_live_add(&d->live, ev->address, fp, gid, pend)) < 0)
		return rc;
	d->groups.g[gid].live++;
	return touch_group(d, gid);
}

static int apply_free(sv_dev_t *d, const mp_event_t *ev)
{
	lm_entry_t *e = mp_live_free_finds(&d->live, ev->address);

	return e ? drop_block(d, e) : 0;
}

/* ---- points ---- */

static uint64_t capacity_now(const sv_dev_t *d)
{
	if (d->pub.stats_model)
		return d->st.stack_bytes + d->st.heap_bytes + d->st.free_bytes;
	if (d->pub.declared_capacity)
		return d->pub.declared_capacity;
	return d->reg.n ? d->reg.bytes : 0;
}

/* The state at ev, but for the fragmentation figures: returns 1 when they
 * are due from the index (sv_mark or sv_fill_point), else 0. */
static int make_point(const sv_dev_t *d, const mp_event_t *ev, mp_solver_point_t *p)
{
	memset(p, 0, sizeof(*p));
	p->time_ns = ev->time_ns;
	p->event_index = ev->index;
	p->step = ev->step;
	p->fragmentation = NAN;
	if (d->pub.stats_model) {
		p->stack_bytes = d->st.stack_bytes;
		p->heap_bytes = d->st.heap_bytes;
		p->free_bytes = d->st.free_bytes;
		p->has_free = 1;
		if (isfinite(d->st.fragmentation))
			p->fragmentation = d->st.fragmentation < 0 ? 0 : d->st.fragmentation > 1 ? 1 : d->st.fragmentation;
		return 0;
	}
	p->heap_bytes = d->live.bytes;
	p->reserved_bytes = d->reg.bytes;
	p->has_reserved = (uint8_t)d->regions_seen;
	if (capacity_now(d)) {
		uint64_t cap = capacity_now(d);
		p->free_bytes = cap > d->live.bytes ? cap - d->live.bytes : 0;
		p->has_free = 1;
	}
	p->has_largest = d->reg.n != 0;
	return d->reg.n != 0;
}

/* A new most of reserved bytes (live regions), the first event inside the
 * window where it is reached (regions change only in the general path,
 * which samples every event of the window). */
static void reserved_peak(sv_dev_t *d, const mp_event_t *ev)
{
	if (!mp_live_peak_due(d->pub.has_reserved_peak, d->pub.reserved_peak_bytes, d->reg.bytes, 0))
		return;
	d->pub.has_reserved_peak = 1;
	d->pub.reserved_peak_bytes = d->reg.bytes;
	d->pub.reserved_peak_time_ns = ev->time_ns;
	d->pub.reserved_peak_event = ev->index;
}

static uint64_t in_use(const sv_dev_t *d)
{
	return d->pub.stats_model ? d->st.stack_bytes + d->st.heap_bytes : d->live.bytes;
}

static int sample(mp_solver_t *s, sv_dev_t *d, const mp_event_t *ev)
{
	uint64_t u = in_use(d);
	int rc;

	if (d->regions_seen)
		reserved_peak(d, ev);
	/* Ties: the first event at the maximum wins, except in the stats model,
	 * where the last one does, as in TensorBoard's Memory Profile (its
	 * `>=`): the allocator's own figures are what users compare there. */
	if (mp_live_peak_due(d->pub.has_peak, d->pub.peak_bytes, u, d->pub.stats_model)) {
		d->pub.has_peak = 1;
		d->pub.peak_bytes = u;
		d->pub.peak_mark = s->last_mark;
		d->pub.peak_phase = s->nphase && s->nphase <= SV_MAX_PHASES ? s->phase[s->nphase - 1] : 0;
		if (make_point(d, ev, &d->pub.peak) && (rc = sv_mark(d, SV_MARK_PEAK, &d->pub.peak)) < 0)
			return rc;
		d->pub.capacity_bytes = capacity_now(d);
		d->peak_tracked = d->live.bytes;
		d->peak_seeded = 0;
		sync_peak(d);
	}
	if (!s->opt.timeline)
		return 0;
	if (mp_live_peak_due(d->tl_fill != 0, d->cand_inuse, u, 0)) { /* each bucket's own peak */
		if (make_point(d, ev, &d->cand) && (rc = sv_mark(d, SV_MARK_CAND, &d->cand)) < 0)
			return rc;
		d->cand_inuse = u;
	}
	if (++d->tl_fill == d->tl_width) {
		d->tl_fill = 0;
		if (d->mk_pt[SV_MARK_CAND] && (rc = sv_flush(d)) < 0)
			return rc;
		return sv_timeline_push(d, &d->cand, d->cand_inuse, s->opt.timeline_points);
	}
	return 0;
}

/* A phase begins or ends. Phases nest; an end closes the innermost open
 * phase of its label (and those opened inside it, which did not say they
 * ended); an end of a phase not open is ignored. */
static void phase_mark(mp_solver_t *s, const mp_event_t *ev)
{
	uint32_t kept = s->nphase < SV_MAX_PHASES ? s->nphase : SV_MAX_PHASES;

	if (ev->flags & MP_EVENT_F_PHASE_BEGIN) {
		if (s->nphase < SV_MAX_PHASES)
			s->phase[s->nphase] = ev->label;
		s->nphase++;
		return;
	}
	if (s->nphase > SV_MAX_PHASES) { /* inside phases too deep to name */
		s->nphase--;
		return;
	}
	for (uint32_t i = kept; i-- > 0;)
		if (s->phase[i] == ev->label) {
			s->nphase = i;
			return;
		}
}

static int record_oom(mp_solver_t *s, sv_dev_t *d, const mp_event_t *ev)
{
	mp_solver_oom_t *o;
	int rc;

	d->pub.oom_total++;
	if (d->pub.oom_count >= s->opt.max_oom_records)
		return 0;
	if (MP_VEC_RESERVE(d->pub.oom, d->oom_cap, (size_t)d->pub.oom_count + 1) < 0)
		return MP_ENOMEM;
	o = &d->pub.oom[d->pub.oom_count];
	memset(o, 0, sizeof(*o));
	if (make_point(d, ev, &o->at)) {
		if ((rc = sv_flush(d)) < 0)
			return rc;
		sv_fill_point(d, &o->at);
	}
	o->op = ev->op;
	o->requested_bytes = ev->requested_bytes;
	if ((rc = sv_rows_top(d, s->opt.top, &o->top, &o->top_count)) < 0)
		return rc;
	d->pub.oom_count++;
	return 0;
}

static int snapshot_leaks(sv_dev_t *d)
{
	if (d->leaks_done)
		return 0;
	d->leaks_done = 1;
	d->pub.leak_bytes = d->live.bytes;
	return sv_rows_live(d, 0, &d->pub.leaks, &d->pub.leak_count);
}

int mp_solver_feed(mp_solver_t *s, const mp_event_t *ev, mp_diag_t *diag)
{
	sv_dev_t *d;
	int rc = 0, in_window = 1;

	if (s->pass != 1)
		return mp_diag_set(diag, MP_EUSAGE, -1, -1, "solver: event fed after mp_solver_finish()");
	if (s->opt.steps_set) {
		in_window = ev->step >= s->opt.step_first && ev->step <= s->opt.step_last;
		if (!s->window_ended && ev->step > s->opt.step_last) {
			s->window_ended = 1;
			for (uint32_t i = 0; i < s->ndev && rc == 0; i++)
				if (s->dev[i])
					rc = snapshot_leaks(s->dev[i]);
			if (rc < 0)
				goto out;
		}
	}
	s->events++;
	switch (ev->kind) {
	case MP_EV_MARK: /* a stage name: the peak says which one it came after */
		if (ev->flags & (MP_EVENT_F_PHASE_BEGIN | MP_EVENT_F_PHASE_END)) {
			s->phase_marks++;
			phase_mark(s, ev);
			goto done;
		}
		s->last_mark = ev->label;
		goto done;
	case MP_EV_STEP:
		goto done;
	case MP_EV_DROPPED:
		if (ev->memory < s->ndev && s->dev[ev->memory]) {
			s->dev[ev->memory]->pub.dropped_events += ev->requested_bytes;
			s->dev[ev->memory]->pub.events++;
		} else {
			s->dropped_unattributed += ev->requested_bytes;
		}
		goto done;
	default:
		break;
	}
	d = sv_get_dev(s, ev->memory, &rc);
	if (!d) {
		if (rc == MP_ELIMIT)
			mp_diag_set(diag, rc, -1, (int64_t)ev->index, "event %" PRIu64 ": memory id %" PRIu32 " is out of range (at most %u ids)",
				    ev->index, ev->memory, MP_SOLVER_MAX_MEMORY);
		goto out;
	}
	d->pub.events++;
	if (ev->flags & MP_EVENT_F_STATS) {
		d->pub.stats_model = 1;
		d->st = ev->stats;
		if (ev->stats.peak_bytes > d->pub.lifetime_peak_bytes)
			d->pub.lifetime_peak_bytes = ev->stats.peak_bytes;
	}
	switch (ev->kind) {
	case MP_EV_ALLOC:
		rc = sv_apply_alloc(d, ev);
		d->pub.allocations += (uint64_t)in_window;
		break;
	case MP_EV_FREE:
		rc = apply_free(d, ev);
		d->pub.deallocations += (uint64_t)in_window;
		break;
	case MP_EV_ALLOC_FAILED:
		d->pub.failed_allocations += (uint64_t)in_window;
		if (in_window)
			rc = record_oom(s, d, ev);
		break;
	case MP_EV_REGION_ADD: /* regions change the index directly: bring it up to date */
		if ((rc = sv_flush(d)) == 0)
			rc = sv_region_add(d, ev->address, ev->requested_bytes);
		if (rc == 0)
			d->regions_seen = 1;
		break;
	case MP_EV_REGION_REMOVE:
		if ((rc = sv_flush(d)) == 0)
			rc = sv_region_remove(d, ev->address);
		break;
	default: /* MEMORY and kinds this version does not know: nothing to do */
		goto done;
	}
	if (rc < 0)
		goto out;
	if (in_use(d) > d->pub.lifetime_peak_bytes)
		d->pub.lifetime_peak_bytes = in_use(d);
	if (in_window)
		rc = sample(s, d, ev);
done:
	s->ordinal++;
out:
	if (rc == MP_ENOMEM)
		mp_diag_set(diag, rc, -1, (int64_t)ev->index, "out of memory at event %" PRIu64, ev->index);
	return rc;
}

/* The common events in short: an ALLOC at a new address or a FREE, in the
 * address model, without a steps window. Exactly what mp_solver_feed does
 * for them, with one probe of the live map per event. Returns 1 when done,
 * 0 when the event needs the general path, or an error. */
static int feed_fast(mp_solver_t *s, sv_dev_t *d, const mp_event_t *ev)
{
	uint64_t u;
	int rc;

	if (ev->kind == MP_EV_ALLOC) {
		uint32_t gid, pend;
		uint64_t fp;
		lm_entry_t *e;
		int found;

		if ((rc = new_block(d, ev, &fp, &gid, &pend)) < 0)
			return rc;
		e = mp_live_add_new(&d->live, ev->address, fp, gid, pend, &found);
		if (!e)
			return MP_ENOMEM;
		if (found) { /* a duplicate: undo, the general path drops the old block first */
			lm_entry_t tmp = {ev->address, fp, gid, pend};
			return (rc = unplace_block(d, &tmp)) < 0 ? rc : 0;
		}
		d->groups.g[gid].live++;
		if ((rc = touch_group(d, gid)) < 0)
			return rc;
		d->pub.allocations++;
	} else {
		lm_entry_t *e = mp_live_free_finds(&d->live, ev->address);
		if (e && (rc = drop_block(d, e)) < 0)
			return rc;
		d->pub.deallocations++;
	}
	s->events++;
	s->ordinal++;
	d->pub.events++;
	u = d->live.bytes;
	if (u > d->pub.lifetime_peak_bytes)
		d->pub.lifetime_peak_bytes = u;
	/* Without a timeline, sample() only looks for a new peak. */
	if (s->opt.timeline || mp_live_peak_due(d->pub.has_peak, d->pub.peak_bytes, u, 0))
		if ((rc = sample(s, d, ev)) < 0)
			return rc;
	return 1;
}

/* Live maps above this many slots (24 B each) no longer fit in cache. */
#define PREFETCH_MIN_SLOTS 65536
#define PREFETCH_AHEAD 16

int mp_solver_feed_many(mp_solver_t *s, const mp_event_t *ev, size_t n, mp_diag_t *diag)
{
	int fast = s->pass == 1 && !s->opt.steps_set;

	for (size_t i = 0; i < n; i++) {
		const mp_event_t *e = &ev[i];
		sv_dev_t *d = e->memory < s->ndev ? s->dev[e->memory] : NULL;
		int rc = 0;

		/* Memory latency dominates with large live sets: start loading
		 * the map slot of an event a little ahead. Prefetches change
		 * nothing but timing; with live maps that fit in L2 they only
		 * cost, so they follow the current event's map size. */
		if (d && d->live.map.cap > PREFETCH_MIN_SLOTS && i + PREFETCH_AHEAD < n) {
			const mp_event_t *f = &ev[i + PREFETCH_AHEAD];
			if (f->memory < s->ndev && s->dev[f->memory])
				lm_prefetch(&s->dev[f->memory]->live.map, f->address);
		}
		if (fast && d && (e->kind == MP_EV_ALLOC || e->kind == MP_EV_FREE) &&
		    !((e->flags & MP_EVENT_F_STATS) | d->pub.stats_model)) {
			rc = feed_fast(s, d, e);
			if (rc < 0) {
				mp_diag_set(diag, rc, -1, (int64_t)e->index, "out of memory at event %" PRIu64, e->index);
				return rc;
			}
		}
		if (rc == 0 && (rc = mp_solver_feed(s, e, diag)) < 0)
			return rc;
	}
	return 0;
}

static int cmp_dev(const void *a, const void *b)
{
	const mp_solver_device_t *x = *(const mp_solver_device_t *const *)a, *y = *(const mp_solver_device_t *const *)b;
	return x->id < y->id ? -1 : x->id > y->id;
}

int mp_solver_finish(mp_solver_t *s)
{
	int rc = 0;

	if (s->pass != 1)
		return MP_EUSAGE;
	for (uint32_t i = 0; i < s->ndev && rc == 0; i++) {
		sv_dev_t *d = s->dev[i];
		if (!d)
			continue;
		d->pub.duplicate_allocations = d->live.duplicates;
		d->pub.unknown_frees = d->live.unknown_frees;
		if ((rc = sv_flush(d)) == 0)
			rc = sv_timeline_finish(d, s->opt.timeline_points);
		if (rc == 0)
			rc = snapshot_leaks(d);
		if (rc == 0 && s->opt.breakdown && d->pub.has_peak) {
			/* The stats model may report more heap than the tracked blocks. */
			uint64_t unknown = d->pub.peak.heap_bytes > d->peak_tracked ? d->pub.peak.heap_bytes - d->peak_tracked : 0;
			rc = sv_rows_at_peak(d, unknown, &d->pub.breakdown, &d->pub.breakdown_count);
			d->pub.has_breakdown = 1;
		}
		if (!d->pub.has_peak)
			d->pub.capacity_bytes = capacity_now(d);
		if (isnan(d->pub.peak.fragmentation))
			d->pub.fragmentation_reason = !d->pub.has_peak ? "no event in the window"
						      : d->pub.stats_model ? "the allocator reported no valid value"
									   : "no regions declared for this memory id";
	}
	if (rc < 0)
		return rc;
	if ((rc = sv_list_results(s)) < 0)
		return rc;
	s->pass = 2; /* closed */
	return 0;
}

int sv_list_results(mp_solver_t *s)
{
	size_t n = 0;

	for (uint32_t i = 0; i < s->ndev; i++)
		n += s->dev[i] != NULL;
	free(s->list);
	s->list = calloc(n ? n : 1, sizeof(*s->list));
	if (!s->list)
		return MP_ENOMEM;
	s->nlist = 0;
	for (uint32_t i = 0; i < s->ndev; i++)
		if (s->dev[i])
			s->list[s->nlist++] = &s->dev[i]->pub;
	qsort(s->list, s->nlist, sizeof(*s->list), cmp_dev);
	return 0;
}
