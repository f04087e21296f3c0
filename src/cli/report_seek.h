/* report_seek.h - `memprof report` from a checkpoint (report_seek.c). */
#ifndef MEMPROF_CLI_REPORT_SEEK_H
#define MEMPROF_CLI_REPORT_SEEK_H

#include <memprof/checkpoint.h>
#include <memprof/solver.h>
#include <memprof/source.h>

/* Solve the capture at path from its last checkpoint before the peaks
 * (and, with CLI_SEEK_OOM in `oom`, before its first failed allocation;
 * without it nor CLI_SEEK_LEAKS the read stops after the peaks): 1 with *src_out and
 * *solver_out (owned by the caller; the source read from the checkpoint:
 * strings, memory ids and end status as the full read's), 0 when it
 * cannot or its result disagrees with the capture's summary (a line on
 * stderr says why, for captures of 64 MiB or more; the caller replays in
 * full), or a negative error (diag set). Only for sections whose figures
 * a seed gives exactly: the peak, the breakdown, the leaks, the OOM
 * records; not the timeline, call stacks. With CLI_SEEK_STEPS (opt's
 * steps window, any section): cli_seek_steps_solve. */
enum { CLI_SEEK = 1, CLI_SEEK_OOM = 2, CLI_SEEK_LEAKS = 4, CLI_SEEK_STEPS = 8 }; /* what the report shows */
int cli_seek_solve(const char *path, const mp_solver_options_t *opt, int oom, mp_source_t **src_out,
		   mp_solver_t **solver_out, mp_diag_t *diag);

/* A steps window (opt->steps_set) from the last good checkpoint before
 * its first step, the read ended after its last (report_seek_steps.c):
 * as cli_seek_solve, the window's output that of the full replay. */
int cli_seek_steps_solve(const char *path, const mp_solver_options_t *opt, mp_source_t **src_out,
			 mp_solver_t **solver_out, mp_diag_t *diag);

/* The last good checkpoint of round ends re[0..n) whose horizon is at or
 * before ns and whose flags have one of `need` (0: any): 1 and *ck (owned:
 * mp_checkpoint_free), 0 when none, or an error. Before cap is read. */
int cli_seek_checkpoint_before(mp_capture_t *cap, const mp_capture_round_end_t *re, size_t n, uint64_t ns, uint32_t need,
			       mp_checkpoint_t *ck, mp_diag_t *diag);

/* Whether a checkpoint has what a seeded solver needs (2.5: the last
 * mark, its blocks' tags or none, every figure of its round's SUMMARY). */
int cli_seek_usable(const mp_checkpoint_t *ck);

struct mp_capture_summary;
/* Whether solver s, seeded and read to the end (stopped 0) or up to the
 * last peak (1), agrees with the capture's final summary: NULL, or why
 * not (static). Also for a replay merged from segments (replay_par.h). */
const char *cli_seek_disagrees(const mp_solver_t *s, const struct mp_capture_summary *sum, int stopped);

#endif
