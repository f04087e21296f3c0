/* test_plot_seek.c - `memprof plot --chart breakdown|map` of a capture
 * from a checkpoint (issue 43) draws what the full replay (--replay) draws,
 * byte for byte (SVG, and the HTML page of the map), on captures of
 * memprof_gen_capture: a pool in 4 regions whose live set grows to its peak
 * near the end (--grow 1), with and without tags (--untagged 1), with
 * and without failed allocations (--oom K: one every N / (K + 1) events,
 * the OOM maps), a flush round every 2,000 events and a checkpoint every
 * 1, 3 or 7 rounds. MEMPROF_SEEK_SAY=1 makes plot say where the solver and
 * the maps' pass started: the test checks that they sought, from a
 * checkpoint within one interval before the moment drawn, and that the
 * replay did not. */
#include "test_common.h"

#include <memprof/capture_edit.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define GEN MEMPROF_BINARY_DIR "/tests/report/memprof_gen_capture"

enum { EVENTS = 120000, ROUND = 2000 };

/* Where plot said it started: the solver's checkpoint (*solve) and the
 * maps' (*maps), -1 where it did not say (a full replay). */
static void plot(const char *args, const char *cap, const char *out, long long *solve, long long *maps)
{
	char cmd[MP_TEST_CMD_MAX], errf[] = "/tmp/memprof-pseek-err-XXXXXX", line[512];
	int fd = mkstemp(errf);
	FILE *e;

	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "MEMPROF_SEEK_SAY=1 %s plot %s %s -o %s 2>%s", MEMPROF, args, cap, out, errf);
	assert_int_equal(system(cmd), 0);
	*solve = *maps = -1;
	e = fopen(errf, "r");
	assert_non_null(e);
	while (fgets(line, sizeof(line), e)) {
		const char *s = strstr(line, ": seek from the checkpoint at event "), *m = strstr(line, ": maps from ");
		if (s)
			*solve = strtoll(s + strlen(": seek from the checkpoint at event "), NULL, 10);
		if (m && strstr(m, "the checkpoint at event "))
			*maps = strtoll(strstr(m, "event ") + 6, NULL, 10);
		else if (m)
			*maps = 0; /* from the first event */
	}
	fclose(e);
	unlink(errf);
}

/* plot ARGS of cap from a checkpoint and with --replay: the same bytes;
 * *solve, *maps: where the seek started. */
static void same(const char *args, const char *cap, const char *dir, const char *ext, long long *solve, long long *maps)
{
	char a[256], b[256], full[256];
	long long fs, fm;
	size_t na, nb;
	uint8_t *da, *db;

	snprintf(a, sizeof(a), "%s/seek.%s", dir, ext);
	snprintf(b, sizeof(b), "%s/full.%s", dir, ext);
	snprintf(full, sizeof(full), "%s --replay", args);
	plot(args, cap, a, solve, maps);
	plot(full, cap, b, &fs, &fm);
	assert_int_equal(fs, -1); /* --replay: every event */
	assert_int_equal(fm, -1);
	da = mp_test_read_file(a, &na);
	db = mp_test_read_file(b, &nb);
	assert_true(na > 10000); /* a picture, with its panels */
	if (na != nb || memcmp(da, db, na))
		fail_msg("%s: plot %s (%s) from a checkpoint differs from the full replay (%zu and %zu bytes)", cap, args, ext,
			 na, nb);
	free(da);
	free(db);
	unlink(a);
	unlink(b);
}

static void test_plot_seek_equals_full_replay(void **state)
{
	static const struct {
		const char *every; /* checkpoint every so many rounds */
		int untagged, oom;
	} cases[] = {{"1", 1, 0}, {"3", 0, 3}, {"7", 1, 2}, {"2", 0, 0}, {"1", 0, 4}};
	char dir[] = "/tmp/memprof-pseek-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char cap[256], cmd[MP_TEST_CMD_MAX];
		long long solve, maps, interval = ROUND * atoll(cases[i].every);
		long long first_oom = cases[i].oom ? EVENTS / (cases[i].oom + 1) : -1;
		snprintf(cap, sizeof(cap), "%s/c%zu.memprof", dir, i);
		snprintf(cmd, sizeof(cmd),
			 "MEMPROF_CHECKPOINT_ROUNDS=%s MEMPROF_CHECKPOINT_RATIO=0 %s %s --events %d --live 4000 --regions 4 "
			 "--grow 1 --round-every %d --oom %d --seed %zu%s >/dev/null",
			 cases[i].every, GEN, cap, EVENTS, ROUND, cases[i].oom, 7 + i, cases[i].untagged ? " --untagged 1" : "");
		assert_int_equal(system(cmd), 0);

		/* the breakdown: from the last checkpoint before the peak,
		 * which the growing live set puts in the last tenth */
		same("--chart breakdown", cap, dir, "svg", &solve, &maps);
		assert_true(solve >= EVENTS * 9 / 10 - interval && solve <= EVENTS);
		assert_int_equal(maps, -1); /* no map: no second pass */

		/* the maps: the solver from before the first failure (the OOM
		 * maps' records), the maps' pass from before the earliest map */
		same("--chart map", cap, dir, "svg", &solve, &maps);
		if (first_oom >= 0) {
			assert_true(solve > 0 && solve <= first_oom && solve > first_oom - interval - ROUND);
			assert_true(maps > 0 && maps <= first_oom && maps > first_oom - interval - ROUND);
		} else {
			assert_true(solve >= EVENTS * 9 / 10 - interval);
			assert_true(maps >= EVENTS * 9 / 10 - interval && maps <= EVENTS);
		}
		/* one map of the failures alone, the peak's and the rest's
		 * hover details in the page */
		if (first_oom >= 0)
			same("--chart map --oom-maps 1", cap, dir, "svg", &solve, &maps);
		same("--chart map", cap, dir, "html", &solve, &maps);
		assert_true(maps > 0);
		fprintf(stderr, "%s: %d events, a checkpoint every %s rounds%s, %d failures: seek from %lld, maps from %lld\n",
			cap, EVENTS, cases[i].every, cases[i].untagged ? "" : ", tags", cases[i].oom, solve, maps);
		unlink(cap);
	}
	rmdir(dir);
}

/* A capture shorter than one checkpoint interval: the full replay, said
 * by the solver's line; the picture is the same. */
static void test_plot_no_checkpoint(void **state)
{
	char dir[] = "/tmp/memprof-pseek0-XXXXXX", cap[256], cmd[MP_TEST_CMD_MAX];
	long long solve, maps;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cap, sizeof(cap), "%s/short.memprof", dir);
	snprintf(cmd, sizeof(cmd), "%s %s --events 20000 --live 2000 --regions 2 --oom 1 >/dev/null", GEN, cap);
	assert_int_equal(system(cmd), 0);
	same("--chart map", cap, dir, "svg", &solve, &maps);
	assert_int_equal(solve, -1);
	assert_int_equal(maps, -1); /* the solver's source, rewound: every event */
	unlink(cap);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plot_seek_equals_full_replay),
		cmocka_unit_test(test_plot_no_checkpoint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
