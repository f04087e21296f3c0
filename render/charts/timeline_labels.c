/* timeline_labels.c - the labels of the timeline's peak and first failed
 * allocation: boxed, beside their line, never over what was in use while
 * the scale can make room above it. */
#include "timeline_impl.h"

/* A two-line label (bold first line) in a white box; returns the box size. */
void tl_label_size(const mp_chart_area_t *a, const char *l1, const char *l2, double *w, double *h)
{
	double w1 = cx_width(a, l1, CX_TEXT, 1), w2 = l2[0] ? cx_width(a, l2, CX_SMALL, 0) : 0;

	*w = (w1 > w2 ? w1 : w2) + 8;
	*h = CX_TEXT * CX_LINE + (l2[0] ? CX_SMALL * CX_LINE : 0) + 4;
}

void tl_draw_label(const mp_chart_area_t *a, const mp_box_t *b, const char *l1, const char *l2, uint32_t color,
		   const char *tag)
{
	mp_style_t bg = {MP_RGBA(0xFFFFFF, 0xE6), MP_NONE, 0, 0};
	long item;

	mp_scene_rect(a->scene, b->x, b->y, b->w, b->h, &bg);
	item = cx_text_fit(a, b->x + 4, b->y + 2, l1, b->w - 8, CX_TEXT, 1, color, MP_ALIGN_LEFT, MP_VALIGN_TOP,
			   MP_ELLIPSIS_END);
	mp_scene_tag(a->scene, item, tag);
	if (l2[0])
		cx_text_fit(a, b->x + 4, b->y + 2 + CX_TEXT * CX_LINE, l2, b->w - 8, CX_SMALL, 0, MP_COLOR_TEXT,
			    MP_ALIGN_LEFT, MP_VALIGN_TOP, MP_ELLIPSIS_END);
}

/* Where a label at anchor x may go: beside the line, at the top first,
 * never over the line while a place beside it is free. */
void tl_candidates(mp_label_t *l, double x, const mp_box_t *plot, double y_hint)
{
	double top = plot->y + 4, mid = y_hint - l->h / 2;

	l->cand[0] = (mp_box_t){x + 6, top, 0, 0};
	l->cand[1] = (mp_box_t){x - 6 - l->w, top, 0, 0};
	l->cand[2] = (mp_box_t){x + 6, top + l->h + 4, 0, 0};
	l->cand[3] = (mp_box_t){x - 6 - l->w, top + l->h + 4, 0, 0};
	l->cand[4] = (mp_box_t){x + 6, mid, 0, 0};
	l->cand[5] = (mp_box_t){x - 6 - l->w, mid, 0, 0};
	/* last, a line too near an edge for either side: against the edge */
	l->cand[6] = (mp_box_t){plot->x + plot->w - l->w, top, 0, 0};
	l->cand[7] = (mp_box_t){plot->x, top, 0, 0};
	l->ncand = 8;
}

/* Whether the label box b would hide what is in use (the heap and stack
 * area's top in any column under it) or the reserved line. */
static int covers_use(const tl_t *t, const mp_box_t *b)
{
	long c0 = (long)floor(b->x - t->plot.x), c1 = (long)ceil(b->x + b->w - t->plot.x);

	for (long c = c0 < 0 ? 0 : c0; c < c1 && c < (long)t->ncol; c++) {
		if (t->use[c].has && mp_scale_map(&t->sy, t->use[c].hi) < b->y + b->h)
			return 1;
		if (t->has_resv && t->resv[c].has && mp_scale_map(&t->sy, t->resv[c].hi) - 1 < b->y + b->h)
			return 1;
	}
	return 0;
}

/* Place the labels; when one can only go over the data (a peak near the
 * plot's edge, a failed allocation beside the peak, a short panel among
 * many), raise the top of the y scale so that the band at the top, where
 * the labels go first, stacked, is clear
 * of what was in use (and of the reserved line), and place them again. Returns the number placed, or
 * MP_ENOMEM. */
long tl_place_labels(tl_t *t, mp_ticks_t *ty, mp_label_t *labels, size_t n)
{
	double need = 8, top; /* the top candidates' offset and a gap */
	long rc = mp_labels_place(labels, n, &t->plot, NULL, 0, 3);
	int covers = 0;

	if (rc < 0 || !n)
		return rc;
	/* any label (the failed allocation's too: it stacks under the peak's
	 * at the top when both are near) over the data makes room for all */
	for (size_t i = 0; i < n; i++) {
		covers |= labels[i].placed && covers_use(t, &labels[i].box);
		need += labels[i].h + 4;
	}
	if (!covers)
		return rc;
	if (need > t->plot.h * 0.5)
		return rc; /* a plot this short: better over the data than no data */
	top = (double)t->drawn * t->plot.h / (t->plot.h - need);
	if (top <= t->sy.d1)
		return rc;
	t->sy.d1 = top;
	if ((rc = tl_fit_y_ticks(t, ty, top)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		labels[i].placed = 0;
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
