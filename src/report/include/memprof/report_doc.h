/* memprof/report_doc.h - the whole JSON document of `memprof report`
 * (docs/report.md), built here so that the command line only prints it:
 * each input's sections (mp_report_json_input), its "functions" and
 * "call_tree" objects where they were computed, and the process trees of
 * the 'memprof record' runs the inputs came from ("runs"). */
#ifndef MEMPROF_REPORT_DOC_H
#define MEMPROF_REPORT_DOC_H

#include <memprof/calltree.h>
#include <memprof/functions.h>
#include <memprof/report.h>
#include <memprof/run.h>

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a report adds to the solver's sections. All borrowed; a NULL array
 * or entry: none for that input. */
typedef struct mp_report_doc_extras {
	mp_functions_t *const *functions; /* per input: --by-function's table */
	mp_calltree_t *const *trees;      /* per input: --tree's call tree */
	int tree_kind;                    /* the mp_tree_kind_t the trees were built for */
	mp_run_t *const *runs;            /* the runs the inputs came from */
	size_t nruns;
} mp_report_doc_extras_t;

/* One input -> that input's object; several -> {"files": [...]}; with
 * "runs" (one object per run) after them where x names runs. x may be
 * NULL. Owned by the caller (json_decref); NULL when out of memory. */
json_t *mp_report_json_document(const mp_report_input_t *in, size_t n, const mp_report_options_t *o,
				const mp_report_doc_extras_t *x);

/* Input i's object of that document (its sections, "functions" and
 * "call_tree"), for a caller that writes the inputs one at a time and
 * frees each input's analysis before the next. Owned by the caller; NULL
 * when out of memory. */
json_t *mp_report_doc_input(const mp_report_input_t *in, size_t i, const mp_report_options_t *o,
			    const mp_report_doc_extras_t *x);

/* A run's process tree as the report's "run" object (docs/report.md).
 * Owned by the caller; NULL when out of memory. */
json_t *mp_report_run_json(const mp_run_t *run);

/* How a process's capture ended, as the tree and "ended" say it:
 * "exited", "exec'd", "abrupt", "write failed", "unreadable". Static. */
const char *mp_report_proc_end_word(mp_proc_end_t end);

/* A wait status as the run's outcome reads ("status"): "exit N", "signal N
 * (Name)"; written into buf (n bytes), which is returned. */
const char *mp_report_wait_status(int status, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
/* `report --json` written one input at a time (bounded memory for a run's
 * --process all), in the same bytes as mp_report_json_document over all of
 * them: add each input's object (mp_report_doc_input; stolen) as it comes,
 * then end with the runs' process trees (runs may be NULL when nruns is 0).
 * Each returns 0, MP_ENOMEM or -errno; abandon releases what an unfinished
 * stream holds. Initialise as {out, NULL, 0}. */
typedef struct mp_report_json_stream {
	FILE *out;
	json_t *first; /* the first input's object, held until a second comes; owned */
	size_t n;      /* inputs added */
} mp_report_json_stream_t;
int mp_report_json_stream_add(mp_report_json_stream_t *s, json_t *one);
int mp_report_json_stream_end(mp_report_json_stream_t *s, mp_run_t *const *runs, size_t nruns);
void mp_report_json_stream_abandon(mp_report_json_stream_t *s);

#endif
