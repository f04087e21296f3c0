/* memprof/scene.h - a picture as data: the display list that chart builders
 * fill and the painter (memprof/render.h) turns into SVG or PNG.
 *
 * Why a display list: what is drawn where is then a fact a test can read
 * (the peak line's x, the largest free chunk's box) without cairo, and the
 * painter stays one small loop that knows nothing about memory. Coordinates
 * are CSS pixels, origin top left, y down.
 *
 * Errors are sticky, as in cairo: an item that cannot be added (out of
 * memory) sets the scene's status and every later call does nothing, so a
 * builder checks mp_scene_status() once at the end.
 */
#ifndef MEMPROF_SCENE_H
#define MEMPROF_SCENE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Colours are 0xRRGGBBAA; alpha 0 means "none" (no fill, no stroke). */
#define MP_RGB(hex) ((uint32_t)(hex) << 8 | 0xFFu)
#define MP_RGBA(hex, a) ((uint32_t)(hex) << 8 | ((uint32_t)(a) & 0xFFu))
#define MP_NONE 0u

typedef enum {
	MP_SCENE_RECT = 1, /* x, y, w, h */
	MP_SCENE_PATH,     /* points[first .. first+count): a polyline, or a polygon when closed */
	MP_SCENE_TEXT,     /* one line of UTF-8 at (x, y) */
	MP_SCENE_IMAGE,    /* w x h pixels at (x, y), one to a px: what is made of pixels (the memory map) */
} mp_scene_kind_t;

typedef enum { MP_DASH_SOLID, MP_DASH_DASHED, MP_DASH_DOTTED } mp_dash_t;

/* Horizontal anchor of a text: x is its left end, centre or right end;
 * vertical: y is its top, middle (of the capital height) or baseline. */
typedef enum { MP_ALIGN_LEFT, MP_ALIGN_CENTER, MP_ALIGN_RIGHT } mp_halign_t;
typedef enum { MP_VALIGN_TOP, MP_VALIGN_MIDDLE, MP_VALIGN_BASELINE } mp_valign_t;

typedef struct mp_style {
	uint32_t fill;
	uint32_t stroke;
	float width;   /* stroke width in px */
	uint8_t dash;  /* mp_dash_t */
} mp_style_t;

typedef struct mp_text_style {
	float size;     /* font size in px */
	uint8_t bold;
	uint8_t halign; /* mp_halign_t */
	uint8_t valign; /* mp_valign_t */
	uint8_t vertical; /* 1: rotated a quarter turn counter-clockwise (a y-axis title) */
	uint32_t color;
} mp_text_style_t;

typedef struct mp_scene_item {
	uint8_t kind;   /* mp_scene_kind_t */
	uint8_t closed; /* path: polygon */
	mp_style_t style;
	mp_text_style_t text_style;
	double x, y, w, h;     /* rect; text: the anchor in x, y */
	uint32_t first, count; /* path: its points; image: its pixels */
	uint32_t text;         /* text: offset of its string in the scene's pool */
	const char *tag;       /* what the item shows, for tests ("peak-line"); static or NULL */
	uint32_t note;         /* 1 + offset of its note in the pool; 0: none (mp_scene_note) */
	uint32_t ref;          /* with a note: what it draws, as an index into the builder's input */
} mp_scene_item_t;

typedef struct mp_point {
	double x, y;
} mp_point_t;

typedef struct mp_scene mp_scene_t;

/* A blank scene of width x height px with a background colour. NULL when
 * out of memory. Caller owns; free with mp_scene_free(). */
mp_scene_t *mp_scene_new(double width, double height, uint32_t background);
void mp_scene_free(mp_scene_t *scene);

double mp_scene_width(const mp_scene_t *scene);
double mp_scene_height(const mp_scene_t *scene);
uint32_t mp_scene_background(const mp_scene_t *scene);
/* 0, or MP_ENOMEM once an item could not be added (sticky). */
int mp_scene_status(const mp_scene_t *scene);

/* Items are painted in the order they were added. Each returns the item's
 * index, or -1 (and sets the status) when out of memory. */
long mp_scene_rect(mp_scene_t *scene, double x, double y, double w, double h, const mp_style_t *style);
long mp_scene_line(mp_scene_t *scene, double x0, double y0, double x1, double y1, const mp_style_t *style);
/* A polyline, or a polygon when closed (filled with style->fill). The
 * points are copied. */
long mp_scene_path(mp_scene_t *scene, const mp_point_t *points, size_t n, int closed, const mp_style_t *style);
/* The string is copied; empty strings add nothing and return -2. */
long mp_scene_text(mp_scene_t *scene, double x, double y, const char *utf8, const mp_text_style_t *style);

/* An image of w x h pixels (0xRRGGBBAA, rows top to bottom; copied) drawn
 * at (x, y), a pixel to a px. A picture made of pixel columns costs the
 * same whatever it shows; in an SVG it is one embedded PNG. */
long mp_scene_image(mp_scene_t *scene, double x, double y, uint32_t w, uint32_t h, const uint32_t *rgba);

/* Name what item i shows (a static string), so tests can find it. */
void mp_scene_tag(mp_scene_t *scene, long item, const char *tag);

/* Say what item i stands for, beyond what a tag can: a note for a reader
 * pointing at it (an HTML report's hover: a flame graph's frame carries its
 * full name, kind and figures), copied and cleaned as texts are, and ref,
 * the index of what it draws in the builder's input (a flame graph's node),
 * for the report to find its data and for tests. Painters ignore both. */
void mp_scene_note(mp_scene_t *scene, long item, const char *note, uint32_t ref);
/* Item's note, or NULL when it has none. */
const char *mp_scene_item_note(const mp_scene_t *scene, const mp_scene_item_t *item);

size_t mp_scene_count(const mp_scene_t *scene);
/* Borrowed; valid until the next item is added or the scene is freed. */
const mp_scene_item_t *mp_scene_item(const mp_scene_t *scene, size_t i);
const mp_point_t *mp_scene_points(const mp_scene_t *scene, const mp_scene_item_t *item);
const char *mp_scene_string(const mp_scene_t *scene, const mp_scene_item_t *item);
const uint32_t *mp_scene_pixels(const mp_scene_t *scene, const mp_scene_item_t *item);
/* The first item with this tag at or after index *from (0 to start), or
 * NULL; *from is set past it, to find the next one. */
const mp_scene_item_t *mp_scene_find(const mp_scene_t *scene, const char *tag, size_t *from);

#ifdef __cplusplus
}
#endif
#endif
