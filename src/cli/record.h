/* record.h - the parts of `memprof record` (cmd_record.c runs the program)
 * that work on what the run leaves: the closing summary of a capture
 * (record_summary.c) and the run directory (record_run.c). */
#ifndef MEMPROF_CLI_RECORD_H
#define MEMPROF_CLI_RECORD_H

#include <stddef.h>

#include <memprof/run.h>

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

/* A child of memprof record's that ended (an orphan of CMD's, reparented
 * to it) with that wait status: a line of the run's memprof.ends
 * (docs/format.md, "Runs"); a stop or continue is no end, and is not. */
void mp_cli_run_note_end(const char *path, long pid, int status);

/* After CMD ended: the processes it left running, reparented to memprof
 * record (a child subreaper), reaped as they end, for at most grace_ms
 * (none left: at once), each one's end appended to the run's memprof.ends
 * as a traced parent's would be (allocator_hooks/preload/reap.c). */
void mp_cli_run_reap_orphans(const char *path, unsigned grace_ms);

/* Print the run's lines on stderr: where it is, how many captures, the main
 * process and its peak, the other processes that did work. *main_path: the
 * main process's capture (owned: free()), NULL when none is readable. */
void mp_cli_run_summary(const mp_run_t *run, char **main_path);

/* The capture of CMD's first program (pid: CMD's), or -1 when CMD itself
 * was not traced. */
int mp_cli_run_root(const mp_run_t *run, long pid);

/* --main-only: remove every capture but those of the program CMD's process
 * (pid) ran last and of what it started (run then describes files that
 * are gone: open it again). Returns how many were removed. */
int mp_cli_run_keep_main(const mp_run_t *run, long pid);

/* --gpu (record_gpu.c): the injection library's path into lib (size
 * bytes), found next to the preload library, for CUDA_INJECTION64_PATH;
 * 0, or -1 after a warning on stderr (no GPU backend in this build, no
 * driver, another tool's injection): CMD then runs without it. */
int mp_cli_record_gpu_prepare(const char *preload, char *lib, size_t size);

#endif
