/* replay_par.h - `memprof report`'s full replay on every core (issue 43;
 * replay_par.c): the capture cut at its checkpoints into one segment per
 * core, each read and solved by its own thread, the results merged into
 * what one pass gives. */
#ifndef MEMPROF_CLI_REPLAY_PAR_H
#define MEMPROF_CLI_REPLAY_PAR_H

#include <memprof/solver.h>
#include <memprof/source.h>

/* How many segments a replay may use: MEMPROF_REPLAY_THREADS when set (1:
 * serial), else the CPUs this process may run on (sched_getaffinity:
 * `taskset -c 0` gives 1), at most 64. */
int cli_replay_threads(void);

/* Solve the capture at path in parallel: 1 with *src_out (the last
 * segment's source, read to the end: strings, memory ids and end status
 * as the full read's) and *solver_out (both owned by the caller), 0 when
 * it cannot or must not (one CPU, no usable checkpoints, a capture with
 * call stacks, dropped events or phases, a segment whose end disagrees
 * with the next one's checkpoint, a result that disagrees with the final
 * summary: the caller replays serially; MEMPROF_SEEK_SAY=1 says why), or
 * a negative error (diag set). Only for the sections a seeded solver
 * gives exactly (report_seek.h): the peak, the breakdown, the leaks, the
 * OOM records; opt without a steps window. */
int cli_par_solve(const char *path, const mp_solver_options_t *opt, mp_source_t **src_out, mp_solver_t **solver_out,
		  mp_diag_t *diag);

#endif
