/* memmap.c - the memory map's geometry: regions laid out as rows of pixel
 * columns at one scale, and the live blocks merged into those columns.
 *
 * A region of millions of blocks becomes at most a few thousand columns,
 * each knowing how many of its bytes are live (by block type) and free, so
 * the picture costs the same whatever the block count, and its areas are
 * the bytes: every byte of a region is in exactly one column. */
#include <memprof/error.h>
#include <memprof/layout.h>

#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

/* Columns each region needs at bytes_per_column bpc (at least one). */
static size_t columns_needed(const mp_memmap_region_t *r, size_t n, double bpc)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++) {
		double c = (double)(r[i].end - r[i].base) / bpc;
		size_t k = c <= 1.0 ? 1 : (size_t)c + ((double)(size_t)c < c);
		total += k;
		if (total > ((size_t)1 << 40))
			break;
	}
	return total;
}

static size_t region_columns(const mp_memmap_region_t *r, double bpc)
{
	double c = (double)(r->end - r->base) / bpc;

	return c <= 1.0 ? 1 : (size_t)c + ((double)(size_t)c < c);
}

/* Start address of column j of k over [base, base + size). */
static uint64_t column_lo(uint64_t base, uint64_t size, size_t j, size_t k)
{
	return base + (uint64_t)((u128)size * j / k);
}

static int check_input(const mp_memmap_region_t *regions, size_t nregions, const mp_memmap_block_t *blocks,
		       size_t nblocks)
{
	for (size_t i = 0; i < nregions; i++) {
		if (regions[i].end <= regions[i].base)
			return MP_EUSAGE;
		if (i && regions[i].base < regions[i - 1].end)
			return MP_EUSAGE;
	}
	for (size_t i = 1; i < nblocks; i++)
		if (blocks[i].addr < blocks[i - 1].addr)
			return MP_EUSAGE;
	return 0;
}

/* Add [a, b) of type t to the columns of region r (columns c0.., k of them). */
static void spread(mp_memmap_t *map, size_t c0, size_t k, const mp_memmap_region_t *r, uint64_t a, uint64_t b,
		   int t)
{
	uint64_t size = r->end - r->base;
	size_t j = (size_t)((u128)(a - r->base) * k / size);

	/* floor division can land one column off the integer partition */
	while (j + 1 < k && column_lo(r->base, size, j + 1, k) <= a)
		j++;
	while (j > 0 && column_lo(r->base, size, j, k) > a)
		j--;
	while (a < b && j < k) {
		mp_memmap_column_t *c = &map->col[c0 + j];
		uint64_t hi = c->hi < b ? c->hi : b;
		c->used[t] += hi - a;
		a = hi;
		j++;
	}
}

static void note_free(mp_memmap_t *map, uint64_t from, uint64_t to)
{
	if (to > from && to - from > map->largest_free) {
		map->largest_free = to - from;
		map->largest_free_addr = from;
	}
}

int mp_memmap_build(mp_memmap_t *map, const mp_memmap_region_t *regions, size_t nregions,
		    const mp_memmap_block_t *blocks, size_t nblocks, size_t row_width, size_t max_rows, size_t gap)
{
	size_t budget, avail, ncol = 0, pos = 0, b = 0;
	double lo, hi;
	int rc;

	memset(map, 0, sizeof(*map));
	if (!nregions || !row_width || !max_rows || (rc = check_input(regions, nregions, blocks, nblocks)) < 0)
		return MP_EUSAGE;
	budget = row_width * max_rows;
	if (gap && (nregions - 1) * gap > budget / 10)
		gap = (nregions - 1) <= budget / 20 ? 1 : 0; /* many regions: thin separators, or none */
	if (nregions + (nregions - 1) * gap > budget)
		return MP_EUSAGE;
	avail = budget - (nregions - 1) * gap;
	for (size_t i = 0; i < nregions; i++)
		map->region_bytes += regions[i].end - regions[i].base;
	/* The smallest bytes per column at which every region fits: columns
	 * needed only fall as it grows, so bisect between the even share and
	 * the largest region (everything in one column each). */
	lo = (double)map->region_bytes / (double)avail;
	hi = 0;
	for (size_t i = 0; i < nregions; i++)
		if ((double)(regions[i].end - regions[i].base) > hi)
			hi = (double)(regions[i].end - regions[i].base);
	if (hi < lo)
		hi = lo;
	if (columns_needed(regions, nregions, lo) > avail) {
		for (int it = 0; it < 100 && hi - lo > lo * 1e-12; it++) {
			double mid = (lo + hi) / 2;
			if (columns_needed(regions, nregions, mid) <= avail)
				hi = mid;
			else
				lo = mid;
		}
		lo = hi;
	}
	map->bytes_per_column = lo;
	ncol = columns_needed(regions, nregions, lo);
	map->col = calloc(ncol, sizeof(*map->col));
	map->region_first = calloc(nregions, sizeof(*map->region_first));
	if (!map->col || !map->region_first) {
		mp_memmap_free(map);
		return MP_ENOMEM;
	}
	map->ncol = ncol;
	map->nregions = nregions;
	map->row_width = row_width;
	map->gap = gap;
	for (size_t r = 0, c0 = 0; r < nregions; r++) {
		const mp_memmap_region_t *rg = &regions[r];
		uint64_t size = rg->end - rg->base, cover;
		size_t k = region_columns(rg, lo);

		if (r)
			pos += gap;
		map->region_first[r] = c0;
		for (size_t j = 0; j < k; j++, pos++) {
			mp_memmap_column_t *c = &map->col[c0 + j];
			c->lo = column_lo(rg->base, size, j, k);
			c->hi = column_lo(rg->base, size, j + 1, k);
			c->region = (uint32_t)r;
			c->row = (uint16_t)(pos / row_width);
			c->x = (uint16_t)(pos % row_width);
		}
		/* blocks before this region, or across its start: outside */
		for (; b < nblocks && blocks[b].addr < rg->base; b++)
			map->outside_bytes += blocks[b].size;
		cover = rg->base; /* the union of the blocks so far ends here */
		for (; b < nblocks && blocks[b].addr < rg->end; b++) {
			const mp_memmap_block_t *bk = &blocks[b];
			uint64_t start, end = bk->addr + bk->size;
			int t = bk->type < MP_MEMMAP_TYPES ? bk->type : 0;
			if (!bk->size)
				continue;
			if (end < bk->addr || end > rg->end) {
				map->outside_bytes += bk->size;
				continue;
			}
			note_free(map, cover, bk->addr);
			start = bk->addr > cover ? bk->addr : cover;
			if (end <= start)
				continue; /* inside blocks already counted (overlapping input) */
			if ((double)bk->size >= 3 * lo) {
				size_t j = (size_t)((u128)(start - rg->base) * k / size);
				while (j + 1 < k && map->col[c0 + j + 1].lo <= start)
					j++;
				map->col[c0 + j].block_start = 1;
			}
			spread(map, c0, k, rg, start, end, t);
			cover = end;
		}
		note_free(map, cover, rg->end);
		c0 += k;
	}
	for (; b < nblocks; b++)
		map->outside_bytes += blocks[b].size;
	map->rows = pos ? (pos - 1) / row_width + 1 : 0;
	for (size_t i = 0; i < ncol; i++) {
		mp_memmap_column_t *c = &map->col[i];
		uint64_t used = 0, best = 0;
		for (int t = 0; t < MP_MEMMAP_TYPES; t++) {
			used += c->used[t];
			if (c->used[t] > best) {
				best = c->used[t];
				c->dominant = (uint8_t)t;
			}
		}
		c->free = c->hi - c->lo - used;
		map->used_bytes += used;
		map->free_bytes += c->free;
		if (map->largest_free && c->lo <= map->largest_free_addr && map->largest_free_addr < c->hi)
			map->largest_first = i;
		if (map->largest_free && c->lo < map->largest_free_addr + map->largest_free &&
		    map->largest_free_addr + map->largest_free <= c->hi)
			map->largest_last = i;
	}
	return 0;
}

void mp_memmap_free(mp_memmap_t *map)
{
	if (!map)
		return;
	free(map->col);
	free(map->region_first);
	map->col = NULL;
	map->region_first = NULL;
	map->ncol = map->nregions = 0;
}
