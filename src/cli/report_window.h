/* report_window.h - `memprof report` of a window of a run (report_window.c):
 * a kept run's window (`record --keep`), or a full capture from an event on
 * (`report --from-event N`).
 *
 * The window from event N: the state after the capture's first N events
 * (N counts the events a checkpoint's `events` counts: allocations, frees
 * (a realloc counts 2), failures, region events, steps and marks; not the
 * reader's memory declarations and dropped counts) -- its live blocks with
 * their tags, its regions, the last mark and the open phases -- then every
 * event after them, with the indices of the full read. Its counters
 * (allocations, frees, failures, frees of an address not live, the peak,
 * the reserved peak) count the window's events only: the blocks live at
 * its start are known, so their frees are frees, not unknown ones, and its
 * peak is the most in use after one of its events. A kept run's window is
 * the window from its first checkpoint's `events`: both give the same
 * report. */
#ifndef MEMPROF_CLI_REPORT_WINDOW_H
#define MEMPROF_CLI_REPORT_WINDOW_H

#include "inputs.h"

#include <memprof/checkpoint.h>
#include <memprof/seed_checkpoint.h>
#include <memprof/solver.h>
#include <memprof/source.h>

/* Solve the window of path: with o->from_set, the window from event
 * o->from_event of any capture; else, when path is a kept run whose window
 * starts after the process's start, the window from its first
 * checkpoint. 1 with *src_out, *solver_out (owned by the caller) and
 * *start (the window's N); 0 when there is no window (a capture without
 * --from-event, a kept run from the process's start: the caller replays
 * as usual); or a negative error (diag set). The state of the window from
 * event N of a capture starts at its last good checkpoint at or before N
 * and replays from there (the same state: the reader checks a checkpoint
 * against its round's SUMMARY); o->window_replay: from the first event.
 * With 1, *seed_out (the caller's: mp_checkpoint_seed_free) is the state
 * at the window's start, its blocks with their stacks: what the window's
 * --by-function and --tree start from. The capture's allocations without
 * an op take their frames' (cli_capture_frame_ops), the blocks of the
 * state too. */
int cli_window_solve(const char *path, const cli_inputs_options_t *o, mp_source_t **src_out, mp_solver_t **solver_out,
		     uint64_t *start, mp_checkpoint_seed_t *seed_out, mp_diag_t *diag);

/* A kept run's window as a source: 1 with *src (owned by the caller)
 * sought to the window's first checkpoint and *ck that checkpoint (owned:
 * mp_checkpoint_free); 0 when the window starts at the process's start
 * (nothing set); or a negative error (diag set). o: its frame ops
 * (cli_capture_frame_ops), or NULL for none. */
int cli_window_kept_source(const char *path, const cli_inputs_options_t *o, mp_source_t **src, mp_checkpoint_t *ck,
			   mp_diag_t *diag);

#endif
