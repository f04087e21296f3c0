/* report_stream.h - `memprof report`'s text, JSON and CSV written one input at
 * a time: each input opened, solved, written and released before the next
 * (bounded memory for a run's --process all), with the same bytes as the
 * report of all inputs at once. CSV, --svg/--png/--html and --compat need
 * every input at once and do not come here. */
#ifndef MEMPROF_CLI_REPORT_STREAM_H
#define MEMPROF_CLI_REPORT_STREAM_H

#include "inputs.h"
#include "runs.h"

#include <memprof/report.h>

enum { CLI_STREAM_TEXT, CLI_STREAM_JSON, CLI_STREAM_CSV };

typedef struct cli_report_stream {
	const mp_report_options_t *ropt;
	int format;         /* CLI_STREAM_TEXT, _JSON or _CSV */
	int tree;           /* --tree's mp_tree_kind_t, -1: none */
	int functions_only; /* text: only the function tables and trees */
	int all_processes;  /* text: the runs' trees in full */
} cli_report_stream_t;

/* Open, solve and write files[0..nfiles) (cli_inputs_next) on stdout.
 * Prints what goes wrong and returns an exit code; an input that fails
 * stops the report where it is (what was written stays written). */
int cli_report_stream(const cli_report_stream_t *s, char *const *files, int nfiles, const cli_inputs_options_t *io,
		      const cli_runs_t *runs);

#endif
