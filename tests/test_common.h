/* test_common.h - included first by every cmocka test (cmocka 1.1 needs these
 * headers before <cmocka.h>), plus small helpers shared by the suites. */
#ifndef MEMPROF_TEST_COMMON_H
#define MEMPROF_TEST_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Room for a shell command: a binary's path in the build directory and a
 * path from mp_test_shared (each as long as a path may be), with options.
 * gcc's -Wformat-truncation checks a command's buffer against both whole:
 * a fixed 4200 bytes failed the Release build under -Werror as soon as the
 * checkout's directory was one character longer (/tmp/fresh-final2). */
#define MP_TEST_CMD_MAX (2 * 4096 + 1024)

/* Path of a file under ../shared/data, or NULL (and a skip message) when the
 * shared data is absent. Returns a static buffer. */
static inline const char *mp_test_shared(const char *rel)
{
	static char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", MEMPROF_SHARED_DATA, rel);
	if (stat(path, &st) != 0) {
		fprintf(stderr, "skip: %s is absent (shared data not available)\n", path);
		return NULL;
	}
	return path;
}

/* A fresh temporary file path (the file does not exist). Caller frees. */
static inline char *mp_test_tmpfile(const char *suffix)
{
	char tmpl[] = "/tmp/memprof-test-XXXXXX";
	int fd = mkstemp(tmpl);
	char *out;
	size_t n;

	if (fd < 0)
		return NULL;
	close(fd);
	unlink(tmpl);
	n = strlen(tmpl) + strlen(suffix) + 1;
	out = malloc(n);
	if (out)
		snprintf(out, n, "%s%s", tmpl, suffix);
	return out;
}

/* Wait for child pid, at most deadline_ms. Past it, SIGKILL `target` (pid,
 * or -pgid for its whole process group), reap pid and return -2: a child
 * that never ends fails its test instead of hanging the suite. (A signal
 * of the child's own, alarm(), cannot do this when the thread left alive
 * blocks every signal, as a capture's flusher does.) Otherwise the child's
 * exit status, 128 + N when signal N ended it, or -1 when waitpid fails. */
static inline int mp_test_wait_deadline(pid_t pid, pid_t target, int deadline_ms)
{
	const struct timespec step = {0, 10 * 1000000L};
	int status, waited_ms;

	for (waited_ms = 0;; waited_ms += 10) {
		pid_t got = waitpid(pid, &status, WNOHANG);
		if (got == pid)
			break;
		if (got < 0)
			return -1;
		if (waited_ms >= deadline_ms) {
			kill(target, SIGKILL);
			waitpid(pid, &status, 0);
			return -2;
		}
		nanosleep(&step, NULL);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Read all of f into a NUL-terminated buffer the caller frees. */
static inline char *mp_test_slurp(FILE *f)
{
	size_t cap = 1 << 16, n = 0, k;
	char *b = malloc(cap);

	assert_non_null(b);
	while ((k = fread(b + n, 1, cap - 1 - n, f)) > 0)
		if ((n += k) + 1 >= cap) {
			b = realloc(b, cap *= 2);
			assert_non_null(b);
		}
	b[n] = '\0';
	return b;
}

/* Run cmd through sh; its stdout (whole: the command writes "2>&1" itself
 * when it wants stderr too) in a buffer the caller frees, its exit status
 * (-1 when killed) in *status. */
static inline char *mp_test_sh(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *out;
	int st;

	assert_non_null(p);
	out = mp_test_slurp(p);
	st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

/* Run cmd through sh: its exit status (-1 when killed), its stdout in *out
 * and its stderr in *err (NUL-terminated; the caller frees both). */
static inline int mp_test_capture(const char *cmd, char **out, char **err)
{
	char *errpath = mp_test_tmpfile(".err"), *full;
	size_t len = strlen(cmd) + strlen(errpath) + 8;
	FILE *p;
	int st;

	full = malloc(len);
	assert_non_null(full);
	snprintf(full, len, "%s 2>%s", cmd, errpath);
	p = popen(full, "r");
	assert_non_null(p);
	*out = mp_test_slurp(p);
	st = pclose(p);
	p = fopen(errpath, "r");
	assert_non_null(p);
	*err = mp_test_slurp(p);
	fclose(p);
	unlink(errpath);
	free(errpath);
	free(full);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Lines in s (its newlines). */
static inline int mp_test_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#endif
