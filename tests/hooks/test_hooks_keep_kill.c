/* test_hooks_keep_kill.c - a flight recorder killed for real (issue 43: "it
 * must hold under SIGKILL and the OOM killer as captures do today: a kill
 * never leaves a window that cannot be read"). test_keep.c kills at chosen
 * points, simulated on copies of the files; this one SIGKILLs a recorded
 * program (victim_forever: millions of events a second, a 2 MiB segment
 * every fraction of a second) eight times, each after the ring has
 * rotated (a segment numbered 5 or more exists, the first ones
 * deleted) and then 0 to 161 ms more, so that kills land at different
 * points of a segment and of a rotation, whatever the machine's load.
 *
 * The bound, 8 MiB, is what makes "holds events" a promise: a segment
 * ends with the round that finds it full, so the segment just closed is
 * 2 MiB plus up to a round, and a round of this one-thread program is at
 * most its 16 MiB ring encoded (some 3 MiB); the rotation keeps it while
 * it, the whole-run file and the new segment's first block fit the bound.
 * Under about two rounds' bytes (docs/format.md, "The bound, at every
 * moment") the newest segment alone is kept, and a kill just after a
 * rotation leaves a window of its checkpoint and no event: with 4 MiB, a
 * loaded CI machine's flusher stalled once long enough for that.
 * After each kill:
 * the run is a kept run, its closed segments within the bound, its window
 * replays without error and holds events, the whole-run file's figures
 * read (those of its last complete round), and `memprof report`
 * prints the kept run's report (exit 0). */
#include "test_common.h"

#include "hooks_check.h"
#include "hooks_run.h"

#include <memprof/capsummary.h>
#include <memprof/keep.h>

#include <limits.h>
#include <signal.h>

#define KILLS 8
#define BOUND (8ull << 20)

/* The victim's pid, once it has written it (0: it never did). */
static pid_t victim_pid(const char *pidfile)
{
	for (int tries = 0; tries < 1000; tries++) {
		FILE *f = fopen(pidfile, "r");
		long pid = 0;
		if (f) {
			int got = fscanf(f, "%ld", &pid);
			fclose(f);
			if (got == 1 && pid > 0)
				return (pid_t)pid;
		}
		usleep(10000);
	}
	return 0;
}

/* Whether the kept run of pid in run has written segment `number` or a
 * later one, within about 30 s. */
static int wait_segment(const char *run, pid_t pid, unsigned number)
{
	char path[700];

	for (int tries = 0; tries < 3000; tries++) {
		for (unsigned n = number; n < number + 64; n++) {
			snprintf(path, sizeof(path), "%s/%d.memprof.d/seg-%06u.memprof", run, (int)pid, n);
			if (access(path, F_OK) == 0)
				return 1;
		}
		usleep(10000);
	}
	return 0;
}

static void test_keep_killed(void **state)
{
	tmpdir_t *t = *state;
	const char *env[] = {"MEMPROF_KEEP_BYTES=8388608", "MEMPROF_KEEP_SEGMENT_BYTES=2097152", "MEMPROF_FLUSH_MS=5",
			     NULL};
	char pidfile[600], log[600], run[600], real[PATH_MAX], cmd[1600], *out;
	int rotated = 0;

	snprintf(pidfile, sizeof(pidfile), "%s/victim.pid", t->dir);
	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	for (int k = 0; k < KILLS; k++) {
		const char *args[] = {pidfile, NULL};
		mp_capture_summary_t s;
		const mp_summary_memory_t *host;
		mp_keep_run_t *kr;
		mp_diag_t diag;
		hk_stats_t st = {0};
		uint64_t closed = 0;
		pid_t rec, victim;

		unlink(pidfile);
		assert_true((rec = hk_record_start(t->cap, log, NULL, "victim_forever", args, env)) > 0);
		hk_run_path(t->cap, run, sizeof(run));
		if (!(victim = victim_pid(pidfile)) || !wait_segment(run, victim, 5)) {
			kill(-rec, SIGKILL);
			hk_record_wait(rec, "victim_forever");
			fail_msg("victim_forever did not start, or its ring did not rotate");
		}
		usleep((useconds_t)(k * 23000));
		assert_int_equal(kill(victim, SIGKILL), 0);
		hk_record_wait(rec, "victim_forever");
		hk_link_root(t->cap);
		assert_non_null(realpath(t->cap, real));
		assert_int_equal(mp_keep_is_run(real), 1);

		/* the ring: closed segments within the bound */
		if (mp_keep_open(&kr, real, &diag))
			fail_msg("kill %d: %s", k, diag.text);
		assert_true(kr->nsegments >= 1);
		for (size_t i = 0; i + 1 < kr->nsegments; i++)
			closed += kr->segments[i].bytes;
		assert_true(closed <= BOUND);
		rotated += kr->segments[0].number > 0;
		fprintf(stderr, "kill %d, %d ms after segment 5: %zu segments from %llu (%zu skipped), closed %llu B, the newest %llu B%s\n",
			k, k * 23, kr->nsegments, (unsigned long long)kr->segments[0].number, kr->skipped,
			(unsigned long long)closed,
			(unsigned long long)kr->segments[kr->nsegments - 1].bytes,
			kr->segments[kr->nsegments - 1].closed ? "" : " (cut by the kill)");
		mp_keep_close(kr);

		/* the window replays, a part of the run */
		hk_replay_ok(t->cap, &st);
		assert_true(st.allocs > 0);

		/* the whole run's figures, its last complete round's (the
		 * window may hold events of the round the kill cut): the
		 * victim's 4096 slots were full before it wrote its pid */
		assert_int_equal(mp_capture_summary_read(real, &s, &diag), 0);
		assert_int_equal(s.available, 1);
		assert_int_equal(s.ended_cleanly, 0);
		assert_non_null(host = mp_capture_summary_find(&s, "host"));
		assert_true(host->allocations >= 4096);
		assert_true(host->peak_bytes >= 16 * 4096);
		mp_capture_summary_free(&s);

		/* and report prints the kept run's report */
		snprintf(cmd, sizeof(cmd), "%s report '%s' > '%s/report.txt' 2>&1", HK_MEMPROF, t->cap, t->dir);
		if (system(cmd) != 0) {
			snprintf(cmd, sizeof(cmd), "%s/report.txt", t->dir);
			out = hk_read_text(cmd);
			fail_msg("kill %d: report failed:\n%s", k, out);
		}
		snprintf(cmd, sizeof(cmd), "%s/report.txt", t->dir);
		out = hk_read_text(cmd);
		assert_non_null(strstr(out, "kept run ('record --keep')"));
		free(out);
	}
	/* every kill came after segments were deleted */
	assert_int_equal(rotated, KILLS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keep_killed, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
