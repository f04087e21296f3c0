/* memprof/render.h - the painter: a scene (memprof/scene.h) into an SVG or
 * PNG file with cairo, and the text metrics of the font it paints with.
 *
 * Files are written whole or not at all: the picture goes to a temporary
 * file beside the target, which is renamed over it only once cairo, the
 * disk and close() have all said yes; on any error the temporary file is
 * removed and the target is untouched. Text is DejaVu Sans (Debian:
 * fonts-dejavu-core) with hinting off, so the same scene gives the same
 * bytes on every machine that has that font, and widths measured for the
 * layout are the widths painted.
 */
#ifndef MEMPROF_RENDER_H
#define MEMPROF_RENDER_H

#include <memprof/error.h>
#include <memprof/layout.h>
#include <memprof/scene.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MP_RENDER_HTML: one self-contained page, the SVG with hover details,
 * zoom and pan, and the breakdown as a table (docs/charts.md). */
typedef enum { MP_RENDER_NONE = 0, MP_RENDER_SVG = 1, MP_RENDER_PNG = 2, MP_RENDER_HTML = 3 } mp_render_format_t;

/* The format a file name asks for by its extension (.svg or .png, any
 * case), .html or .htm; MP_RENDER_NONE otherwise. */
mp_render_format_t mp_render_format_of(const char *path);

/* Largest picture painted, either side, in px (PNG memory is 4 B a px). */
#define MP_RENDER_MAX_SIDE 32768

/* Paint scene into path in format fmt. Returns 0; MP_EUSAGE for a format
 * or size out of range; -errno when the file cannot be written (diag names
 * path); MP_ERENDER when cairo fails (diag says what it said); or the
 * scene's own error status. */
int mp_render_write(const mp_scene_t *scene, const char *path, mp_render_format_t fmt, mp_diag_t *diag);

/* Widths of text as the painter draws it. Borrowed, static. */
const mp_text_measure_t *mp_render_measure(void);

/* 1 when the font the painter asks for is the one fontconfig gives it
 * (DejaVu Sans); 0 when another font stands in (the picture is still
 * drawn, but its bytes then depend on the machine). */
int mp_render_font_ok(void);

/* Release the font caches of cairo and fontconfig (for leak checkers at
 * exit); the painter must not be used afterwards. */
void mp_render_shutdown(void);

#ifdef __cplusplus
}
#endif
#endif
