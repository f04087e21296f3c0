/* paint.c - a scene's items onto a cairo context, in order. The context's
 * status is read after every item: cairo's errors are sticky, and the
 * first one is the one worth reporting. */
#include "draw_impl.h"

#include <math.h>

static void source(cairo_t *cr, uint32_t rgba)
{
	cairo_set_source_rgba(cr, (double)(rgba >> 24 & 0xFF) / 255.0, (double)(rgba >> 16 & 0xFF) / 255.0,
			      (double)(rgba >> 8 & 0xFF) / 255.0, (double)(rgba & 0xFF) / 255.0);
}

static void set_dash(cairo_t *cr, int dash, double width)
{
	double d[2];

	switch (dash) {
	case MP_DASH_DASHED:
		d[0] = 5 * width > 4 ? 5 * width : 4;
		d[1] = 3 * width > 3 ? 3 * width : 3;
		cairo_set_dash(cr, d, 2, 0);
		break;
	case MP_DASH_DOTTED:
		d[0] = width;
		d[1] = 2 * width > 2 ? 2 * width : 2;
		cairo_set_dash(cr, d, 2, 0);
		break;
	default:
		cairo_set_dash(cr, NULL, 0, 0);
		break;
	}
}

/* Fill then stroke the current path as style says. */
static void finish_path(cairo_t *cr, const mp_style_t *st)
{
	if (st->fill & 0xFF) {
		source(cr, st->fill);
		if (st->stroke & 0xFF)
			cairo_fill_preserve(cr);
		else
			cairo_fill(cr);
	}
	if (st->stroke & 0xFF) {
		source(cr, st->stroke);
		cairo_set_line_width(cr, st->width > 0 ? st->width : 1);
		set_dash(cr, st->dash, st->width > 0 ? st->width : 1);
		cairo_stroke(cr);
	}
	cairo_new_path(cr);
}

static void paint_text(cairo_t *cr, const mp_scene_t *s, const mp_scene_item_t *it)
{
	const mp_text_style_t *ts = &it->text_style;
	const char *str = mp_scene_string(s, it);
	cairo_text_extents_t te;
	cairo_font_extents_t fe;
	double dx = 0, dy = 0;

	dr_font(cr, ts->size, ts->bold);
	cairo_text_extents(cr, str, &te);
	cairo_font_extents(cr, &fe);
	if (ts->halign == MP_ALIGN_CENTER)
		dx = -te.x_advance / 2;
	else if (ts->halign == MP_ALIGN_RIGHT)
		dx = -te.x_advance;
	if (ts->valign == MP_VALIGN_TOP)
		dy = fe.ascent;
	else if (ts->valign == MP_VALIGN_MIDDLE)
		dy = 0.36 * ts->size; /* half of DejaVu's cap height */
	cairo_save(cr);
	cairo_translate(cr, it->x, it->y);
	if (ts->vertical)
		cairo_rotate(cr, -M_PI / 2);
	cairo_move_to(cr, dx, dy);
	source(cr, ts->color);
	cairo_show_text(cr, str);
	cairo_restore(cr);
}

/* Pixels 0xRRGGBBAA into a cairo image (premultiplied ARGB), painted one
 * to a px at the item's place; returns the image's status. */
static cairo_status_t paint_image(cairo_t *cr, const mp_scene_t *s, const mp_scene_item_t *it)
{
	int w = (int)it->w, h = (int)it->h;
	cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
	const uint32_t *px = mp_scene_pixels(s, it);
	cairo_status_t st = cairo_surface_status(img);
	unsigned char *data;
	int stride;

	if (st != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(img);
		return st;
	}
	cairo_surface_flush(img);
	data = cairo_image_surface_get_data(img);
	stride = cairo_image_surface_get_stride(img);
	for (int y = 0; y < h; y++) {
		uint32_t *row = (uint32_t *)(void *)(data + (size_t)y * (size_t)stride);
		for (int x = 0; x < w; x++) {
			uint32_t v = px[(size_t)y * (size_t)w + (size_t)x], a = v & 0xFF;
			uint32_t r = (v >> 24) * a / 255, g = (v >> 16 & 0xFF) * a / 255, b = (v >> 8 & 0xFF) * a / 255;
			row[x] = a << 24 | r << 16 | g << 8 | b;
		}
	}
	cairo_surface_mark_dirty(img);
	cairo_save(cr);
	cairo_set_source_surface(cr, img, it->x, it->y);
	cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
	cairo_rectangle(cr, it->x, it->y, it->w, it->h);
	cairo_fill(cr);
	cairo_restore(cr);
	cairo_surface_destroy(img);
	return cairo_status(cr);
}

cairo_status_t dr_paint(cairo_t *cr, const mp_scene_t *s)
{
	cairo_status_t st;

	source(cr, mp_scene_background(s));
	cairo_paint(cr);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
	if ((st = cairo_status(cr)) != CAIRO_STATUS_SUCCESS)
		return st;
	for (size_t i = 0; i < mp_scene_count(s); i++) {
		const mp_scene_item_t *it = mp_scene_item(s, i);

		switch (it->kind) {
		case MP_SCENE_RECT:
			cairo_rectangle(cr, it->x, it->y, it->w, it->h);
			finish_path(cr, &it->style);
			break;
		case MP_SCENE_PATH: {
			const mp_point_t *p = mp_scene_points(s, it);
			if (!it->count)
				break;
			cairo_move_to(cr, p[0].x, p[0].y);
			for (uint32_t k = 1; k < it->count; k++)
				cairo_line_to(cr, p[k].x, p[k].y);
			if (it->closed)
				cairo_close_path(cr);
			finish_path(cr, &it->style);
			break;
		}
		case MP_SCENE_TEXT:
			paint_text(cr, s, it);
			break;
		case MP_SCENE_IMAGE:
			if ((st = paint_image(cr, s, it)) != CAIRO_STATUS_SUCCESS)
				return st;
			break;
		default:
			break;
		}
		if ((st = cairo_status(cr)) != CAIRO_STATUS_SUCCESS)
			return st;
	}
	return CAIRO_STATUS_SUCCESS;
}
