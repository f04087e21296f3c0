/* torch_state.c - the state before the first trace entry, and the mapped
 * ranges of expandable segments.
 *
 * PyTorch keeps only the newest trace entries (a ring buffer), and the
 * snapshot's segments are the state at dump time. Undoing the trace from
 * the dump state backwards gives the state at its start; the same result
 * comes forwards, by the first time the trace touches each address: a
 * block whose first entry is a free was allocated before the trace; one
 * whose first entry is an alloc was not; one the trace never touches is
 * as at dump time. Segments likewise (segment_free / segment_alloc), and
 * mapped ranges of expandable segments byte by byte (segment_unmap /
 * segment_map) with the ranges the trace touched kept as runs. Memory: a
 * hash entry per address the trace touches, not per entry. */
#include "torch_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs: sorted, disjoint, non-adjacent [addr, addr + size) spans. */
static size_t first_ending_after(const mp_vec_t *runs, uint64_t a)
{
	size_t lo = 0, hi = runs->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const tr_span_t *r = &TR_AT(*runs, tr_span_t, mid);
		if (r->addr + r->size < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cut(mp_vec_t *runs, size_t at, size_t count, const tr_span_t *put)
{
	tr_span_t *r;

	if (put && !count && mp_vec_push(runs, put, sizeof(*put)) < 0) /* room for one more */
		return MP_ENOMEM;
	if (put && !count)
		runs->n--;
	r = runs->v;
	memmove(r + at + (put ? 1 : 0), r + at + count, (runs->n - at - count) * sizeof(*r));
	runs->n = runs->n - count + (put ? 1 : 0);
	if (put)
		r[at] = *put;
	return 0;
}

int tr_runs_add(mp_vec_t *runs, uint64_t a, uint64_t b, const tr_runs_cb_t *cb)
{
	size_t i = first_ending_after(runs, a), j = i;
	tr_span_t merged = {.addr = a, .size = b - a, .expandable = 1};
	uint64_t end = b;
	int rc;

	if (b <= a)
		return 0;
	/* every run that overlaps or touches [a, b) joins it */
	while (j < runs->n && TR_AT(*runs, tr_span_t, j).addr <= end) {
		tr_span_t *r = &TR_AT(*runs, tr_span_t, j);
		if (r->addr < merged.addr)
			merged.addr = r->addr;
		if (r->addr + r->size > end)
			end = r->addr + r->size;
		if (cb && (rc = cb->removed(cb->ctx, r->addr, r->size)) < 0)
			return rc;
		j++;
	}
	merged.size = end - merged.addr;
	if ((rc = cut(runs, i, j - i, &merged)) < 0)
		return rc;
	return cb ? cb->added(cb->ctx, merged.addr, merged.size) : 0;
}

int tr_runs_sub(mp_vec_t *runs, uint64_t a, uint64_t b, const tr_runs_cb_t *cb)
{
	size_t i = first_ending_after(runs, a + 1);
	int rc;

	if (b <= a)
		return 0;
	while (i < runs->n && TR_AT(*runs, tr_span_t, i).addr < b) {
		tr_span_t r = TR_AT(*runs, tr_span_t, i), left = r, right = r;
		int has_left = r.addr < a, has_right = r.addr + r.size > b;
		if (r.addr + r.size <= a) {
			i++;
			continue;
		}
		if (cb && (rc = cb->removed(cb->ctx, r.addr, r.size)) < 0)
			return rc;
		left.size = a - r.addr;
		right.addr = b;
		right.size = r.addr + r.size - b;
		if ((rc = cut(runs, i, 1, has_left ? &left : has_right ? &right : NULL)) < 0)
			return rc;
		if (has_left && has_right) {
			if ((rc = cut(runs, i + 1, 0, &right)) < 0)
				return rc;
		}
		if (has_left && cb && (rc = cb->added(cb->ctx, left.addr, left.size)) < 0)
			return rc;
		if (has_right && cb && (rc = cb->added(cb->ctx, right.addr, right.size)) < 0)
			return rc;
		i += (size_t)has_left + (size_t)has_right;
	}
	return 0;
}

/* The parts of [a, b) no run covers, added to out. */
static int add_gaps(const mp_vec_t *runs, uint64_t a, uint64_t b, mp_vec_t *out)
{
	uint64_t cur = a;
	int rc;

	for (size_t i = first_ending_after(runs, a); i < runs->n && cur < b; i++) {
		const tr_span_t *r = &TR_AT(*runs, tr_span_t, i);
		if (r->addr >= b)
			break;
		if (r->addr > cur && (rc = tr_runs_add(out, cur, r->addr, NULL)) < 0)
			return rc;
		if (r->addr + r->size > cur)
			cur = r->addr + r->size;
	}
	return cur < b ? tr_runs_add(out, cur, b, NULL) : 0;
}

static int cmp_span(const void *x, const void *y)
{
	const tr_span_t *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Mapped ranges of expandable segments before the trace. */
static int rebuild_mapped(tr_dev_t *d)
{
	mp_vec_t touched = {0}, premapped = {0}, mapped = {0};
	int rc = 0;

	for (size_t i = 0; i < d->recs.n && rc == 0; i++) {
		const tr_rec_t *r = &TR_AT(d->recs, tr_rec_t, i);
		if (r->action != TA_SEGMENT_MAP && r->action != TA_SEGMENT_UNMAP)
			continue;
		if (r->action == TA_SEGMENT_UNMAP)
			rc = add_gaps(&touched, r->addr, r->addr + r->size, &premapped);
		if (rc == 0)
			rc = tr_runs_add(&touched, r->addr, r->addr + r->size, NULL);
	}
	for (size_t i = 0; i < d->segs.n && rc == 0; i++) {
		const tr_span_t *sg = &TR_AT(d->segs, tr_span_t, i);
		if (sg->expandable)
			rc = tr_runs_add(&mapped, sg->addr, sg->addr + sg->size, NULL);
	}
	for (size_t i = 0; i < touched.n && rc == 0; i++) {
		const tr_span_t *t = &TR_AT(touched, tr_span_t, i);
		rc = tr_runs_sub(&mapped, t->addr, t->addr + t->size, NULL);
	}
	for (size_t i = 0; i < premapped.n && rc == 0; i++) {
		const tr_span_t *t = &TR_AT(premapped, tr_span_t, i);
		rc = tr_runs_add(&mapped, t->addr, t->addr + t->size, NULL);
	}
	for (size_t i = 0; i < mapped.n && rc == 0; i++)
		rc = mp_vec_push(&d->init_regions, &TR_AT(mapped, tr_span_t, i), sizeof(tr_span_t));
	free(touched.v);
	free(premapped.v);
	free(mapped.v);
	return rc;
}

/* First touch per address: value = record index + 1. */
static int first_touch(tr_dev_t *d, mp_i64map_t *blocks, mp_i64map_t *segs)
{
	uint32_t have;

	for (size_t i = 0; i < d->recs.n; i++) {
		const tr_rec_t *r = &TR_AT(d->recs, tr_rec_t, i);
		mp_i64map_t *m = r->action == TA_ALLOC || r->action == TA_FREE_REQUESTED || r->action == TA_FREE_COMPLETED ? blocks
			     : r->action == TA_SEGMENT_ALLOC || r->action == TA_SEGMENT_FREE ? segs : NULL;
		if (i >= UINT32_MAX)
			return MP_ELIMIT;
		if (m && !mp_i64map_get(m, (int64_t)r->addr, &have) && mp_i64map_put(m, (int64_t)r->addr, (uint32_t)i + 1) < 0)
			return MP_ENOMEM;
	}
	return 0;
}

/* The blocks and segments live before the first entry. */
static int rebuild_start(tr_src_t *s, tr_dev_t *d, mp_i64map_t *blocks, mp_i64map_t *segs)
{
	uint64_t key; /* in slot order, which follows the records' order alone */
	uint32_t v;
	int rc;

	for (size_t i = 0; i < d->blocks.n; i++) { /* untouched: as at dump time, frames included */
		const tr_span_t *b = &TR_AT(d->blocks, tr_span_t, i);
		if (!mp_i64map_get(blocks, (int64_t)b->addr, &v) && (rc = mp_vec_push(&d->init_blocks, b, sizeof(*b))) < 0)
			return rc;
	}
	for (size_t pos = 0; mp_i64map_next(blocks, &pos, &key, &v);) {
		const tr_rec_t *r = &TR_AT(d->recs, tr_rec_t, v - 1);
		tr_span_t b = {0};
		if (r->action == TA_ALLOC)
			continue;
		/* first seen freed: allocated before the trace; its size is the
		 * layout's to pin (torch_layout.c), its frames are the free's */
		b.addr = r->addr;
		b.requested = r->size;
		b.size = tr_round(r->size);
		b.size_max = 0; /* to be pinned by the layout (torch_layout.c) */
		b.awaiting = r->action == TA_FREE_COMPLETED; /* its free was asked for before */
		if ((rc = mp_vec_push(&d->init_blocks, &b, sizeof(b))) < 0)
			return rc;
	}
	for (size_t i = 0; i < d->segs.n; i++) {
		const tr_span_t *sg = &TR_AT(d->segs, tr_span_t, i);
		if (!sg->expandable && !mp_i64map_get(segs, (int64_t)sg->addr, &v) &&
		    (rc = mp_vec_push(&d->init_regions, sg, sizeof(*sg))) < 0)
			return rc;
	}
	for (size_t pos = 0; mp_i64map_next(segs, &pos, &key, &v);) {
		const tr_rec_t *r = &TR_AT(d->recs, tr_rec_t, v - 1);
		tr_span_t sg = {0};
		if (r->action != TA_SEGMENT_FREE)
			continue;
		sg.addr = r->addr;
		sg.size = sg.size_max = r->size;
		sg.small = r->size == TR_SMALL_BUFFER;
		if ((rc = mp_vec_push(&d->init_regions, &sg, sizeof(sg))) < 0)
			return rc;
	}
	if ((rc = rebuild_mapped(d)) < 0)
		return rc;
	if (d->init_blocks.n)
		qsort(d->init_blocks.v, d->init_blocks.n, sizeof(tr_span_t), cmp_span);
	if (d->init_regions.n)
		qsort(d->init_regions.v, d->init_regions.n, sizeof(tr_span_t), cmp_span);
	s->info.before_trace += d->init_blocks.n;
	return 0;
}

/* A free_requested whose free_completed does not follow at once waits for
 * another stream's work: from then until its completion the block is
 * charged to "awaiting another stream: <op>", the op and metadata of its
 * allocation (allocs: the last alloc record at each address). */
static int mark_pending(tr_src_t *s, tr_dev_t *d)
{
	mp_i64map_t last_alloc = {0};
	uint32_t v;
	int rc = 0;

	for (size_t i = 0; i < d->recs.n && rc == 0; i++) {
		tr_rec_t *r = &TR_AT(d->recs, tr_rec_t, i), *nx = i + 1 < d->recs.n ? r + 1 : NULL;
		char text[800];
		uint32_t op = r->op;
		if (r->action == TA_ALLOC) {
			rc = mp_i64map_put(&last_alloc, (int64_t)r->addr, (uint32_t)i);
			continue;
		}
		if (r->action != TA_FREE_REQUESTED || (nx && nx->action == TA_FREE_COMPLETED && nx->addr == r->addr))
			continue;
		r->pending = 1;
		d->pending++;
		s->info.pending_frees++;
		if (mp_i64map_get(&last_alloc, (int64_t)r->addr, &v)) {
			const tr_rec_t *a = &TR_AT(d->recs, tr_rec_t, v);
			r->meta = a->meta;
			op = a->op;
			TR_AT(d->rstacks, uint32_t, i) = TR_AT(d->rstacks, uint32_t, v); /* its allocation's frames */
		} else {
			r->meta = 0;
		}
		snprintf(text, sizeof(text), "awaiting another stream: %s", op ? mp_strtab_get(&s->strings, op) : "(no frames)");
		if ((r->op = mp_strtab_intern(&s->strings, text, strlen(text))) == UINT32_MAX)
			rc = MP_ENOMEM;
	}
	mp_i64map_free(&last_alloc);
	return rc;
}

/* Annotations by time, those at one time in the file's order (a START and
 * the END at the same microsecond stay so): insertion sort, they are few
 * and nearly sorted. */
static void sort_phases(mp_vec_t *v)
{
	tr_phase_t *p = v->v;

	for (size_t i = 1; i < v->n; i++) {
		tr_phase_t x = p[i];
		size_t j = i;
		for (; j > 0 && p[j - 1].time_us > x.time_us; j--)
			p[j] = p[j - 1];
		p[j] = x;
	}
}

static int rebuild_dev(tr_src_t *s, tr_dev_t *d)
{
	mp_i64map_t blocks = {0}, segs = {0};
	int rc;

	if ((rc = first_touch(d, &blocks, &segs)) == 0 && (rc = rebuild_start(s, d, &blocks, &segs)) == 0 &&
	    (rc = mark_pending(s, d)) == 0)
		rc = tr_layout(s, d);
	if (rc == 0)
		sort_phases(&d->phases);
	mp_i64map_free(&blocks);
	mp_i64map_free(&segs);
	return rc;
}

int tr_rebuild(tr_src_t *s, mp_diag_t *diag)
{
	int rc;

	for (uint32_t i = 0; i < s->ndevs; i++) {
		s->info.blocks += s->devs[i].blocks.n;
		if ((rc = rebuild_dev(s, &s->devs[i])) < 0)
			return mp_diag_set(diag, rc, -1, -1, "device %u: %s", i,
					   rc == MP_ENOMEM ? "out of memory" : "more than 4 billion trace entries");
	}
	return 0;
}
