/* timeline_labels.c - the labels of the timeline's peak and first failed
 * allocation: boxed, beside their line, never over what was in use while
 * the scale can make room above it. */
#include "timeline_impl.h"

#include <stdint.h>
#include <stdlib.h>

/* A two-line label (bold first line) in a white box; returns the box size. */
void tl_label_size(const mp_chart_area_t *a, const char *l1, const char *l2, double *w, double *h)
{
	double w1 = cx_width(a, l1, CX_TEXT, 1), w2 = l2[0] ? cx_width(a, l2, CX_SMALL, 0) : 0;

	*w = (w1 > w2 ? w1 : w2) + 8;
	*h = CX_TEXT * CX_LINE + (l2[0] ? CX_SMALL * CX_LINE : 0) + 4;
}

void tl_draw_label(const mp_chart_area_t *a, const mp_box_t *b, const char *l1, const char *l2, uint32_t color,
		   const char *tag, double anchor_x)
{
	mp_style_t bg = {MP_RGBA(0xFFFFFF, 0xE6), MP_NONE, 0, 0};
	long item;
	double edge = anchor_x < b->x ? b->x : b->x + b->w;

	if (fabs(edge - anchor_x) > 10) { /* put away from its line: a leader joins them */
		mp_style_t ls = cx_stroke(MP_COLOR_MUTED, 1, MP_DASH_SOLID);
		double y = cx_crisp(b->y + b->h / 2);
		mp_scene_tag(a->scene, mp_scene_line(a->scene, anchor_x, y, edge, y, &ls), "label-leader");
	}

	mp_scene_tag(a->scene, mp_scene_rect(a->scene, b->x, b->y, b->w, b->h, &bg), "label-box");
	item = cx_text_fit(a, b->x + 4, b->y + 2, l1, b->w - 8, CX_TEXT, 1, color, MP_ALIGN_LEFT, MP_VALIGN_TOP,
			   MP_ELLIPSIS_END);
	mp_scene_tag(a->scene, item, tag);
	if (l2[0])
		cx_text_fit(a, b->x + 4, b->y + 2 + CX_TEXT * CX_LINE, l2, b->w - 8, CX_SMALL, 0, MP_COLOR_TEXT,
			    MP_ALIGN_LEFT, MP_VALIGN_TOP, MP_ELLIPSIS_END);
}

/* Where a label at anchor x may go: beside the line at the top first,
 * then lower, then at the data's height, then farther along the top (a
 * leader line then joins it to its mark), last against an edge; never
 * over the line while a place beside it is free. */
void tl_candidates(mp_label_t *l, double x, const mp_box_t *plot, double y_hint)
{
	double top = plot->y + 4, row2 = top + l->h + 4, mid = y_hint - l->h / 2, far = 0.12 * plot->w;
	size_t n = 0;

	l->cand[n++] = (mp_box_t){x + 6, top, 0, 0};
	l->cand[n++] = (mp_box_t){x - 6 - l->w, top, 0, 0};
	l->cand[n++] = (mp_box_t){x + 6, row2, 0, 0};
	l->cand[n++] = (mp_box_t){x - 6 - l->w, row2, 0, 0};
	l->cand[n++] = (mp_box_t){x + 6, mid, 0, 0};
	l->cand[n++] = (mp_box_t){x - 6 - l->w, mid, 0, 0};
	for (int k = 1; k <= 2; k++) {
		l->cand[n++] = (mp_box_t){x + 6 + k * far, top, 0, 0};
		l->cand[n++] = (mp_box_t){x - 6 - k * far - l->w, top, 0, 0};
		l->cand[n++] = (mp_box_t){x + 6 + k * far, row2, 0, 0};
		l->cand[n++] = (mp_box_t){x - 6 - k * far - l->w, row2, 0, 0};
	}
	/* last, a line too near an edge for either side: against the edge */
	l->cand[n++] = (mp_box_t){plot->x + plot->w - l->w, top, 0, 0};
	l->cand[n++] = (mp_box_t){plot->x, top, 0, 0};
	l->ncand = n;
}

/* What a label must not hide, as boxes: the in-use area (a box per run of
 * columns of one height), the reserved line, the fragmentation line (a
 * box per column, joined to the column before, as the line is drawn) and
 * the peak's line. With frag 0, the fragmentation line is left out.
 * Returns the count; *out is the caller's to free (NULL: out of memory). */
static size_t data_boxes(const tl_t *t, double peak_x, int frag, mp_box_t **out)
{
	mp_box_t *b = malloc((3 * t->ncol + 1) * sizeof(*b));
	double bottom = t->plot.y + t->plot.h, flo = 0, fhi = 0;
	size_t n = 0, use_run = SIZE_MAX;
	int fprev = 0;

	if (!(*out = b))
		return 0;
	for (size_t c = 0; c < t->ncol; c++) {
		double x = t->plot.x + (double)c;
		if (t->use[c].has && tl_py(t, t->use[c].hi) < bottom) {
			double y = tl_py(t, t->use[c].hi);
			if (use_run != SIZE_MAX && b[use_run].y == y && b[use_run].x + b[use_run].w == x)
				b[use_run].w += 1;
			else
				b[use_run = n++] = (mp_box_t){x, y, 1, bottom - y};
		}
		if (t->has_resv && t->resv[c].has) {
			double y = tl_py(t, t->resv[c].hi);
			b[n++] = (mp_box_t){x, y - 1, 1, 3};
		}
		if (frag && t->has_frag && t->frag[c].has) {
			double hi = mp_scale_map(&t->sf, t->frag[c].hi), lo = mp_scale_map(&t->sf, t->frag[c].lo);
			/* (y grows downwards: hi is the upper end) with the step from the column before */
			double y0 = fprev && fhi < hi ? fhi : hi, y1 = fprev && flo > lo ? flo : lo;
			b[n++] = (mp_box_t){x - 1, y0 - 1, 2, y1 - y0 + 2};
			flo = lo;
			fhi = hi;
			fprev = 1;
		} else {
			fprev = 0;
		}
	}
	b[n++] = (mp_box_t){peak_x - 1, t->plot.y, 2, t->plot.h};
	return n;
}

#define NEAR 6 /* tl_candidates' places beside the line, before the far ones */

/* Place the labels clear of what is drawn, at their first `ncand`
 * candidates (all: 0); returns how many were placed. */
static long place(tl_t *t, mp_label_t *labels, size_t n, double peak_x, int frag, size_t ncand)
{
	size_t keep[8];
	mp_box_t *ob;
	size_t nob = data_boxes(t, peak_x, frag, &ob);
	long rc;

	if (!ob)
		return MP_ENOMEM;
	for (size_t i = 0; i < n && i < 8; i++) {
		keep[i] = labels[i].ncand;
		if (ncand && labels[i].ncand > ncand)
			labels[i].ncand = ncand;
	}
	rc = mp_labels_place(labels, n, &t->plot, ob, nob, 3);
	for (size_t i = 0; i < n && i < 8; i++)
		labels[i].ncand = keep[i];
	free(ob);
	return rc;
}

/* Place the labels (the peak's and the first failed allocation's) where
 * they hide nothing drawn: not what was in use, not the reserved or the
 * fragmentation line, not the peak's line. Beside their line first; when
 * one has no such place there (a peak near the plot's edge, a failed
 * allocation beside the peak, a short panel among many), the top of the y
 * scale is raised so that the band at the top, where the labels go first,
 * stacked, is clear of what was in use (and of the reserved line), if
 * that puts them beside their lines; else farther along (a leader joins
 * them to their line). The fragmentation line, on an axis of its own no
 * scale moves, may fill every place: then only what is in use is kept
 * clear, and last (a plot too short for any of this) nothing. Returns the
 * number placed, or MP_ENOMEM. */
long tl_place_labels(tl_t *t, mp_ticks_t *ty, mp_label_t *labels, size_t n, double peak_x)
{
	double need = 8, top, d1 = t->sy.d1; /* the top candidates' offset and a gap */
	mp_ticks_t was = *ty;
	long rc = place(t, labels, n, peak_x, 1, NEAR), near = rc;

	if (rc < 0 || (size_t)rc == n)
		return rc;
	for (size_t i = 0; i < n; i++)
		need += labels[i].h + 4;
	top = (double)t->drawn * t->plot.h / (t->plot.h - need);
	if (need <= t->plot.h * 0.5 && top > t->sy.d1) {
		t->sy.d1 = top;
		if ((rc = tl_fit_y_ticks(t, ty, top)) < 0)
			return rc;
		if ((rc = place(t, labels, n, peak_x, 1, NEAR)) < 0 || (size_t)rc == n)
			return rc;
		if (rc <= near) { /* it put no more beside their line: the data keeps its height */
			t->sy.d1 = d1;
			*ty = was;
		}
	}
	if ((rc = place(t, labels, n, peak_x, 1, 0)) < 0 || (size_t)rc == n)
		return rc;
	if ((rc = place(t, labels, n, peak_x, 0, 0)) < 0 || (size_t)rc == n)
		return rc;
	return mp_labels_place(labels, n, &t->plot, NULL, 0, 3);
}

int tl_fit_y_ticks(tl_t *t, mp_ticks_t *ty, double top)
{
	/* the margin was measured on the first ticks; these may carry more
	 * decimals or another unit ("0.05 KiB" for "950 B") */
	double room = t->plot.x - t->a->box.x - 6 - 2;
	int rc = mp_ticks_fit(ty, MP_AXIS_BYTES, 0, top, t->plot.h, 0, t->a->measure, CX_SMALL);

	for (size_t want = ty->count; rc == 0 && want > 2 && cx_ticks_width(t->a, ty) > room; want--)
		rc = mp_ticks_nice(ty, MP_AXIS_BYTES, 0, top, want - 1);
	return rc;
}
