/* hlo_header.c - the header of the HLO memory viewer (the module and its
 * headline figures, as cards), and what the HLO charts share
 * (hlo_charts_impl.h): ranks by size, the buffers that get a lifetime or
 * a table row, the legend of allocation types. */
#include "hlo_charts_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *hx_dup(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char *d = malloc(n + 1);

	if (!d)
		return NULL;
	memcpy(d, s ? s : "", n);
	d[n] = '\0';
	return d;
}

size_t *hx_ranks(const mp_hlo_result_t *r)
{
	size_t *rank;

	if (!r->n_buffers || !(rank = malloc(r->n_buffers * sizeof(*rank))))
		return NULL;
	for (size_t j = 0; j < r->n_buffers; j++)
		rank[r->by_size[j]] = j;
	return rank;
}

size_t hx_pick_lifetimes(const mp_hlo_result_t *r, size_t k, size_t *out)
{
	size_t n = 0;

	if (k > HX_MAX_LIFETIMES)
		k = HX_MAX_LIFETIMES;
	for (size_t j = 0; j < r->n_buffers && n < k; j++) {
		const mp_hlo_buffer_t *b = &r->buffers[r->by_size[j]];
		if (b->has_span && b->span_limit >= b->span_start && b->size > 0)
			out[n++] = r->by_size[j];
	}
	return n;
}

size_t hx_pick_table(const mp_hlo_result_t *r, size_t rows, size_t lifetimes, size_t *out)
{
	size_t life[HX_MAX_LIFETIMES], nlife = hx_pick_lifetimes(r, lifetimes, life), n = 0, li = 0, last = 0;

	/* every rank down to the last lane's, so that the table never jumps
	 * over a buffer the lanes skipped (those live throughout: they have no
	 * lane, but they have a row); lanes past the row cap still get theirs */
	for (size_t j = 0; j < r->n_buffers && li < nlife; j++)
		if (r->by_size[j] == life[li] && ++li == nlife)
			last = j + 1;
	li = 0;
	for (size_t j = 0; j < r->n_buffers && n < HX_MAX_TABLE_ROWS; j++) {
		size_t i = r->by_size[j];
		if (li < nlife && life[li] == i) {
			out[n++] = i;
			li++;
		} else if (r->buffers[i].category != MP_HLO_CAT_SMALL && (n < rows || j < last) &&
			   n + (nlife - li) < HX_MAX_TABLE_ROWS) {
			out[n++] = i;
		} else if (li >= nlife && n >= rows) {
			break;
		}
	}
	return n;
}

size_t hx_point_count(const mp_hlo_result_t *r)
{
	return r->n_events ? r->n_events : 1;
}

double hx_type_legend(const mp_chart_area_t *a, double x, double y, double max_w, const mp_hlo_result_t *r,
		      int draw)
{
	uint64_t bytes[MP_HLO_CAT_SMALL + 1] = {0};
	size_t count[MP_HLO_CAT_SMALL + 1] = {0};
	char text[MP_HLO_CAT_SMALL + 1][80], b[32];
	cx_legend_entry_t e[MP_HLO_CAT_SMALL + 2];
	size_t n = 0;

	for (size_t i = 0; i < r->n_buffers; i++) {
		int c = r->buffers[i].category;
		if (c >= 0 && c <= MP_HLO_CAT_SMALL) {
			bytes[c] += (uint64_t)(r->buffers[i].size > 0 ? r->buffers[i].size : 0);
			count[c]++;
		}
	}
	/* the strip's grey first; the types are the band's under it */
	e[n++] = (cx_legend_entry_t){"other buffers", HX_COLOR_REST, CX_KEY_BOX};
	for (int c = 0; c <= MP_HLO_CAT_SMALL; c++) {
		if (!count[c])
			continue;
		mp_fmt_bytes(b, sizeof(b), bytes[c]);
		if (c == MP_HLO_CAT_SMALL)
			snprintf(text[n - 1], sizeof(text[n - 1]), "type: small buffers (< %s) %s", mp_fmt_bytes((char[32]){0}, 32,
				 (uint64_t)(r->small_buffer_size > 0 ? r->small_buffer_size : 0)), b);
		else
			snprintf(text[n - 1], sizeof(text[n - 1]), "type: %s %s (%zu)",
				 mp_hlo_category_name((mp_hlo_category_t)c), b, count[c]);
		e[n].label = text[n - 1];
		e[n].color = mp_color_hlo((mp_hlo_category_t)c);
		e[n].key = CX_KEY_BOX;
		n++;
	}
	return cx_legend(a, x, y, max_w, e, n, draw);
}

const char *hx_buffer_text(char *buf, size_t size, size_t rank, const mp_hlo_buffer_t *b, int with_shape)
{
	char sz[32], shape[256];

	mp_fmt_bytes(sz, sizeof(sz), (uint64_t)(b->size > 0 ? b->size : 0));
	if (with_shape && b->shape && *b->shape)
		snprintf(buf, size, "#%zu %s \xC2\xB7 %s \xC2\xB7 %s", rank + 1, b->instruction_name,
			 hx_shape_text(shape, sizeof(shape), b->shape), sz);
	else
		snprintf(buf, size, "#%zu %s \xC2\xB7 %s", rank + 1, b->instruction_name, sz);
	return buf;
}

/* ---- the header ------------------------------------------------------ */

#define CARD_H (CX_SMALL * CX_LINE + CX_TITLE * CX_LINE + CX_SMALL * CX_LINE + 4)

#define NCARDS 7
#define CARD_MIN_W 150.0 /* "5,879,338,654 B" and "Total allocation" fit */

/* Cards in a row at this width, and rows. */
static size_t per_row(double width)
{
	double k = floor((width - 2 * CX_PAD) / CARD_MIN_W);

	return k < 1 ? 1 : k > NCARDS ? NCARDS : (size_t)k;
}

/* Whether the fragmentation is of a space too small to headline: the
 * temporaries' (total allocation - indefinite allocations), under 1 % of
 * the allocation. 97 % of 7 KiB beside 1.87 GiB of parameters and outputs
 * says nothing of the heap. */
static int minor_fragmentation(const mp_hlo_result_t *r)
{
	int64_t space = r ? r->total_allocation_bytes - r->indefinite_allocation_bytes : 0;

	return r && r->total_allocation_bytes > 0 && space >= 0 && (double)space * 100 < (double)r->total_allocation_bytes;
}

double hx_header_height(double width, const mp_hlo_result_t *r)
{
	size_t k = per_row(width), rows = (NCARDS + k - 1) / k;

	return cx_header_height(1) + (double)rows * (CARD_H + 6) - 6 + CX_PAD +
	       (r && minor_fragmentation(r) ? CX_SMALL * CX_LINE + 4 : 0);
}

typedef struct card {
	const char *label;
	char value[48];
	char detail[96];
} card_t;

static void grouped(char *buf, size_t size, int64_t bytes)
{
	char n[32];

	snprintf(buf, size, "%s B", mp_fmt_count(n, sizeof(n), (uint64_t)(bytes > 0 ? bytes : 0)));
}

int mp_chart_hlo_header(const mp_chart_area_t *a, const mp_hlo_result_t *r)
{
	card_t c[NCARDS];
	char title[512], sub[512], ev[64], pad[32];
	double x = a->box.x + CX_PAD, y, w = a->box.w - 2 * CX_PAD, cw;
	size_t n = 0;
	mp_style_t sep = cx_stroke(MP_COLOR_GRID, 1, MP_DASH_SOLID);
	int64_t overhead = r->peak_heap_bytes - r->peak_unpadded_heap_bytes, space;
	int minor = minor_fragmentation(r);

	snprintf(title, sizeof(title), "HLO memory viewer: %s", r->module_name ? r->module_name : "");
	if (r->trace_id >= 0)
		snprintf(ev, sizeof(ev), "heap-simulator trace %" PRId64 ", %s events", r->trace_id,
			 mp_fmt_count((char[32]){0}, 32, r->n_events));
	else
		snprintf(ev, sizeof(ev), "no heap-simulator trace");
	snprintf(sub, sizeof(sub), "program id %" PRIu64 " \xC2\xB7 entry %s \xC2\xB7 memory colour %" PRId64
		 " \xC2\xB7 %s \xC2\xB7 %s", r->program_id, r->entry_computation_name ? r->entry_computation_name : "",
		 r->color, ev, r->compat ? "xprof-compatible mode" : "default mode");
	y = cx_header(a, title, sub);

	c[n].label = "Peak heap";
	mp_fmt_bytes(c[n].value, sizeof(c[n].value), (uint64_t)r->peak_heap_bytes);
	grouped(c[n].detail, sizeof(c[n].detail), r->peak_heap_bytes);
	n++;
	c[n].label = "Unpadded peak";
	mp_fmt_bytes(c[n].value, sizeof(c[n].value), (uint64_t)r->peak_unpadded_heap_bytes);
	grouped(c[n].detail, sizeof(c[n].detail), r->peak_unpadded_heap_bytes);
	n++;
	c[n].label = "Padding";
	mp_fmt_bytes(c[n].value, sizeof(c[n].value), (uint64_t)(overhead > 0 ? overhead : 0));
	snprintf(pad, sizeof(pad), "%.1f %% of peak",
		 r->peak_heap_bytes > 0 ? 100.0 * (double)overhead / (double)r->peak_heap_bytes : 0.0);
	snprintf(c[n].detail, sizeof(c[n].detail), "%s", pad);
	n++;
	c[n].label = "Total allocation";
	mp_fmt_bytes(c[n].value, sizeof(c[n].value), (uint64_t)r->total_allocation_bytes);
	grouped(c[n].detail, sizeof(c[n].detail), r->total_allocation_bytes);
	n++;
	c[n].label = "Fragmentation";
	snprintf(c[n].value, sizeof(c[n].value), "%.2f %%", r->fragmentation_percent);
	space = r->total_allocation_bytes - r->indefinite_allocation_bytes;
	snprintf(c[n].detail, sizeof(c[n].detail), "of %s temp. space",
		 mp_fmt_bytes((char[32]){0}, 32, (uint64_t)(space > 0 ? space : 0)));
	n++;
	c[n].label = "Indefinite";
	mp_fmt_bytes(c[n].value, sizeof(c[n].value), (uint64_t)r->indefinite_bytes);
	snprintf(c[n].detail, sizeof(c[n].detail), "in every point");
	n++;
	c[n].label = "Buffers at peak";
	mp_fmt_count(c[n].value, sizeof(c[n].value), r->n_buffers);
	snprintf(c[n].detail, sizeof(c[n].detail), "small: %s",
		 mp_fmt_bytes((char[32]){0}, 32, (uint64_t)r->small_total_bytes));
	n++;

	cw = w / (double)per_row(a->box.w);
	for (size_t i = 0; i < n; i++) {
		size_t col = i % per_row(a->box.w), row = i / per_row(a->box.w);
		double cx = x + cw * (double)col, tw = cw - 12, ty = y + (double)row * (CARD_H + 6);
		long it;
		if (col)
			mp_scene_line(a->scene, cx_crisp(cx - 6), ty, cx_crisp(cx - 6), ty + CARD_H - 2, &sep);
		cx_text_fit(a, cx, ty, c[i].label, tw, CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT, MP_VALIGN_TOP,
			    MP_ELLIPSIS_END);
		ty += CX_SMALL * CX_LINE;
		/* a fragmentation of a sliver of the heap is not headlined */
		it = cx_text_fit(a, cx, ty, c[i].value, tw, CX_TITLE, !(i == 4 && minor),
				 i == 4 && minor ? MP_COLOR_MUTED : MP_COLOR_TEXT, MP_ALIGN_LEFT, MP_VALIGN_TOP,
				 MP_ELLIPSIS_END);
		if (i == 0)
			mp_scene_tag(a->scene, it, "header-peak");
		if (i == 4)
			mp_scene_tag(a->scene, it, "header-fragmentation");
		ty += CX_TITLE * CX_LINE;
		cx_text_fit(a, cx, ty, c[i].detail, tw, CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT, MP_VALIGN_TOP,
			    MP_ELLIPSIS_END);
	}
	if (minor) { /* the figure's context, under the cards */
		char note[512], tb[32], ib[32];
		double y0 = y + (double)((n + per_row(a->box.w) - 1) / per_row(a->box.w)) * (CARD_H + 6);
		snprintf(note, sizeof(note), "Fragmentation %.2f %% is of the %s that temporaries share (total allocation "
			 "\xE2\x88\x92 indefinite); %.4f %% of the %s allocated is indefinite (parameters, outputs), "
			 "never reused.", r->fragmentation_percent,
			 mp_fmt_bytes(tb, sizeof(tb), (uint64_t)(space > 0 ? space : 0)),
			 100.0 * (double)r->indefinite_allocation_bytes / (double)r->total_allocation_bytes,
			 mp_fmt_bytes(ib, sizeof(ib), (uint64_t)r->total_allocation_bytes));
		mp_scene_tag(a->scene, cx_text_fit(a, x, y0, note, w, CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT,
						   MP_VALIGN_TOP, MP_ELLIPSIS_END), "header-note");
	}
	return mp_scene_status(a->scene);
}
