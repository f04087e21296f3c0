/* memprof/report.h - what `memprof report` prints: aligned text tables for
 * people, JSON (jansson) and CSV for tools, from a solver's results.
 *
 * The JSON field names are a documented contract: docs/report.md. Strings
 * (op, dtype, shape, memory names) are resolved through the source the
 * solver was run on, so the source must still be open while reporting.
 */
#ifndef MEMPROF_REPORT_H
#define MEMPROF_REPORT_H

#include <memprof/solver.h>
#include <memprof/source.h>

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the JSON contract (docs/report.md, docs/schema/
 * report.schema.json): 2 since --compat=xprof follows it too. */
#define MP_REPORT_JSON_VERSION 2

/* Sections; they combine. */
enum {
	MP_REPORT_PEAK = 1u << 0,      /* summary + breakdown at the peak */
	MP_REPORT_TIMELINE = 1u << 1,  /* the down-sampled timeline */
	MP_REPORT_BREAKDOWN = 1u << 2, /* breakdown at the peak (without the summary in text) */
	MP_REPORT_LEAKS = 1u << 3,     /* live at the end */
	MP_REPORT_OOM = 1u << 4,       /* failed allocations and the state at each */
};

typedef struct mp_report_options {
	unsigned sections;   /* MP_REPORT_*; 0 = MP_REPORT_PEAK */
	uint32_t top;        /* rows printed per table; 0 = all (text: 0 = 20) */
	int device_set;      /* report only memory id `device` */
	uint32_t device;
	int steps_set;       /* echoed in the output */
	int64_t step_first, step_last;
} mp_report_options_t;

/* One analysed input. All borrowed. */
typedef struct mp_report_input {
	const char *path;            /* as given on the command line */
	const mp_solver_t *solver;   /* after mp_solver_run() */
	const mp_source_t *source;   /* still open: strings, memory names, end status */
	int device_set;              /* report only memory id `device` of this input */
	uint32_t device;             /* (overrides mp_report_options_t.device) */
	int window_set;              /* a window of the run (the CLI's report_window.h): the state */
	uint64_t window_from;        /* after its first window_from events, its counters the events after */
} mp_report_input_t;

/* Aligned text for people; devices with the highest peak first. Returns 0
 * or -errno if writing failed. */
int mp_report_text(FILE *out, const mp_report_input_t *in, size_t n, const mp_report_options_t *opts);

/* The JSON document for one input. Caller owns; free with json_decref().
 * NULL on allocation failure. */
json_t *mp_report_json_input(const mp_report_input_t *in, const mp_report_options_t *opts);

/* The whole JSON document: one input -> that input's object; several ->
 * {"files": [...]}. Returns 0, MP_ENOMEM or -errno. */
int mp_report_json(FILE *out, const mp_report_input_t *in, size_t n, const mp_report_options_t *opts);

/* CSV: one table per section, each with a header row, separated by a blank
 * line; the first column names the section. Returns 0 or -errno. */
int mp_report_csv(FILE *out, const mp_report_input_t *in, size_t n, const mp_report_options_t *opts);

/* The same CSV table by table, for a caller that writes one input at a
 * time: how many tables there are; table t's header line (without its
 * newline), or NULL when o's sections leave it out; its rows for
 * in[0..n) (0 or MP_ENOMEM). mp_report_csv() writes, for each table with a
 * header, a blank line (but before the first), the header and its rows. */
size_t mp_report_csv_table_count(void);
const char *mp_report_csv_table_header(size_t t, const mp_report_options_t *o);
int mp_report_csv_table_rows(FILE *out, size_t t, const mp_report_input_t *in, size_t n, const mp_report_options_t *o);

#ifdef __cplusplus
}
#endif
#endif
