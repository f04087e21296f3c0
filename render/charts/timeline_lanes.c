/* timeline_lanes.c - the lanes over the timeline's plot: the steps (a
 * shaded span per step, numbered where the number fits, and a light line
 * down the plot where each starts) and the phases (a lane per nesting
 * depth, each phase a span with its name where it fits). */
#include "timeline_impl.h"

#include <memprof/vec.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The steps: a span from each mark to the next (the last to the axis'
 * end), in the marks' order, whatever their ids; the note says so when an
 * id is not above the one before it. */
int tl_steps(tl_t *t, const mp_chart_memory_t *mem)
{
	const mp_solver_point_t *p = t->d->timeline;
	size_t back = 0, first = 0;

	if (mem->steps) {
		t->marks = mem->steps;
		t->nmarks = mem->nsteps;
	} else { /* no input's marks: where this id's points change step */
		for (size_t i = 0; i < t->d->timeline_count; i++) {
			if (p[i].step < 0 || (t->nmarks && t->own[t->nmarks - 1].step == p[i].step))
				continue;
			if (MP_VEC_RESERVE(t->own, t->own_cap, t->nmarks + 1) < 0)
				return MP_ENOMEM;
			t->own[t->nmarks] = (mp_chart_step_t){t->nmarks ? p[i].time_ns : t->t0, p[i].step};
			t->nmarks++;
		}
		t->marks = t->own;
	}
	t->nsteps = 0;
	for (size_t i = 0; i < t->nmarks; i++) {
		uint64_t end = i + 1 < t->nmarks ? t->marks[i + 1].time_ns : UINT64_MAX;
		t->nsteps += t->marks[i].time_ns <= t->t1 && end > t->t0 && end > t->marks[i].time_ns;
		if (i && t->marks[i].step <= t->marks[i - 1].step && !back++)
			first = i;
	}
	t->step_note[0] = '\0';
	if (back) {
		int64_t was = t->marks[first - 1].step, now = t->marks[first].step;
		int again = 0;
		for (size_t i = 0; i < first && !again; i++)
			again = t->marks[i].step == now;
		if (again)
			snprintf(t->step_note, sizeof(t->step_note),
				 "steps repeat (%" PRId64 " again after %" PRId64 ")%s: drawn as the capture marks them", now,
				 was, back > 1 ? ", and more" : "");
		else
			snprintf(t->step_note, sizeof(t->step_note),
				 "steps go backwards (%" PRId64 " \xe2\x86\x92 %" PRId64 ")%s: drawn as the capture marks them", was,
				 now, back > 1 ? ", and more" : "");
	}
	return 0;
}

/* A lane's note, for an HTML report's hover: what it is and its span,
 * "step 3\n12.5 ms to 20.1 ms (7.60 ms)", from the input's start. */
static void span_note(const tl_t *t, long item, const char *what, uint64_t t0, uint64_t t1)
{
	char a[48], b[48], d[48], note[600];

	if (t->unit)
		snprintf(note, sizeof(note), "%s\n%s %" PRIu64 " to %" PRIu64, what, t->unit, tl_rel(t, t0), tl_rel(t, t1));
	else
		snprintf(note, sizeof(note), "%s\n%s to %s (%s)", what, mp_fmt_time(a, sizeof(a), tl_rel(t, t0)),
			 mp_fmt_time(b, sizeof(b), tl_rel(t, t1)), mp_fmt_time(d, sizeof(d), t1 > t0 ? t1 - t0 : 0));
	mp_scene_note(t->a->scene, item, note, 0);
}

/* The steps as a lane over the plot, one shaded span per step, numbered
 * where the number fits, and a light line down the plot where each
 * starts (while there are few enough to tell apart). */
void tl_step_lane(tl_t *t)
{
	double lane_y = t->plot.y - TL_LANE_H - 3, right = t->plot.x + t->plot.w;
	mp_style_t line = cx_stroke(MP_COLOR_STEP, 1, MP_DASH_DOTTED);
	size_t shade = 0;

	for (size_t i = 0; i < t->nmarks; i++) {
		const mp_chart_step_t *m = &t->marks[i];
		double at = tl_px(t, m->time_ns), x0 = at < t->plot.x ? t->plot.x : at;
		double x1 = i + 1 < t->nmarks ? tl_px(t, t->marks[i + 1].time_ns) : right;
		if (x1 > right)
			x1 = right;
		if (x1 > x0) {
			mp_style_t fill = cx_fill(shade++ % 2 ? 0xE4E4E4 : 0xF1F1F1);
			char num[32], label[40];
			long item = mp_scene_rect(t->a->scene, x0, lane_y, x1 - x0, TL_LANE_H, &fill);
			mp_scene_tag(t->a->scene, item, "step");
			snprintf(num, sizeof(num), "%" PRId64, m->step);
			snprintf(label, sizeof(label), "step %s", num);
			span_note(t, item, label, m->time_ns > t->t0 ? m->time_ns : t->t0,
				  i + 1 < t->nmarks && t->marks[i + 1].time_ns < t->t1 ? t->marks[i + 1].time_ns : t->t1);
			if (cx_width(t->a, label, CX_TINY, 0) + 4 <= x1 - x0)
				cx_text(t->a, (x0 + x1) / 2, lane_y + TL_LANE_H / 2, label, CX_TINY, 0, MP_COLOR_MUTED,
					MP_ALIGN_CENTER, MP_VALIGN_MIDDLE);
			else if (cx_width(t->a, num, CX_TINY, 0) + 2 <= x1 - x0)
				cx_text(t->a, (x0 + x1) / 2, lane_y + TL_LANE_H / 2, num, CX_TINY, 0, MP_COLOR_MUTED,
					MP_ALIGN_CENTER, MP_VALIGN_MIDDLE);
		}
		if (at > t->plot.x && at <= right && t->nsteps <= 40) {
			double x = cx_crisp(at);
			mp_scene_tag(t->a->scene, mp_scene_line(t->a->scene, x, t->plot.y, x, t->plot.y + t->plot.h, &line),
				     "step-tick");
		}
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
		{
			long item = mp_scene_rect(t->a->scene, x0, y, x1 - x0, TL_PHASE_H, &fill);
			char what[300];
			mp_scene_tag(t->a->scene, item, "phase");
			snprintf(what, sizeof(what), "phase %s", p->name && p->name[0] ? p->name : "(unnamed)");
			span_note(t, item, what, p->t0_ns, p->t1_ns);
		}
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
