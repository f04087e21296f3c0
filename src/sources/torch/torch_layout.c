/* torch_layout.c - the caching allocator's layout, replayed: the real size
 * of every block, PyTorch's own counters and the check against the dump.
 *
 * A trace entry's size is the request. What torch.cuda.memory_allocated()
 * counts is the block, and the block is larger than the rounded request
 * when the allocator did not split the free block it carved it from
 * (CUDACachingAllocator.cpp, should_split): in the small pool when less
 * than 512 B would remain, in the large pool when 1 MiB or less would
 * (and never past max_split_size); with expandable segments, whenever
 * 512 B or more remain. The allocator always carves a block from the start
 * of a free block, and free neighbours are always merged, so the free
 * block an allocation at A came from is [A, E), E being the start of the
 * next block live in A's segment or the segment's end: the layout pins
 * every block the trace allocates, from the starts of the live blocks
 * alone.
 *
 * A block allocated before the trace and freed in it has only its
 * request. The layout bounds it: it ends at or before the next block live
 * beside it at any moment of its life. The pools' rules narrow it further:
 * a small-pool block is its rounded request (a leftover of 512 B or more
 * is always split off); a large-pool block is at most 1 MiB over it, and
 * the gap after it, free, is either nothing or a free large-pool block,
 * which is always over 1 MiB. What these leave open is a range
 * (tr_counters_t.unpinned), never a guess.
 *
 * Two passes: the first places blocks (sizes of the trace's blocks, final
 * bounds of the older ones, the state at the end against the dump); the
 * second counts allocated bytes as PyTorch does (a block counts from its
 * alloc to its free_requested) with the sizes now known. Memory: the
 * segments and the blocks live at once, not the entries. */
#include "torch_impl.h"

#include <stdlib.h>
#include <string.h>

/* A block in use, as its segment's sorted array keeps it: 16 bytes, since
 * every allocation and free moves the array's tail. */
typedef struct lay_block {
	uint64_t addr;
	uint64_t v;        /* its size; or LAY_OLDER | its index in d->init_blocks when
	                    * it is older than the trace and its size is not known */
} lay_block_t;
#define LAY_OLDER (1ull << 63)

/* A block older than the trace whose size the layout is to pin. */
typedef struct lay_older {
	uint64_t bound;    /* the most the layout leaves it */
	uint64_t rounded;  /* its request, rounded */
	uint8_t small;     /* in a small-pool or expandable segment */
} lay_older_t;

typedef struct lay_seg {
	uint64_t addr, size;
	uint8_t small, expandable;
	mp_vec_t blocks; /* lay_block_t, by address */
} lay_seg_t;

typedef struct lay {
	tr_src_t *s;
	tr_dev_t *d;
	mp_vec_t segs;   /* lay_seg_t, by address */
	lay_seg_t loose; /* blocks outside every known segment (a broken file) */
	lay_older_t *older; /* by index in d->init_blocks */
} lay_t;

/* PyTorch's round_size: 512 B multiples, or the next of `divisions` steps
 * between two powers of two when roundup_power2_divisions asks for it. */
static uint64_t round_rule(const tr_settings_t *st, uint64_t size)
{
	uint64_t p2 = 1, step;
	unsigned interval = 0;
	uint32_t div;

	if (size < TR_MIN_BLOCK)
		return TR_MIN_BLOCK;
	for (uint64_t mib = size >> 20; mib > 1; mib >>= 1) /* log2(size) - 20, from 0 */
		interval++;
	div = st->divisions[interval < 16 ? interval : 15]; /* PyTorch's 16 intervals: 1 MiB to 64 GiB */
	if (div > 1 && size > (uint64_t)TR_MIN_BLOCK * div) {
		while (p2 <= size / 2)
			p2 <<= 1;
		if (p2 == size)
			return size;
		while (div & (div - 1)) /* the step is a power of two: divisions are floored to one */
			div &= div - 1;
		step = p2 / div;
		if (!step)
			return p2 << 1;
		return (size & ~(step - 1)) == size ? size : (size & ~(step - 1)) + step;
	}
	return tr_round(size);
}

/* The segment holding addr, or NULL (then *at: where one would go). */
static lay_seg_t *seg_find(lay_t *L, uint64_t addr, size_t *at)
{
	size_t lo = 0, hi = L->segs.n;
	lay_seg_t *v = L->segs.v;

	while (lo < hi) { /* first segment with base > addr */
		size_t mid = (lo + hi) / 2;
		if (v[mid].addr > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (at)
		*at = lo;
	return lo && addr - v[lo - 1].addr < v[lo - 1].size ? &v[lo - 1] : NULL;
}

static int seg_add(lay_t *L, uint64_t addr, uint64_t size, int small, int expandable)
{
	lay_seg_t sg = {.addr = addr, .size = size, .small = (uint8_t)small, .expandable = (uint8_t)expandable};
	size_t at;
	int rc;

	if (!size || seg_find(L, addr, &at))
		return 0; /* a segment already there: the broken file is the dump check's to report */
	if ((rc = mp_vec_push(&L->segs, &sg, sizeof(sg))) < 0)
		return rc;
	memmove((lay_seg_t *)L->segs.v + at + 1, (lay_seg_t *)L->segs.v + at, (L->segs.n - 1 - at) * sizeof(sg));
	TR_AT(L->segs, lay_seg_t, at) = sg;
	return 0;
}

static void seg_remove(lay_t *L, uint64_t addr)
{
	size_t at;
	lay_seg_t *sg = seg_find(L, addr, &at);

	if (!sg || sg->addr != addr)
		return;
	L->d->count.anomalies += sg->blocks.n; /* blocks still live in a freed segment */
	free(sg->blocks.v);
	memmove(sg, sg + 1, (L->segs.n - at) * sizeof(*sg));
	L->segs.n--;
}

/* The first block of sg at or above addr. */
static size_t blk_at(const lay_seg_t *sg, uint64_t addr)
{
	size_t lo = 0, hi = sg->blocks.n;
	const lay_block_t *v = sg->blocks.v;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static lay_seg_t *seg_of_block(lay_t *L, uint64_t addr)
{
	lay_seg_t *sg = seg_find(L, addr, NULL);

	return sg ? sg : &L->loose;
}

static int blk_insert(lay_seg_t *sg, const lay_block_t *b)
{
	size_t at = blk_at(sg, b->addr);
	int rc;

	if (at < sg->blocks.n && TR_AT(sg->blocks, lay_block_t, at).addr == b->addr) {
		TR_AT(sg->blocks, lay_block_t, at) = *b; /* allocated twice: the newer wins */
		return 0;
	}
	if ((rc = mp_vec_push(&sg->blocks, b, sizeof(*b))) < 0)
		return rc;
	memmove((lay_block_t *)sg->blocks.v + at + 1, (lay_block_t *)sg->blocks.v + at,
		(sg->blocks.n - 1 - at) * sizeof(*b));
	TR_AT(sg->blocks, lay_block_t, at) = *b;
	return 0;
}

/* Where the free block starting at addr ends: the next live block of its
 * segment, or the segment's end. */
static uint64_t free_end(const lay_seg_t *sg, uint64_t addr)
{
	size_t at = blk_at(sg, addr + 1);

	if (at < sg->blocks.n)
		return TR_AT(sg->blocks, lay_block_t, at).addr;
	return sg->size ? sg->addr + sg->size : UINT64_MAX;
}

/* The size range of a block older than the trace: rounded request r, the
 * layout's bound hi (see the top of the file). */
static void older_bounds(const lay_older_t *o, const tr_settings_t *st, uint64_t *lo, uint64_t *hi_out)
{
	uint64_t r = o->rounded, hi = o->bound, big = TR_SMALL_SIZE, mx;

	if (hi <= r) { /* the layout leaves less than the request: take the layout */
		*lo = *hi_out = hi ? hi : r;
		return;
	}
	if (o->small || st->expandable_segments) { /* any leftover of 512 B or more was split off */
		*lo = *hi_out = r;
		return;
	}
	if (hi - r <= big) { /* the gap after r could not be a free large-pool block */
		*lo = *hi_out = hi;
		return;
	}
	/* split at r (the gap, free, over 1 MiB), or not split: at most 1 MiB
	 * over r, and a gap still either nothing or over 1 MiB */
	mx = r + big < hi - big - TR_MIN_BLOCK ? r + big : hi - big - TR_MIN_BLOCK;
	mx = mx / TR_MIN_BLOCK * TR_MIN_BLOCK;
	*lo = r;
	*hi_out = mx > r ? mx : r;
}

/* An allocation at sg's free block at r->addr: the block's size. */
static uint64_t carve(const lay_t *L, const lay_seg_t *sg, const tr_rec_t *r)
{
	const tr_settings_t *st = &L->s->settings;
	uint64_t want = round_rule(st, r->size), end = free_end(sg, r->addr), room, rest;
	int split;

	if (sg == &L->loose || end <= r->addr || end - r->addr < want) {
		if (sg != &L->loose)
			L->d->count.anomalies++; /* the layout has less room than the request */
		return want;
	}
	room = end - r->addr;
	rest = room - want;
	if (sg->small || sg->expandable || st->expandable_segments)
		split = rest >= TR_MIN_BLOCK;
	else
		split = want < st->max_split_size && rest > TR_SMALL_SIZE;
	return split ? want : room;
}

/* Every block older than the trace that is live below addr and reaches
 * past it ends at addr at most (only the one just below can). */
static void bound_below(lay_t *L, lay_seg_t *sg, uint64_t addr)
{
	size_t at = blk_at(sg, addr);
	const lay_block_t *b;
	lay_older_t *o;

	if (!at)
		return;
	b = &TR_AT(sg->blocks, lay_block_t, at - 1);
	if (!(b->v & LAY_OLDER))
		return;
	o = &L->older[b->v & ~LAY_OLDER];
	if (b->addr + o->bound > addr)
		o->bound = addr - b->addr;
}

/* The older blocks, in their segments; the unknown ones bounded by the
 * blocks around them now. */
static int place_start(lay_t *L)
{
	tr_dev_t *d = L->d;
	int rc;

	for (size_t i = 0; i < d->init_regions.n; i++) {
		const tr_span_t *g = &TR_AT(d->init_regions, tr_span_t, i);
		if ((rc = seg_add(L, g->addr, g->size, g->small, g->expandable)) < 0)
			return rc;
	}
	if (d->init_blocks.n && !(L->older = calloc(d->init_blocks.n, sizeof(*L->older))))
		return MP_ENOMEM;
	for (size_t i = 0; i < d->init_blocks.n; i++) {
		const tr_span_t *ib = &TR_AT(d->init_blocks, tr_span_t, i);
		lay_seg_t *sg = seg_of_block(L, ib->addr);
		lay_block_t b = {.addr = ib->addr, .v = ib->size};
		if (ib->size_max == 0) { /* torch_state.c: its size is the layout's to pin */
			b.v = LAY_OLDER | i;
			L->older[i].small = sg->small || sg->expandable; /* both split off any rest of 512 B or more */
			L->older[i].rounded = round_rule(&L->s->settings, ib->requested);
		}
		if ((rc = blk_insert(sg, &b)) < 0)
			return rc;
	}
	for (size_t k = 0; k <= L->segs.n; k++) {
		lay_seg_t *sg = k < L->segs.n ? &TR_AT(L->segs, lay_seg_t, k) : &L->loose;
		for (size_t j = 0; j < sg->blocks.n; j++) {
			const lay_block_t *b = &TR_AT(sg->blocks, lay_block_t, j);
			lay_older_t *o;
			uint64_t end;
			if (!(b->v & LAY_OLDER))
				continue;
			o = &L->older[b->v & ~LAY_OLDER];
			end = j + 1 < sg->blocks.n ? TR_AT(sg->blocks, lay_block_t, j + 1).addr
						   : sg->size ? sg->addr + sg->size : b->addr + o->rounded;
			o->bound = end > b->addr ? end - b->addr : 0;
		}
	}
	return 0;
}

/* The older block leaves the layout: its final bounds. */
static void settle(lay_t *L, const lay_block_t *b)
{
	tr_span_t *ib;
	uint64_t i = b->v & ~LAY_OLDER;

	if (!(b->v & LAY_OLDER))
		return;
	ib = &TR_AT(L->d->init_blocks, tr_span_t, i);
	older_bounds(&L->older[i], &L->s->settings, &ib->size, &ib->size_max);
}

static int blk_remove(lay_t *L, uint64_t addr)
{
	lay_seg_t *sg = seg_of_block(L, addr);
	size_t at = blk_at(sg, addr);

	if (at >= sg->blocks.n || TR_AT(sg->blocks, lay_block_t, at).addr != addr) {
		L->d->count.anomalies++; /* a free of a block the layout does not hold */
		return 0;
	}
	settle(L, &TR_AT(sg->blocks, lay_block_t, at));
	memmove((lay_block_t *)sg->blocks.v + at, (lay_block_t *)sg->blocks.v + at + 1,
		(sg->blocks.n - at - 1) * sizeof(lay_block_t));
	sg->blocks.n--;
	return 0;
}

static int place_alloc(lay_t *L, size_t i, const tr_rec_t *r)
{
	lay_seg_t *sg = seg_of_block(L, r->addr);
	lay_block_t b = {.addr = r->addr};
	uint64_t over;

	b.v = carve(L, sg, r);
	over = b.v - tr_round(r->size);
	bound_below(L, sg, r->addr);
	if (over && mp_i64map_put(&L->d->extra, (int64_t)i, (uint32_t)(over / TR_MIN_BLOCK)) < 0)
		return MP_ENOMEM;
	return blk_insert(sg, &b);
}

/* Expandable segments map and unmap ranges: a mapped range that touches
 * no segment extends the one it follows, or starts its own. */
static int place_map(lay_t *L, const tr_rec_t *r, int map)
{
	lay_seg_t *sg = seg_find(L, r->addr ? r->addr - 1 : 0, NULL);

	if (map) {
		if (seg_find(L, r->addr, NULL))
			return 0;
		if (sg && sg->expandable && sg->addr + sg->size == r->addr) {
			sg->size += r->size;
			return 0;
		}
		return seg_add(L, r->addr, r->size, 0, 1);
	}
	sg = seg_find(L, r->addr, NULL);
	if (sg && sg->expandable && r->addr + r->size == sg->addr + sg->size && r->addr > sg->addr)
		sg->size = r->addr - sg->addr;
	else if (sg && sg->expandable && r->addr == sg->addr && r->size >= sg->size)
		seg_remove(L, sg->addr);
	return 0;
}

/* The replay's end state against the dump's: every live block at the
 * same address with the same size, the segments likewise. */
static void check_dump(lay_t *L)
{
	tr_dev_t *d = L->d;
	tr_counters_t *c = &d->count;
	mp_i64map_t dump = {0};
	uint32_t v;

	for (size_t i = 0; i < d->blocks.n; i++) {
		const tr_span_t *b = &TR_AT(d->blocks, tr_span_t, i);
		c->dump_blocks++;
		if (!b->awaiting)
			c->dump_allocated += b->size;
		if (mp_i64map_put(&dump, (int64_t)b->addr, (uint32_t)i) < 0)
			c->anomalies++;
	}
	for (size_t i = 0; i < d->segs.n; i++) {
		const tr_span_t *g = &TR_AT(d->segs, tr_span_t, i);
		lay_seg_t *sg = seg_find(L, g->addr, NULL);
		c->dump_segments++;
		c->dump_reserved += g->size;
		c->expandable += g->expandable;
		if (!g->expandable && (!sg || sg->addr != g->addr || sg->size != g->size))
			c->segments_differ++;
	}
	for (size_t k = 0; k <= L->segs.n; k++) {
		lay_seg_t *sg = k < L->segs.n ? &TR_AT(L->segs, lay_seg_t, k) : &L->loose;
		if (k < L->segs.n) {
			c->end_segments++;
			c->end_reserved += sg->size;
		}
		for (size_t j = 0; j < sg->blocks.n; j++) {
			lay_block_t *b = &TR_AT(sg->blocks, lay_block_t, j);
			uint64_t dsz = mp_i64map_get(&dump, (int64_t)b->addr, &v) ? TR_AT(d->blocks, tr_span_t, v).size : 0;
			c->end_blocks++;
			if ((b->v & LAY_OLDER) && dsz) { /* older, still live: the dump has its size */
				tr_span_t *ib = &TR_AT(d->init_blocks, tr_span_t, b->v & ~LAY_OLDER);
				ib->size = ib->size_max = dsz;
				b->v = dsz;
				continue;
			}
			if (dsz == b->v)
				continue;
			if (!c->blocks_differ++) {
				c->first_differ_addr = b->addr;
				c->first_differ_replay = b->v & LAY_OLDER ? 0 : b->v;
				c->first_differ_dump = dsz;
			}
		}
	}
	mp_i64map_free(&dump);
}

static int place_all(lay_t *L)
{
	tr_dev_t *d = L->d;
	int rc = place_start(L);

	for (size_t i = 0; i < d->recs.n && rc == 0; i++) {
		const tr_rec_t *r = &TR_AT(d->recs, tr_rec_t, i);
		switch (r->action) {
		case TA_SEGMENT_ALLOC:
			rc = seg_add(L, r->addr, r->size, r->size == TR_SMALL_BUFFER, 0);
			break;
		case TA_SEGMENT_FREE:
			seg_remove(L, r->addr);
			break;
		case TA_SEGMENT_MAP:
		case TA_SEGMENT_UNMAP:
			rc = place_map(L, r, r->action == TA_SEGMENT_MAP);
			break;
		case TA_ALLOC:
			rc = place_alloc(L, i, r);
			break;
		case TA_FREE_COMPLETED:
			rc = blk_remove(L, r->addr);
			break;
		default:
			break;
		}
	}
	if (rc == 0)
		check_dump(L);
	/* an older block still live at the end is in the dump: exact there */
	for (size_t k = 0; k <= L->segs.n; k++) {
		lay_seg_t *sg = k < L->segs.n ? &TR_AT(L->segs, lay_seg_t, k) : &L->loose;
		for (size_t j = 0; j < sg->blocks.n; j++)
			settle(L, &TR_AT(sg->blocks, lay_block_t, j));
		free(sg->blocks.v);
	}
	free(L->segs.v);
	free(L->older);
	return rc;
}

uint64_t tr_block_bytes(const tr_dev_t *d, size_t i)
{
	const tr_rec_t *r = &TR_AT(d->recs, tr_rec_t, i);
	uint32_t over;

	return tr_round(r->size) + (mp_i64map_get(&d->extra, (int64_t)i, &over) ? (uint64_t)over * TR_MIN_BLOCK : 0);
}

/* The counters, as PyTorch keeps them: a block counts in allocated bytes
 * from its alloc to its free_requested; one freed but awaiting another
 * stream's work counts in neither until its free_completed. */
static int count_all(tr_dev_t *d)
{
	tr_counters_t *c = &d->count;
	mp_i64map_t alloc_rec = {0}; /* address -> record index + 1 of the live alloc; older: UINT32_MAX - index */
	mp_i64map_t waiting = {0};   /* address -> block bytes / 512 awaiting another stream; 0: none */
	mp_i64map_t active = {0};    /* address -> as alloc_rec, until free_completed (memory_viz's view) */
	uint64_t lo = 0, hi = 0, awaiting = 0, requested = 0;
	uint32_t v;
	int rc = 0;

	for (size_t i = 0; i < d->init_blocks.n && rc == 0; i++) {
		const tr_span_t *b = &TR_AT(d->init_blocks, tr_span_t, i);
		requested += b->requested;
		if (mp_i64map_put(&active, (int64_t)b->addr, UINT32_MAX - (uint32_t)i) < 0)
			rc = MP_ENOMEM;
		if (b->awaiting) {
			awaiting += b->size;
			if (mp_i64map_put(&waiting, (int64_t)b->addr, (uint32_t)(b->size / TR_MIN_BLOCK)) < 0)
				rc = MP_ENOMEM;
			continue;
		}
		lo += b->size;
		hi += b->size_max;
		c->unpinned += b->size != b->size_max;
		if (mp_i64map_put(&alloc_rec, (int64_t)b->addr, UINT32_MAX - (uint32_t)i) < 0)
			rc = MP_ENOMEM;
	}
	c->start_min = c->peak_min = lo;
	c->start_max = c->peak_max = hi;
	c->peak_entry = -1;
	c->awaiting_peak = awaiting;
	c->requested_peak = requested;
	for (size_t i = 0; i < d->recs.n && rc == 0; i++) {
		const tr_rec_t *r = &TR_AT(d->recs, tr_rec_t, i);
		uint64_t bl = 0, bh = 0;
		if (r->action == TA_ALLOC) {
			bl = bh = tr_block_bytes(d, i);
			lo += bl;
			hi += bh;
			rc = mp_i64map_put(&alloc_rec, (int64_t)r->addr, (uint32_t)i + 1);
			if (rc == 0)
				rc = mp_i64map_put(&active, (int64_t)r->addr, (uint32_t)i + 1);
			requested += r->size;
		} else if (r->action == TA_FREE_REQUESTED && mp_i64map_get(&alloc_rec, (int64_t)r->addr, &v) && v) {
			if (v > UINT32_MAX - d->init_blocks.n) { /* older than the trace */
				const tr_span_t *b = &TR_AT(d->init_blocks, tr_span_t, UINT32_MAX - v);
				bl = b->size, bh = b->size_max;
			} else {
				bl = bh = tr_block_bytes(d, v - 1);
			}
			lo -= bl;
			hi -= bh;
			rc = mp_i64map_put(&alloc_rec, (int64_t)r->addr, 0);
			/* the awaiting memory id takes the block from here (torch_source.c) */
			if (rc == 0 && r->pending && bl > tr_round(r->size))
				rc = mp_i64map_put(&d->extra, (int64_t)i, (uint32_t)((bl - tr_round(r->size)) / TR_MIN_BLOCK));
			if (rc == 0 && r->pending) {
				awaiting += bl;
				rc = mp_i64map_put(&waiting, (int64_t)r->addr, (uint32_t)(bl / TR_MIN_BLOCK));
			}
		}
		if (r->action == TA_FREE_COMPLETED && rc == 0 && mp_i64map_get(&active, (int64_t)r->addr, &v) && v) {
			requested -= v > UINT32_MAX - d->init_blocks.n ? TR_AT(d->init_blocks, tr_span_t, UINT32_MAX - v).requested
								      : TR_AT(d->recs, tr_rec_t, v - 1).size;
			rc = mp_i64map_put(&active, (int64_t)r->addr, 0);
		}
		if (r->action == TA_FREE_COMPLETED && rc == 0 && mp_i64map_get(&waiting, (int64_t)r->addr, &v) && v) {
			awaiting -= (uint64_t)v * TR_MIN_BLOCK;
			rc = mp_i64map_put(&waiting, (int64_t)r->addr, 0);
		}
		if (lo > c->peak_min) {
			c->peak_min = lo;
			c->peak_entry = (int64_t)i;
		}
		if (hi > c->peak_max)
			c->peak_max = hi;
		if (awaiting > c->awaiting_peak)
			c->awaiting_peak = awaiting;
		if (requested > c->requested_peak)
			c->requested_peak = requested;
	}
	c->final = lo;
	mp_i64map_free(&alloc_rec);
	mp_i64map_free(&waiting);
	mp_i64map_free(&active);
	return rc < 0 ? MP_ENOMEM : 0;
}

int tr_layout(tr_src_t *s, tr_dev_t *d)
{
	lay_t L = {.s = s, .d = d};
	int rc;

	memset(&d->count, 0, sizeof(d->count));
	if ((rc = place_all(&L)) < 0)
		return rc;
	return count_all(d);
}
