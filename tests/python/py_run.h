/* py_run.h - what the Python checks of issue 40 share (tests/python/): the
 * interpreters this machine has, `memprof record --stacks` on a program,
 * memprof's bytes per source line live at the peak (`report --by-function
 * --json`), the lines a program marks as its sites, and the frames of a
 * flame chart read back from its SVG. */
#ifndef MP_PY_RUN_H
#define MP_PY_RUN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* An interpreter to run the checks on: its name in messages, and the
 * command that starts it: "ENV... PROGRAM", an absolute path, or
 * "PYENV_VERSION=3.12.1 PATH=<root>/shims:$PATH python3" through pyenv's
 * shim (a bash script that execs its way to the interpreter). */
typedef struct {
	char name[64];
	char cmd[1024];
	char path[1024]; /* the file that must exist for it to run */
} py_interp_t;

/* The interpreters 3.11+ to try: pyenv's 3.11.7, 3.12.1, 3.13.0 (under
 * $PYENV_ROOT, default ~/.pyenv), /usr/bin/python3.11, and 3.12.1 through
 * the shim. Returns how many (at most max); absent ones included. */
int py_interps(py_interp_t *out, int max);

/* 1 when py is present; 0, said on stderr, when it is not. */
int py_present(const py_interp_t *py);

/* Run cmd through sh, at most 180 s (`timeout`): its exit status, its
 * stdout in a buffer the caller frees (stderr goes to the test's). */
char *py_sh(const char *cmd, int *status);

/* `memprof record --stacks -o RUN -- PROG ARGS` (prog: a command line,
 * environment assignments first as a shell takes them); the program's
 * stdout in *out when out is not NULL (caller frees). Returns memprof
 * record's exit status; what it says on stderr is in RUN.log, and on
 * the test's stderr when it fails. */
int py_record(const char *run, const char *prog, char **out);

/* `memprof report OPTS --json RUN`, validated against the report schema;
 * fails the test when it does not exit with 0. Caller json_decref's. */
json_t *py_report_json(const char *opts, const char *run);

/* The line of the program at path whose text ends with "# SITE:name";
 * fails the test when there is none. */
int py_site_line(const char *path, const char *name);

/* memprof's figure key ("peak_bytes": bytes live at the peak) charged to
 * line of file (the rows of the by-function table whose "file" is file and
 * "line" is line, summed over the memories but host_mmap, whose regions
 * hold the same objects as pymalloc's). py_file_rows counts the rows that name file at all. */
uint64_t py_line_sum(const json_t *report, const char *file, int line, const char *key);
#define py_line_bytes(report, file, line) py_line_sum(report, file, line, "peak_bytes")
#define py_line_requested(report, file, line) py_line_sum(report, file, line, "peak_requested_bytes")
size_t py_file_rows(const json_t *report, const char *file);
/* The function of the row with most bytes at line of file, or "" (borrowed
 * from report). */
const char *py_line_function(const json_t *report, const char *file, int line);

/* |got - want| <= pct% of want. */
int py_within(uint64_t got, uint64_t want, double pct);

/* A filled rectangle of an SVG that cairo wrote (a flame frame: stroke
 * none, a path "M x0 y0 L x1 y0 L x1 y1 L x0 y1 Z"). */
typedef struct {
	double x0, y0, x1, y1;
} py_rect_t;

/* The unstroked filled rectangles of the SVG at path, in document order
 * (at most max); returns how many were read, -1 when the file cannot be
 * read. */
int py_svg_rects(const char *path, py_rect_t *out, int max);

/* A test's own temporary directory, made by py_setup (a cmocka setup:
 * *state is a py_fixture_t whose dir is /tmp/memprof-py-XXXXXX) and
 * removed by py_teardown unless MEMPROF_TEST_KEEP is set (then said). */
typedef struct {
	char dir[64];
} py_fixture_t;
int py_setup(void **state);
int py_teardown(void **state);

#endif
