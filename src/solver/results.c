/* results.c - grouped rows and the down-sampled timeline (the driver over an
 * mp_source_t is in pipeline.c). */
#include "solver_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Biggest total first, then biggest chunk, biggest request, then ids, so
 * the order is deterministic for a given source. */
static int row_before(const mp_solver_row_t *a, const mp_solver_row_t *b)
{
	if (a->total_bytes != b->total_bytes)
		return a->total_bytes > b->total_bytes;
	if (a->allocated_bytes != b->allocated_bytes)
		return a->allocated_bytes > b->allocated_bytes;
	if (a->requested_bytes != b->requested_bytes)
		return a->requested_bytes > b->requested_bytes;
	if (a->unknown_origin != b->unknown_origin)
		return a->unknown_origin < b->unknown_origin;
	if (a->op != b->op)
		return a->op < b->op;
	if (a->region != b->region)
		return a->region < b->region;
	if (a->dtype != b->dtype)
		return a->dtype < b->dtype;
	if (a->shape != b->shape)
		return a->shape < b->shape;
	return a->metadata < b->metadata;
}

static int row_cmp(const void *x, const void *y)
{
	const mp_solver_row_t *a = x, *b = y;

	return row_before(a, b) ? -1 : row_before(b, a) ? 1 : 0;
}

static void row_from_group(const grp_t *g, mp_solver_row_t *r)
{
	memset(r, 0, sizeof(*r));
	r->op = g->key.op;
	r->dtype = g->key.dtype;
	r->shape = g->key.shape;
	r->metadata = g->key.metadata;
	r->region = (uint8_t)g->key.region;
	r->requested_bytes = g->key.requested;
	r->allocated_bytes = g->key.allocated;
	r->occurrences = g->live;
	r->total_bytes = g->key.allocated * g->live;
}

/* Rows of the groups' counts now (at_peak = 0) or at the peak (1). */
static int rows_of(sv_dev_t *d, int at_peak, uint64_t unknown_bytes, mp_solver_row_t **out, size_t *n)
{
	size_t k = unknown_bytes ? 1 : 0, i;
	mp_solver_row_t *rows;

	for (i = 0; i < d->groups.n; i++)
		k += (at_peak ? d->groups.g[i].at_peak : d->groups.g[i].live) != 0;
	rows = calloc(k ? k : 1, sizeof(*rows));
	if (!rows)
		return MP_ENOMEM;
	k = 0;
	for (i = 0; i < d->groups.n; i++) {
		grp_t g = d->groups.g[i];
		if (at_peak)
			g.live = g.at_peak;
		if (g.live)
			row_from_group(&g, &rows[k++]);
	}
	if (unknown_bytes) {
		rows[k].unknown_origin = 1;
		rows[k].region = MP_REGION_UNKNOWN;
		rows[k].requested_bytes = rows[k].allocated_bytes = rows[k].total_bytes = unknown_bytes;
		rows[k].occurrences = 1;
		k++;
	}
	qsort(rows, k, sizeof(*rows), row_cmp);
	free(*out);
	*out = rows;
	*n = k;
	return 0;
}

int sv_rows_live(sv_dev_t *d, uint64_t unknown_bytes, mp_solver_row_t **out, size_t *n)
{
	return rows_of(d, 0, unknown_bytes, out, n);
}

int sv_rows_at_peak(sv_dev_t *d, uint64_t unknown_bytes, mp_solver_row_t **out, size_t *n)
{
	return rows_of(d, 1, unknown_bytes, out, n);
}

/* The `top` largest live groups, by insertion into a small sorted array:
 * O(groups * top) but OOM records are few and top is small. */
int sv_rows_top(sv_dev_t *d, uint32_t top, mp_solver_row_t **out, size_t *n)
{
	mp_solver_row_t *rows, r;
	size_t k = 0, live = 0;

	for (size_t i = 0; i < d->groups.n; i++) /* --top may be far above the groups there are */
		live += d->groups.g[i].live != 0;
	if (top > live)
		top = (uint32_t)live;
	rows = calloc(top ? top : 1, sizeof(*rows));
	if (!rows)
		return MP_ENOMEM;
	for (size_t i = 0; i < d->groups.n; i++) {
		size_t j;
		if (!d->groups.g[i].live)
			continue;
		row_from_group(&d->groups.g[i], &r);
		if (k == top && !row_before(&r, &rows[k - 1]))
			continue;
		j = k < top ? k++ : k - 1;
		while (j > 0 && row_before(&r, &rows[j - 1])) {
			rows[j] = rows[j - 1];
			j--;
		}
		rows[j] = r;
	}
	*out = rows;
	*n = k;
	return 0;
}

/* Keep at most max_points points: when full, merge neighbours pairwise
 * (keeping the higher one, the earlier on ties) and double the bucket width.
 * Each point is the maximum of its bucket, so the peak always survives. */
int sv_timeline_push(sv_dev_t *d, const mp_solver_point_t *p, uint64_t inuse, uint32_t max_points)
{
	if (d->tl_n == d->tl_cap && d->tl_cap < max_points) { /* grow: memory follows the points kept */
		size_t nc = d->tl_cap ? d->tl_cap * 2 : 64;
		mp_solver_point_t *np;
		uint64_t *nu;
		if (nc > max_points)
			nc = max_points;
		np = realloc(d->tl, nc * sizeof(*np));
		if (!np)
			return MP_ENOMEM;
		d->tl = np;
		nu = realloc(d->tl_inuse, nc * sizeof(*nu));
		if (!nu)
			return MP_ENOMEM;
		d->tl_inuse = nu;
		d->tl_cap = nc;
	}
	if (d->tl_n == max_points) {
		if (max_points == 1) {
			if (inuse > d->tl_inuse[0]) {
				d->tl[0] = *p;
				d->tl_inuse[0] = inuse;
			}
			return 0;
		}
		size_t k = 0;
		for (size_t i = 0; i < d->tl_n; i += 2, k++) {
			size_t pick = i;
			if (i + 1 < d->tl_n && d->tl_inuse[i + 1] > d->tl_inuse[i])
				pick = i + 1;
			d->tl[k] = d->tl[pick];
			d->tl_inuse[k] = d->tl_inuse[pick];
		}
		d->tl_n = k;
		d->tl_width *= 2;
	}
	d->tl[d->tl_n] = *p;
	d->tl_inuse[d->tl_n++] = inuse;
	return 0;
}

int sv_timeline_finish(sv_dev_t *d, uint32_t max_points)
{
	int rc = 0;

	if (d->tl_fill) {
		rc = sv_timeline_push(d, &d->cand, d->cand_inuse, max_points);
		d->tl_fill = 0;
	}
	d->pub.timeline = d->tl;
	d->pub.timeline_count = d->tl_n;
	return rc;
}

mp_end_status_t mp_solver_end_status(const mp_solver_t *s)
{
	return s->end_status;
}

const char *mp_solver_oom_cause(const mp_solver_oom_t *o)
{
	if (o->at.has_free && o->requested_bytes > o->at.free_bytes)
		return "full";
	if (o->at.has_largest) {
		if (o->requested_bytes > o->at.region_free_bytes)
			return "full";
		return o->requested_bytes > o->at.largest_free_bytes ? "fragmented" : "fits";
	}
	return NULL;
}
