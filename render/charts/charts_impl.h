/* charts_impl.h - what the chart builders share: type sizes, text that
 * fits, panel headers, axes and legends (frame.c). Internal to
 * memprof_layout. */
#ifndef MEMPROF_CHARTS_IMPL_H
#define MEMPROF_CHARTS_IMPL_H

#include <memprof/charts.h>

#include <math.h>

/* Type sizes (px): readable at 100 % zoom in a browser and at the size a
 * GitHub issue shows a 1200 px picture. Few of them: an SVG carries the
 * outline of every glyph once per size and weight used. */
#define CX_TITLE 15.0
#define CX_TEXT 12.5
#define CX_SMALL 11.5
#define CX_TINY 10.5    /* step numbers, details under a name */
#define CX_PAD 14.0     /* inside a panel's edges */
#define CX_LINE 1.35    /* line height as a multiple of the font size */

static inline mp_style_t cx_fill(uint32_t rgb)
{
	mp_style_t s = {MP_RGB(rgb), MP_NONE, 0, MP_DASH_SOLID};
	return s;
}

static inline mp_style_t cx_fill_alpha(uint32_t rgb, unsigned alpha)
{
	mp_style_t s = {MP_RGBA(rgb, alpha), MP_NONE, 0, MP_DASH_SOLID};
	return s;
}

static inline mp_style_t cx_stroke(uint32_t rgb, double width, int dash)
{
	mp_style_t s = {MP_NONE, MP_RGB(rgb), (float)width, (uint8_t)dash};
	return s;
}

/* A 1 px line on a pixel's centre, so the PNG shows it sharp. */
static inline double cx_crisp(double v)
{
	return floor(v) + 0.5;
}

double cx_width(const mp_chart_area_t *a, const char *s, double size, int bold);

/* An instant of src as people read it: "1.670 s", or "trace entry 3697"
 * where the source's time_ns counts something else (mp_source_time_unit).
 * src may be NULL (time). */
const char *cx_fmt_at(const mp_source_t *src, char *buf, size_t n, uint64_t time_ns);

/* One line of text; returns the item (or < 0). */
long cx_text(const mp_chart_area_t *a, double x, double y, const char *s, double size, int bold, uint32_t rgb,
	     int halign, int valign);

/* The same, shortened with an ellipsis (where `where` says) to max_w px. */
long cx_text_fit(const mp_chart_area_t *a, double x, double y, const char *s, double max_w, double size, int bold,
		 uint32_t rgb, int halign, int valign, mp_ellipsis_t where);

/* The panel's title (bold) and subtitle (muted; may be NULL) at the top of
 * its box, each shortened to the box's width; returns the y under them. */
double cx_header(const mp_chart_area_t *a, const char *title, const char *subtitle);
/* Height cx_header takes. */
double cx_header_height(int with_subtitle);
/* The map's hit areas for hover (map_hover.c): row 0's strip at (x0, y0),
 * rows pitch px apart, row_h px high. Painted as nothing. */
void cx_map_hover(const mp_chart_area_t *a, const mp_chart_map_t *c, double x0, double y0, double pitch, double row_h);

/* Axes around a plot box: tick labels outside it, grid lines across it
 * (grid != 0), in the muted colour. Left/right labels are right/left
 * aligned to the box; bottom ones centred under their tick, moved inside
 * the panel when they would stick out of it. */
void cx_axis_bottom(const mp_chart_area_t *a, const mp_box_t *plot, const mp_ticks_t *t, const mp_scale_t *sc, int grid);
void cx_axis_left(const mp_chart_area_t *a, const mp_box_t *plot, const mp_ticks_t *t, const mp_scale_t *sc, int grid);
void cx_axis_right(const mp_chart_area_t *a, const mp_box_t *plot, const mp_ticks_t *t, const mp_scale_t *sc);
/* Widest tick label. */
double cx_ticks_width(const mp_chart_area_t *a, const mp_ticks_t *t);

/* Legend keys. */
typedef enum { CX_KEY_BOX, CX_KEY_LINE, CX_KEY_DASH, CX_KEY_MARK, CX_KEY_TICK, CX_KEY_OUTLINE } cx_key_t;

typedef struct cx_legend_entry {
	const char *label;
	uint32_t color;
	int key; /* cx_key_t */
} cx_legend_entry_t;

/* Entries left to right from (x, y), wrapping at max_w; returns the height
 * taken. With draw 0 only measures. */
double cx_legend(const mp_chart_area_t *a, double x, double y, double max_w, const cx_legend_entry_t *e, size_t n,
		 int draw);

#endif
