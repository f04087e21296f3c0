/* hlo_buffers.c - the buffers live at the peak as one strip, in program
 * order or by size: each buffer a segment as wide as its share of the
 * bytes, coloured by allocation type, the largest labelled with leader
 * lines above and below the strip.
 *
 * The buffers are laid end to end as blocks of one region and merged into
 * the strip's pixel columns (mp_memmap_build): hundreds of thousands of
 * buffers cost one rect per run of columns of one colour, and the strip's
 * areas stay the bytes. */
#include "hlo_charts_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STRIP_H 28.0
#define TYPE_H 5.0                /* the band of allocation types under the strip */
#define BELOW (TYPE_H + 1)        /* what the band adds under the strip */
#define ROW 18.0                  /* pitch of the label rows */
#define LBL_H (CX_SMALL * 1.2)    /* a label's box */
#define MAX_LABELS 16

static double legend_h(void)
{
	return CX_SMALL * CX_LINE + 2;
}

double mp_chart_hlo_buffers_height(void)
{
	return cx_header_height(1) + 2 * ROW + 6 + STRIP_H + BELOW + 6 + 2 * ROW + 4 + legend_h() + 10;
}

double hx_buffers_height(const mp_hlo_result_t *r, double width, const mp_text_measure_t *m)
{
	mp_chart_area_t a = {NULL, m, {0, 0, width, 0}};

	return mp_chart_hlo_buffers_height() - legend_h() + hx_type_legend(&a, CX_PAD, 0, width - 2 * CX_PAD, r, 0);
}

typedef struct strip {
	const mp_chart_area_t *a;
	double x, y, w;   /* the strip; height STRIP_H */
	uint64_t total;   /* bytes in it */
	mp_box_t placed[2 * MAX_LABELS]; /* labels and leaders placed so far */
	size_t nplaced;
} strip_t;

static double byte_x(const strip_t *s, double off)
{
	return s->x + (s->total > 0 ? off / (double)s->total * s->w : 0);
}

static int clear(const strip_t *s, const mp_box_t *b, double gap)
{
	for (size_t i = 0; i < s->nplaced; i++)
		if (mp_box_overlap(b, &s->placed[i], gap))
			return 0;
	return 1;
}

/* One label for the segment centred at cx: the first row, near ones first,
 * where the label and its leader line are clear of those placed. */
static int place(strip_t *s, double cx, const char *text)
{
	const double rows[4] = {s->y - 6 - LBL_H, s->y + STRIP_H + BELOW + 6, s->y - 6 - LBL_H - ROW,
				s->y + STRIP_H + BELOW + 6 + ROW};
	double w = cx_width(s->a, text, CX_SMALL, 0);
	mp_style_t ls = cx_stroke(MP_COLOR_MUTED, 1, MP_DASH_SOLID);

	if (w > s->w)
		return 0;
	for (int i = 0; i < 4; i++) {
		mp_box_t b = {cx - w / 2, rows[i], w, LBL_H}, lead;
		int above = rows[i] < s->y;
		if (b.x < s->x)
			b.x = s->x;
		if (b.x + b.w > s->x + s->w)
			b.x = s->x + s->w - b.w;
		lead.x = cx - 1;
		lead.w = 2;
		lead.y = above ? b.y + b.h : s->y + STRIP_H + BELOW;
		lead.h = above ? s->y - lead.y : b.y - lead.y;
		if (!clear(s, &b, 6) || !clear(s, &lead, 1))
			continue;
		s->placed[s->nplaced++] = b;
		s->placed[s->nplaced++] = lead;
		mp_scene_tag(s->a->scene, mp_scene_line(s->a->scene, cx_crisp(cx), lead.y + 1, cx_crisp(cx),
							lead.y + lead.h - 1, &ls), "buffer-leader");
		mp_scene_tag(s->a->scene, cx_text(s->a, b.x, b.y, text, CX_SMALL, 0, MP_COLOR_TEXT, MP_ALIGN_LEFT,
						  MP_VALIGN_TOP), "buffer-label");
		return 1;
	}
	return 0;
}

/* The band under the strip: runs of pixel columns of one dominant
 * allocation type, one rect each. */
static int draw_runs(strip_t *s, const mp_hlo_result_t *r, const size_t *order, const uint64_t *off)
{
	mp_memmap_region_t region = {0, s->total};
	mp_memmap_block_t *blocks = malloc(r->n_buffers * sizeof(*blocks));
	mp_memmap_t map;
	size_t nb = 0, first = 0;
	int rc;

	if (!blocks)
		return MP_ENOMEM;
	for (size_t j = 0; j < r->n_buffers; j++) {
		const mp_hlo_buffer_t *b = &r->buffers[order[j]];
		if (b->size > 0)
			blocks[nb++] = (mp_memmap_block_t){off[j], (uint64_t)b->size, (uint8_t)b->category};
	}
	rc = mp_memmap_build(&map, &region, 1, blocks, nb, (size_t)s->w, 1, 0);
	free(blocks);
	if (rc < 0)
		return rc;
	for (size_t i = 1; i <= map.ncol; i++) {
		if (i < map.ncol && map.col[i].dominant == map.col[first].dominant)
			continue;
		{
			double x0 = s->x + round((double)first * s->w / (double)map.ncol);
			double x1 = s->x + round((double)i * s->w / (double)map.ncol);
			mp_style_t st = cx_fill(mp_color_hlo((mp_hlo_category_t)map.col[first].dominant));
			mp_scene_tag(s->a->scene, mp_scene_rect(s->a->scene, x0, s->y + STRIP_H + 1, x1 - x0, TYPE_H, &st),
				     "buffer-type");
		}
		first = i;
	}
	mp_memmap_free(&map);
	return 0;
}

/* Hit areas (painted as nothing) over the grey buffers, under the coloured
 * ones: a grey buffer of a pixel or more is noted as the coloured are,
 * thinner neighbours merge into one area per pixel ("N buffers, B"), so
 * there are at most as many areas as the strip has pixels. */
static void grey_hits(strip_t *s, const mp_hlo_result_t *r, const size_t *order, const uint64_t *off,
		      const size_t *colored, size_t ncolored, const size_t *rank)
{
	static const mp_style_t hit = {MP_NONE, MP_NONE, 0, 0};
	size_t n = 0, last = 0;
	uint64_t bytes = 0;
	double run_x = 0;
	char note[2048], first[32], hb[48];

	for (size_t j = 0; j <= r->n_buffers; j++) {
		const mp_hlo_buffer_t *b = j < r->n_buffers ? &r->buffers[order[j]] : NULL;
		int grey = b && b->size > 0 && hx_buffer_color(colored, ncolored, order[j]) == HX_COLOR_REST;
		double x0 = b ? floor(byte_x(s, (double)off[j])) : 0, x1 = b ? byte_x(s, (double)off[j] + (double)b->size) : 0;
		long it;
		if (n && (!grey || x0 != run_x || x1 - x0 >= 1)) { /* the run of thin ones ends */
			if (n == 1) {
				snprintf(first, sizeof(first), "#%zu", rank[order[last]] + 1);
				hx_buffer_note(note, sizeof(note), first, &r->buffers[order[last]]);
			} else {
				snprintf(note, sizeof(note), "%zu buffers, %s (grey: not among the coloured)", n,
					 mp_bytes_exact(hb, sizeof(hb), bytes));
			}
			it = mp_scene_rect(s->a->scene, run_x, s->y, 1, STRIP_H, &hit);
			mp_scene_tag(s->a->scene, it, "buffer-rest-hit");
			mp_scene_note(s->a->scene, it, note, (uint32_t)order[last]);
			n = 0, bytes = 0;
		}
		if (!grey)
			continue;
		if (x1 - x0 >= 1) {
			snprintf(first, sizeof(first), "#%zu", rank[order[j]] + 1);
			it = mp_scene_rect(s->a->scene, round(byte_x(s, (double)off[j])), s->y,
					   round(x1) - round(byte_x(s, (double)off[j])), STRIP_H, &hit);
			mp_scene_tag(s->a->scene, it, "buffer-rest-hit");
			mp_scene_note(s->a->scene, it, hx_buffer_note(note, sizeof(note), first, b), (uint32_t)order[j]);
			continue;
		}
		run_x = x0, last = j, n++, bytes += (uint64_t)b->size;
	}
}

int mp_chart_hlo_buffers(const mp_chart_area_t *a, const mp_hlo_result_t *r, int by_size)
{
	strip_t s;
	size_t *order = NULL, *rank = NULL, nlab = 0, colored[HX_PALETTE], ncolored = hx_pick_colored(r, colored);
	uint64_t *off = NULL, acc = 0;
	double y, last_sep = -1;
	char sub[256], text[1024], fit[1024];
	mp_style_t sep = cx_stroke(MP_COLOR_BACKGROUND, 1, MP_DASH_SOLID);
	int rc = 0;

	memset(&s, 0, sizeof(s));
	s.a = a;
	if (r->n_buffers) {
		order = malloc(r->n_buffers * sizeof(*order));
		off = malloc(r->n_buffers * sizeof(*off));
		rank = hx_ranks(r);
		if (!order || !off || !rank) {
			rc = MP_ENOMEM;
			goto out;
		}
	}
	for (size_t j = 0; j < r->n_buffers; j++) {
		order[j] = by_size ? r->by_size[j] : j;
		off[j] = acc;
		acc += (uint64_t)(r->buffers[order[j]].size > 0 ? r->buffers[order[j]].size : 0);
	}
	s.total = acc;
	snprintf(sub, sizeof(sub), "%zu buffers, %s. Width: share of the bytes; colour: the buffer's own, as in the "
		 "lanes and the table (grey: the others); band under it: allocation type; #n: rank by size.",
		 r->n_buffers, mp_fmt_bytes((char[32]){0}, 32, acc));
	y = cx_header(a, by_size ? "Buffers live at the peak, by size" : "Buffers live at the peak, in program order",
		      sub);
	s.x = floor(a->box.x + CX_PAD);
	s.w = floor(a->box.w - 2 * CX_PAD);
	s.y = round(y + 2 * ROW + 6);
	if (!s.total) {
		mp_style_t st = cx_stroke(MP_COLOR_AXIS, 1, MP_DASH_DASHED);
		mp_scene_rect(a->scene, s.x + 0.5, s.y + 0.5, s.w - 1, STRIP_H - 1, &st);
		cx_text(a, s.x + s.w / 2, s.y + STRIP_H / 2, "no buffer of this colour is live at the peak", CX_TEXT, 0,
			MP_COLOR_MUTED, MP_ALIGN_CENTER, MP_VALIGN_MIDDLE);
		goto out;
	}
	if ((rc = draw_runs(&s, r, order, off)) < 0)
		goto out;
	{ /* the strip: every buffer grey, those with a colour of their own over it */
		mp_style_t st = cx_fill(HX_COLOR_REST);
		mp_scene_tag(a->scene, mp_scene_rect(a->scene, s.x, s.y, s.w, STRIP_H, &st), "buffer-rest");
		grey_hits(&s, r, order, off, colored, ncolored, rank);
		for (size_t j = 0; j < r->n_buffers; j++) {
			double x0 = round(byte_x(&s, (double)off[j])), x1;
			uint32_t c = hx_buffer_color(colored, ncolored, order[j]);
			char first[32], note[2048];
			long it;
			if (c == HX_COLOR_REST)
				continue;
			x1 = round(byte_x(&s, (double)off[j] + (double)r->buffers[order[j]].size));
			if (x1 < x0 + 1)
				x1 = x0 + 1; /* a colour of its own is seen, however small */
			st = cx_fill(c);
			it = mp_scene_rect(a->scene, x0, s.y, x1 - x0, STRIP_H, &st);
			mp_scene_tag(a->scene, it, "buffer");
			snprintf(first, sizeof(first), "#%zu", rank[order[j]] + 1);
			mp_scene_note(a->scene, it, hx_buffer_note(note, sizeof(note), first, &r->buffers[order[j]]),
				      (uint32_t)order[j]);
		}
	}
	/* separators where a segment is wide enough to be told apart */
	for (size_t j = 0; j < r->n_buffers; j++) {
		const mp_hlo_buffer_t *b = &r->buffers[order[j]];
		double x0 = round(byte_x(&s, (double)off[j])), x1 = round(byte_x(&s, (double)off[j] + (double)b->size));
		if (x1 - x0 < 4)
			continue;
		if (x0 > s.x && x0 != last_sep)
			mp_scene_line(a->scene, x0 + 0.5, s.y, x0 + 0.5, s.y + STRIP_H + BELOW, &sep);
		if (x1 < s.x + s.w)
			mp_scene_line(a->scene, x1 - 0.5, s.y, x1 - 0.5, s.y + STRIP_H + BELOW, &sep);
		last_sep = x1 - 1;
	}
	/* labels, largest first */
	for (size_t k = 0; k < r->n_buffers && nlab < MAX_LABELS; k++) {
		size_t i = r->by_size[k], j = by_size ? k : i;
		const mp_hlo_buffer_t *b = &r->buffers[i];
		double x0 = byte_x(&s, (double)off[j]), x1 = byte_x(&s, (double)off[j] + (double)b->size), cx = (x0 + x1) / 2;
		if (x1 - x0 < 3)
			break; /* the rest are thinner still */
		/* with the shape, else without, else shortened, else "#n size" */
		hx_buffer_text(text, sizeof(text), rank[i], b, 1);
		if (cx_width(a, text, CX_SMALL, 0) > s.w * 0.45 || !place(&s, cx, text)) {
			hx_buffer_text(text, sizeof(text), rank[i], b, 0);
			mp_text_fit(a->measure, text, CX_SMALL, 0, s.w * 0.45, MP_ELLIPSIS_MIDDLE, fit, sizeof(fit));
			if (!place(&s, cx, fit)) {
				char sz[32];
				snprintf(fit, sizeof(fit), "#%zu %s", rank[i] + 1,
					 mp_fmt_bytes(sz, sizeof(sz), (uint64_t)b->size));
				place(&s, cx, fit);
			}
		}
		nlab++;
	}
	hx_type_legend(a, a->box.x + CX_PAD, s.y + STRIP_H + BELOW + 6 + 2 * ROW + 4, a->box.w - 2 * CX_PAD, r, 1);
out:
	free(order);
	free(off);
	free(rank);
	return rc < 0 ? rc : mp_scene_status(a->scene);
}
