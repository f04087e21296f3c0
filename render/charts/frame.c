/* frame.c - the parts every chart has: text that fits, a header, axes and
 * a legend, drawn the same way everywhere. */
#include "charts_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *cx_fmt_at(const mp_source_t *src, char *buf, size_t n, uint64_t time_ns)
{
	const char *unit = src ? mp_source_time_unit(src) : NULL;

	if (unit)
		snprintf(buf, n, "%s %" PRIu64, unit, time_ns);
	else
		mp_fmt_time(buf, n, time_ns);
	return buf;
}

double cx_width(const mp_chart_area_t *a, const char *s, double size, int bold)
{
	return mp_text_width(a->measure, s, size, bold);
}

long cx_text(const mp_chart_area_t *a, double x, double y, const char *s, double size, int bold, uint32_t rgb,
	     int halign, int valign)
{
	mp_text_style_t ts = {(float)size, (uint8_t)(bold != 0), (uint8_t)halign, (uint8_t)valign, 0, MP_RGB(rgb)};

	return mp_scene_text(a->scene, x, y, s, &ts);
}

long cx_text_fit(const mp_chart_area_t *a, double x, double y, const char *s, double max_w, double size, int bold,
		 uint32_t rgb, int halign, int valign, mp_ellipsis_t where)
{
	char buf[1024];

	mp_text_fit(a->measure, s, size, bold, max_w, where, buf, sizeof(buf));
	return cx_text(a, x, y, buf, size, bold, rgb, halign, valign);
}

double cx_header_height(int with_subtitle)
{
	return CX_PAD + CX_TITLE * CX_LINE + (with_subtitle ? CX_TEXT * CX_LINE : 0) + 6;
}

double cx_header(const mp_chart_area_t *a, const char *title, const char *subtitle)
{
	double x = a->box.x + CX_PAD, y = a->box.y + CX_PAD, w = a->box.w - 2 * CX_PAD;

	cx_text_fit(a, x, y, title, w, CX_TITLE, 1, MP_COLOR_TEXT, MP_ALIGN_LEFT, MP_VALIGN_TOP, MP_ELLIPSIS_MIDDLE);
	y += CX_TITLE * CX_LINE;
	if (subtitle && *subtitle) {
		cx_text_fit(a, x, y, subtitle, w, CX_TEXT, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT, MP_VALIGN_TOP, MP_ELLIPSIS_END);
		y += CX_TEXT * CX_LINE;
	}
	return y + 6;
}

double cx_ticks_width(const mp_chart_area_t *a, const mp_ticks_t *t)
{
	double w = 0;

	for (size_t i = 0; i < t->count; i++) {
		double tw = cx_width(a, t->label[i], CX_SMALL, 0);
		if (tw > w)
			w = tw;
	}
	return w;
}

void cx_axis_bottom(const mp_chart_area_t *a, const mp_box_t *plot, const mp_ticks_t *t, const mp_scale_t *sc, int grid)
{
	mp_style_t gs = cx_stroke(MP_COLOR_GRID, 1, MP_DASH_SOLID), ts = cx_stroke(MP_COLOR_AXIS, 1, MP_DASH_SOLID);
	double lo = a->box.x + 2, hi = a->box.x + a->box.w - 2, prev_right = -1e300;

	for (size_t i = 0; i < t->count; i++) {
		double x = cx_crisp(mp_scale_map(sc, t->value[i])), w = cx_width(a, t->label[i], CX_SMALL, 0), cx = x;
		if (grid)
			mp_scene_line(a->scene, x, plot->y, x, plot->y + plot->h, &gs);
		mp_scene_line(a->scene, x, plot->y + plot->h, x, plot->y + plot->h + 4, &ts);
		if (cx - w / 2 < lo)
			cx = lo + w / 2;
		if (cx + w / 2 > hi)
			cx = hi - w / 2;
		/* moved in from the panel's edge, a label may meet its neighbour:
		 * the tick stays, its label goes */
		if (cx - w / 2 < prev_right + 4)
			continue;
		cx_text(a, cx, plot->y + plot->h + 6, t->label[i], CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_CENTER,
			MP_VALIGN_TOP);
		prev_right = cx + w / 2;
	}
}

void cx_axis_left(const mp_chart_area_t *a, const mp_box_t *plot, const mp_ticks_t *t, const mp_scale_t *sc, int grid)
{
	mp_style_t gs = cx_stroke(MP_COLOR_GRID, 1, MP_DASH_SOLID);

	for (size_t i = 0; i < t->count; i++) {
		double y = cx_crisp(mp_scale_map(sc, t->value[i]));
		if (grid)
			mp_scene_line(a->scene, plot->x, y, plot->x + plot->w, y, &gs);
		cx_text(a, plot->x - 6, y, t->label[i], CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_RIGHT, MP_VALIGN_MIDDLE);
	}
}

void cx_axis_right(const mp_chart_area_t *a, const mp_box_t *plot, const mp_ticks_t *t, const mp_scale_t *sc)
{
	for (size_t i = 0; i < t->count; i++) {
		double y = mp_scale_map(sc, t->value[i]);
		cx_text(a, plot->x + plot->w + 6, y, t->label[i], CX_SMALL, 0, MP_COLOR_MUTED, MP_ALIGN_LEFT,
			MP_VALIGN_MIDDLE);
	}
}

/* The key of a legend entry in a 14 x 10 px box at (x, y). */
static void draw_key(const mp_chart_area_t *a, double x, double y, const cx_legend_entry_t *e)
{
	mp_style_t st;

	switch (e->key) {
	case CX_KEY_LINE:
	case CX_KEY_DASH:
		st = cx_stroke(e->color, 2, e->key == CX_KEY_DASH ? MP_DASH_DASHED : MP_DASH_SOLID);
		mp_scene_line(a->scene, x, y + 5, x + 14, y + 5, &st);
		break;
	case CX_KEY_TICK:
		st = cx_stroke(e->color, 1.5, MP_DASH_SOLID);
		mp_scene_line(a->scene, x + 7, y, x + 7, y + 10, &st);
		break;
	case CX_KEY_MARK: {
		mp_point_t tri[3] = {{x + 2, y}, {x + 12, y}, {x + 7, y + 9}};
		st = cx_fill(e->color);
		mp_scene_path(a->scene, tri, 3, 1, &st);
		break;
	}
	case CX_KEY_OUTLINE:
		st = cx_stroke(e->color, 2, MP_DASH_SOLID);
		mp_scene_rect(a->scene, x + 1, y + 1, 12, 8, &st);
		break;
	default:
		st = cx_fill(e->color);
		st.stroke = MP_RGBA(0x000000, 0x40);
		st.width = 0.5;
		mp_scene_rect(a->scene, x, y, 14, 10, &st);
		break;
	}
}

double cx_legend(const mp_chart_area_t *a, double x, double y, double max_w, const cx_legend_entry_t *e, size_t n,
		 int draw)
{
	const double key = 14, gap = 5, spacing = 16, line = CX_SMALL * CX_LINE + 2;
	double cx = x, cy = y;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		double w = key + gap + cx_width(a, e[i].label, CX_SMALL, 0);
		if (cx > x && cx + w > x + max_w) {
			cx = x;
			cy += line;
		}
		if (draw) {
			draw_key(a, cx, cy + (line - 2 - 10) / 2, &e[i]);
			cx_text_fit(a, cx + key + gap, cy + (line - 2) / 2, e[i].label, max_w - key - gap, CX_SMALL, 0,
				    MP_COLOR_TEXT, MP_ALIGN_LEFT, MP_VALIGN_MIDDLE, MP_ELLIPSIS_END);
		}
		cx += w + spacing;
	}
	return cy - y + line;
}
