/* timeline_lanes.c - the lanes over the timeline's plot: the steps (a
 * shaded span per step, numbered where the number fits, and a light line
 * down the plot where each starts) and the phases (a lane per nesting
 * depth, each phase a span with its name where it fits). */
#include "timeline_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The steps as a lane over the plot, one shaded span per step, numbered
 * where the number fits, and a light line down the plot where each
 * starts (while there are few enough to tell apart). */
void tl_step_lane(tl_t *t)
{
	const mp_solver_point_t *p = t->d->timeline;
	size_t n = t->d->timeline_count, start = 0, shade = 0;
	double lane_y = t->plot.y - TL_LANE_H - 3;
	mp_style_t line = cx_stroke(MP_COLOR_STEP, 1, MP_DASH_DOTTED);

	for (size_t i = 1; i <= n; i++) {
		if (i < n && (p[i].step == p[start].step || p[i].step < 0))
			continue;
		double x0 = i == 1 || start == 0 ? t->plot.x : tl_px(t, p[start].time_ns);
		double x1 = i < n ? tl_px(t, p[i].time_ns) : t->plot.x + t->plot.w;
		if (p[start].step >= 0 && x1 > x0) {
			mp_style_t fill = cx_fill(shade++ % 2 ? 0xE4E4E4 : 0xF1F1F1);
			char num[32], label[40];
			mp_scene_rect(t->a->scene, x0, lane_y, x1 - x0, TL_LANE_H, &fill);
			snprintf(num, sizeof(num), "%" PRId64, p[start].step);
			snprintf(label, sizeof(label), "step %s", num);
			if (cx_width(t->a, label, CX_TINY, 0) + 4 <= x1 - x0)
				cx_text(t->a, (x0 + x1) / 2, lane_y + TL_LANE_H / 2, label, CX_TINY, 0, MP_COLOR_MUTED,
					MP_ALIGN_CENTER, MP_VALIGN_MIDDLE);
			else if (cx_width(t->a, num, CX_TINY, 0) + 2 <= x1 - x0)
				cx_text(t->a, (x0 + x1) / 2, lane_y + TL_LANE_H / 2, num, CX_TINY, 0, MP_COLOR_MUTED,
					MP_ALIGN_CENTER, MP_VALIGN_MIDDLE);
		}
		if (start > 0 && t->nsteps <= 40) {
			double x = cx_crisp(tl_px(t, p[start].time_ns));
			mp_scene_tag(t->a->scene, mp_scene_line(t->a->scene, x, t->plot.y, x, t->plot.y + t->plot.h, &line),
				     "step-tick");
		}
		start = i;
	}
}

/* The phases as lanes over the plot (over the steps' lane when there is
 * one), the outermost at the top: one lane per nesting depth, up to
 * TL_MAX_LANES (deeper phases are left out: the label of the peak still
 * names the innermost). A span is at least a pixel wide and one that
 * starts on a pixel already covered in its lane is not drawn again, so
 * the items follow the plot's width, not the number of phases; a name is
 * drawn where it fits, shortened in the middle. */
double tl_lanes_height(const tl_t *t)
{
	return t->lanes ? (double)t->lanes * (TL_PHASE_H + 2) + 2 : 0;
}

uint32_t tl_count_lanes(const mp_chart_memory_t *mem, uint64_t t0, uint64_t t1)
{
	uint32_t n = 0;

	for (size_t i = 0; i < mem->nphases; i++) {
		const mp_chart_phase_t *p = &mem->phases[i];
		if (p->depth < TL_MAX_LANES && p->t1_ns >= t0 && p->t0_ns <= t1 && p->depth + 1 > n)
			n = p->depth + 1;
	}
	return n;
}

void tl_phase_lanes(tl_t *t, const mp_chart_memory_t *mem)
{
	double right = t->plot.x + t->plot.w, covered[TL_MAX_LANES];
	double top = t->plot.y - 3 - (t->show_steps ? TL_LANE_H + 4 : 0) - tl_lanes_height(t) + 2;
	size_t shade[TL_MAX_LANES] = {0};

	for (uint32_t l = 0; l < TL_MAX_LANES; l++)
		covered[l] = -1e300;
	for (size_t i = 0; i < mem->nphases; i++) {
		const mp_chart_phase_t *p = &mem->phases[i];
		double x0, x1, y;
		mp_style_t fill;
		char fit[256];
		if (p->depth >= t->lanes)
			continue;
		x0 = floor(tl_px(t, p->t0_ns));
		x1 = ceil(tl_px(t, p->t1_ns));
		if (x0 < t->plot.x)
			x0 = t->plot.x;
		if (x1 > right)
			x1 = right;
		if (x1 < x0 + 1)
			x1 = x0 + 1;
		if (x0 >= right || x1 <= t->plot.x || x1 <= covered[p->depth])
			continue;
		if (x0 < covered[p->depth])
			x0 = covered[p->depth];
		covered[p->depth] = x1;
		y = top + (double)p->depth * (TL_PHASE_H + 2);
		fill = cx_fill_alpha(MP_COLOR_PHASE, shade[p->depth]++ % 2 ? 0x60 : 0x90);
		mp_scene_tag(t->a->scene, mp_scene_rect(t->a->scene, x0, y, x1 - x0, TL_PHASE_H, &fill), "phase");
		if (x1 - x0 < 30 || !p->name || !p->name[0])
			continue;
		mp_text_fit(t->a->measure, p->name, CX_TINY, 0, x1 - x0 - 6, MP_ELLIPSIS_MIDDLE, fit, sizeof(fit));
		if (strlen(fit) > 4) /* more than an ellipsis and a letter or two */
			mp_scene_tag(t->a->scene,
				     cx_text(t->a, (x0 + x1) / 2, y + TL_PHASE_H / 2, fit, CX_TINY, 0, MP_COLOR_TEXT, MP_ALIGN_CENTER,
					     MP_VALIGN_MIDDLE),
				     "phase-label");
	}
}

size_t tl_count_steps(const mp_solver_device_t *d)
{
	size_t n = 0;

	for (size_t i = 1; i < d->timeline_count; i++)
		n += d->timeline[i].step != d->timeline[i - 1].step && d->timeline[i].step >= 0;
	return n;
}
