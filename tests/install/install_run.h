/* install_run.h - shared by the install tests (tests/install): a scratch
 * directory, shell commands with their output kept for the failure message,
 * `memprof report --json` read back and validated, rows looked up. */
#ifndef MP_INSTALL_RUN_H
#define MP_INSTALL_RUN_H

#include <jansson.h>
#include <stdint.h>

/* A fresh directory /tmp/memprof-install-XXXXXX into dir (64 bytes);
 * 0 or -1. it_rmdir removes it and everything in it. */
int it_mkdir(char *dir);
void it_rmdir(const char *dir);

/* Run `sh -c CMD` (printf-formatted), its stdout and stderr appended to
 * dir/log, at most 120 s. Returns its exit status (128 + N when signal N
 * ended it, -2 past the deadline). */
int it_sh(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, failing the test with the command and the log when it does
 * not exit with 0. */
void it_sh_ok(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Run CMD with its stdout into a malloc'd, NUL-terminated string (stderr
 * to dir/log); fails the test unless it exits with 0. Owned by the caller. */
char *it_sh_out(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* `MEMPROF report --json ARGS CAP`, validated against the report schema.
 * Owned by the caller (json_decref). */
json_t *it_report(const char *dir, const char *memprof, const char *args, const char *cap);
/* The device named name in a report; fails the test when absent. */
const json_t *it_device(const json_t *report, const char *name);
/* The row of list ("breakdown", "leaks") with this op and requested
 * bytes, or NULL. */
const json_t *it_row(const json_t *device, const char *list, const char *op, uint64_t requested);
/* json integer member, failing the test when it is not one. */
int64_t it_int(const json_t *obj, const char *key);
/* A row's op, region, dtype, shape and occurrences are these. */
void it_row_is(const json_t *row, const char *region, const char *dtype, const char *shape, int64_t occurrences);

#endif
