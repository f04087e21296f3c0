/* run_ends.h - a run's MP_RUN_ENDS file parsed (internal; run.c reads it,
 * fuzz_runends.c fuzzes it). */
#ifndef MP_RUN_ENDS_H
#define MP_RUN_ENDS_H

#include <stddef.h>
#include <stdint.h>

/* One line: the child's pid, its wait status, the wall-clock time of the
 * reap (ns since the Unix epoch). */
typedef void (*mp_run_end_fn)(void *ctx, uint64_t pid, int status, uint64_t wall_ns);

/* Each well-formed line of text[0..len) to each(), in order: "PID STATUS
 * WALL_NS\n", three decimal numbers (PID and STATUS below 2^31), one space
 * between them. Returns the number (from 1) of the first line that is not
 * one, else 0. A last line without its newline counts as cut off: not
 * taken, not reported (the preload writes a line in one write). */
size_t mp__run_ends_parse(const char *text, size_t len, mp_run_end_fn each, void *ctx);

#endif
