/* run_ends.h - the lines of a run's MP_RUN_ENDS file (<memprof/format.h>;
 * docs/format.md, "Runs"): how its processes ended, as the processes that
 * reaped them saw it. Written by the preload (allocator_hooks/preload/
 * reap.c) and by `memprof record` (src/cli/record_run.c), read with the run
 * (src/core/read/run.c). */
#ifndef MP_RUN_ENDS_H
#define MP_RUN_ENDS_H

#include <stddef.h>
#include <stdint.h>

/* The longest line: three numbers of at most 20 digits, two spaces, a
 * newline. */
#define MP_RUN_ENDS_LINE_MAX 64

/* The line "PID STATUS WALL_NS\n" of child pid reaped with wait status
 * status at wall_ns (ns since the Unix epoch) into buf; returns its length.
 * Nothing allocated, no locale, no stdio: the preload writes it from any
 * thread, a SIGCHLD handler's included. */
size_t mp_run_ends_line(char buf[MP_RUN_ENDS_LINE_MAX], uint64_t pid, int status, uint64_t wall_ns);

/* The line of child pid reaped with wait status status, now, appended to
 * the file at path (created if missing) in one O_APPEND write, so that
 * lines of several processes do not mix; nothing when the status is not an
 * end (stopped, continued). The clock is CLOCK_REALTIME (it tells a reused
 * pid's programs apart). Raw system calls: glibc's open and write are
 * cancellation points, and a thread cancelled there would lose the child
 * its wait just reaped. Nothing allocated; errno as on entry. Returns 0, or
 * -1 when the file could not be written. */
int mp_run_ends_append(const char *path, uint64_t pid, int status);

/* One line read: the child's pid, its wait status, the time of the reap. */
typedef void (*mp_run_end_fn)(void *ctx, uint64_t pid, int status, uint64_t wall_ns);

/* Each well-formed line of text[0..len) to each(), in order: three decimal
 * numbers (PID and STATUS below 2^31), one space between them, a newline.
 * Returns the number (from 1) of the first line that is not one, else 0.
 * A last line without its newline counts as cut off: not taken, not
 * reported (a line is written in one write). */
size_t mp_run_ends_parse(const char *text, size_t len, mp_run_end_fn each, void *ctx);

#endif
