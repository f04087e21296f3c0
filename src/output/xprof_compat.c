/* xprof_compat.c - xprof's Memory Profile summary and breakdown table
 * (see memprof/xprof_compat.h). Pass 1 finds each allocator's peak the way
 * xprof does; pass 2 replays the peak step up to the peak time. */
#include <memprof/xprof_compat.h>

#include <memprof/i64map.h>
#include <memprof/vec.h>

#include <stdlib.h>
#include <string.h>

typedef struct cm_state {
	mp_xprof_memory_t m;
	int seen;
	uint64_t peak_order;      /* stored-order key of the peak event */
	uint64_t last_order;      /* of the last event (for the lifetime quirk) */
	int have_last;
	uint64_t tmax;            /* max stack+heap so far in time order */
	int have_tmax;
	int64_t unmapped, unmapped_dealloc;
	mp_i64map_t live;         /* pass 2: address -> index in pend */
} cm_state;

typedef struct cm_pending {
	uint64_t alloc, req;
	uint32_t op, dtype, shape, mem;
	uint8_t region, alive;
} cm_pending;

static uint64_t order_key(mp_source_t *src, const mp_event_t *ev)
{
	uint64_t k;

	if (mp_source_stored_order(src, &k) == 0)
		return k;
	return ev->index;
}

static char *dup_str(const char *s)
{
	return strdup(s ? s : "");
}

void mp_xprof_free(mp_xprof_profile_t *p)
{
	size_t i, r;

	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		mp_xprof_memory_t *m = &p->mems[i];

		for (r = 0; r < m->nrows; r++) {
			free((char *)(uintptr_t)m->rows[r].op);
			free((char *)(uintptr_t)m->rows[r].region);
			free((char *)(uintptr_t)m->rows[r].dtype);
			free((char *)(uintptr_t)m->rows[r].shape);
		}
		free(m->rows);
		free((char *)(uintptr_t)m->name);
	}
	free(p->mems);
	free(p);
}

static int row_cmp(const void *a, const void *b)
{
	const mp_xprof_row_t *x = a, *y = b;
	int c;

	/* xprof: (-allocation, -requested, op, region, dtype, shape) ascending */
	if (x->allocation_bytes != y->allocation_bytes)
		return x->allocation_bytes > y->allocation_bytes ? -1 : 1;
	if (x->requested_bytes != y->requested_bytes)
		return x->requested_bytes > y->requested_bytes ? -1 : 1;
	if ((c = strcmp(x->op, y->op)) != 0)
		return c;
	if ((c = strcmp(x->region, y->region)) != 0)
		return c;
	if ((c = strcmp(x->dtype, y->dtype)) != 0)
		return c;
	return strcmp(x->shape, y->shape);
}

static int add_row(mp_xprof_memory_t *m, size_t *cap, uint64_t alloc, uint64_t req, const char *op,
		   const char *region, const char *dtype, const char *shape, int special, int unknown)
{
	mp_xprof_row_t *r;

	if (MP_VEC_RESERVE(m->rows, *cap, m->nrows + 1) < 0)
		return MP_ENOMEM;
	r = &m->rows[m->nrows];
	r->allocation_bytes = alloc;
	r->requested_bytes = req;
	r->occurrences = 1;
	r->special = special;
	r->unknown_origin = unknown;
	r->op = dup_str(op);
	r->region = dup_str(region);
	r->dtype = dup_str(dtype);
	r->shape = dup_str(shape);
	m->nrows++;
	if (!r->op || !r->region || !r->dtype || !r->shape)
		return MP_ENOMEM;
	return 0;
}

static int build_table(mp_source_t *src, cm_state *st, const cm_pending *pend, size_t npend, int legacy)
{
	mp_xprof_memory_t *m = &st->m;
	size_t cap = 0, i, w;
	int rc = 0;

	for (i = 0; i < npend && rc == 0; i++) {
		const cm_pending *p = &pend[i];
		const char *region = p->region ? mp_region_type_name(p->region) : "";

		if (!p->alive || p->mem != m->id)
			continue;
		rc = add_row(m, &cap, p->alloc, p->req, mp_source_string(src, p->op), region,
			     mp_source_string(src, p->dtype), mp_source_string(src, p->shape), 0, 0);
	}
	if (rc == 0 && st->unmapped - st->unmapped_dealloc > 0) {
		uint64_t u = (uint64_t)(st->unmapped - st->unmapped_dealloc);

		rc = add_row(m, &cap, u, u, legacy ? "preallocated/unknown" : "unused preallocated device memory",
			     "persist/dynamic", "INVALID", "unknown", 1, 1);
	}
	if (rc == 0 && m->stack_bytes > 0)
		rc = add_row(m, &cap, m->stack_bytes, m->stack_bytes, "stack", "stack", "INVALID", "unknown", 1, 0);
	if (rc < 0)
		return rc;
	if (m->nrows > 1)
		qsort(m->rows, m->nrows, sizeof(*m->rows), row_cmp);
	/* merge adjacent equal rows into occurrences */
	for (i = 0, w = 0; i < m->nrows; i++) {
		if (w > 0 && row_cmp(&m->rows[w - 1], &m->rows[i]) == 0) {
			m->rows[w - 1].occurrences++;
			free((char *)(uintptr_t)m->rows[i].op);
			free((char *)(uintptr_t)m->rows[i].region);
			free((char *)(uintptr_t)m->rows[i].dtype);
			free((char *)(uintptr_t)m->rows[i].shape);
			continue;
		}
		m->rows[w++] = m->rows[i];
	}
	m->nrows = w;
	return 0;
}

static int is_mem_event(const mp_event_t *ev)
{
	return ev->kind == MP_EV_ALLOC || ev->kind == MP_EV_FREE;
}

/* One ALLOC or FREE in pass 1: the memory's counts, its peak as xprof
 * finds it, its lifetime figures and its peak step. */
static void peak_event(cm_state *s, mp_source_t *src, const mp_event_t *ev)
{
	uint64_t used, key;

	s->seen = 1;
	s->m.id = ev->memory;
	s->m.events++;
	s->m.stream_events++;
	if (ev->kind == MP_EV_ALLOC)
		s->m.allocations++;
	else
		s->m.deallocations++;
	key = order_key(src, ev);
	used = ev->stats.stack_bytes + ev->stats.heap_bytes;
	/* xprof walks events in stored order and takes `used >= peak`:
	 * the maximum, and among equal maxima the last one stored */
	if (!s->m.has_peak || used > s->m.peak_bytes || (used == s->m.peak_bytes && key >= s->peak_order)) {
		s->m.has_peak = 1;
		s->peak_order = key;
		s->m.peak_bytes = used;
		s->m.peak_time_ns = ev->time_ns;
		s->m.stack_bytes = ev->stats.stack_bytes;
		s->m.heap_bytes = ev->stats.heap_bytes;
		s->m.free_bytes = ev->stats.free_bytes;
		s->m.fragmentation = ev->stats.fragmentation;
		s->m.capacity_bytes = used + ev->stats.free_bytes;
	}
	if (!s->have_last || key >= s->last_order) {
		s->have_last = 1;
		s->last_order = key;
		s->m.lifetime_peak_xprof = ev->stats.peak_bytes;
	}
	if (ev->stats.peak_bytes > s->m.lifetime_peak_max)
		s->m.lifetime_peak_max = ev->stats.peak_bytes;
	/* peak step: the step of the last event, in time order, whose
	 * level equals the maximum */
	if (!s->have_tmax || used >= s->tmax) {
		s->have_tmax = 1;
		s->tmax = used;
		s->m.peak_step = ev->step;
	}
}

/* pass 1: peaks, steps, lifetime figures; *st grows to every memory id
 * an event names (the caller frees it). */
static int pass_peaks(mp_source_t *src, cm_state **stp, uint32_t *nstp, mp_diag_t *diag)
{
	cm_state *st = NULL;
	uint32_t nst = mp_source_memory_count(src);
	mp_event_t ev;
	int rc;

	rc = mp_source_rewind(src, diag);
	if (rc < 0)
		return rc;
	/* before the first event: memory descriptions count as events too */
	if (nst && !(st = calloc(nst, sizeof(*st))))
		return MP_ENOMEM;
	while ((rc = mp_source_next(src, &ev, diag)) > 0) {
		if (!is_mem_event(&ev)) {
			/* as the solver counts a memory's events (docs/report.md) */
			if (ev.kind != MP_EV_STEP && ev.kind != MP_EV_MARK && ev.memory < nst)
				st[ev.memory].m.stream_events++;
			continue;
		}
		if (ev.memory >= nst) {
			cm_state *ns;

			if (ev.memory >= 65536u) {
				rc = mp_diag_set(diag, MP_ELIMIT, -1, (int64_t)ev.index, "memory id %u out of range",
						 ev.memory);
				break;
			}
			ns = realloc(st, (ev.memory + 1) * sizeof(*ns));
			if (!ns) {
				rc = MP_ENOMEM;
				break;
			}
			memset(ns + nst, 0, (ev.memory + 1 - nst) * sizeof(*ns));
			st = ns;
			nst = ev.memory + 1;
		} else if (!st) {
			st = calloc(nst, sizeof(*st));
			if (!st) {
				rc = MP_ENOMEM;
				break;
			}
		}
		peak_event(&st[ev.memory], src, &ev);
	}
	*stp = st;
	*nstp = nst;
	return rc;
}

/* pass 2: the peak step's allocations up to the peak time, pending in
 * *pendp (the caller's) while live. */
static int pass_peak_step(mp_source_t *src, cm_state *st, uint32_t nst, cm_pending **pendp, size_t *npendp,
			  mp_diag_t *diag)
{
	cm_pending *pend = NULL;
	size_t npend = 0, cappend = 0;
	mp_event_t ev;
	int rc;

	for (uint32_t i = 0; i < nst && st; i++)
		st[i].unmapped = (int64_t)st[i].m.heap_bytes;
	rc = mp_source_rewind(src, diag);
	while (rc == 0 && (rc = mp_source_next(src, &ev, diag)) > 0) {
		cm_state *s;
		uint32_t e;
		int live;

		rc = 0;
		if (!is_mem_event(&ev) || ev.memory >= nst || !st)
			continue;
		s = &st[ev.memory];
		if (ev.time_ns > s->m.peak_time_ns || ev.step != s->m.peak_step)
			continue;
		live = mp_i64map_get(&s->live, ev.address, &e);
		if (ev.kind == MP_EV_ALLOC) {
			if (live)
				pend[e].alive = 0;
			if (MP_VEC_RESERVE(pend, cappend, npend + 1) < 0) {
				rc = MP_ENOMEM;
				break;
			}
			pend[npend] = (cm_pending){ev.allocated_bytes, ev.requested_bytes, ev.op, ev.dtype,
						   ev.shape, ev.memory, ev.region, 1};
			if (npend + 1 > UINT32_MAX - 1) {
				rc = MP_ELIMIT;
				break;
			}
			rc = mp_i64map_put(&s->live, ev.address, (uint32_t)npend);
			npend++;
			s->unmapped -= (int64_t)ev.allocated_bytes;
		} else {
			if (live) {
				pend[e].alive = 0;
				mp_i64map_del(&s->live, ev.address);
			} else {
				s->unmapped_dealloc += (int64_t)ev.allocated_bytes;
			}
			s->unmapped += (int64_t)ev.allocated_bytes;
		}
	}
	*pendp = pend;
	*npendp = npend;
	return rc;
}

/* The profile: per memory id seen, its figures and its table. */
static int profile(mp_source_t *src, cm_state *st, uint32_t nst, const cm_pending *pend, size_t npend, int legacy,
		   mp_xprof_profile_t **out)
{
	mp_xprof_profile_t *p = calloc(1, sizeof(*p));
	size_t n = 0;
	int rc = 0;

	if (!p)
		return MP_ENOMEM;
	p->legacy_names = legacy;
	for (uint32_t i = 0; i < nst && st; i++)
		n += st[i].seen;
	p->mems = calloc(n ? n : 1, sizeof(*p->mems));
	if (!p->mems) {
		mp_xprof_free(p);
		return MP_ENOMEM;
	}
	for (uint32_t i = 0; i < nst && st && rc == 0; i++) {
		const mp_memory_info_t *info;

		if (!st[i].seen)
			continue;
		info = mp_source_memory(src, i);
		st[i].m.name = dup_str(info ? info->name : "");
		st[i].m.kind = mp_memory_kind_name(info ? info->kind : MP_MEMORY_OTHER);
		rc = build_table(src, &st[i], pend, npend, legacy);
		p->mems[p->n++] = st[i].m;
	}
	if (rc == 0)
		*out = p;
	else
		mp_xprof_free(p);
	return rc;
}

int mp_xprof_compute(mp_source_t *src, const mp_xprof_options_t *opts, mp_xprof_profile_t **out,
		     mp_diag_t *diag)
{
	int legacy = opts ? opts->legacy_names : 1;
	uint32_t nst = 0;
	cm_state *st = NULL;
	cm_pending *pend = NULL;
	size_t npend = 0;
	int rc;

	*out = NULL;
	rc = pass_peaks(src, &st, &nst, diag);
	if (rc == 0)
		rc = pass_peak_step(src, st, nst, &pend, &npend, diag);
	if (rc == 0)
		rc = profile(src, st, nst, pend, npend, legacy, out);
	for (uint32_t i = 0; i < nst && st; i++)
		mp_i64map_free(&st[i].live);
	free(st);
	free(pend);
	return rc < 0 ? rc : 0;
}
