/* record.h - the parts of `memprof record` (cmd_record.c runs the program)
 * that work on the captures the run leaves: the closing summary
 * (record_summary.c) and the captures of the processes CMD became or
 * started (record_files.c). */
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

/* When CMD's own process execs (or an exec fails), it goes on recording
 * into "<base>.<pid>.memprof", then "<base>.<pid>-<n>.memprof" (the
 * preload's naming, session.c; base: path without ".memprof"): the last of
 * those written since `since` into last (size bytes), and how many there
 * are. A wrapper -- a shell script, a version manager's shim -- leaves the
 * program the user meant at the end of that chain. */
int mp_cli_record_exec_chain(const char *path, pid_t pid, time_t since, char *last, size_t size);

/* Count the child captures "<base>.<digits>*.memprof" next to path that
 * were written since `since` (older ones belong to earlier runs). */
int mp_cli_record_children(const char *path, time_t since);

/* --gpu (record_gpu.c): the injection library's path into lib (size
 * bytes), found next to the preload library, for CUDA_INJECTION64_PATH;
 * 0, or -1 after a warning on stderr (no GPU backend in this build, no
 * driver, another tool's injection): CMD then runs without it. */
int mp_cli_record_gpu_prepare(const char *preload, char *lib, size_t size);

#endif
