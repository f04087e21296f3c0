/* memprof/flame.h - a call tree of memory as an icicle chart (the root on
 * top, callees below) or a flame graph (the root at the bottom): one row
 * per call depth, each frame as wide as its inclusive bytes. Part of
 * memprof_layout (no cairo), like the other chart builders
 * (memprof/charts.h).
 *
 * The input is a flat array of nodes, the root first and every node after
 * its parent; the call-tree builder's own nodes are adapted to it.
 */
#ifndef MEMPROF_FLAME_H
#define MEMPROF_FLAME_H

#include <memprof/charts.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a frame is; each kind has its colour. */
typedef enum {
	MP_FLAME_PYTHON,  /* "forward (model.py:42)" */
	MP_FLAME_NATIVE,  /* "malloc", "libfoo.so+0x12" */
	MP_FLAME_KERNEL,  /* a CUDA or XLA kernel, an op */
	MP_FLAME_UNKNOWN, /* a frame that could not be named (other values read as this) */
	MP_FLAME_OTHER,   /* callees pruned by the tree builder, summed: "(other)" */
	MP_FLAME_KINDS
} mp_flame_kind_t;

typedef struct mp_flame_node {
	const char *name;     /* NULL reads as "?" */
	int kind;             /* mp_flame_kind_t */
	uint64_t total_bytes; /* inclusive */
	uint64_t self_bytes;  /* exclusive */
	uint64_t count;       /* allocations, inclusive */
	uint32_t parent;      /* index of the parent, before this node; UINT32_MAX for the root, nodes[0] */
} mp_flame_node_t;

/* Children are drawn left to right largest first (by inclusive bytes;
 * ties by name): the question a memory view answers is where the bytes
 * went, so the top callee of each frame is where the eye starts, and the
 * widest frame under the root is the root's top child. By name (ties by
 * bytes) puts the same callees at the same place in two pictures, as CPU
 * flame graphs do, for comparing runs side by side. */
typedef enum { MP_FLAME_SORT_BYTES, MP_FLAME_SORT_NAME } mp_flame_sort_t;

#define MP_FLAME_MAX_DEPTH 64 /* rows drawn at most, the root's included, unless told */
#define MP_FLAME_ROW_H 20.0   /* a row: a frame 19 px tall and a 1 px seam */

typedef struct mp_flame_options {
	int flame;          /* 0: icicle, the root on top; 1: flame graph, the root at the bottom */
	int sort;           /* mp_flame_sort_t */
	uint32_t max_depth; /* rows drawn at most; 0: MP_FLAME_MAX_DEPTH */
} mp_flame_options_t;

/* The chart in a's box: a header (title; the subtitle, then the root's
 * bytes, exact and human, and its allocations), a legend of the kinds
 * drawn, the rows, and under them a line saying what was not drawn and
 * how to read the chart.
 *
 * The frames of a row lie side by side under their parent, their edges on
 * whole pixels (x = the plot's left + round(plot width x bytes before the
 * frame / root bytes)), each filled up to 1 px short of its right edge
 * when it is 3 px wide or more (a white seam between neighbours). A
 * parent's bytes not in its children (its self bytes) are the room left
 * under it. Children whose bytes add up to more than their parent's are
 * cut at its right edge. A frame narrower than 1 px (exactly, before
 * rounding) is not drawn; each run of such siblings is one grey frame
 * ("merged") when the run is 1 px wide, and nothing otherwise; the line
 * under the chart says how many frames and bytes were too narrow. Rows
 * deeper than max_depth, or than the box has room for, are not drawn,
 * and the line says so too.
 *
 * Frames are coloured by kind, in a shade of the kind's colour that the
 * name hashes to (a frame touching a neighbour of a close shade takes one
 * further off), so that neighbours differ and a name keeps its shade from
 * one picture to the next; the root, of no kind, is grey. Text is dark on
 * every shade. A frame's name is written inside it where 3 characters of
 * it fit at least, shortened in the middle with the end favoured: "name
 * (file:line)" keeps its "(file:line)" whole while it can, since that is
 * what tells apart frames of one function, other names keep two thirds of
 * what fits from their end ("torc…d0::apply"). A frame whose name fits
 * whole shows its bytes at its right end where they fit too.
 *
 * Tags: "flame-frame" (a node's rect; its note gives the full name, kind,
 * inclusive bytes and share of the root, self bytes and count, and its ref
 * is the node's index), "flame-merged" (a run of narrow siblings; its note
 * says how many and their bytes, its ref is their parent), "flame-label"
 * (a name inside its frame), "flame-size" (bytes inside a frame),
 * "flame-hidden" (the line under the rows), "flame-hint" (how to read the
 * chart, at that line's right end where it fits), "flame-empty" (the line
 * drawn instead of rows for no nodes or a root of 0 bytes).
 * options may be NULL (defaults). Returns 0, MP_EUSAGE (a node's parent
 * not before it, or a second root; a box shorter than the height of a
 * chart of one row, mp_chart_flame_height() of the root alone: nothing is
 * drawn then) or MP_ENOMEM. */
int mp_chart_flame(const mp_chart_area_t *a, const mp_flame_node_t *nodes, size_t n, const char *title,
		   const char *subtitle, const mp_flame_options_t *options);

/* The height the chart needs at this width to draw every row it would
 * draw (up to max_depth; one for an empty tree), with text measured as m
 * does. 0 when the input is malformed or memory runs out. */
double mp_chart_flame_height(const mp_flame_node_t *nodes, size_t n, double width, const mp_flame_options_t *options,
			     const mp_text_measure_t *m);

/* A kind's base colour (0xRRGGBB) and its name in the legend. */
uint32_t mp_flame_kind_color(int kind);
const char *mp_flame_kind_name(int kind);

#ifdef __cplusplus
}
#endif
#endif
