/* memprof/charts.h - the chart builders: solver, snapshot and HLO results
 * laid out into a scene (memprof/scene.h), ready for the painter. Part of
 * memprof_layout: no cairo, so what a chart shows is testable as data.
 *
 * Each builder draws inside the box of an mp_chart_area_t and nowhere
 * else; its *_height() says how tall a box it wants for its content (the
 * plot composers stack panels with it). Text never leaves the box: long
 * names are shortened with an ellipsis, labels that would collide are
 * moved or dropped. Items a test may look for are tagged (the tags are
 * listed with each builder). Colours come from one colour-blind-safe
 * palette (Okabe and Ito's), dark text on white.
 */
#ifndef MEMPROF_CHARTS_H
#define MEMPROF_CHARTS_H

#include <memprof/hlo.h>
#include <memprof/layout.h>
#include <memprof/replay.h>
#include <memprof/scene.h>
#include <memprof/snapshot.h>
#include <memprof/solver.h>
#include <memprof/source.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- palette (0xRRGGBB; MP_RGB() makes a scene colour) ----------------- */

#define MP_COLOR_BACKGROUND 0xFFFFFF
#define MP_COLOR_TEXT 0x222222
#define MP_COLOR_MUTED 0x5A5A5A
#define MP_COLOR_GRID 0xE8E8E8
#define MP_COLOR_AXIS 0x8C8C8C
#define MP_COLOR_HEAP 0x0072B2        /* blue */
#define MP_COLOR_HEAP_BAND 0x8FC3E3   /* light blue: up to a round's most in use */
#define MP_COLOR_STACK 0xE69F00       /* orange */
#define MP_COLOR_FREE 0xE3E3E3        /* light grey */
#define MP_COLOR_FRAGMENTATION 0xCC79A7 /* reddish purple */
#define MP_COLOR_PEAK 0x000000
#define MP_COLOR_OOM 0xD55E00         /* vermillion */
#define MP_COLOR_STEP 0x9A9A9A        /* step starts */
#define MP_COLOR_RESERVED 0xE69F00    /* orange: what the regions hold, when no capacity is known */
#define MP_COLOR_PHASE 0x56B4E9       /* sky blue: phases' spans */

/* Live blocks and breakdown bars by region type (mp_region_type_t). */
uint32_t mp_color_region(int region_type);
/* HLO buffers by allocation type. */
uint32_t mp_color_hlo(mp_hlo_category_t category);

/* ---- where a chart draws ---------------------------------------------- */

typedef struct mp_chart_area {
	mp_scene_t *scene;
	const mp_text_measure_t *measure;
	mp_box_t box;
} mp_chart_area_t;

/* ---- capture charts ------------------------------------------------- */

/* A phase of the input and a step mark of it, as the caller read them
 * (memprof/replay.h): the layout reads no input. */
typedef mp_replay_phase_t mp_chart_phase_t;
typedef mp_replay_step_t mp_chart_step_t;

/* In use between lo and hi bytes somewhere over [t0_ns, t1_ns]: a round
 * of a capture (memprof/rounds.h), its least and most. */
typedef struct mp_chart_band {
	uint64_t t0_ns, t1_ns, lo, hi;
} mp_chart_band_t;

/* One memory id of an analysed capture. */
typedef struct mp_chart_memory {
	const char *title;             /* "demo.memprof: GPU_0_bfc (device)"; the chart adds the capacity */
	const mp_solver_device_t *dev; /* timeline, peak, OOM records */
	const mp_source_t *source;     /* names of op ids; the memory's own word for what it holds
					  (mp_memory_info_t.in_use_name); what time_ns counts
					  (mp_source_time_unit) */
	uint64_t t0_ns, t1_ns;         /* the time axis at least spans these (the composer gives every
					  memory id of one input the same axis); 0, 0: its own points */
	const char *top_name;          /* the largest group at the peak, as the breakdown beside it
					  names it (its first bar); NULL: the solver's first row's op */
	const mp_chart_phase_t *phases; /* the input's phases, by t0 (may be NULL) */
	size_t nphases;
	const mp_chart_step_t *steps;   /* the input's step marks (mp_replay_read), the same for
					   every memory id of it; NULL: where the steps of this memory
					   id's points change */
	size_t nsteps;
	int rounds;                     /* 1: dev is a capture's rounds (memprof/rounds.h), not a replay:
					   the header says so; 2: a kept run's spans of rounds */
	const mp_chart_band_t *bands;   /* the rounds' spans, by time (NULL: none): in use drawn as
					   each column's least, with a band up to its most
					   ("area-heap-band") */
	size_t nbands;
} mp_chart_memory_t;

/* The memory timeline: stack, heap and free as stacked areas, fragmentation
 * as a line on a right axis (0-100 %), the peak marked and labelled (bytes,
 * time, step, phase, the top group), failed allocations marked, steps and
 * phases as lanes over the plot, axes in human units and a legend. What is
 * in use is named in the memory's own words when it has them ("allocated",
 * "reserved"). The capacity (a dashed line, and in the title) is drawn only
 * when it is known: declared, or reported by the allocator (stats model);
 * without it, a memory id with regions shows what they hold over time as
 * its own line, "reserved", with free the bytes inside them that are not
 * in use. Each series is each pixel column's highest value, and the marks
 * (peak, failed allocations) stand in the column of their event, so the
 * peak drawn is the peak reported, under its mark, however short. When the
 * source's time is not time (mp_source_time_unit: a trace entry index),
 * the x axis counts that unit and its title says so. Tags: "peak-line",
 * "peak-dot", "peak-label", "oom-mark" (one each), "oom-label", "area-heap",
 * "area-stack", "area-free", "fragmentation", "capacity", "reserved",
 * "step-tick", "step" (a step's span in its lane), "step-note" (the line
 * saying the step ids repeat or go backwards), "phase" (a phase's span in its lane), "phase-label",
 * "x-title", "plot" (the plot frame rect), "timeline-column" (hit only:
 * every 4 px of the plot, noted with its time span, in use, reserved,
 * fragmentation). Returns 0, MP_ENODATA (no event
 * of this memory id in the window) or MP_ENOMEM. */
int mp_chart_timeline(const mp_chart_area_t *a, const mp_chart_memory_t *mem);
double mp_chart_timeline_height(void);
#define MP_CHART_TIMELINE_MIN_HEIGHT 240.0

/* A bar of the breakdown. */
typedef struct mp_chart_bar {
	const char *label;  /* op or function; "" shows as "(no op)" */
	const char *detail; /* "dynamic · uint8 [1048576] · 47 × 1.00 MiB"; may be "" */
	uint64_t bytes;
	uint32_t color;     /* 0xRRGGBB */
} mp_chart_bar_t;

typedef struct mp_chart_bars {
	const char *title;
	const char *subtitle;
	const mp_chart_bar_t *bars; /* largest first */
	size_t n;
	uint64_t rest_bytes;        /* the rows not drawn, summed in one bar */
	uint64_t rest_count;
	const char *rest_what;      /* "groups", "functions" */
	int legend_regions;         /* 1: a legend of the region-type colours */
} mp_chart_bars_t;

/* Horizontal bars, largest first, each labelled with its name, detail and
 * size; the rest summed in a last grey bar. Tags: "bar" (one per bar,
 * the rest included), "bar-label". Returns 0 or MP_ENOMEM. */
int mp_chart_breakdown(const mp_chart_area_t *a, const mp_chart_bars_t *bars);
double mp_chart_breakdown_height(size_t nbars);

/* The bars of a solver's breakdown rows (op, region, dtype, shape, count x
 * size), at most max of them, the rest summed. Strings are written into
 * text (room: nrows * 160 bytes), *out_rest_* filled; returns the number
 * of bars. */
size_t mp_chart_bars_from_rows(mp_chart_bar_t *out, size_t max, const mp_solver_row_t *rows, size_t nrows,
			       const mp_source_t *src, char *text, size_t textsz, uint64_t *rest_bytes,
			       uint64_t *rest_count);

/* The memory map of a memory id at one instant. The map's geometry is
 * built first, from a snapshot, at the width the chart will have
 * (mp_chart_map_geometry): a snapshot of millions of blocks need not be
 * kept to draw it, only its pixel columns. */
typedef struct mp_chart_map {
	const char *title;         /* "Memory map of GPU_0_bfc at the peak" */
	const char *subtitle;      /* time, step, cause; may be NULL */
	const mp_memmap_t *map;    /* from mp_chart_map_geometry */
	uint64_t requested;        /* the failed request drawn under the map; 0 at a peak */
	/* The live blocks (the snapshot's, sorted by address; borrowed), for
	 * hover only: each block or free chunk of >= 2 px gets a hit area noted
	 * with its addresses, bytes, op and type, narrower ones merge per pixel
	 * column ("N blocks, B bytes"). Never painted. NULL: regions only. */
	const mp_snapshot_block_t *blocks;
	size_t nblocks;
	const mp_source_t *source; /* names the blocks' ops; may be NULL */
} mp_chart_map_t;

/* The pixel columns of snap's regions and blocks for a map chart of this
 * width. Returns 0, MP_ENODATA (no region at that instant), MP_EUSAGE (more
 * regions than the map has pixels) or MP_ENOMEM; free with
 * mp_memmap_free(). */
int mp_chart_map_geometry(mp_memmap_t *out, const mp_snapshot_t *snap, double width);

/* Every region as an address strip (rows of pixel columns at one scale,
 * blocks merged per pixel), live bytes coloured by region type, free bytes
 * light, the largest free chunk outlined and labelled, and for a failed
 * allocation the request drawn at the same scale under the map, beside the
 * largest free chunk and all the free bytes. Rows are images (a pixel per
 * column), so the picture's size does not follow the block count. Tags:
 * "map-row" (a row's image), "map-region" (a region's part of a row, while
 * there are at most 400 regions), "largest-free" (its outline, one per row
 * it spans), "largest-free-label", "request", "largest-free-bar",
 * "free-bar" (the comparison bars); with blocks, hit only (never painted):
 * "map-block", "map-free", "map-blocks" (see mp_chart_map_t). Returns 0
 * or MP_ENOMEM. */
int mp_chart_map(const mp_chart_area_t *a, const mp_chart_map_t *map);
/* Its height, with text measured as m does (the legend may wrap). */
double mp_chart_map_height(const mp_chart_map_t *map, const mp_text_measure_t *m);

/* ---- HLO charts -------------------------------------------------------- */

/* The *_height() functions below give heights at the default width (1200
 * px); mp_plot_hlo lays out at the width it is given. Buffers are named
 * "#n" by their rank by size, the same in every chart and the table. */

/* The header: module, peak, unpadded peak, padding overhead, total
 * allocation, fragmentation, as cards. A fragmentation of a space under
 * 1 % of the total allocation is not in bold and a line under the cards
 * gives its context (a line more, which mp_plot_hlo gives it). Tags:
 * "header-peak", "header-fragmentation", "header-note". */
int mp_chart_hlo_header(const mp_chart_area_t *a, const mp_hlo_result_t *r);

/* Heap and unpadded heap per program point (event e drawn over [e, e + 1),
 * the heap after it), the peak marked with its value and position, and
 * under it the lifetimes of the `lifetimes` largest buffers at the peak
 * (from the program point where each is allocated to where it is freed,
 * as thick as its size allows, in the buffer's own colour, the same in the
 * strips and the table; a caption names the larger buffers without a lane). Tags: "peak-line",
 * "peak-label", "heap", "heap-area", "unpadded" (left out when it is the
 * same curve as the heap: the legend says so), "indefinite", "lifetime",
 * "lifetime-label", "lifetime-caption", "plot". Returns 0, MP_ENODATA (no
 * heap-simulator trace) or MP_ENOMEM. */
int mp_chart_hlo_working_space(const mp_chart_area_t *a, const mp_hlo_result_t *r, size_t lifetimes);

/* The buffers live at the peak as one strip of bars proportional to their
 * size, in program order or by size: those of the lifetime lanes (else
 * the 8 largest) in a colour of their own, the others grey, a band under
 * the strip coloured by allocation type; the largest labelled (name,
 * shape, size; shorter where room is short). Tags: "buffer" (a buffer with
 * its own colour, noted "#rank"), "buffer-rest", "buffer-rest-hit" (hit
 * only: a grey buffer, or the thin ones of a pixel merged, noted),
 * "buffer-type" (runs of
 * pixel columns of the band), "buffer-label", "buffer-leader". */
int mp_chart_hlo_buffers(const mp_chart_area_t *a, const mp_hlo_result_t *r, int by_size);
double mp_chart_hlo_buffers_height(void);

/* The details of the `rows` largest buffers (the small-buffer aggregate,
 * which has none, left out): name, size, unpadded size, shape (without
 * the default layout), op name (without the primitive's parameters),
 * source, span; columns are dropped, least telling first, when the width
 * is short. Tags: "table-row", "table-op" (noted with the whole op name),
 * "table-shape". */
int mp_chart_hlo_table(const mp_chart_area_t *a, const mp_hlo_result_t *r, size_t rows);
double mp_chart_hlo_table_height(size_t rows);

#ifdef __cplusplus
}
#endif
#endif
