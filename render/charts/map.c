/* map.c - the memory map: every region of a memory id as an address strip,
 * so that "full or fragmented?" is answered by looking. Live bytes are
 * coloured by region type, free bytes are light, the largest free chunk is
 * outlined, and a failed request is drawn at the same scale underneath,
 * next to the largest free chunk and to all the free bytes together.
 *
 * Columns come merged per pixel (layout.h, mp_memmap_build): a column's
 * coloured height is the share of its bytes that is live, so the coloured
 * area is the live bytes whatever the block count. */
#include "charts_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAP_ROWS 6
#define ROW_H 30.0
#define ROW_GAP (CX_SMALL * CX_LINE + 6)
#define BAR_H 12.0
#define MAP_FREE MP_COLOR_FREE
#define MAP_EDGE 0x6E6E6E

int mp_chart_map_geometry(mp_memmap_t *out, const mp_snapshot_t *snap, double width)
{
	size_t row = width > 2 * CX_PAD + 10 ? (size_t)(width - 2 * CX_PAD) : 0;
	mp_memmap_region_t *r;
	mp_memmap_block_t *b;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!snap->nregions)
		return MP_ENODATA;
	r = malloc(snap->nregions * sizeof(*r));
	b = malloc((snap->nblocks ? snap->nblocks : 1) * sizeof(*b));
	if (!r || !b) {
		free(r);
		free(b);
		return MP_ENOMEM;
	}
	for (size_t i = 0; i < snap->nregions; i++) {
		r[i].base = snap->regions[i].base;
		r[i].end = snap->regions[i].end;
	}
	for (size_t i = 0; i < snap->nblocks; i++) {
		b[i].addr = snap->blocks[i].addr;
		b[i].size = snap->blocks[i].size;
		b[i].type = snap->blocks[i].region;
	}
	rc = mp_memmap_build(out, r, snap->nregions, b, snap->nblocks, row, MAP_ROWS, 4);
	free(r);
	free(b);
	return rc;
}

/* Rows a bar of `bytes` takes when it wraps like the map, up to one more
 * than the map has: a request larger than the whole pool is drawn cut
 * (it is longer than the map either way). */
static size_t bar_rows(const mp_memmap_t *m, uint64_t bytes, int *cut)
{
	double px = (double)bytes / m->bytes_per_column;
	double rows = ceil(px / (double)m->row_width);

	*cut = rows > (double)m->rows + 1;
	if (*cut)
		return m->rows + 1;
	return rows < 1 ? 1 : (size_t)rows;
}

static double bars_height(const mp_chart_map_t *c)
{
	const mp_memmap_t *m = c->map;
	uint64_t b[3] = {c->requested, m->largest_free, m->free_bytes};
	double h = 8;

	if (!c->requested)
		return 0;
	for (int i = 0; i < 3; i++) {
		int cut;
		h += CX_SMALL * CX_LINE + 2 + (double)bar_rows(m, b[i], &cut) * (BAR_H + 3) + 4;
	}
	return h;
}

/* The legend: the types present, free, the largest free chunk, the
 * request; returns its height (with draw 0, only measures). */
static double legend(const mp_chart_area_t *a, const mp_memmap_t *m, double x, double y, int requested, int draw)
{
	cx_legend_entry_t e[MP_REGION_TYPE_MAX + 5];
	size_t n = 0;

	for (int t = 0; t <= MP_REGION_TYPE_MAX && t < MP_MEMMAP_TYPES; t++) {
		uint64_t b = 0;
		for (size_t i = 0; i < m->ncol; i++)
			b += m->col[i].used[t];
		if (b)
			e[n++] = (cx_legend_entry_t){mp_region_type_name(t), mp_color_region(t), CX_KEY_BOX};
	}
	/* blocks of no known type only (a PyTorch snapshot's): "unknown"
	 * would tell nothing apart; they are what is in use */
	if (n == 1 && !strcmp(e[0].label, mp_region_type_name(MP_REGION_UNKNOWN)))
		e[0].label = "in use";
	e[n++] = (cx_legend_entry_t){"free", MAP_FREE, CX_KEY_BOX};
	if (m->largest_free)
		e[n++] = (cx_legend_entry_t){"largest free chunk", MP_COLOR_OOM, CX_KEY_OUTLINE};
	if (requested)
		e[n++] = (cx_legend_entry_t){"failed request (same scale)", MP_COLOR_OOM, CX_KEY_BOX};
	return cx_legend(a, x, y, (double)m->row_width, e, n, draw);
}

double mp_chart_map_height(const mp_chart_map_t *c, const mp_text_measure_t *m)
{
	mp_chart_area_t measure_only = {NULL, m, {0, 0, 0, 0}};

	return cx_header_height(c->subtitle != NULL) + CX_SMALL * CX_LINE + 6 +
	       legend(&measure_only, c->map, 0, 0, c->requested != 0, 0) + 8 +
	       (double)c->map->rows * (ROW_H + ROW_GAP) + bars_height(c) + CX_PAD;
}

typedef struct mapdraw {
	const mp_chart_area_t *a;
	const mp_memmap_t *m;
	double x0, y0; /* top left of row 0's strip */
} mapdraw_t;

static double row_y(const mapdraw_t *d, size_t row)
{
	return d->y0 + (double)row * (ROW_H + ROW_GAP);
}

static uint64_t col_used(const mp_memmap_column_t *c)
{
	return c->hi - c->lo - c->free;
}

static uint32_t rgba(uint32_t rgb)
{
	return rgb << 8 | 0xFF;
}

/* Each row of the map as an image, one pixel column per map column: free
 * bytes light, live bytes from the bottom up in their type's colour, a
 * white seam where a wide block follows a live neighbour; gaps between
 * regions stay transparent. */
static int strip_images(const mapdraw_t *d)
{
	const mp_memmap_t *m = d->m;
	const uint32_t h = (uint32_t)ROW_H, w = (uint32_t)m->row_width;
	uint32_t *px = malloc((size_t)w * h * sizeof(*px));

	if (!px)
		return MP_ENOMEM;
	for (size_t row = 0, i = 0; row < m->rows; row++) {
		memset(px, 0, (size_t)w * h * sizeof(*px));
		for (; i < m->ncol && m->col[i].row == row; i++) {
			const mp_memmap_column_t *c = &m->col[i], *p = i ? &m->col[i - 1] : NULL;
			uint64_t span = c->hi - c->lo; /* 0 where a region has fewer bytes than columns */
			uint32_t used = span ? (uint32_t)floor((double)h * (double)col_used(c) / (double)span + 0.5) : 0;
			uint32_t color = rgba(mp_color_region(c->dominant));
			int seam = c->block_start && p && p->region == c->region && p->row == c->row &&
				   2 * col_used(p) >= p->hi - p->lo;
			if (used == 0 && col_used(c))
				used = 1; /* a live byte is never invisible */
			for (uint32_t y = 0; y < h; y++)
				px[(size_t)y * w + c->x] = y >= h - used ? color : rgba(MAP_FREE);
			if (seam)
				for (uint32_t y = 1; y + 1 < h; y++)
					px[(size_t)y * w + c->x] = 0xFFFFFFFFu;
		}
		mp_scene_tag(d->a->scene, mp_scene_image(d->a->scene, d->x0, row_y(d, row), w, h, px), "map-row");
	}
	free(px);
	return 0;
}

/* A thin edge around each region's part of each row, while there are few
 * enough to draw (thousands of tiny regions are their own texture). */
static void region_edges(const mapdraw_t *d)
{
	const mp_memmap_t *m = d->m;
	mp_style_t st = cx_stroke(MAP_EDGE, 0.8, MP_DASH_SOLID);

	if (m->nregions > 400)
		return;
	for (size_t i = 0; i < m->ncol;) {
		size_t j = i;
		while (j + 1 < m->ncol && m->col[j + 1].region == m->col[i].region && m->col[j + 1].row == m->col[i].row)
			j++;
		long item = mp_scene_rect(d->a->scene, d->x0 + m->col[i].x, row_y(d, m->col[i].row), (double)(j - i + 1),
					  ROW_H, &st);
		uint64_t used = 0, free_b = 0;
		char note[256], b1[48], b2[48];
		for (size_t k = i; k <= j; k++)
			used += col_used(&m->col[k]), free_b += m->col[k].free;
		mp_scene_tag(d->a->scene, item, "map-region");
		/* the hover's: where this part of the region is and what it holds */
		snprintf(note, sizeof(note), "region %" PRIu32 ": 0x%" PRIx64 " to 0x%" PRIx64 "\nlive %s, free %s",
			 m->col[i].region, m->col[i].lo, m->col[j].hi, mp_bytes_exact(b1, sizeof(b1), used),
			 mp_bytes_exact(b2, sizeof(b2), free_b));
		mp_scene_note(d->a->scene, item, note, m->col[i].region);
		i = j + 1;
	}
}

/* The largest free chunk's outline, one box per row it spans. */
static void largest_outline(const mapdraw_t *d, mp_box_t *first_box)
{
	const mp_memmap_t *m = d->m;
	mp_style_t st = cx_stroke(MP_COLOR_OOM, 2, MP_DASH_SOLID);
	int have = 0;

	for (size_t i = m->largest_first; m->largest_free && i <= m->largest_last;) {
		size_t j = i;
		while (j + 1 <= m->largest_last && m->col[j + 1].row == m->col[i].row)
			j++;
		mp_box_t b = {d->x0 + m->col[i].x, row_y(d, m->col[i].row), (double)(j - i + 1), ROW_H};
		long item = mp_scene_rect(d->a->scene, b.x + 1, b.y + 1, b.w > 2 ? b.w - 2 : b.w, b.h - 2, &st);
		char note[128], hb[48];
		mp_scene_tag(d->a->scene, item, "largest-free");
		snprintf(note, sizeof(note), "largest free chunk: %s", mp_bytes_exact(hb, sizeof(hb), m->largest_free));
		mp_scene_note(d->a->scene, item, note, 0);
		if (!have)
			*first_box = b;
		have = 1;
		i = j + 1;
	}
}

/* A bar of `bytes` at the map's scale from (x0, y), wrapping like the map
 * (cut as bar_rows says); returns the y under it. */
static double scale_bar(const mapdraw_t *d, double y, uint64_t bytes, const mp_style_t *st, const char *tag)
{
	double px = (double)bytes / d->m->bytes_per_column, w = (double)d->m->row_width;
	int cut;
	size_t rows = bar_rows(d->m, bytes, &cut);

	if (px < 1 && bytes)
		px = 1;
	for (size_t r = 0; r < rows; r++) {
		double seg = px > w ? w : px;
		mp_scene_tag(d->a->scene, mp_scene_rect(d->a->scene, d->x0 + 0.5, y + 0.5, seg > 1 ? seg - 1 : seg, BAR_H - 1, st), tag);
		px -= seg;
		y += BAR_H + 3;
	}
	return y;
}

/* Region labels (base and size) over their first column, the largest
 * regions first; the largest free chunk's label before all of them. */
static int labels(const mapdraw_t *d, const mp_box_t *lf)
{
	const mp_memmap_t *m = d->m;
	size_t n = m->nregions + 1, k = 0;
	mp_label_t *l = calloc(n, sizeof(*l));
	char (*text)[96] = calloc(n, sizeof(*text));
	mp_box_t bounds = {d->x0, d->y0 - ROW_GAP, (double)m->row_width, (double)m->rows * (ROW_H + ROW_GAP) + ROW_GAP};
	char hb[32];
	long placed;

	if (!l || !text) {
		free(l);
		free(text);
		return MP_ENOMEM;
	}
	if (m->largest_free) {
		snprintf(text[k], sizeof(text[k]), "largest free chunk %s", mp_fmt_bytes(hb, sizeof(hb), m->largest_free));
		l[k].w = cx_width(d->a, text[k], CX_SMALL, 1);
		l[k].h = CX_SMALL * CX_LINE;
		l[k].cand[0] = (mp_box_t){lf->x, lf->y - l[k].h - 2, 0, 0};
		l[k].cand[1] = (mp_box_t){lf->x + lf->w - l[k].w, lf->y - l[k].h - 2, 0, 0};
		l[k].cand[2] = (mp_box_t){lf->x, lf->y + ROW_H + 2, 0, 0};
		l[k].ncand = 3;
		l[k].slide = 1;
		l[k].priority = 1e30;
		k++;
	}
	for (size_t r = 0; r < m->nregions; r++, k++) {
		const mp_memmap_column_t *c = &m->col[m->region_first[r]];
		size_t last = r + 1 < m->nregions ? m->region_first[r + 1] - 1 : m->ncol - 1;
		uint64_t size = m->col[last].hi - c->lo;
		snprintf(text[k], sizeof(text[k]), "0x%" PRIx64 " · %s", c->lo, mp_fmt_bytes(hb, sizeof(hb), size));
		l[k].w = cx_width(d->a, text[k], CX_SMALL, 0);
		l[k].h = CX_SMALL * CX_LINE;
		l[k].cand[0] = (mp_box_t){d->x0 + c->x, row_y(d, c->row) - l[k].h - 2, 0, 0};
		l[k].ncand = 1;
		l[k].slide = 1;
		l[k].priority = (double)size;
	}
	placed = mp_labels_place(l, k, &bounds, NULL, 0, 6);
	for (size_t i = 0; placed >= 0 && i < k; i++) {
		if (!l[i].placed)
			continue;
		if (i == 0 && m->largest_free)
			mp_scene_tag(d->a->scene,
				     cx_text(d->a, l[i].box.x, l[i].box.y, text[i], CX_SMALL, 1, MP_COLOR_OOM, MP_ALIGN_LEFT,
					     MP_VALIGN_TOP),
				     "largest-free-label");
		else
			cx_text(d->a, l[i].box.x, l[i].box.y, text[i], CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT,
				MP_VALIGN_TOP);
	}
	free(l);
	free(text);
	return placed < 0 ? (int)placed : 0;
}

int mp_chart_map(const mp_chart_area_t *a, const mp_chart_map_t *c)
{
	const mp_memmap_t *m = c->map;
	mapdraw_t d = {a, m, a->box.x + CX_PAD, 0};
	char scale[256], b1[32], b2[32], b3[32], b4[32], more[96] = "";
	mp_box_t lf = {0, 0, 0, 0};
	double y = cx_header(a, c->title, c->subtitle);
	int rc;

	if (m->outside_bytes)
		snprintf(more, sizeof(more), "; %s live outside the regions, not drawn",
			 mp_fmt_bytes(b4, sizeof(b4), m->outside_bytes));
	snprintf(scale, sizeof(scale), "%zu region%s, %s: live %s, free %s · 1 px = %s%s", m->nregions,
		 m->nregions == 1 ? "" : "s", mp_fmt_bytes(b1, sizeof(b1), m->region_bytes),
		 mp_fmt_bytes(b2, sizeof(b2), m->used_bytes), mp_fmt_bytes(b3, sizeof(b3), m->free_bytes),
		 mp_fmt_bytes(b4, sizeof(b4), (uint64_t)(m->bytes_per_column + 0.5)), more);
	cx_text_fit(a, d.x0, y, scale, (double)m->row_width, CX_SMALL, 0, MP_COLOR_TEXT, MP_ALIGN_LEFT, MP_VALIGN_TOP,
		    MP_ELLIPSIS_END);
	y += CX_SMALL * CX_LINE + 6;
	y += legend(a, m, d.x0, y, c->requested != 0, 1) + 8;
	d.y0 = y + ROW_GAP;
	if ((rc = strip_images(&d)) < 0)
		return rc;
	region_edges(&d);
	cx_map_hover(a, c, d.x0, d.y0, ROW_H + ROW_GAP, ROW_H);
	largest_outline(&d, &lf);
	if ((rc = labels(&d, &lf)) < 0)
		return rc;
	y = d.y0 + (double)m->rows * (ROW_H + ROW_GAP) - ROW_GAP + 8;
	if (c->requested) {
		struct {
			const char *what;
			uint64_t bytes;
			mp_style_t st;
			const char *tag;
		} bars[3] = {
			{"requested", c->requested, {MP_RGBA(MP_COLOR_OOM, 0x66), MP_RGB(MP_COLOR_OOM), 1.5f, 0}, "request"},
			{"largest free chunk", m->largest_free, {MP_NONE, MP_RGB(MP_COLOR_OOM), 2, 0}, "largest-free-bar"},
			{"all the free bytes in the regions, together", m->free_bytes, {MP_RGB(MAP_FREE), MP_RGB(MAP_EDGE), 0.8f, 0}, "free-bar"},
		};
		for (int i = 0; i < 3; i++) {
			char cap[160], hb[48];
			int cut;
			bar_rows(m, bars[i].bytes, &cut);
			snprintf(cap, sizeof(cap), "%s: %s%s", bars[i].what, mp_bytes_exact(hb, sizeof(hb), bars[i].bytes),
				 cut ? " (more than all the regions: drawn cut)" : "");
			cx_text_fit(a, d.x0, y, cap, (double)m->row_width, CX_SMALL, i == 0, i == 0 ? MP_COLOR_OOM : MP_COLOR_TEXT,
				    MP_ALIGN_LEFT, MP_VALIGN_TOP, MP_ELLIPSIS_END);
			y += CX_SMALL * CX_LINE + 2;
			y = scale_bar(&d, y, bars[i].bytes, &bars[i].st, bars[i].tag) + 4;
		}
	}
	return mp_scene_status(a->scene);
}
