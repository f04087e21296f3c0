/* defer.c - deferred updates of the fragmentation index.
 *
 * Fragmentation has to be exact only where the solver reports it: the peak,
 * the timeline points and the failed allocations. Between two such points
 * the index may lag behind the live set, so each block insertion or removal
 * is appended to a log instead of being applied, and the log is applied
 * when a figure is due or when it is full. A block allocated and freed
 * between two points never reaches the index: its logged insertion is
 * skipped (with ten thousand live blocks and a log of 2^18 entries, most
 * blocks live and die inside one log). Figures are only ever read from
 * an index brought up to the exact event they describe, so nothing changes
 * in what is reported, and each event still costs O(log n) amortised.
 *
 * Marks: a point whose fragmentation is due (the current peak candidate,
 * the current timeline candidate) is remembered with its log position;
 * applying the log stops at each mark to fill it in. A newer candidate
 * replaces the older one of the same kind, whose figures are then never
 * needed. Insertions logged before the latest mark cannot be cancelled any
 * more (the mark must see them); a free then logs a removal instead.
 *
 * Cancelling without touching the log (a random write into 4 MiB would cost
 * a cache miss per free): a live block's lm_entry_t.pend says which log
 * (an epoch number) and which position holds its insertion. When the log is
 * applied, an insertion counts only if its block is still live with that
 * same pend; a freed block is gone from the live map, a block allocated
 * again at that address has another position. Epochs wrap after NEPOCH
 * logs; then every pend is reset to LM_IN (the log was just applied).
 */
#include "solver_impl.h"

#include <stdlib.h>

#define LOG_FIRST SV_LOG_FIRST
#define LOG_MAX SV_LOG_MAX
#define KEEP SV_KEEP
#define NEPOCH SV_NEPOCH

void sv_fill_point(const sv_dev_t *d, mp_solver_point_t *p)
{
	uint64_t total = d->fx.total, largest = fx_largest(&d->fx);

	p->largest_free_bytes = largest;
	p->region_free_bytes = total;
	p->has_largest = 1;
	p->fragmentation = total ? 1.0 - (double)largest / (double)total : 0.0;
}

static sv_log_t *sort_log(sv_log_t *l, sv_log_t *tmp, size_t n);

/* Many entries on a large index: the insertions that still count and the
 * removals, sorted by address (stably: entries for one address keep their
 * order) and applied with each leaf as the hint for the next entry, so that
 * the tree is walked in order instead of at random. The set of items after
 * [from, to) does not depend on the order but for entries of one address. */
static int apply_sorted(sv_dev_t *d, uint32_t from, uint32_t to)
{
	size_t n = 0;
	sv_log_t *buf = malloc(2 * (size_t)(to - from) * sizeof(*buf)), *v;
	void *hint = NULL;
	int rc = 0;

	if (!buf)
		return MP_ENOMEM;
	for (uint32_t i = from; i < to; i++) {
		const sv_log_t *l = &d->lg[i];
		if (i + 16 < to && d->lg[i + 16].end)
			lm_prefetch(&d->live.map, d->lg[i + 16].key & ~KEEP);
		if (l->end && !(l->key & KEEP)) {
			const lm_entry_t *e = lm_find(&d->live.map, l->key);
			if (!e || e->pend != sv_pend_of(d, i))
				continue;
		}
		buf[n].key = l->key & ~KEEP;
		buf[n].end = l->end;
		n++;
	}
	v = sort_log(buf, buf + (to - from), n);
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (v[i].end)
			rc = fx_insert(&d->fx, v[i].key, v[i].end, FX_BLOCK, &hint);
		else
			fx_remove(&d->fx, v[i].key, FX_BLOCK, hint); /* absent: nothing to do */
	}
	free(buf);
	return rc;
}

/* Apply log entries [from, to) to the index, in order. */
static int apply(sv_dev_t *d, uint32_t from, uint32_t to)
{
	if (to - from >= 1024 && d->fx.count >= 1024)
		return apply_sorted(d, from, to);
	for (uint32_t i = from; i < to; i++) {
		const sv_log_t *l = &d->lg[i];
		int rc;
		if (i + 16 < to && d->lg[i + 16].end) /* large live maps: hide the miss */
			lm_prefetch(&d->live.map, d->lg[i + 16].key & ~KEEP);
		if (l->end) {
			uint64_t a = l->key & ~KEEP;
			if (!(l->key & KEEP)) {
				const lm_entry_t *e = lm_find(&d->live.map, a);
				if (!e || e->pend != sv_pend_of(d, i))
					continue; /* freed before any mark could see it */
			}
			if ((rc = fx_insert(&d->fx, a, l->end, FX_BLOCK, NULL)) < 0)
				return rc;
		} else {
			fx_remove(&d->fx, l->key, FX_BLOCK, NULL); /* absent: nothing to do */
		}
	}
	return 0;
}

/* A log this long compared with the index is cheaper to replay by
 * rebuilding the index than entry by entry. */
static int long_log(const sv_dev_t *d, uint32_t entries)
{
	return entries > 2 * d->fx.count + 64;
}

/* Sort log entries by address, stably: an LSD radix sort, 11 bits a pass,
 * over the bits where the addresses differ. tmp has room for n. Returns the
 * sorted array (l or tmp). */
static sv_log_t *sort_log(sv_log_t *l, sv_log_t *tmp, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned bits;

	for (size_t i = 0; i < n; i++) {
		lo = l[i].key < lo ? l[i].key : lo;
		hi = l[i].key > hi ? l[i].key : hi;
	}
	if (n < 2 || lo == hi)
		return l;
	bits = 64 - (unsigned)__builtin_clzll(hi - lo);
	for (unsigned shift = 0; shift < bits; shift += 11) {
		size_t count[2048] = {0}, sum = 0;
		sv_log_t *t;
		for (size_t i = 0; i < n; i++)
			count[((l[i].key - lo) >> shift) & 2047]++;
		for (size_t b = 0; b < 2048; b++) {
			size_t c = count[b];
			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[((l[i].key - lo) >> shift) & 2047]++] = l[i];
		t = l;
		l = tmp;
		tmp = t;
	}
	return l;
}

/* Sort items by (addr, kind): an LSD radix sort, 11 bits a pass, over the
 * bits where the keys differ (addresses are below 2^62, so addr << 2 | kind
 * is a 64-bit key). tmp has room for n items. Returns the sorted array
 * (it or tmp). */
static fx_item_t *sort_items(fx_item_t *it, fx_item_t *tmp, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned bits;

	for (size_t i = 0; i < n; i++) {
		uint64_t k = it[i].addr << 2 | (uint64_t)it[i].kind;
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
	}
	if (n < 2 || lo == hi)
		return it;
	bits = 64 - (unsigned)__builtin_clzll(hi - lo);
	for (unsigned shift = 0; shift < bits; shift += 11) {
		size_t count[2048] = {0}, sum = 0;
		fx_item_t *t;
		for (size_t i = 0; i < n; i++)
			count[(((it[i].addr << 2 | (uint64_t)it[i].kind) - lo) >> shift) & 2047]++;
		for (size_t b = 0; b < 2048; b++) {
			size_t c = count[b];
			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(((it[i].addr << 2 | (uint64_t)it[i].kind) - lo) >> shift) & 2047]++] = it[i];
		t = it;
		it = tmp;
		tmp = t;
	}
	return it;
}

/* The index rebuilt from scratch as it must be after the whole log: the
 * region bounds and every live block that belongs in it. */
static int rebuild(sv_dev_t *d)
{
	size_t n = 0, cap = 2 * d->reg.n + d->live.map.count;
	fx_item_t *it = malloc(2 * (cap ? cap : 1) * sizeof(*it)), *sorted;
	int rc;

	if (!it)
		return MP_ENOMEM;
	for (size_t r = 0; r < d->reg.n; r++) {
		it[n++] = (fx_item_t){d->reg.r[r].base, d->reg.r[r].base, FX_START};
		it[n++] = (fx_item_t){d->reg.r[r].end, d->reg.r[r].end, FX_END};
	}
	for (size_t i = 0; i < d->live.map.cap; i++) {
		const lm_entry_t *e = &d->live.map.slots[i];
		if (e->group != LM_EMPTY && e->pend != LM_OUT)
			it[n++] = (fx_item_t){e->addr, e->addr + e->size, FX_BLOCK};
	}
	sorted = sort_items(it, it + cap, n);
	rc = fx_build(&d->fx, sorted, n);
	free(it);
	return rc;
}

int sv_flush(sv_dev_t *d)
{
	uint32_t pos = 0;
	int rc;

	for (;;) {
		int next = -1;
		for (int k = 0; k < SV_MARKS; k++) /* the earliest pending mark */
			if (d->mk_pt[k] && (next < 0 || d->mk_at[k] < d->mk_at[next]))
				next = k;
		if (next < 0)
			break;
		if ((rc = apply(d, pos, d->mk_at[next])) < 0)
			return rc;
		pos = d->mk_at[next];
		sv_fill_point(d, d->mk_pt[next]);
		d->mk_pt[next] = NULL;
	}
	/* The rest: entry by entry, or, when it would change a large part of
	 * the index (a log long compared with the live set: most of its
	 * blocks came and went), a rebuild in O(n) plus a sort. */
	if (long_log(d, d->lg_n - pos))
		rc = rebuild(d);
	else
		rc = apply(d, pos, d->lg_n);
	if (rc < 0)
		return rc;
	d->lg_n = 0;
	d->seg = 0;
	if (++d->epoch == NEPOCH) {
		d->epoch = 0;
		for (size_t i = 0; i < d->live.map.cap; i++)
			if (d->live.map.slots[i].group != LM_EMPTY && d->live.map.slots[i].pend >= LM_LOG)
				d->live.map.slots[i].pend = LM_IN;
	}
	return 0;
}

int sv_mark(sv_dev_t *d, int which, mp_solver_point_t *p)
{
	d->mk_pt[which] = NULL; /* replaced */
	/* A mark splits the log: the part before it could never be rebuilt.
	 * So a long log is applied now (rebuilt) rather than split. */
	if (d->lg_n && long_log(d, d->lg_n)) {
		int rc = sv_flush(d);
		if (rc < 0)
			return rc;
	}
	if (d->lg_n == 0) { /* the index is up to date */
		sv_fill_point(d, p);
		return 0;
	}
	d->mk_pt[which] = p;
	d->mk_at[which] = d->lg_n;
	d->seg = d->lg_n;
	return 0;
}

/* Room for one more entry: grow, or apply the log when it is at its size. */
static int room(sv_dev_t *d)
{
	if (d->lg_n < d->lg_cap)
		return 0;
	if (d->lg_cap < LOG_MAX) {
		uint32_t nc = d->lg_cap ? d->lg_cap * 2 : LOG_FIRST;
		sv_log_t *n = realloc(d->lg, nc * sizeof(*n));
		if (!n)
			return MP_ENOMEM;
		d->lg = n;
		d->lg_cap = nc;
		return 0;
	}
	return sv_flush(d);
}

int sv_fx_add_slow(sv_dev_t *d, uint64_t addr, uint64_t end, uint32_t *pend)
{
	int rc = room(d);

	if (rc < 0)
		return rc;
	sv_put_entry(&d->lg[d->lg_n], addr, end);
	*pend = sv_pend_of(d, d->lg_n);
	d->lg_n++;
	return 0;
}

int sv_fx_drop_slow(sv_dev_t *d, const lm_entry_t *e)
{
	int rc;

	if (e->pend >= LM_LOG && (e->pend - LM_LOG) / LOG_MAX == d->epoch) {
		/* Its insertion waits in this log: after the last mark, it
		 * simply will not happen (the caller removes the block from the
		 * live map); before it, the mark needs it. */
		uint32_t j = (e->pend - LM_LOG) % LOG_MAX;
		if (j >= d->seg)
			return 0;
		d->lg[j].key |= KEEP;
	}
	if ((rc = room(d)) < 0)
		return rc;
	sv_put_entry(&d->lg[d->lg_n], e->addr, 0);
	d->lg_n++;
	return 0;
}

size_t sv_log_bytes(const sv_dev_t *d)
{
	return d->lg_cap * sizeof(sv_log_t);
}
