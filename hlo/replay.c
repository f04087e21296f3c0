/* replay.c - replay of one heap-simulator trace (the reference's trace
 * replay; docs/hlo.md, "What is computed", step 3).
 *
 * Cost: the reference copies the live list at every new peak and removes
 * freed buffers by scanning it. Here the live list is append-only and a
 * release bumps the buffer's epoch (an entry is live while its epoch
 * matches), so an event costs O(1) plus the cached canonical-chain walk. The
 * caller runs a first pass for the series, the peak event and the spans, and
 * a second pass that stops right after the peak event to read the live set. */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

enum { EV_ALLOC = 0, EV_FREE = 1, EV_SHARE_WITH = 2 };

int mp_hlo_is_indefinite(const Xla__BufferAllocationProto *a)
{
	return a->is_thread_local || a->is_entry_computation_parameter || a->is_constant || a->maybe_live_out;
}

mp_hlo_category_t mp_hlo_category(const Xla__BufferAllocationProto *a)
{
	if (a->is_entry_computation_parameter)
		return MP_HLO_CAT_PARAMETER;
	if (a->maybe_live_out)
		return MP_HLO_CAT_OUTPUT;
	if (a->is_thread_local)
		return MP_HLO_CAT_THREAD_LOCAL;
	if (a->is_constant)
		return MP_HLO_CAT_CONSTANT;
	return MP_HLO_CAT_TEMPORARY;
}

void mp_hlo_replay_free(replay_t *r)
{
	free(r->rc);
	free(r->canon);
	free(r->display);
	free(r->root_cache);
	free(r->cache_gen);
	free(r->epoch);
	free(r->span_start);
	free(r->span_limit);
	free(r->has_span);
	free(r->live);
	free(r->heap_tl);
	free(r->unpadded_tl);
}

int mp_hlo_replay_init(replay_t *r, const mp_hlo_module_t *m, const Xla__HeapSimulatorTrace *tr, int compat,
		       int timeline)
{
	size_t n = m->n_lbs ? m->n_lbs : 1;

	memset(r, 0, sizeof(*r));
	r->m = m;
	r->tr = tr;
	r->compat = compat;
	r->peak_pos = 0;
	r->seen_alloc = -1;
	r->first_unknown = -1;
	r->rc = calloc(n, sizeof(*r->rc));
	r->canon = malloc(n * sizeof(*r->canon));
	r->display = malloc(n * sizeof(*r->display));
	r->epoch = calloc(n, sizeof(*r->epoch));
	r->root_cache = malloc(n * sizeof(*r->root_cache));
	r->cache_gen = calloc(n, sizeof(*r->cache_gen));
	r->gen = 1;
	r->span_start = calloc(n, sizeof(*r->span_start));
	r->span_limit = calloc(n, sizeof(*r->span_limit));
	r->has_span = calloc(n, 1);
	if (timeline) {
		r->heap_tl = malloc((tr->n_events + 1) * sizeof(*r->heap_tl));
		r->unpadded_tl = malloc((tr->n_events + 1) * sizeof(*r->unpadded_tl));
	}
	if (!r->rc || !r->canon || !r->display || !r->epoch || !r->root_cache || !r->cache_gen || !r->span_start || !r->span_limit ||
	    !r->has_span || (timeline && (!r->heap_tl || !r->unpadded_tl)))
		return MP_ENOMEM;
	for (size_t i = 0; i < n; i++)
		r->canon[i] = r->display[i] = -1;
	return 0;
}

static int64_t lb_unpadded(const replay_t *r, int32_t li)
{
	return r->compat ? r->m->lbs[li].unpadded_compat : r->m->lbs[li].unpadded_full;
}

/* Next hop towards the root: the cached root when valid, else the parent. */
static int32_t hop(const replay_t *r, int32_t x)
{
	if (r->cache_gen[x] == r->gen)
		return r->root_cache[x];
	return r->canon[x];
}

/* Root of the canonical chain; -1 on a cycle (hostile input).
 * SHARE_WITH chains grow (a value re-uses an operand that itself re-used
 * one), so walking them at every event would be quadratic. Roots found are
 * cached along the path. Chains only ever grow at the root end (a root gains
 * a parent), which the walk continues past; the rare re-pointing of a
 * non-root invalidates every cache (gen++). */
static int32_t root_of(replay_t *r, int32_t li)
{
	size_t steps = 0;
	int32_t x = li, y, next;

	while (r->canon[x] >= 0) {
		x = hop(r, x);
		if (++steps > r->m->n_lbs)
			return -1;
	}
	for (y = li; y != x && r->canon[y] >= 0; y = next) {
		next = hop(r, y);
		r->root_cache[y] = x;
		r->cache_gen[y] = r->gen;
	}
	return x;
}

static int increase(replay_t *r, int32_t li, int init_span, size_t i)
{
	if (MP_VEC_RESERVE(r->live, r->cap_live, r->n_live + 1) < 0)
		return MP_ENOMEM;
	r->live[r->n_live].lb = li;
	r->live[r->n_live].epoch = r->epoch[li];
	r->n_live++;
	if (__builtin_add_overflow(r->heap, r->m->lbs[li].proto->size, &r->heap) ||
	    __builtin_add_overflow(r->unpadded, lb_unpadded(r, li), &r->unpadded))
		return MP_ELIMIT;
	if (r->heap > r->peak) {
		r->peak = r->heap;
		r->peak_pos = (int64_t)i;
		r->peak_unpadded = r->unpadded;
	}
	if (init_span) {
		r->has_span[li] = 1;
		r->span_start[li] = (int64_t)i;
		r->span_limit[li] = (int64_t)r->tr->n_events - 1;
	}
	return 0;
}

int mp_hlo_replay_run(replay_t *r, size_t stop, mp_diag_t *diag)
{
	const mp_hlo_module_t *m = r->m;
	size_t n = r->tr->n_events;

	for (size_t i = 0; i < stop; i++) {
		const Xla__HeapSimulatorTrace__Event *e = r->tr->events[i];
		int32_t li, root;
		int rc;

		if (r->heap_tl) {
			r->heap_tl[i] = r->heap;
			r->unpadded_tl[i] = r->unpadded;
		}
		li = hlo_index(&m->lb_by_id, e->buffer_id);
		if (li < 0) {
			if (r->n_unknown++ == 0)
				r->first_unknown = (int64_t)i;
			continue;
		}
		if (r->seen_alloc < 0)
			r->seen_alloc = m->lbs[li].alloc;
		else if (r->seen_alloc != m->lbs[li].alloc)
			return mp_diag_set(diag, MP_EHLO, -1, (int64_t)i,
					   "heap-simulator event %zu: the trace touches allocations %lld and %lld; "
					   "a trace must work out of a single allocation",
					   i, (long long)m->allocs[r->seen_alloc].proto->index,
					   (long long)m->allocs[m->lbs[li].alloc].proto->index);
		root = root_of(r, li);
		if (root < 0)
			return mp_diag_set(diag, MP_EHLO, -1, (int64_t)i,
					   "heap-simulator event %zu: SHARE_WITH chain of buffer %lld is cyclic", i,
					   (long long)e->buffer_id);
		switch (e->kind) {
		case EV_ALLOC:
			r->rc[root]++;
			if ((rc = increase(r, li, 1, i)) < 0)
				return mp_diag_set(diag, rc, -1, (int64_t)i, "heap-simulator event %zu: %s", i,
						   rc == MP_ENOMEM ? "out of memory" : "heap size overflows");
			break;
		case EV_FREE:
			if (--r->rc[root] < 0)
				return mp_diag_set(diag, MP_EHLO, -1, (int64_t)i,
						   "heap-simulator event %zu: buffer %lld is freed more times than "
						   "it was allocated",
						   i, (long long)e->buffer_id);
			if (r->rc[root] == 0) {
				r->epoch[root]++; /* drops every live entry of root */
				r->heap -= m->lbs[root].proto->size; /* sizes are >= 0: no overflow */
				if (__builtin_sub_overflow(r->unpadded, lb_unpadded(r, root), &r->unpadded))
					return mp_diag_set(diag, MP_ELIMIT, -1, (int64_t)i,
							   "heap-simulator event %zu: unpadded heap size overflows", i);
				if (r->heap < 0)
					return mp_diag_set(diag, MP_EHLO, -1, (int64_t)i,
							   "heap-simulator event %zu: heap size becomes negative", i);
				if (r->has_span[root])
					r->span_limit[root] = (int64_t)i;
			}
			if (r->has_span[li] && r->canon[li] >= 0)
				r->span_limit[li] = (int64_t)i;
			break;
		case EV_SHARE_WITH: {
			int32_t cb = hlo_index(&m->lb_by_id, e->share_with_canonical_id), croot;

			if (cb < 0) {
				if (r->n_unknown++ == 0)
					r->first_unknown = (int64_t)i;
				continue;
			}
			if (r->canon[li] >= 0)
				r->gen++; /* re-pointing a non-root: cached roots may be stale */
			croot = root_of(r, cb);
			if (croot < 0 || croot == li || cb == li)
				return mp_diag_set(diag, MP_EHLO, -1, (int64_t)i,
						   "heap-simulator event %zu: SHARE_WITH %lld -> %lld makes the "
						   "canonical chain cyclic",
						   i, (long long)e->buffer_id, (long long)e->share_with_canonical_id);
			r->canon[li] = cb;
			if (++r->rc[croot] == 1) {
				/* the canonical buffer had been freed: its memory is in use again */
				r->display[croot] = li;
				r->has_span[li] = 1;
				r->span_start[li] = (int64_t)i;
				r->span_limit[li] = (int64_t)n - 1;
				if ((rc = increase(r, croot, 0, i)) < 0)
					return mp_diag_set(diag, rc, -1, (int64_t)i, "heap-simulator event %zu: %s",
							   i, rc == MP_ENOMEM ? "out of memory" : "heap size overflows");
			}
			break;
		}
		default:
			return mp_diag_set(diag, MP_EHLO, -1, (int64_t)i,
					   "heap-simulator event %zu: unknown event kind %d", i, (int)e->kind);
		}
	}
	if (r->heap_tl && stop == n) {
		r->heap_tl[n] = r->heap;
		r->unpadded_tl[n] = r->unpadded;
	}
	return 0;
}

int64_t mp_hlo_pick_trace(const mp_hlo_module_t *m, int64_t color)
{
	int64_t best = -1;
	size_t best_count = 0;

	for (size_t i = 0; i < m->n_allocs; i++) {
		const mp_hlo_alloc_t *a = &m->allocs[i];

		if (a->proto->color == color && !mp_hlo_is_indefinite(a->proto) && a->trace_id >= 0)
			return a->trace_id;
	}
	for (size_t t = 0; t < m->ba->n_heap_simulator_traces; t++) {
		const Xla__HeapSimulatorTrace *tr = m->ba->heap_simulator_traces[t];
		size_t count = 0;

		for (size_t i = 0; i < tr->n_events; i++) {
			int32_t li = hlo_index(&m->lb_by_id, tr->events[i]->buffer_id);

			if (li >= 0 && m->lbs[li].proto->color == color)
				count++;
		}
		if (count > best_count) {
			best_count = count;
			best = (int64_t)t;
		}
	}
	return best;
}
