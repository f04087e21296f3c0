/* merge.c - the results of a stream solved in consecutive segments by
 * separate solvers (memprof/solver.h, mp_solver_merge_segments): a full
 * replay split at a capture's checkpoints, one worker per segment (issue
 * 43: src/cli/replay_par.c). Each solver after the first was seeded with
 * the state at its segment's start, the whole prefix's counters and peak
 * included, so the last one already holds what the stream ends with
 * (counters, leaks, end state); what each segment saw alone -- the peak,
 * the reserved peak, the OOM records -- is gathered here, by the rules of
 * the single pass: the peak is the first moment at the maximum, so it is
 * that of the last segment whose solver went above its seed (a later one
 * never saw more than it); likewise the reserved peak; the OOM records
 * are concatenated in stream order, up to the same limit. */
#include "solver_impl.h"

#include <stdlib.h>
#include <string.h>

static sv_dev_t *dev_of(mp_solver_t *s, uint32_t id)
{
	return id < s->ndev ? s->dev[id] : NULL;
}

/* The OOM records of every segment into last's, in order, at most max:
 * the records (and their rows) move; the earlier solvers keep none. */
static int gather_oom(mp_solver_t *const *w, size_t n, uint32_t id, uint32_t max)
{
	sv_dev_t *last = dev_of(w[n - 1], id);
	size_t total = 0, k = 0;
	mp_solver_oom_t *all;

	for (size_t i = 0; i < n; i++) {
		sv_dev_t *d = dev_of(w[i], id);
		total += d ? d->pub.oom_count : 0;
	}
	if (total == last->pub.oom_count)
		return 0; /* every record is the last segment's */
	if (!(all = malloc(total * sizeof(*all))))
		return MP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		sv_dev_t *d = dev_of(w[i], id);
		for (size_t j = 0; d && j < d->pub.oom_count; j++) {
			if (k < max)
				all[k++] = d->pub.oom[j];
			else
				free(d->pub.oom[j].top);
		}
		if (d && d != last) {
			free(d->pub.oom);
			d->pub.oom = NULL;
			d->pub.oom_count = 0;
			d->oom_cap = 0;
		}
	}
	free(last->pub.oom);
	last->pub.oom = all;
	last->pub.oom_count = k;
	last->oom_cap = total;
	return 0;
}

int mp_solver_merge_segments(mp_solver_t *const *w, size_t n)
{
	mp_solver_t *last;
	int rc;

	if (!n)
		return MP_EUSAGE;
	last = w[n - 1];
	for (size_t i = 0; i < n; i++)
		if (w[i]->pass != 2 || (i > 0 && !w[i]->seeded) || w[i]->opt.steps_set)
			return MP_EUSAGE;
	for (uint32_t id = 0; id < last->ndev; id++) {
		sv_dev_t *d = last->dev[id];
		mp_solver_device_t r;
		size_t peak = n, resv = n;

		if (!d)
			continue;
		memset(&r, 0, sizeof(r));
		for (size_t i = 0; i < n; i++) {
			sv_dev_t *e = dev_of(w[i], id);
			if (!e)
				continue;
			if (e->pub.stats_model)
				return MP_EUSAGE; /* its peak is the last at the maximum: not these rules */
			if (e->pub.has_peak && !e->peak_seeded)
				peak = i;
			if (e->pub.has_reserved_peak && e->pub.reserved_peak_event != UINT64_MAX)
				resv = i;
		}
		if ((d->pub.has_peak && peak == n) || (d->pub.has_reserved_peak && resv == n))
			return MP_ENOTFOUND; /* no segment saw the peak */
		if (resv < n) /* (before the swap, which takes the reserved peak along) */
			r = w[resv]->dev[id]->pub;
		if (peak < n - 1 && (rc = mp_solver_swap_peak(last, w[peak], id)) < 0)
			return rc;
		if (resv < n) {
			d->pub.has_reserved_peak = r.has_reserved_peak;
			d->pub.reserved_peak_bytes = r.reserved_peak_bytes;
			d->pub.reserved_peak_time_ns = r.reserved_peak_time_ns;
			d->pub.reserved_peak_event = r.reserved_peak_event;
		}
		if ((rc = gather_oom(w, n, id, last->opt.max_oom_records)) < 0)
			return rc;
	}
	return sv_list_results(last);
}
