/* render_check.h - what the render tests read back from a picture: an SVG
 * parsed as XML (expat) with its root's size, a PNG's size and pixels
 * (cairo), and a file's bytes. */
#ifndef MEMPROF_RENDER_CHECK_H
#define MEMPROF_RENDER_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* Parse path as XML. Returns 0 with the root element's name ("svg") and
 * its width/height attributes ("1200px") copied out, or -1 with why in
 * err (expat's message and line). */
int rc_svg_parse(const char *path, char *root, size_t rootsz, char *width, char *height, size_t attrsz, char *err,
		 size_t errsz);

/* A PNG's size, or -1. */
int rc_png_size(const char *path, int *w, int *h);

/* The colour of pixel (x, y) of a PNG as 0xRRGGBB (opaque pictures), or
 * -1 when it cannot be read. */
long rc_png_pixel(const char *path, int x, int y);

/* How many pixels of column x, from y0 to y1 included, are rgb (0xRRGGBB). */
int rc_png_count_column(const char *path, int x, int y0, int y1, long rgb);

/* Whole file into a malloc'd buffer (caller frees); NULL if unreadable. */
unsigned char *rc_slurp(const char *path, size_t *len);

/* Run a shell command; its exit code (-1 if it did not exit), its stdout
 * in *out when out is not NULL (caller frees; NULL if it could not run). */
int rc_run(const char *cmd, char **out);

/* 1 when the two files have the same bytes. */
int rc_same_bytes(const char *a, const char *b);

#endif
