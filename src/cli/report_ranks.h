/* report_ranks.h - `memprof report` on several runs, one per rank of a
 * multi-rank job (docs/report.md "Ranks"): a table of the ranks -- peak,
 * when, step, main op -- from their captures' summaries alone (what
 * mp_run_open reads: no event decoded), then the report of the rank with
 * the highest peak, the only one solved. */
#ifndef MEMPROF_CLI_REPORT_RANKS_H
#define MEMPROF_CLI_REPORT_RANKS_H

#include "runs.h"

#include <memprof/report.h>

#include <jansson.h>
#include <stdio.h>

/* 1 when the inputs are ranks: nargs >= 2 arguments, each a run (each
 * expanded to its main process), without --pid or --process all. */
int cli_ranks_want(const cli_runs_t *runs, int nargs, const cli_run_select_t *sel);
/* The rank (run index) with the highest peak; the first on a tie. */
int cli_ranks_highest(const cli_runs_t *runs);

/* What only the solved rank gives: the step of its peak (-1: none) and
 * the op of the largest group live there (NULL: none; borrowed from the
 * input's source). */
typedef struct cli_rank_detail {
	int64_t step;
	const char *op;
} cli_rank_detail_t;
void cli_ranks_detail(cli_rank_detail_t *d, const mp_report_input_t *in);

/* The table as text, rank high marked and detailed by d. */
void cli_ranks_text(FILE *out, const cli_runs_t *runs, int high, const cli_rank_detail_t *d);
/* The "ranks" object of the JSON document; owned by the caller, NULL when
 * out of memory. */
json_t *cli_ranks_json(const cli_runs_t *runs, int high, const cli_rank_detail_t *d);
/* The table as CSV (after the report's tables, a blank line before). */
void cli_ranks_csv(FILE *out, const cli_runs_t *runs, int high, const cli_rank_detail_t *d);

#endif
