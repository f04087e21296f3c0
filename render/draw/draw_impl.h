/* draw_impl.h - what the painter's files share (internal to memprof_render). */
#ifndef MEMPROF_DRAW_IMPL_H
#define MEMPROF_DRAW_IMPL_H

#include <memprof/scene.h>

#include <cairo.h>

#define MP_FONT_FAMILY "DejaVu Sans"

/* Select the painter's font at size px, bold or not, on cr, with hinting
 * off (widths then do not depend on the surface). */
void dr_font(cairo_t *cr, double size, int bold);

/* Paint every item of scene on cr. Returns the cairo status after the
 * first item that failed, or CAIRO_STATUS_SUCCESS. */
cairo_status_t dr_paint(cairo_t *cr, const mp_scene_t *scene);

/* html.c: scene as an HTML report around svg (n bytes, cairo's SVG of
 * it) into f. Returns 0 or the errno of a failed write. */
#include <stdio.h>
int dr_html(const mp_scene_t *scene, const char *svg, size_t n, FILE *f);

#endif
