/* timeline_span.c - the line under the x axis of a panel whose axis is
 * only its own memory id's part of the input: a strip showing where that
 * part lies in the input's span, so that panels of one input can still be
 * read against each other, and what time 0 is (the input's first event,
 * not the clock the capture kept: a profiler's session may start seconds
 * before the first allocation). */
#include "timeline_impl.h"

#include <stdio.h>

void tl_time_note(tl_t *t)
{
	const mp_chart_area_t *a = t->a;
	double y = t->plot.y + t->plot.h + 6 + CX_SMALL * CX_LINE + 2, x = t->plot.x, cy = y + CX_SMALL * CX_LINE / 2;
	double w = TL_OVERVIEW_W, span = (double)(t->s1 - t->s0);
	double x0 = x + floor(w * (double)(t->t0 - t->s0) / span), x1 = x + ceil(w * (double)(t->t1 - t->s0) / span);
	mp_style_t bg = cx_fill(MP_COLOR_GRID), fg = cx_fill(MP_COLOR_TEXT);
	char text[320], b0[32], b1[32], b2[32], clock[32];

	if (x1 < x0 + 2) /* a sliver of the input is still seen */
		x1 = x0 + 2;
	if (x1 > x + w) {
		x0 -= x1 - (x + w);
		x1 = x + w;
	}
	mp_scene_tag(a->scene, mp_scene_rect(a->scene, x, round(cy) - 3, w, 6, &bg), "overview");
	mp_scene_tag(a->scene, mp_scene_rect(a->scene, x0, round(cy) - 5, x1 - x0, 10, &fg), "overview-span");
	x += w + 8;
	snprintf(text, sizeof(text), "this panel: %s \xE2\x80\x93 %s of the input's %s (its own events' span); time 0 "
		 "is the input's first event, %s on the capture's clock", mp_fmt_time(b0, sizeof(b0), tl_rel(t, t->t0)),
		 mp_fmt_time(b1, sizeof(b1), tl_rel(t, t->t1)), mp_fmt_time(b2, sizeof(b2), t->s1 - t->s0),
		 mp_fmt_time(clock, sizeof(clock), t->base));
	mp_scene_tag(a->scene,
		     cx_text_fit(a, x, y, text, t->plot.x + t->plot.w - x, CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT,
				 MP_VALIGN_TOP, MP_ELLIPSIS_END),
		     "x-title");
}
