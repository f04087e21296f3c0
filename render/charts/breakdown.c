/* breakdown.c - what was live at the peak, as horizontal bars: the largest
 * groups first, each named (op or function) with what it is (region,
 * dtype, shape, count x size) and its bytes; the rest summed in one bar,
 * so the bars add up to the heap at the peak. */
#include "charts_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_H 36.0
#define BAR_H 16.0

/* The rows of an op are one bar: sorted by op, then by size, largest
 * first; a row without an op (or of bytes from before the capture) is a
 * group alone. */
typedef struct member {
	uint32_t op; /* 0: alone */
	uint64_t each;
	size_t i;
} member_t;

typedef struct group {
	size_t first, n; /* members[first .. first + n) */
	size_t order;    /* the least row index: ties keep the solver's order */
	uint64_t total;
} group_t;

static int by_op_then_size(const void *x, const void *y)
{
	const member_t *a = x, *b = y;

	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	if (a->each != b->each)
		return a->each > b->each ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int by_total(const void *x, const void *y)
{
	const group_t *a = x, *b = y;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* "persist · uint8 [1024] · 4 × 4.00 MiB, 2 × 1.00 MiB": the regions, the
 * dtype and shape when the rows share them, then count × size per size
 * (largest first; the count in the label already for a row without op). */
static void group_detail(char *d, size_t dsz, const mp_solver_row_t *rows, const member_t *m, size_t n,
			 const mp_source_t *src)
{
	const mp_solver_row_t *r0 = &rows[m[0].i];
	const char *dtype = mp_dtype_shown(r0->dtype ? mp_source_string(src, r0->dtype) : NULL);
	unsigned seen = 0;
	int same_dtype = 1, same_shape = 1, no_op = !r0->op;
	size_t len = 0, shown = 0;
	char each[32];

#define PUT(...)                                                                                                       \
	do {                                                                                                           \
		int w_ = snprintf(d + len, dsz - len, __VA_ARGS__);                                                     \
		if (w_ > 0)                                                                                            \
			len = len + (size_t)w_ < dsz ? len + (size_t)w_ : dsz - 1;                                     \
	} while (0)
	d[0] = '\0';
	for (size_t k = 0; k < n; k++) {
		const mp_solver_row_t *r = &rows[m[k].i];
		same_dtype &= r->dtype == r0->dtype;
		same_shape &= r->shape == r0->shape;
		if (r->region <= 31 && !(seen & 1u << r->region)) {
			PUT("%s%s", seen ? "/" : "", mp_region_type_name(r->region));
			seen |= 1u << r->region;
		}
	}
	if (no_op && r0->region == MP_REGION_UNKNOWN && !*dtype && !r0->shape) {
		d[0] = '\0'; /* nothing more is known */
		return;
	}
	if (same_dtype && *dtype)
		PUT(" · %s", dtype);
	if (same_shape && r0->shape)
		PUT(" %s", mp_source_string(src, r0->shape));
	if (no_op)
		return;
	for (size_t k = 0; k < n;) {
		uint64_t count = 0, size = rows[m[k].i].allocated_bytes;
		if (shown == 4) { /* the rest counted, not listed */
			size_t sizes_left = 1;
			for (size_t j = k + 1; j < n; j++)
				sizes_left += rows[m[j].i].allocated_bytes != rows[m[j - 1].i].allocated_bytes;
			PUT(", %zu more size%s", sizes_left, sizes_left == 1 ? "" : "s");
			break;
		}
		for (; k < n && rows[m[k].i].allocated_bytes == size; k++)
			count += rows[m[k].i].occurrences;
		mp_fmt_bytes(each, sizeof(each), size);
		PUT("%s%" PRIu64 " × %s", shown ? ", " : " · ", count, each);
		shown++;
	}
#undef PUT
}

size_t mp_chart_bars_from_rows(mp_chart_bar_t *out, size_t max, const mp_solver_row_t *rows, size_t nrows,
			       const mp_source_t *src, char *text, size_t textsz, uint64_t *rest_bytes,
			       uint64_t *rest_count)
{
	member_t *m = malloc((nrows ? nrows : 1) * sizeof(*m));
	group_t *g = malloc((nrows ? nrows : 1) * sizeof(*g));
	size_t ng = 0, n, used = 0, made = 0;

	*rest_bytes = *rest_count = 0;
	if (!m || !g) {
		free(m);
		free(g);
		for (size_t i = 0; i < nrows; i++)
			*rest_bytes += rows[i].total_bytes;
		*rest_count = nrows;
		return 0;
	}
	for (size_t i = 0; i < nrows; i++)
		m[i] = (member_t){rows[i].unknown_origin ? 0 : rows[i].op, rows[i].allocated_bytes, i};
	qsort(m, nrows, sizeof(*m), by_op_then_size);
	for (size_t k = 0; k < nrows; k++) {
		if (!ng || !m[k].op || m[k].op != m[g[ng - 1].first].op)
			g[ng++] = (group_t){k, 0, m[k].i, 0};
		g[ng - 1].n++;
		g[ng - 1].total += rows[m[k].i].total_bytes;
		if (m[k].i < g[ng - 1].order)
			g[ng - 1].order = m[k].i;
	}
	qsort(g, ng, sizeof(*g), by_total);
	n = ng < max ? ng : max;
	for (size_t i = n; i < ng; i++) {
		*rest_bytes += g[i].total;
		(*rest_count)++;
	}
	for (size_t i = 0; i < n; i++) {
		const member_t *gm = &m[g[i].first];
		const mp_solver_row_t *r = &rows[gm[0].i];
		char each[32], detail[512], *label = text + used;
		size_t room = textsz - used;
		int w;

		mp_fmt_bytes(each, sizeof(each), r->allocated_bytes);
		if (room < 8)
			break;
		if (r->unknown_origin)
			w = snprintf(label, room, "(in use before the capture)");
		else if (r->op)
			w = snprintf(label, room, "%s", mp_source_string(src, r->op));
		else /* no op: what tells the groups apart is their size */
			w = snprintf(label, room, "(no op) · %" PRIu64 " × %s", r->occurrences, each);
		if (w < 0 || (size_t)w + 1 >= room)
			break;
		room -= (size_t)w + 1;
		if (r->unknown_origin)
			snprintf(detail, sizeof(detail), "reported by the allocator, no tracked block");
		else
			group_detail(detail, sizeof(detail), rows, gm, g[i].n, src);
		if (strlen(detail) + 1 > room)
			break;
		memcpy(label + w + 1, detail, strlen(detail) + 1);
		used += (size_t)w + 1 + strlen(detail) + 1;
		out[i].label = label;
		out[i].detail = label + w + 1;
		out[i].bytes = g[i].total;
		/* the colour of its largest part */
		{
			const mp_solver_row_t *big = r;
			for (size_t k = 1; k < g[i].n; k++)
				if (rows[gm[k].i].total_bytes > big->total_bytes)
					big = &rows[gm[k].i];
			out[i].color = r->unknown_origin ? 0x8C8C8C : mp_color_region(big->region);
		}
		made++;
	}
	for (size_t i = made; i < n; i++) { /* out of room for text: summed with the rest */
		*rest_bytes += g[i].total;
		(*rest_count)++;
	}
	free(m);
	free(g);
	return made;
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

/* The bar's note, for an HTML report's hover and table: its full name (the
 * label drawn may be shortened), its exact bytes and share, what it is, and
 * the chart it is in:
 * "NAME\nbytes: 1048576 (1.00 MiB (12.5 %))\nDETAIL\nchart: TITLE". */
static int bar_note(const mp_chart_area_t *a, const mp_chart_bars_t *b, long item, size_t i, const char *label,
		    uint64_t bytes, const char *value)
{
	const char *detail = i < b->n && b->bars[i].detail ? b->bars[i].detail : "";
	const char *title = b->title ? b->title : "";
	size_t n = strlen(label) + strlen(detail) + strlen(title) + strlen(value) + 96;
	char *t = malloc(n);

	if (!t)
		return MP_ENOMEM;
	snprintf(t, n, "%s\nbytes: %" PRIu64 " (%s)%s%s\nchart: %s", label, bytes, value, detail[0] ? "\n" : "", detail,
		 title);
	mp_scene_note(a->scene, item, t, (uint32_t)i);
	free(t);
	return 0;
}

int mp_chart_breakdown(const mp_chart_area_t *a, const mp_chart_bars_t *b)
{
	double y = cx_header(a, b->title, b->subtitle), x0 = a->box.x + CX_PAD, w = a->box.w - 2 * CX_PAD;
	double label_w = w * 0.36, bar_x, value_w, bar_w, need = 0;
	uint64_t max = b->rest_bytes;
	size_t rows = b->n + (b->rest_count ? 1 : 0);
	char value[64], rest_label[64], fitted[1024];
	long item;
	const char **names = calloc(b->n ? b->n : 1, sizeof(*names));

	if (!names)
		return MP_ENOMEM;
	value_w = cx_width(a, "999.99 MiB (100.0 %)", CX_SMALL, 0) + 12;
	/* the label column grows to the longest name or detail, up to what
	 * leaves the bars 40 % of the width */
	for (size_t i = 0; i < b->n; i++) {
		double lw = cx_width(a, b->bars[i].label, CX_TEXT, 0);
		names[i] = b->bars[i].label[0] ? b->bars[i].label : "(no op)";
		if (lw > need)
			need = lw;
		if (b->bars[i].detail && (lw = cx_width(a, b->bars[i].detail, CX_TINY, 0)) > need)
			need = lw;
	}
	if (need + 2 > label_w)
		label_w = need + 2;
	if (label_w > w - value_w - 10 - w * 0.4)
		label_w = w - value_w - 10 - w * 0.4;
	if (label_w < w * 0.36)
		label_w = w * 0.36;
	bar_x = x0 + label_w + 10;

	if (b->legend_regions) {
		region_legend(a, b, x0, y, w);
		y += CX_SMALL * CX_LINE + 8;
	}
	bar_w = x0 + w - value_w - bar_x;
	for (size_t i = 0; i < b->n; i++)
		if (b->bars[i].bytes > max)
			max = b->bars[i].bytes;
	if (!rows) {
		cx_text(a, x0, y, "nothing was live", CX_TEXT, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT, MP_VALIGN_TOP);
		free(names);
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
			if (rest)
				mp_text_fit(a->measure, label, CX_TEXT, 0, label_w, MP_ELLIPSIS_MIDDLE, fitted, sizeof(fitted));
			else /* keeping what tells it from the other names */
				mp_text_fit_apart(a->measure, names, b->n, i, CX_TEXT, 0, label_w, fitted, sizeof(fitted));
			mp_scene_tag(a->scene,
				     cx_text(a, x0, ry + 1, fitted, CX_TEXT, 0, MP_COLOR_TEXT, MP_ALIGN_LEFT, MP_VALIGN_TOP),
				     "bar-label");
			if (!rest && b->bars[i].detail && b->bars[i].detail[0])
				cx_text_fit(a, x0, ry + 1 + CX_TEXT * CX_LINE, b->bars[i].detail, label_w, CX_TINY, 0,
					    MP_COLOR_MUTED, MP_ALIGN_LEFT, MP_VALIGN_TOP, MP_ELLIPSIS_MIDDLE);
			if (len < 1 && bytes)
				len = 1; /* never invisible */
			item = mp_scene_rect(a->scene, bar_x, ry + 3, len, BAR_H, &st);
			mp_scene_tag(a->scene, item, "bar");
			snprintf(value, sizeof(value), "%s (%.1f %%)", mp_fmt_bytes(hb, sizeof(hb), bytes),
				 total ? 100.0 * (double)bytes / (double)total : 0.0);
			if (bar_note(a, b, item, i, label, bytes, value) < 0) {
				free(names);
				return MP_ENOMEM;
			}
			cx_text(a, bar_x + len + 6, ry + 3 + BAR_H / 2, value, CX_SMALL, 0, MP_COLOR_TEXT, MP_ALIGN_LEFT,
				MP_VALIGN_MIDDLE);
		}
	}
	free(names);
	return mp_scene_status(a->scene);
}
