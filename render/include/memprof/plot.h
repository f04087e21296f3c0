/* memprof/plot.h - whole pictures: the chart panels of `memprof plot`,
 * `memprof report --svg/--png` and `memprof hlo -o` stacked into one scene,
 * at a width and height given or chosen from what there is to show. */
#ifndef MEMPROF_PLOT_H
#define MEMPROF_PLOT_H

#include <memprof/charts.h>
#include <memprof/error.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MP_PLOT_DEFAULT_WIDTH 1200.0
#define MP_PLOT_DEFAULT_HEIGHT 700.0 /* one chart alone */
#define MP_PLOT_MIN_WIDTH 480.0      /* labels, cards and columns need it */

/* ---- captures ---------------------------------------------------------- */

enum {
	MP_PLOT_TIMELINE = 1u << 0,
	MP_PLOT_BREAKDOWN = 1u << 1,
	MP_PLOT_MAP = 1u << 2,
	MP_PLOT_ALL = 7u,
};

/* "timeline", "breakdown", "map", "all" -> MP_PLOT_*; 0 when unknown. */
unsigned mp_plot_chart_parse(const char *name);

/* Bars of a breakdown by allocating function for one memory id (captures
 * recorded with --stacks), made by the caller from memprof/functions.h. */
typedef struct mp_plot_function_bars {
	uint32_t memory;
	const mp_chart_bar_t *bars;
	size_t n;
	uint64_t rest_bytes, rest_count;
} mp_plot_function_bars_t;

/* One analysed input. */
typedef struct mp_plot_input {
	const char *name;          /* shown in titles: the file's name */
	const mp_solver_t *solver; /* after mp_solver_run() */
	mp_source_t *source;       /* names (ops, memory ids) and what time_ns counts; never read
				      here */
	const mp_replay_t *replay; /* what mp_plot_capture_reads asked the caller to read from the
				      source (mp_replay_read): the maps' snapshots, the timelines'
				      phases and step marks; NULL: nothing read */
	int device_set;            /* only memory id `device` */
	uint32_t device;
	const mp_plot_function_bars_t *functions; /* per memory id, or NULL */
	size_t nfunctions;
	/* Instead of the solver's (solver may then be NULL): memory ids
	 * figured another way -- a capture's timeline from its ROUND
	 * sections, without replaying its events (src/cli/plot_rounds.c).
	 * Timelines only: no breakdown, map, phases or step marks. */
	const mp_solver_device_t *devices;
	size_t ndevices;
	const mp_chart_band_t *const *bands; /* per device: its rounds' least and most (or NULL) */
	const size_t *nbands;
	int spans; /* 1: those rounds are a kept run's spans of rounds (its whole-run file's: docs/format.md,
		      "Segments and the ring"), each one round or many */
} mp_plot_input_t;

typedef struct mp_plot_options {
	unsigned charts;        /* MP_PLOT_*; 0 = timeline */
	double width, height;   /* 0: chosen (width 1200; height from the panels) */
	size_t max_oom_maps;    /* maps of failed allocations per memory id; 0 = 4 */
	int failures_only;      /* maps of the failed allocations, not of the peak */
	size_t top;             /* breakdown bars; 0 = 12 */
} mp_plot_options_t;

/* Lay out the charts of every memory id with a peak (highest peak first;
 * per memory id: its timeline, breakdown, then the map at the peak and at
 * each failed allocation, as charts asks) into *out. A memory id without
 * regions has no map: a note says so in the picture when other charts are
 * drawn; when only maps were asked and none can be drawn, MP_ENODATA with
 * diag saying why. A height given is shared between the panels in
 * proportion to what each asks; MP_EUSAGE when it is below their minimum
 * (diag names it), or when the width is under MP_PLOT_MIN_WIDTH. Caller owns *out (mp_scene_free). Returns 0,
 * MP_ENODATA (no memory event in the inputs), MP_EUSAGE, MP_ENOMEM or
 * MP_ENOTFOUND (a map's snapshot is not in the input's replay). */
int mp_plot_capture(mp_scene_t **out, const mp_plot_input_t *in, size_t n, const mp_plot_options_t *opt,
		    const mp_text_measure_t *m, mp_diag_t *diag);

/* What mp_plot_capture(opt) will need read from in's source, which the
 * layout never reads (in.replay is not looked at): the events of its maps,
 * as targets for mp_replay_read (*targets the caller's, free; NULL when
 * none), and whether its timelines want the input's phases and step marks
 * (*marks: only where the solver saw phases or steps). Returns 0 or
 * MP_ENOMEM. */
int mp_plot_capture_reads(const mp_plot_input_t *in, const mp_plot_options_t *opt, mp_snapshot_target_t **targets,
			  size_t *ntargets, int *marks);

/* ---- memprof plot --diff A B ------------------------------------------- */

/* A change at the peak: a row of the diff (memprof/diff.h), named. */
typedef struct mp_plot_diff_bar {
	const char *label;     /* op (with region, dtype, shape) or function */
	int64_t change_bytes;  /* B - A */
	const char *kind;      /* "new", "gone" (said after the value: a renamed op is
				* a gone row and a new one), or NULL */
} mp_plot_diff_bar_t;

/* One memory id in both inputs. Borrowed. */
typedef struct mp_plot_diff_memory {
	const char *title;                /* "GPU_0_bfc" */
	const mp_solver_device_t *a, *b;  /* timelines (time-ordered) and peaks */
	const char *name_a, *name_b;      /* the inputs, for the legend */
	int index_time;                   /* 1: time_ns counts entries (an integer axis) */
	const mp_plot_diff_bar_t *bars;   /* largest change first */
	size_t nbars;
} mp_plot_diff_memory_t;

/* Per memory id: both timelines on one time axis (from each one's first
 * point, or aligned at the first step both have: tag diff-step-align)
 * with the peaks and failed allocations (diff-failed-a/-b) marked; the
 * axis ends soon after the last change of either, flat tails cut there
 * (the legend says until when they ran) (tags diff-series-a/-b, diff-peak-a/-b),
 * then a diverging bar per change (diff-bar-grown right of the zero line,
 * diff-bar-shrunk left), its length in proportion to the largest. width 0:
 * 1200. Caller owns *out. Returns 0, MP_EUSAGE (too narrow), MP_ENODATA
 * (n == 0) or MP_ENOMEM; diag says why. */
int mp_plot_diff(mp_scene_t **out, const mp_plot_diff_memory_t *mem, size_t n, double width,
		 const mp_text_measure_t *m, mp_diag_t *diag);

/* ---- HLO modules --------------------------------------------------- */

enum {
	MP_PLOT_HLO_WORKING_SPACE = 1u << 0,
	MP_PLOT_HLO_BY_ORDER = 1u << 1,
	MP_PLOT_HLO_BY_SIZE = 1u << 2,
	MP_PLOT_HLO_ALL = 7u,
};

/* "working-space", "by-order", "by-size", "all" -> MP_PLOT_HLO_*; 0 when unknown. */
unsigned mp_plot_hlo_chart_parse(const char *name);

typedef struct mp_plot_hlo_options {
	unsigned charts;       /* MP_PLOT_HLO_*; 0 = all */
	double width, height;  /* 0: chosen */
	size_t lifetimes;      /* lifetime lines of the largest buffers; 0 = 8 */
	size_t table_rows;     /* rows of the details table; 0 = 10 */
} mp_plot_hlo_options_t;

/* The memory viewer as one picture: the header, the charts asked for, and
 * the details table of the buffers whose lifetimes are drawn and the
 * largest others (table_rows in all). A height given goes to, or is taken
 * from, the working space's plot. Caller owns *out. Returns 0, MP_ENODATA
 * (the working space needs a heap-simulator trace, or there is no buffer
 * for the buffer charts: diag says), MP_EUSAGE (a width under 480 px, a
 * height below the minimum) or MP_ENOMEM. */
int mp_plot_hlo(mp_scene_t **out, const mp_hlo_result_t *r, const mp_plot_hlo_options_t *opt,
		const mp_text_measure_t *m, mp_diag_t *diag);

#ifdef __cplusplus
}
#endif
#endif
