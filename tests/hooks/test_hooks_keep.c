/* test_hooks_keep.c - `memprof record --keep` end to end (and plot of a run
 * directory that seeks): a bound below one
 * segment, or not a size or duration, is a usage error (exit 2, nothing
 * recorded); victim_churn (4000 threads, 4000 * 101 allocations and as many
 * frees by its workers, victim_churn.c; 2.6 MB of segments in all, in
 * rounds of 5 ms) kept within 512 KiB in 128 KiB segments
 * (MEMPROF_KEEP_BYTES, MEMPROF_KEEP_SEGMENT_BYTES) leaves a whole-run
 * file whose figures count every worker allocation, beside segments of
 * which the oldest were deleted, within the bound plus a segment and a
 * round; its window replays (mp_capture_open on the capture opens it) as a
 * part of the run; and `report` says it is a kept run, with the whole
 * run's peak. */
#include "test_common.h"

#include "hooks_check.h"
#include "hooks_run.h"

#include <memprof/capsummary.h>
#include <memprof/keep.h>

#include <dirent.h>
#include <limits.h>

static void test_keep_usage(void **state)
{
	tmpdir_t *t = *state;
	const char *small[] = {"--keep", "1MiB", NULL}, *junk[] = {"--keep", "64MB", NULL};
	const char *args[] = {"exit", NULL};
	char run[600];
	struct stat sb;

	assert_int_equal(hk_record(t->cap, small, "victim_seq", args, NULL), 2);
	assert_int_equal(hk_record(t->cap, junk, "victim_seq", args, NULL), 2);
	hk_run_path(t->cap, run, sizeof(run));
	assert_int_not_equal(stat(run, &sb), 0);
}

static void test_keep_churn(void **state)
{
	tmpdir_t *t = *state;
	/* (the preload's variables, as `--keep` sets them, with a bound
	 * below what `record` allows, so that victim_churn fills it) */
	const char *env[] = {"MEMPROF_KEEP_BYTES=524288", "MEMPROF_KEEP_SEGMENT_BYTES=131072", "MEMPROF_FLUSH_MS=5",
			     NULL};
	char real[PATH_MAX], log[200], cmd[1200], *out;
	mp_capture_summary_t s;
	const mp_summary_memory_t *host;
	mp_keep_run_t *k;
	mp_diag_t diag;
	hk_stats_t st = {0};
	uint64_t segbytes = 0;
	size_t i;

	snprintf(log, sizeof(log), "%s/keep.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, "victim_churn", NULL, env), 0);
	assert_non_null(realpath(t->cap, real));
	assert_int_equal(mp_keep_is_run(t->cap), 1);
	/* the whole run: every worker allocation (and the process's own) */
	assert_int_equal(mp_capture_summary_read(real, &s, &diag), 0);
	assert_int_equal(s.available, 1);
	assert_int_equal(s.ended_cleanly, 1);
	assert_non_null(host = mp_capture_summary_find(&s, "host"));
	assert_true(host->allocations >= 4000 * 101);
	assert_true(host->frees >= 4000 * 101);
	assert_true(host->peak_bytes >= 48);
	/* the ring: the oldest segments gone; those closed within the bound
	 * (the newest holds up to a segment and a round more: rounds of a
	 * loaded machine are larger, so it is only printed) */
	assert_int_equal(mp_keep_open(&k, t->cap, &diag), 0);
	assert_true(k->nsegments >= 1);
	assert_true(k->segments[0].number >= 1);
	assert_int_equal(k->skipped, 0);
	for (i = 0; i + 1 < k->nsegments; i++)
		segbytes += k->segments[i].bytes;
	assert_true(segbytes <= 524288);
	fprintf(stderr, "keep: %zu segments from %llu, closed ones %llu B, the newest %llu B\n", k->nsegments,
		(unsigned long long)k->segments[0].number, (unsigned long long)segbytes,
		(unsigned long long)k->segments[k->nsegments - 1].bytes);
	mp_keep_close(k);
	/* the window replays, a part of the run */
	hk_replay_ok(t->cap, &st);
	assert_true(st.allocs > 0);
	assert_true(st.allocs < host->allocations);
	assert_int_equal(st.abrupt, 0);
	/* report says so, with the whole run's peak */
	snprintf(cmd, sizeof(cmd), "%s report '%s' > '%s/report.txt' 2>&1", HK_MEMPROF, t->cap, t->dir);
	assert_int_equal(system(cmd), 0);
	snprintf(log, sizeof(log), "%s/report.txt", t->dir);
	out = hk_read_text(log);
	assert_non_null(strstr(out, "kept run ('record --keep')"));
	snprintf(cmd, sizeof(cmd), "memory 0 'host': peak %llu B", (unsigned long long)host->peak_bytes);
	assert_non_null(strstr(out, cmd));
	free(out);
	/* plot of the run's directory: the window read again from its file,
	 * not from the chart's title ("pid N victim_churn (...)") */
	{
		char run[600];
		hk_run_path(t->cap, run, sizeof(run));
		snprintf(cmd, sizeof(cmd), "%s plot --chart breakdown -o '%s/b.svg' '%s' > '%s/plot.txt' 2>&1", HK_MEMPROF,
			 t->dir, run, t->dir);
		if (system(cmd) != 0) {
			snprintf(log, sizeof(log), "%s/plot.txt", t->dir);
			out = hk_read_text(log);
			fail_msg("plot of the kept run's directory failed:\n%s", out);
		}
	}
	mp_capture_summary_free(&s);
}

/* A plain run (no --keep) with checkpoints (one a round): `plot --chart
 * breakdown --from-event` of its directory seeks from a checkpoint, and
 * that second read opens the capture's file, not the chart's title. (A
 * window, not the peak's seek: victim_churn's peak falls where its threads
 * happen to overlap, in some runs before the first checkpoint.) */
static void test_plot_run_seek(void **state)
{
	tmpdir_t *t = *state;
	const char *env[] = {"MEMPROF_CHECKPOINT_ROUNDS=1", "MEMPROF_CHECKPOINT_RATIO=0", "MEMPROF_FLUSH_MS=5", NULL};
	char run[600], cmd[1600], log[700], *out;

	assert_int_equal(hk_record(t->cap, NULL, "victim_churn", NULL, env), 0);
	hk_run_path(t->cap, run, sizeof(run));
	snprintf(log, sizeof(log), "%s/plot.txt", t->dir);
	snprintf(cmd, sizeof(cmd),
		 "MEMPROF_SEEK_SAY=1 %s plot --chart breakdown --from-event 400000 -o '%s/b.svg' '%s' > '%s' 2>&1",
		 HK_MEMPROF, t->dir, run, log);
	if (system(cmd) != 0) {
		out = hk_read_text(log);
		fail_msg("plot of the run's directory failed:\n%s", out);
	}
	out = hk_read_text(log);
	assert_non_null(strstr(out, ": the window's state from the checkpoint at event "));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keep_usage, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_keep_churn, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_plot_run_seek, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
