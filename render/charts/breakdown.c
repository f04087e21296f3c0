/* breakdown.c - what was live at the peak, as horizontal bars: the largest
 * groups first, each named (op or function) with what it is (region,
 * dtype, shape, count x size) and its bytes; the rest summed in one bar,
 * so the bars add up to the heap at the peak. */
#include "charts_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define ROW_H 36.0
#define BAR_H 16.0

size_t mp_chart_bars_from_rows(mp_chart_bar_t *out, size_t max, const mp_solver_row_t *rows, size_t nrows,
			       const mp_source_t *src, char *text, size_t textsz, uint64_t *rest_bytes,
			       uint64_t *rest_count)
{
	size_t n = nrows < max ? nrows : max, used = 0;

	*rest_bytes = *rest_count = 0;
	for (size_t i = n; i < nrows; i++) {
		*rest_bytes += rows[i].total_bytes;
		(*rest_count)++;
	}
	for (size_t i = 0; i < n; i++) {
		const mp_solver_row_t *r = &rows[i];
		char each[32], *label = text + used, *detail;
		const char *dtype = mp_dtype_shown(r->dtype ? mp_source_string(src, r->dtype) : NULL);
		size_t room = textsz - used;
		int w;

		if (room < 8)
			return i;
		mp_fmt_bytes(each, sizeof(each), r->allocated_bytes);
		if (r->unknown_origin)
			w = snprintf(label, room, "(in use before the capture)");
		else if (r->op)
			w = snprintf(label, room, "%s", mp_source_string(src, r->op));
		else /* no op: what tells the groups apart is their size */
			w = snprintf(label, room, "(no op) · %" PRIu64 " × %s", r->occurrences, each);
		if (w < 0 || (size_t)w + 1 >= room)
			return i;
		detail = label + w + 1;
		room -= (size_t)w + 1;
		if (r->unknown_origin)
			w = snprintf(detail, room, "reported by the allocator, no tracked block");
		else
			w = snprintf(detail, room, "%s%s%s%s%s%s%" PRIu64 " × %s", mp_region_type_name(r->region),
				     *dtype ? " · " : "", dtype,
				     r->shape ? " " : "", r->shape ? mp_source_string(src, r->shape) : "", " · ",
				     r->occurrences, each);
		if (!r->op && !r->unknown_origin && w > 0) { /* the count is in the label already */
			if (r->region == MP_REGION_UNKNOWN && !*dtype && !r->shape)
				w = snprintf(detail, room, "%s", ""); /* nothing more is known */
			else
				w = snprintf(detail, room, "%s%s%s%s%s", mp_region_type_name(r->region), *dtype ? " · " : "",
					     dtype, r->shape ? " " : "",
					     r->shape ? mp_source_string(src, r->shape) : "");
		}
		if (w < 0 || (size_t)w + 1 >= room)
			return i;
		used += (size_t)(detail - label) + (size_t)w + 1;
		out[i].label = label;
		out[i].detail = detail;
		out[i].bytes = r->total_bytes;
		out[i].color = r->unknown_origin ? 0x8C8C8C : mp_color_region(r->region);
	}
	return n;
}

double mp_chart_breakdown_height(size_t nbars)
{
	return cx_header_height(1) + CX_SMALL * CX_LINE + 8 + ROW_H * (double)(nbars ? nbars : 1) + CX_PAD;
}

static void region_legend(const mp_chart_area_t *a, const mp_chart_bars_t *b, double x, double y, double w)
{
	cx_legend_entry_t e[MP_REGION_TYPE_MAX + 2];
	size_t n = 0;

	for (int t = 0; t <= MP_REGION_TYPE_MAX; t++) {
		int used = 0;
		for (size_t i = 0; i < b->n; i++)
			used |= b->bars[i].color == mp_color_region(t);
		if (used)
			e[n++] = (cx_legend_entry_t){mp_region_type_name(t), mp_color_region(t), CX_KEY_BOX};
	}
	/* bars of no known type only (a PyTorch snapshot's, JAX's): a lone
	 * "unknown" would tell nothing apart */
	if (n == 1 && !strcmp(e[0].label, mp_region_type_name(MP_REGION_UNKNOWN)))
		n = 0;
	if (n)
		cx_legend(a, x, y, w, e, n, 1);
}

int mp_chart_breakdown(const mp_chart_area_t *a, const mp_chart_bars_t *b)
{
	double y = cx_header(a, b->title, b->subtitle), x0 = a->box.x + CX_PAD, w = a->box.w - 2 * CX_PAD;
	double label_w = w * 0.36, bar_x = x0 + label_w + 10, value_w, bar_w;
	uint64_t max = b->rest_bytes;
	size_t rows = b->n + (b->rest_count ? 1 : 0);
	char value[64], rest_label[64];

	if (b->legend_regions) {
		region_legend(a, b, x0, y, w);
		y += CX_SMALL * CX_LINE + 8;
	}
	value_w = cx_width(a, "999.99 MiB (100.0 %)", CX_SMALL, 0) + 12;
	bar_w = x0 + w - value_w - bar_x;
	for (size_t i = 0; i < b->n; i++)
		if (b->bars[i].bytes > max)
			max = b->bars[i].bytes;
	if (!rows) {
		cx_text(a, x0, y, "nothing was live", CX_TEXT, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT, MP_VALIGN_TOP);
		return mp_scene_status(a->scene);
	}
	{
		uint64_t total = b->rest_bytes;
		for (size_t i = 0; i < b->n; i++)
			total += b->bars[i].bytes;
		for (size_t i = 0; i < rows; i++) {
			int rest = i == b->n;
			const char *label = rest ? rest_label : b->bars[i].label[0] ? b->bars[i].label : "(no op)";
			uint64_t bytes = rest ? b->rest_bytes : b->bars[i].bytes;
			uint32_t color = rest ? 0xBBBBBB : b->bars[i].color;
			double len = max ? bar_w * (double)bytes / (double)max : 0, ry = y + (double)i * ROW_H;
			mp_style_t st = cx_fill(color);
			char hb[32];
			if (rest)
				snprintf(rest_label, sizeof(rest_label), "other (%" PRIu64 " %s)", b->rest_count,
					 b->rest_what ? b->rest_what : "groups");
			mp_scene_tag(a->scene,
				     cx_text_fit(a, x0, ry + 1, label, label_w, CX_TEXT, 0, MP_COLOR_TEXT, MP_ALIGN_LEFT,
						 MP_VALIGN_TOP, MP_ELLIPSIS_MIDDLE),
				     "bar-label");
			if (!rest && b->bars[i].detail && b->bars[i].detail[0])
				cx_text_fit(a, x0, ry + 1 + CX_TEXT * CX_LINE, b->bars[i].detail, label_w, CX_TINY, 0,
					    MP_COLOR_MUTED, MP_ALIGN_LEFT, MP_VALIGN_TOP, MP_ELLIPSIS_MIDDLE);
			if (len < 1 && bytes)
				len = 1; /* never invisible */
			mp_scene_tag(a->scene, mp_scene_rect(a->scene, bar_x, ry + 3, len, BAR_H, &st), "bar");
			snprintf(value, sizeof(value), "%s (%.1f %%)", mp_fmt_bytes(hb, sizeof(hb), bytes),
				 total ? 100.0 * (double)bytes / (double)total : 0.0);
			cx_text(a, bar_x + len + 6, ry + 3 + BAR_H / 2, value, CX_SMALL, 0, MP_COLOR_TEXT, MP_ALIGN_LEFT,
				MP_VALIGN_MIDDLE);
		}
	}
	return mp_scene_status(a->scene);
}
