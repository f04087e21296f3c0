/* runs.h - run directories among the inputs of report, plot, dump and
 * convert (memprof/run.h): each is replaced by the capture(s) chosen --
 * the main process by default, --pid N, or --process all -- and kept to
 * show its process tree next to the report. */
#ifndef MEMPROF_CLI_RUNS_H
#define MEMPROF_CLI_RUNS_H

#include <memprof/run.h>

#include <stdint.h>
#include <stdio.h>

typedef struct cli_run_select {
	int all;      /* --process all: every process that did work */
	int pid_set;  /* --pid N */
	uint64_t pid;
} cli_run_select_t;

typedef struct cli_runs {
	int nruns;
	mp_run_t **runs;  /* owned */
	int nfiles;
	char **files;     /* the arguments with runs expanded; owned (each, and the array) */
	char **owned;     /* which of files[] were made here (the others are argv's) */
	char **labels;    /* for files[i] from a run, "pid N PROGRAM (RUN)" for titles; else NULL. Owned */
} cli_runs_t;

/* Parse --process's argument ("main" or "all") into sel. 0, or -1 (said). */
int cli_run_parse_process(const char *arg, cli_run_select_t *sel);
/* Parse --pid's argument. 0, or -1 (said). */
int cli_run_parse_pid(const char *arg, cli_run_select_t *sel);

/* Expand files[0..nfiles). Prints what goes wrong and returns an exit code.
 * --pid and --process given without any run among the inputs are usage
 * errors. Free with cli_runs_free() in every case. */
int cli_runs_expand(cli_runs_t *r, char *const *files, int nfiles, const cli_run_select_t *sel);
void cli_runs_free(cli_runs_t *r);

/* Title the inputs that came from a run by their process ("pid N PROGRAM
 * (RUN)") instead of their capture file's name, which says little: for
 * chart titles (ci->titles, which then borrow from r; ci->paths stay the
 * files, which a seek or a window reads again). */
struct cli_inputs;
void cli_runs_title_inputs(const cli_runs_t *r, struct cli_inputs *ci);

/* Why a capture's writer stopped (MP_PROC_WRITE_FAILED, the trailer's
 * write_errno): "cut short: the disk was full (ENOSPC) at 1.2GiB; events
 * after 12.3 s are not all in it"; written into buf (n bytes), returned. */
const char *cli_write_failed_text(int err, uint64_t offset, uint64_t complete_ns, char *buf, size_t n);

/* The process trees, as text (one line a capture); the JSON "runs" are
 * the report library's (memprof/report_doc.h). */
void cli_runs_print(FILE *out, const cli_runs_t *r, int all_processes);

/* How many other processes text names one by one (the largest peaks) by
 * default: report's tree and record's closing lines; --all-processes
 * lists every one. */
#define CLI_RUN_SHOWN_OTHERS 5
/* The width a command line is shortened to in those lists. */
#define CLI_RUN_COMMAND_WIDTH 100

/* cmd, or when longer than width bytes, its program's name (argv[0]'s last
 * component), " ... " and its end, width bytes in all (as near as UTF-8
 * allows): into buf (n bytes), which is returned. */
const char *cli_run_short_command(const char *cmd, size_t width, char *buf, size_t n);
/* The processes other than the main one and the helpers: how many, and
 * the indices of the (up to) max with the largest peaks, in tree order,
 * into idx. */
size_t cli_run_largest_others(const mp_run_t *run, size_t *idx, size_t max, size_t *shown);
/* The largest peak among the others left out of idx[0..shown). */
uint64_t cli_run_rest_peak(const mp_run_t *run, const size_t *idx, size_t shown);
/* "78 helpers: shells, pyenv, env and 5 others" -- the
 * run's helpers, the most common programs named -- into buf (n bytes).
 * Returns the number of helpers (0: buf is ""). */
size_t cli_run_helpers_text(const mp_run_t *run, char *buf, size_t n);

/* 1 when report's inputs are the ranks of a multi-rank job: nargs >= 2
 * arguments, each a run (each expanded to its main process), without --pid
 * or --process all (memprof/report_ranks.h, docs/report.md "Ranks"). */
int cli_ranks_want(const cli_runs_t *runs, int nargs, const cli_run_select_t *sel);

#endif
