/* memprof/report_ranks.h - `memprof report` on several runs, one per rank of a
 * multi-rank job (docs/report.md "Ranks"): a table of the ranks -- peak,
 * when, step, main op -- from their captures' summaries alone (what
 * mp_run_open reads: no event decoded), then the report of the rank with
 * the highest peak, the only one solved. */
#ifndef MEMPROF_REPORT_RANKS_H
#define MEMPROF_REPORT_RANKS_H

#include <memprof/report.h>
#include <memprof/run.h>

#include <jansson.h>
#include <stdio.h>

/* The rank (run index) with the highest peak; the first on a tie. */
int mp_report_ranks_highest(mp_run_t *const *runs, size_t nruns);

/* What only the solved rank gives: the step of its peak (-1: none) and
 * the op of the largest group live there (NULL: none; borrowed from the
 * input's source). */
typedef struct mp_report_rank_detail {
	int64_t step;
	const char *op;
} mp_report_rank_detail_t;
void mp_report_rank_detail(mp_report_rank_detail_t *d, const mp_report_input_t *in);

/* The table as text, rank high marked and detailed by d. */
void mp_report_ranks_text(FILE *out, mp_run_t *const *runs, size_t nruns, int high, const mp_report_rank_detail_t *d);
/* The "ranks" object of the JSON document; owned by the caller, NULL when
 * out of memory. */
json_t *mp_report_ranks_json(mp_run_t *const *runs, size_t nruns, int high, const mp_report_rank_detail_t *d);
/* The table as CSV (after the report's tables, a blank line before). */
void mp_report_ranks_csv(FILE *out, mp_run_t *const *runs, size_t nruns, int high, const mp_report_rank_detail_t *d);

#endif
