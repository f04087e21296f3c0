/* hlo_table.c - the details of the largest buffers at the peak, what the
 * reference shows in a card when the mouse is over a bar: name, type,
 * size, unpadded size, shape, op name, source, span.
 *
 * Columns are as wide as their widest cell (measured); the four free-text
 * columns share what is left, none wider than it needs, and cells that do
 * not fit are shortened where they say least (op names and sources keep
 * their end: "…/decoder/div", "…/models.py:328"). */
#include "hlo_charts_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_H 18.0
#define HEAD_H 20.0
#define CELL_PAD 12.0
#define NCOL 9
#define CELL 2048 /* an op name whole, its parameters dropped */
#define FLEX_MIN 120.0 /* a free-text column narrower than this says nothing */

double mp_chart_hlo_table_height(size_t rows)
{
	if (rows > HX_MAX_TABLE_ROWS)
		rows = HX_MAX_TABLE_ROWS;
	return cx_header_height(1) + HEAD_H + (double)(rows ? rows : 1) * ROW_H + 10;
}

enum { C_RANK, C_NAME, C_TYPE, C_SIZE, C_UNPADDED, C_SHAPE, C_OP, C_SOURCE, C_SPAN };

static const struct {
	const char *head;
	int flex;       /* shares the width left */
	int right;      /* right-aligned (numbers) */
	int ellipsis;   /* mp_ellipsis_t */
} cols[NCOL] = {
	{"#", 0, 0, MP_ELLIPSIS_END},           {"buffer", 1, 0, MP_ELLIPSIS_MIDDLE},
	{"type", 0, 0, MP_ELLIPSIS_END},        {"size", 0, 1, MP_ELLIPSIS_END},
	{"unpadded", 0, 1, MP_ELLIPSIS_END},    {"shape", 1, 0, MP_ELLIPSIS_END},
	{"op name", 1, 0, MP_ELLIPSIS_START},   {"source", 1, 0, MP_ELLIPSIS_START},
	{"span", 0, 1, MP_ELLIPSIS_END},
};

#define SWATCH 14.0 /* the type's colour before "#n" */

/* The text of cell c of buffer b (rank from 0): long strings borrowed
 * from b, short ones written into buf. */
static const char *cell_raw(int c, const mp_hlo_buffer_t *b, size_t rank, char *buf, size_t size)
{
	switch (c) {
	case C_RANK:
		snprintf(buf, size, "#%zu", rank + 1);
		return buf;
	case C_NAME:
		return b->instruction_name ? b->instruction_name : "";
	case C_TYPE:
		return mp_hlo_category_name(b->category);
	case C_SIZE:
		return mp_fmt_bytes(buf, size, (uint64_t)(b->size > 0 ? b->size : 0));
	case C_UNPADDED:
		if (b->unpadded_size <= 0)
			return "\xE2\x80\x94";
		mp_fmt_bytes(buf, size, (uint64_t)b->unpadded_size);
		if (b->unpadded_size < b->size) { /* the padding's cost, as the reference's card says it */
			size_t n = strlen(buf);
			snprintf(buf + n, size - n, " (%.1f\xC3\x97)", (double)b->size / (double)b->unpadded_size);
		}
		return buf;
	case C_SHAPE:
		return hx_shape_text(buf, size, b->shape);
	case C_OP:
		return b->op_name && *b->op_name ? hx_op_text(buf, size, b->op_name) : (b->opcode ? b->opcode : "");
	case C_SOURCE:
		return b->source ? b->source : "";
	default:
		if (!b->has_span)
			return "\xE2\x80\x94";
		snprintf(buf, size, "%" PRId64 "\xE2\x80\x93%" PRId64, b->span_start, b->span_limit);
		return buf;
	}
}

/* The same, in a copy the caller frees. */
static char *cell(int c, const mp_hlo_buffer_t *b, size_t rank)
{
	char buf[CELL];

	return hx_dup(cell_raw(c, b, rank, buf, sizeof(buf)));
}

/* Share `room` px between the flexible columns: each gets what it needs
 * when all fit, else the name gets what it needs (up to 40 %), then the
 * shape (up to half of the rest: a shape cut loses dims), the narrow ones
 * theirs and the wide ones split the rest evenly (water filling). */
static void share(double *w, const double *need, const int *show, double room)
{
	int done[NCOL] = {0}, left = 0;
	double total = 0;

	for (int c = 0; c < NCOL; c++)
		if ((cols[c].flex && show[c])) {
			total += need[c];
			left++;
		}
	if (total <= room) {
		for (int c = 0; c < NCOL; c++)
			if ((cols[c].flex && show[c]))
				w[c] = need[c];
		for (int c = 0; c < NCOL; c++) /* the rest evenly: no column pushed to the far right */
			if ((cols[c].flex && show[c]))
				w[c] += (room - total) / left;
		return;
	}
	/* the name is what a reader looks for: it is served first */
	w[C_NAME] = need[C_NAME] < 0.4 * room ? need[C_NAME] : 0.4 * room;
	room -= w[C_NAME];
	done[C_NAME] = 1;
	left--;
	if (show[C_SHAPE]) {
		w[C_SHAPE] = need[C_SHAPE] < 0.5 * room ? need[C_SHAPE] : 0.5 * room;
		room -= w[C_SHAPE];
		done[C_SHAPE] = 1;
		left--;
	}
	for (int changed = 1; changed && left;) {
		double fair = room / left;
		changed = 0;
		for (int c = 0; c < NCOL; c++)
			if ((cols[c].flex && show[c]) && !done[c] && need[c] <= fair) {
				w[c] = need[c];
				room -= need[c];
				done[c] = 1;
				left--;
				changed = 1;
			}
	}
	for (int c = 0; c < NCOL; c++)
		if ((cols[c].flex && show[c]) && !done[c])
			w[c] = room / left;
	if (!left) /* every column had its need but the name and the shape: theirs first */
		for (int k = 0; k < 2 && room > 0; k++) {
			int c = k ? C_NAME : C_SHAPE;
			double more = show[c] && need[c] > w[c] ? need[c] - w[c] : 0;
			more = more < room ? more : room;
			w[c] += more;
			room -= more;
		}
}

int hx_table(const mp_chart_area_t *a, const mp_hlo_result_t *r, size_t rows, size_t lifetimes)
{
	size_t idx[HX_MAX_TABLE_ROWS], n = hx_pick_table(r, rows, lifetimes, idx), *rank = hx_ranks(r);
	size_t colored[HX_PALETTE], ncolored = hx_pick_colored(r, colored);
	static const int drop[] = {C_SOURCE, C_OP, C_TYPE, C_UNPADDED, C_SHAPE, C_SPAN};
	int show[NCOL];
	double need[NCOL], w[NCOL], x0 = a->box.x + CX_PAD, width = a->box.w - 2 * CX_PAD, fixed = 0, y, cx;
	mp_style_t zebra = cx_fill(0xF3F3F3), white = cx_fill(MP_COLOR_BACKGROUND);
	mp_style_t rule = cx_stroke(MP_COLOR_AXIS, 1, MP_DASH_SOLID);

	if (r->n_buffers && !rank)
		return MP_ENOMEM;
	{ /* the ranks past the row cap, where the lanes reach beyond it, are said */
		char sub[360], gap[96] = "";
		for (size_t k = 1; k < n && !gap[0]; k++)
			if (rank[idx[k]] > rank[idx[k - 1]] + 1 && r->buffers[r->by_size[rank[idx[k - 1]] + 1]].category !=
									 MP_HLO_CAT_SMALL)
				snprintf(gap, sizeof(gap), " (#%zu\xE2\x80\x93#%zu not listed: %d rows at most)",
					 rank[idx[k - 1]] + 2, rank[idx[k]], HX_MAX_TABLE_ROWS);
		snprintf(sub, sizeof(sub), "By size, every rank down to the last lane's%s; #n and colour as in the "
			 "charts. Span: the trace's events that allocate and release the buffer (\xE2\x80\x94: live "
			 "throughout).", gap);
		y = cx_header(a, "Largest buffers at the peak", sub);
	}
	for (int c = 0; c < NCOL; c++) {
		need[c] = cx_width(a, cols[c].head, CX_SMALL, 1);
		for (size_t k = 0; k < n; k++) {
			char *t = cell(c, &r->buffers[idx[k]], rank[idx[k]]);
			double cw = t ? cx_width(a, t, CX_SMALL, c == C_NAME) : 0;
			free(t);
			if (c == C_RANK)
				cw += SWATCH + 4;
			if (cw > need[c])
				need[c] = cw;
		}
		need[c] += CELL_PAD;
		w[c] = need[c];
		show[c] = 1;
	}
	/* a narrow picture drops the columns least needed to tell buffers apart */
	for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]); k++) {
		double least = 0;
		for (int c = 0; c < NCOL; c++)
			if (show[c])
				least += cols[c].flex && need[c] > FLEX_MIN ? FLEX_MIN : need[c];
		if (least <= width)
			break;
		show[drop[k]] = 0;
	}
	for (int c = 0; c < NCOL; c++) {
		if (!show[c])
			w[c] = 0;
		else if (!cols[c].flex)
			fixed += need[c];
	}
	share(w, need, show, width - fixed > 0 ? width - fixed : 0);

	cx = x0;
	for (int c = 0; c < NCOL; c++) {
		double tx = cols[c].right ? cx + w[c] - CELL_PAD : cx;
		if (!show[c])
			continue;
		cx_text_fit(a, tx, y + HEAD_H / 2, cols[c].head, w[c] - CELL_PAD, CX_SMALL, 1, MP_COLOR_TEXT,
			    cols[c].right ? MP_ALIGN_RIGHT : MP_ALIGN_LEFT, MP_VALIGN_MIDDLE, MP_ELLIPSIS_END);
		cx += w[c];
	}
	y += HEAD_H;
	mp_scene_line(a->scene, x0, cx_crisp(y) - 1, x0 + width, cx_crisp(y) - 1, &rule);
	if (!n)
		cx_text(a, x0, y + ROW_H / 2, "no buffer of this colour is live at the peak", CX_SMALL, 0, MP_COLOR_MUTED,
			MP_ALIGN_LEFT, MP_VALIGN_MIDDLE);
	for (size_t k = 0; k < n; k++, y += ROW_H) {
		const mp_hlo_buffer_t *b = &r->buffers[idx[k]];
		mp_style_t sw = cx_fill(hx_buffer_color(colored, ncolored, idx[k]));

		mp_scene_tag(a->scene, mp_scene_rect(a->scene, x0, y, width, ROW_H, k % 2 ? &zebra : &white), "table-row");
		sw.stroke = MP_RGBA(0x000000, 0x40);
		sw.width = 0.5;
		mp_scene_rect(a->scene, x0, y + (ROW_H - 10) / 2, SWATCH, 10, &sw);
		cx = x0;
		for (int c = 0; c < NCOL; c++) {
			char *t = show[c] ? cell(c, b, rank[idx[k]]) : NULL;
			double tx = cols[c].right ? cx + w[c] - CELL_PAD : cx + (c == C_RANK ? SWATCH + 4 : 0);
			double max = w[c] - CELL_PAD - (c == C_RANK ? SWATCH + 4 : 0);
			if (t) {
				long it = cx_text_fit(a, tx, y + ROW_H / 2, t, max, CX_SMALL, c == C_NAME, MP_COLOR_TEXT,
						      cols[c].right ? MP_ALIGN_RIGHT : MP_ALIGN_LEFT, MP_VALIGN_MIDDLE,
						      (mp_ellipsis_t)cols[c].ellipsis);
				if (c == C_OP || c == C_SHAPE) /* what the cell shortened, for a reader pointing at it */
					mp_scene_tag(a->scene, it, c == C_OP ? "table-op" : "table-shape");
				if (c == C_OP && b->op_name && *b->op_name)
					mp_scene_note(a->scene, it, b->op_name, (uint32_t)idx[k]);
			}
			free(t);
			cx += w[c];
		}
	}
	free(rank);
	return mp_scene_status(a->scene);
}

int mp_chart_hlo_table(const mp_chart_area_t *a, const mp_hlo_result_t *r, size_t rows)
{
	return hx_table(a, r, rows, 0);
}
