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
#include <sys/stat.h>
#include <unistd.h>

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

#endif
