/* map_hover.c - what a reader pointing at the memory map is told (the HTML
 * report's hover): the map's rows are images, so without this only a
 * region's part of a row answers. Every live block and free chunk of two
 * columns or more gets its own hit area, noted with its addresses, bytes,
 * op and type; the pieces that fit in one column merge into one hit area
 * per column ("N blocks, B bytes"), so there are at most about two per
 * drawn column whatever the block count. Hit areas are rects with neither
 * fill nor stroke: the painter draws nothing for them, so the PNG and the
 * SVG stay as they were. */
#include "charts_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct hover {
	const mp_chart_area_t *a;
	const mp_chart_map_t *c;
	double x0, y0, pitch, row_h;
	/* the pieces merged into the column `col` so far */
	size_t col, n, nblocks, largest; /* largest: block index, SIZE_MAX: none */
	uint64_t lo, hi, used, free_b;
	long one; /* the only piece: block index, -1 free, -2 none */
} hover_t;

static const mp_style_t HIT = {MP_NONE, MP_NONE, 0, 0};

/* The column of region r (columns first..last) that shows address addr. */
static size_t col_of(const mp_memmap_t *m, size_t first, size_t last, uint64_t addr)
{
	size_t lo = first, hi = last;

	while (lo < hi) { /* the last column starting at or before addr */
		size_t mid = lo + (hi - lo + 1) / 2;
		if (m->col[mid].lo <= addr)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* One hit area per row over columns c0..c1, each with the note. */
static void area(hover_t *h, size_t c0, size_t c1, const char *tag, const char *note, uint32_t ref)
{
	const mp_memmap_t *m = h->c->map;

	for (size_t i = c0; i <= c1;) {
		size_t j = i;
		while (j + 1 <= c1 && m->col[j + 1].row == m->col[i].row)
			j++;
		long item = mp_scene_rect(h->a->scene, h->x0 + m->col[i].x, h->y0 + (double)m->col[i].row * h->pitch,
					  (double)(m->col[j].x - m->col[i].x + 1), h->row_h, &HIT);
		mp_scene_tag(h->a->scene, item, tag);
		mp_scene_note(h->a->scene, item, note, ref);
		i = j + 1;
	}
}

static const char *op_name(const hover_t *h, size_t b)
{
	uint32_t op = h->c->blocks[b].op;
	const char *s = op && h->c->source ? mp_source_string(h->c->source, op) : NULL;

	return s && s[0] ? s : "-";
}

/* One piece's note: a block (b >= 0) or a free chunk. */
static void piece_note(const hover_t *h, long b, uint64_t lo, uint64_t hi, char *note, size_t n)
{
	char eb[64];

	if (b >= 0)
		snprintf(note, n, "block 0x%" PRIx64 " to 0x%" PRIx64 "\nbytes: %s\nop: %s\ntype: %s", lo, hi,
			 mp_bytes_exact(eb, sizeof(eb), hi - lo), op_name(h, (size_t)b),
			 mp_region_type_name(h->c->blocks[b].region));
	else
		snprintf(note, n, "free chunk 0x%" PRIx64 " to 0x%" PRIx64 "\nbytes: %s", lo, hi,
			 mp_bytes_exact(eb, sizeof(eb), hi - lo));
}

static void flush(hover_t *h)
{
	char note[640], eb[64], fb[64], lb[48];

	if (!h->n)
		return;
	if (h->n == 1) {
		piece_note(h, h->one, h->lo, h->hi, note, sizeof(note));
		area(h, h->col, h->col, h->one >= 0 ? "map-block" : "map-free", note,
		     h->one >= 0 ? (uint32_t)h->one : UINT32_MAX);
	} else {
		int k = snprintf(note, sizeof(note), "%zu blocks, %s\n0x%" PRIx64 " to 0x%" PRIx64 "\nfree: %s", h->nblocks,
				 mp_bytes_exact(eb, sizeof(eb), h->used), h->lo, h->hi,
				 mp_bytes_exact(fb, sizeof(fb), h->free_b));
		if (h->largest != SIZE_MAX && k > 0 && (size_t)k < sizeof(note))
			snprintf(note + k, sizeof(note) - (size_t)k, "\nlargest: %s, op %s", mp_fmt_bytes(lb, sizeof(lb),
				 h->c->blocks[h->largest].size), op_name(h, h->largest));
		area(h, h->col, h->col, "map-blocks", note, h->largest != SIZE_MAX ? (uint32_t)h->largest : UINT32_MAX);
	}
	h->n = h->nblocks = 0;
	h->used = h->free_b = 0;
	h->largest = SIZE_MAX;
}

/* A piece [lo, hi) of region r: its own hit area when it spans two columns
 * or more, else merged with its column's other pieces. */
static void piece(hover_t *h, size_t first, size_t last, long b, uint64_t lo, uint64_t hi)
{
	const mp_memmap_t *m = h->c->map;
	size_t c0 = col_of(m, first, last, lo), c1 = col_of(m, first, last, hi - 1);
	char note[640];

	if (h->n && h->col != c0)
		flush(h);
	if (c1 > c0) {
		flush(h);
		piece_note(h, b, lo, hi, note, sizeof(note));
		area(h, c0, c1, b >= 0 ? "map-block" : "map-free", note, b >= 0 ? (uint32_t)b : UINT32_MAX);
		return;
	}
	if (!h->n)
		h->col = c0, h->lo = lo;
	h->hi = hi;
	h->one = b;
	h->n++;
	if (b < 0) {
		h->free_b += hi - lo;
		return;
	}
	h->nblocks++;
	h->used += hi - lo;
	if (h->largest == SIZE_MAX || h->c->blocks[b].size > h->c->blocks[h->largest].size)
		h->largest = (size_t)b;
}

void cx_map_hover(const mp_chart_area_t *a, const mp_chart_map_t *c, double x0, double y0, double pitch, double row_h)
{
	const mp_memmap_t *m = c->map;
	hover_t h = {a, c, x0, y0, pitch, row_h, 0, 0, 0, SIZE_MAX, 0, 0, 0, 0, -2};
	size_t b = 0;

	if (!c->blocks)
		return;
	for (size_t r = 0; r < m->nregions; r++) {
		size_t first = m->region_first[r], last = r + 1 < m->nregions ? m->region_first[r + 1] - 1 : m->ncol - 1;
		uint64_t base = m->col[first].lo, end = m->col[last].hi, at = base;
		for (; b < c->nblocks && c->blocks[b].addr < end; b++) {
			const mp_snapshot_block_t *k = &c->blocks[b];
			if (k->addr < at || k->addr + k->size > end) /* outside, or over the edge: not drawn either */
				continue;
			if (k->addr > at)
				piece(&h, first, last, -1, at, k->addr);
			piece(&h, first, last, (long)b, k->addr, k->addr + k->size);
			at = k->addr + k->size;
		}
		if (at < end)
			piece(&h, first, last, -1, at, end);
		flush(&h);
	}
}
