/* record.h - the parts of `memprof record` (cmd_record.c runs the program)
 * that work on what the run leaves: the closing summary of a capture
 * (record_summary.c) and the run directory (record_run.c). */
#ifndef MEMPROF_CLI_RECORD_H
#define MEMPROF_CLI_RECORD_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* Print the line memprof record ends with, on stderr: the host heap, then
 * the anonymous memory the program mapped itself when it did (host_mmap:
 * all there is to see of a program whose allocator maps its own memory, as
 * rustc's jemalloc does, and most of a JVM's or of pymalloc's), then
 * stacks. A capture that cannot be read is reported instead. */
void mp_cli_record_summary(const char *path);

/* The run directory (record_run.c; memprof/run.h): created with its
 * marker naming CMD and its pid (0 or -errno: an existing path is never
 * reused); told how CMD ended ("exit 0", "signal 9 (Killed)"). */
int mp_cli_run_create(const char *path, char *const *cmd, long pid);
void mp_cli_run_ended(const char *path, const char *outcome);

/* How many captures the run holds. */
int mp_cli_run_captures(const char *path);

/* Print the run's lines on stderr: where it is, how many captures, the main
 * process and its peak, the other processes that did work. *main_path: the
 * main process's capture (owned: free()), NULL when there is none. Returns
 * 0, 1 when the run holds no capture at all (nothing said), or -1 when it
 * cannot be read (said). */
int mp_cli_run_summary(const char *path, char **main_path);

/* --main-only: remove every capture but those of the program CMD's process
 * (pid) ran last and of what it started. Returns how many were removed. */
int mp_cli_run_keep_main(const char *path, long pid);

#endif
