/* test_old_captures.c - captures written by an earlier memprof still read
 * back identical.
 *
 * tests/read/fixtures/ holds format 2.0 captures written by the code of
 * commit 8b01f86 (before issue 19 weighed replacing the deflate coders
 * with libdeflate and split src/core by stage), each next to what
 * `memprof dump --stacks` printed for it then (gzip'd, without the first
 * line, which names the file): the
 * bundled demo, a gen_capture capture (regions, ops, steps, failed
 * allocations), `record --stacks` of victim_stacks and of find(1) (ten
 * blocks, stored and Huffman-coded ones), and bench_writer's alloc_bench
 * pattern as the writer codes it by default and at zlib level 6 (matches).
 * fixtures/README.md says how each was made. Every line of today's dump
 * must equal the recorded one.
 */
#include "test_common.h"

#include <zlib.h>

#define FIXTURES MEMPROF_SOURCE_DIR "/tests/read/fixtures"

/* The next line of a gzip'd file or of a pipe, without its newline; NULL at
 * the end. buf holds it. */
static const char *gz_line(gzFile gz, char *buf, int size)
{
	size_t n;

	if (!gzgets(gz, buf, size))
		return NULL;
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

static const char *pipe_line(FILE *p, char *buf, int size)
{
	size_t n;

	if (!fgets(buf, size, p))
		return NULL;
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

/* Dump fixtures/NAME.memprof and compare it with fixtures/NAME.dump.gz;
 * returns the number of lines compared. */
static unsigned check_fixture(const char *name)
{
	static char want[1 << 16], got[1 << 16];
	char cmd[8192], path[4096];
	unsigned line = 1; /* the first, the file's name, is not compared */
	const char *w, *g;
	gzFile gz;
	FILE *p;

	snprintf(path, sizeof(path), "%s/%s.dump.gz", FIXTURES, name);
	gz = gzopen(path, "rb");
	assert_non_null(gz);
	snprintf(cmd, sizeof(cmd), "'%s' dump --stacks '%s/%s.memprof'", MEMPROF_CLI, FIXTURES, name);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(pipe_line(p, got, sizeof(got)));
	assert_true(strncmp(got, "capture ", 8) == 0);
	for (;;) {
		w = gz_line(gz, want, sizeof(want));
		g = pipe_line(p, got, sizeof(got));
		line++;
		if (!w || !g)
			break;
		if (strcmp(w, g) != 0) {
			fprintf(stderr, "%s: line %u differs:\n  was: %s\n  now: %s\n", name, line, w, g);
			fail();
		}
	}
	if (w || g)
		fprintf(stderr, "%s: line %u: %s\n", name, line, w ? "the dump ends early" : "the dump has more lines");
	assert_null(w);
	assert_null(g);
	assert_int_equal(pclose(p), 0);
	gzclose(gz);
	return line - 2;
}

static void test_old_demo(void **state)
{
	(void)state;
	/* header (6 lines), the events, then "N events" and the empty tables */
	assert_true(check_fixture("v20-demo") > 150);
}

static void test_old_gen(void **state)
{
	(void)state;
	assert_true(check_fixture("v20-gen") > 3000);
}

static void test_old_stacks(void **state)
{
	(void)state;
	assert_true(check_fixture("v20-stacks") > 17);
}

static void test_old_find_stacks(void **state)
{
	(void)state;
	assert_true(check_fixture("v20-find-stacks") > 3000);
}

static void test_old_writer(void **state)
{
	(void)state;
	assert_true(check_fixture("v20-writer") > 3000);
}

static void test_old_zlib6(void **state)
{
	(void)state;
	assert_true(check_fixture("v20-zlib6") > 3000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_old_demo),        cmocka_unit_test(test_old_gen),
		cmocka_unit_test(test_old_stacks),      cmocka_unit_test(test_old_find_stacks),
		cmocka_unit_test(test_old_writer),      cmocka_unit_test(test_old_zlib6),
	};
	return cmocka_run_group_tests_name("old captures", tests, NULL, NULL);
}
