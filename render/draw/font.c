/* font.c - the one font the painter uses, its text widths for layouts,
 * and whether fontconfig really has it. */
#include "draw_impl.h"

#include <memprof/render.h>

#include <fontconfig/fontconfig.h>
#include <stdlib.h>
#include <string.h>

void dr_font(cairo_t *cr, double size, int bold)
{
	cairo_font_options_t *fo = cairo_font_options_create();

	/* Hinting rounds advances to whole pixels on raster surfaces only:
	 * off, a width is the same on the PNG, the SVG and the measure. */
	cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
	cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
	cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
	cairo_set_font_options(cr, fo);
	cairo_font_options_destroy(fo);
	cairo_select_font_face(cr, MP_FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size);
}

/* One 1x1 surface whose context measures every text. */
static cairo_surface_t *measure_surface;
static cairo_t *measure_cr;

static double measure_width(void *ctx, const char *utf8, double size, int bold)
{
	cairo_text_extents_t te;
	char *clean = NULL;

	(void)ctx;
	/* cairo's error on a bad string would stick to this context for good:
	 * measure the cleaned text, as mp_scene_text will draw it */
	if (!mp_utf8_valid(utf8)) {
		if (!(clean = strdup(utf8)))
			return 0.6 * size * (double)strlen(utf8);
		mp_utf8_clean(clean);
		utf8 = clean;
	}
	if (!measure_cr) {
		measure_surface = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
		measure_cr = cairo_create(measure_surface);
	}
	if (cairo_status(measure_cr) != CAIRO_STATUS_SUCCESS) {
		free(clean);
		return 0.6 * size * (double)strlen(utf8); /* out of memory: a fair guess */
	}
	dr_font(measure_cr, size, bold);
	cairo_text_extents(measure_cr, utf8, &te);
	free(clean);
	return te.x_advance;
}

static const mp_text_measure_t painter_measure = {measure_width, NULL};

const mp_text_measure_t *mp_render_measure(void)
{
	return &painter_measure;
}

int mp_render_font_ok(void)
{
	FcPattern *pat = FcNameParse((const FcChar8 *)MP_FONT_FAMILY), *match;
	FcResult res;
	FcChar8 *family = NULL;
	int ok = 0;

	if (!pat)
		return 0;
	FcConfigSubstitute(NULL, pat, FcMatchPattern);
	FcDefaultSubstitute(pat);
	match = FcFontMatch(NULL, pat, &res);
	if (match && FcPatternGetString(match, FC_FAMILY, 0, &family) == FcResultMatch)
		ok = !strcmp((const char *)family, MP_FONT_FAMILY);
	if (match)
		FcPatternDestroy(match);
	FcPatternDestroy(pat);
	return ok;
}

void mp_render_shutdown(void)
{
	if (measure_cr) {
		cairo_destroy(measure_cr);
		cairo_surface_destroy(measure_surface);
		measure_cr = NULL;
		measure_surface = NULL;
	}
	cairo_debug_reset_static_data();
	FcFini();
}
