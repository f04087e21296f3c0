/* memprof/layout.h - the arithmetic of charts, without any drawing: human
 * units, scales and "nice" ticks, label placement without collisions,
 * stacking, downsampling that keeps the peak, text shortened to fit, and
 * the memory map's per-pixel merge of blocks. Pure functions over plain
 * data (no cairo), so every rule is a unit test.
 *
 * Text widths come from an mp_text_measure_t the caller passes: the painter
 * provides the real one (memprof/render.h), tests may use
 * mp_text_measure_fixed.
 */
#ifndef MEMPROF_LAYOUT_H
#define MEMPROF_LAYOUT_H

#include <memprof/output/units.h> /* mp_bytes_exact(): the exact form every output shares */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- text metrics -------------------------------------------------------- */

typedef struct mp_text_measure {
	/* Advance width in px of utf8 at font size px (bold or not). */
	double (*width)(void *ctx, const char *utf8, double size, int bold);
	void *ctx;
} mp_text_measure_t;

/* Every code point as drawn (after mp_utf8_clean, as the painter measures
 * too) is 0.6 x size wide: a stand-in for tests. */
extern const mp_text_measure_t mp_text_measure_fixed;

static inline double mp_text_width(const mp_text_measure_t *m, const char *s, double size, int bold)
{
	return m->width(m->ctx, s, size, bold);
}

/* Names come from captures and modules, bytes a program or a hostile file
 * chose, and cairo refuses a whole picture for one string that is not
 * UTF-8. In place: each byte that does not start a valid sequence (overlong
 * forms, surrogates and the noncharacters cairo rejects included) becomes
 * '?'; a sequence cut off at the end (a truncating snprintf) is dropped.
 * mp_scene_text() and the painter's measure clean what they are given. */
void mp_utf8_clean(char *s);
/* 1 when s is valid UTF-8 as mp_utf8_clean() judges it. */
int mp_utf8_valid(const char *s);

/* Where the ellipsis goes when a text is too long. */
typedef enum { MP_ELLIPSIS_END, MP_ELLIPSIS_MIDDLE, MP_ELLIPSIS_START } mp_ellipsis_t;

/* Copy s into out (size bytes), shortened with "…" where `where` says so
 * that it is at most max_w px wide; never splits a UTF-8 sequence. Returns
 * 1 when shortened, 0 when s fits as it is. A width too small for even
 * "…" gives "". */
int mp_text_fit(const mp_text_measure_t *m, const char *s, double size, int bold, double max_w,
		mp_ellipsis_t where, char *out, size_t outsize);

/* names[i] fitted to max_w as mp_text_fit does, but keeping the part that
 * tells it apart from the other names (the path components where it
 * differs from them), the rest shortened around it: "a/b…/layer_3/…/Cast"
 * rather than a middle ellipsis that may remove the only difference. Falls
 * back to a middle ellipsis when even that part does not fit. Returns 1
 * when shortened, 0 when names[i] fits as it is. */
int mp_text_fit_apart(const mp_text_measure_t *m, const char *const *names, size_t count, size_t i, double size,
		      int bold, double max_w, char *out, size_t outsize);

/* ---- human units ------------------------------------------------------- */

/* "63.0 MiB", "512 B", "1.50 GiB": binary units, three significant digits. */
const char *mp_fmt_bytes(char *buf, size_t size, uint64_t bytes);
/* "278.6 µs", "1.25 s", "12.0 min", "3.50 h": four significant digits. */
const char *mp_fmt_time(char *buf, size_t size, uint64_t ns);
/* "1,234,567". */
const char *mp_fmt_count(char *buf, size_t size, uint64_t n);

/* ---- scales and ticks --------------------------------------------------- */

/* A linear map from data [d0, d1] to pixels [r0, r1] (r1 < r0 for y). */
typedef struct mp_scale {
	double d0, d1, r0, r1;
} mp_scale_t;

static inline double mp_scale_map(const mp_scale_t *s, double v)
{
	return s->d1 == s->d0 ? s->r0 : s->r0 + (v - s->d0) * (s->r1 - s->r0) / (s->d1 - s->d0);
}

typedef enum {
	MP_AXIS_NUMBER,  /* plain numbers: 1, 2, 5 x 10^k; thousands grouped */
	MP_AXIS_BYTES,   /* bytes, labelled in B, KiB, MiB, GiB, TiB, PiB */
	MP_AXIS_TIME_NS, /* nanoseconds, labelled in ns, µs, ms, s, min or h */
	MP_AXIS_PERCENT, /* 0..100 */
	MP_AXIS_INTEGER, /* whole numbers (indexes, counts): as NUMBER, steps of at least 1 */
} mp_axis_kind_t;

#define MP_TICKS_MAX 32

typedef struct mp_ticks {
	size_t count;
	double step;                 /* data units between ticks */
	double value[MP_TICKS_MAX];  /* ascending, inside [lo, hi] */
	char label[MP_TICKS_MAX][24];
	const char *unit;            /* "MiB", "ms", "%", "" */
} mp_ticks_t;

/* Ticks for [lo, hi] at a nice step giving at most max_count ticks (at
 * least 2 asked; hi > lo; hi - lo beyond 1e18 is clamped). Every label
 * carries the unit ("512 MiB", "1.5 ms"). Returns 0 or MP_EUSAGE. */
int mp_ticks_nice(mp_ticks_t *t, mp_axis_kind_t kind, double lo, double hi, size_t max_count);

/* The densest nice ticks whose labels do not touch along an axis of
 * length px: horizontal axes compare label widths (measured), vertical ones
 * the line height. Returns 0 or MP_EUSAGE. */
int mp_ticks_fit(mp_ticks_t *t, mp_axis_kind_t kind, double lo, double hi, double length, int horizontal,
		 const mp_text_measure_t *m, double font_size);

/* ---- boxes and labels ------------------------------------------------ */

typedef struct mp_box {
	double x, y, w, h;
} mp_box_t;

static inline int mp_box_overlap(const mp_box_t *a, const mp_box_t *b, double gap)
{
	return a->x < b->x + b->w + gap && b->x < a->x + a->w + gap && a->y < b->y + b->h + gap &&
	       b->y < a->y + a->h + gap;
}

static inline int mp_box_inside(const mp_box_t *in, const mp_box_t *outer)
{
	return in->x >= outer->x && in->y >= outer->y && in->x + in->w <= outer->x + outer->w &&
	       in->y + in->h <= outer->y + outer->h;
}

#define MP_LABEL_CANDIDATES 16

/* A label to place: its size, the positions (top-left corners) it may take
 * in order of preference, and its priority (higher placed first; ties keep
 * the input order). On return, placed says whether it got a position and
 * box is where. */
typedef struct mp_label {
	double w, h;
	mp_box_t cand[MP_LABEL_CANDIDATES];
	size_t ncand;
	double priority;
	int slide;   /* 1: a candidate sticking out of bounds is first moved inside */
	int placed;
	mp_box_t box;
} mp_label_t;

/* Place labels greedily: by priority, each takes its first candidate that
 * lies inside bounds and keeps `gap` px from every placed label and every
 * obstacle; a label with none left is dropped (placed = 0). Returns the
 * number placed, or MP_ENOMEM. */
long mp_labels_place(mp_label_t *labels, size_t n, const mp_box_t *bounds, const mp_box_t *obstacles,
		     size_t nobstacles, double gap);

/* ---- series ------------------------------------------------------------ */

/* Downsample (x[i], y[i]), x ascending, to at most 4 points per pixel
 * column of [x0, x1] split into `columns` (points outside it count in the
 * first or the last column): in each column the first, the lowest, the
 * highest and the last point (M4). The highest y of every column survives,
 * so the series' exact maximum does too (its first index on ties), and the
 * line drawn through the kept points is the same at that resolution.
 * Writes the kept indices, ascending, into out (room for 4 * columns) and
 * returns their count; 0 when n or columns is 0. */
size_t mp_series_m4(const double *x, const double *y, size_t n, double x0, double x1, size_t columns,
		    size_t *out);

/* What a pixel column of a step series shows (value y[i] held from x[i]
 * until x[i + 1]): its lowest and highest value, counting the value carried
 * in from the left; has = 0 where the series has no value yet (or NaN, a
 * gap). The highest value of the series is the `hi` of its column, exactly:
 * an area drawn to each column's hi is the series at pixel resolution,
 * peak included, in as many points as there are columns. */
typedef struct mp_column_range {
	double lo, hi;
	int has;
} mp_column_range_t;

void mp_series_columns(const double *x, const double *y, size_t n, double x0, double x1, size_t columns,
		       mp_column_range_t *out);

/* The column of [x0, x1] split into `columns` that x falls in, as
 * mp_series_columns and mp_series_m4 count (outside: the first or the
 * last; 0 when columns is 0): what draws a mark at x must take this
 * column for it to stand over the value the column shows. */
size_t mp_series_column(double x, double x0, double x1, size_t columns);

/* Stack layers: tops[l * n + i] = layers[0][i] + ... + layers[l][i]. */
void mp_series_stack(const double *const *layers, size_t nlayers, size_t n, double *tops);

/* ---- memory map: blocks merged per pixel --------------------------------- */

#define MP_MEMMAP_TYPES 8 /* block types (region types, HLO categories): 0..7 */

typedef struct mp_memmap_block {
	uint64_t addr, size;
	uint8_t type;
} mp_memmap_block_t;

typedef struct mp_memmap_region {
	uint64_t base, end; /* [base, end) */
} mp_memmap_region_t;

/* One pixel column of the map: the bytes of its address range. */
typedef struct mp_memmap_column {
	uint64_t lo, hi;                    /* [lo, hi): the addresses it shows */
	uint64_t used[MP_MEMMAP_TYPES];     /* live bytes by type */
	uint64_t free;                      /* hi - lo - sum(used) */
	uint32_t region;                    /* index of its region */
	uint16_t row, x;                    /* where: row, pixel column in the row */
	uint8_t dominant;                   /* the type with the most bytes (lowest on ties) */
	uint8_t block_start;                /* a block of >= 3 columns starts here */
} mp_memmap_column_t;

typedef struct mp_memmap {
	mp_memmap_column_t *col;  /* owned; in address order */
	size_t ncol;
	size_t rows;              /* rows used */
	size_t row_width;         /* columns per row */
	size_t gap;               /* empty columns between two regions */
	double bytes_per_column;  /* the scale: region bytes / columns given to them */
	uint64_t region_bytes, used_bytes, free_bytes;
	uint64_t outside_bytes;   /* live bytes not wholly inside one region (not drawn) */
	uint64_t largest_free;    /* the largest free chunk, bytes (0: none) */
	uint64_t largest_free_addr;
	size_t largest_first, largest_last; /* its first and last column (largest_free > 0) */
	size_t *region_first;     /* owned: first column of each region */
	size_t nregions;
} mp_memmap_t;

/* Lay regions (sorted by base, not overlapping) out as rows of row_width
 * pixel columns, region after region with `gap` empty columns between
 * them, at one scale chosen so that all fit in at most max_rows rows (every
 * region gets at least one column), and merge the blocks (sorted by
 * address; blocks not wholly inside one region are counted in
 * outside_bytes) into the columns. Bytes are conserved: each column's used
 * plus free is its range, and the ranges of a region's columns tile it.
 * Returns 0, MP_EUSAGE (no region, row_width 0, max_rows 0, unsorted
 * input or more regions than columns) or MP_ENOMEM. Free with
 * mp_memmap_free(). */
int mp_memmap_build(mp_memmap_t *map, const mp_memmap_region_t *regions, size_t nregions,
		    const mp_memmap_block_t *blocks, size_t nblocks, size_t row_width, size_t max_rows, size_t gap);
void mp_memmap_free(mp_memmap_t *map);

#ifdef __cplusplus
}
#endif
#endif
