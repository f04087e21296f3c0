/* hlo_charts_impl.h - what the HLO charts share: which buffers get a
 * lifetime line and a table row, their rank by size (the "#n" that links
 * the strips, the lifetimes and the table), the x of a program point, the
 * legend of allocation types. Internal to memprof_layout. */
#ifndef MEMPROF_HLO_CHARTS_IMPL_H
#define MEMPROF_HLO_CHARTS_IMPL_H

#include "charts_impl.h"

/* Lifetime lanes and table rows beyond these would not be read. */
#define HX_MAX_LIFETIMES 32
#define HX_MAX_TABLE_ROWS 64

/* The working space's plot: its height by default, and the least it is
 * given when a picture's height is imposed. */
#define HX_SPACE_PLOT_H 280.0
#define HX_SPACE_PLOT_MIN 120.0

/* Heights of the panels at a width, as the picture's composer needs them:
 * the header's cards wrap to more rows, legends to more lines, in narrow
 * pictures. The public *_height() functions give them at the default
 * width (MP_PLOT_DEFAULT_WIDTH). */
double hx_header_height(double width, const mp_hlo_result_t *r);
double hx_space_height(const mp_hlo_result_t *r, size_t lifetimes, double width, const mp_text_measure_t *m);
double hx_buffers_height(const mp_hlo_result_t *r, double width, const mp_text_measure_t *m);

/* rank[i] = position of buffers[i] in by_size (0 = largest). Caller frees;
 * NULL when out of memory or there is no buffer. */
size_t *hx_ranks(const mp_hlo_result_t *r);

/* The buffers whose lifetimes are drawn: the k largest (by_size order)
 * that have a span, at most HX_MAX_LIFETIMES. Writes indices into
 * r->buffers, largest first, into out (room for HX_MAX_LIFETIMES) and
 * returns their count. */
size_t hx_pick_lifetimes(const mp_hlo_result_t *r, size_t k, size_t *out);

/* The rows of the details table, in by_size order: every buffer down to
 * the last of hx_pick_lifetimes(r, lifetimes) (so that the ranks have no
 * gap where the lanes skip buffers live throughout) and `rows` at least,
 * the small aggregate left out (it has no details); at most
 * HX_MAX_TABLE_ROWS, the lanes' buffers always among them. Writes indices into
 * r->buffers into out (room for HX_MAX_TABLE_ROWS); returns the count. */
size_t hx_pick_table(const mp_hlo_result_t *r, size_t rows, size_t lifetimes, size_t *out);

/* The table of hx_pick_table(r, rows, lifetimes): mp_chart_hlo_table()
 * with the rows of the lifetimes drawn above it (the plot's table). */
int hx_table(const mp_chart_area_t *a, const mp_hlo_result_t *r, size_t rows, size_t lifetimes);

/* Points on the working space's x axis: event e of the trace is drawn
 * over [e, e + 1), showing the heap after it (heap_sizes[e + 1]). */
size_t hx_point_count(const mp_hlo_result_t *r);

/* The legend of the allocation types present among the buffers, each
 * with its bytes ("Temporary 3.55 GiB"); returns the height taken (with
 * draw 0, only measures). */
double hx_type_legend(const mp_chart_area_t *a, double x, double y, double max_w, const mp_hlo_result_t *r,
		      int draw);

/* Text from a module is bytes a hostile file chose: what is not UTF-8 is
 * cleaned where every text enters (mp_scene_text and the painter's measure,
 * mp_utf8_clean), not here. A copy of s ("" for NULL); caller frees. NULL
 * when out of memory. */
char *hx_dup(const char *s);

/* The op name without its primitive's parameters: every bracketed group
 * dropped ("…/qk_einsum/dot_general[dimension_numbers=…]" gives
 * "…/qk_einsum/dot_general"); a name with unbalanced brackets is kept
 * whole. Into buf; returns buf. */
const char *hx_op_text(char *buf, size_t size, const char *op_name);

/* The shape without the default layout, every dim kept
 * ("bf16[8,2,2048,8192]{3,2,1,0}" gives "bf16[8,2,2048,8192]"; a tiled or
 * permuted layout stays). Into buf; returns buf. */
const char *hx_shape_text(char *buf, size_t size, const char *shape);

/* Buffers with a colour of their own, the same in the lanes, the strips
 * and the table: the HX_PALETTE largest with a lifetime in the trace, else
 * (none has one) the HX_PALETTE largest. Indices into r->buffers, into out
 * (room for HX_PALETTE); returns the count. */
#define HX_PALETTE 8
#define HX_COLOR_REST 0xD9D9D9 /* every other buffer: light grey */
size_t hx_pick_colored(const mp_hlo_result_t *r, size_t *out);
/* Buffer i's colour: its own when among colored[0..n), else HX_COLOR_REST. */
uint32_t hx_buffer_color(const size_t *colored, size_t n, size_t i);

/* The ranks above the last lane's that have no lane and why, into buf
 * ("#4–#12 have no lane: live throughout the trace (Parameter)"); returns
 * how many ("" and 0 when the lanes are the largest buffers). */
size_t hx_lane_gaps(const mp_hlo_result_t *r, const size_t *life, size_t nlife, char *buf, size_t size);

/* "#3 name" with a shape and a size as a label says it, into buf. */
const char *hx_buffer_text(char *buf, size_t size, size_t rank, const mp_hlo_buffer_t *b, int with_shape);

/* A buffer's note (an HTML report's hover), its first line given ("#3"):
 * the full instruction name, shape (dtype and dims), op and opcode, source
 * line, bytes and program-point span, one a line, into buf. */
const char *hx_buffer_note(char *buf, size_t size, const char *first, const mp_hlo_buffer_t *b);

#endif
