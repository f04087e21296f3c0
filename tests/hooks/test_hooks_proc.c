/* test_hooks_proc.c - `memprof record` on victims: threads, fork, exec,
 * vfork, setgid, static and musl programs. Figures are hand-computed in
 * each victim_*.c; captures are replayed with hooks_check.c. The command's
 * own behaviour: test_hooks_cmd.c.
 */
#include "test_common.h"

#include "hooks_run.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>

/* --- threads --------------------------------------------------------------- */

/* victim_threads (8 threads, every block freed by another) recorded with
 * env: its workers' hand-computed figures. */
static void threads_figures(tmpdir_t *t, const char *const *env)
{
	hk_stats_t st = {0};

	assert_int_equal(hk_record(t->cap, NULL, "victim_threads", NULL, env), 0);
	st.skip_first_thread = 1; /* the workers' events only: pthread internals are main's */
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.allocs, 800000);
	assert_int_equal(st.frees, 800000);
	assert_int_equal(st.peak, 37995904);
	assert_int_equal(st.live_blocks, 0);
	assert_int_equal(st.unknown_frees, 0);
	assert_int_equal(st.double_allocs, 0);
	assert_int_equal(st.dropped, 0);
	assert_true(st.threads >= 9);
}

static void test_hooks_threads(void **state)
{
	tmpdir_t *t = *state;
	hk_stats_t all = {0};

	threads_figures(t, NULL);
	hk_replay_ok(t->cap, &all); /* the whole process: consistent too */
	assert_int_equal(all.unknown_frees, 0);
	assert_int_equal(all.double_allocs, 0);
	assert_true(all.allocs >= 800000);
	/* every block lies in a host region declared before it: the brk heap
	 * and the thread arenas' heaps (several threads share none) */
	assert_true(all.regions_added >= 2);
	assert_int_equal(all.outside_regions, 0);
}

/* exit() while 4 threads allocate (victim_threads exit, with env): the
 * capture closes cleanly, the program is not disturbed (three times, the
 * race is timing-dependent). */
static void exit_under_threads(tmpdir_t *t, const char *const *env)
{
	const char *args[] = {"exit", NULL};
	int i;

	for (i = 0; i < 3; i++) {
		hk_stats_t st = {0};
		unlink(t->cap);
		assert_int_equal(hk_record(t->cap, NULL, "victim_threads", args, env), 0);
		hk_replay_ok(t->cap, &st);
		assert_int_equal(st.abrupt, 0);
		assert_int_equal(st.double_allocs, 0);
		assert_int_equal(st.unknown_frees, 0);
		assert_true(st.allocs > 100);
	}
}

static void test_hooks_exit_with_threads(void **state)
{
	exit_under_threads(*state, NULL);
}

/* 4000 short-lived threads, 8 at a time, each freeing a block from a
 * pthread key destructor during its exit; 1 ms flush rounds so that rings
 * of exited threads are drained and reused while others exit. */
static void test_hooks_thread_churn(void **state)
{
	tmpdir_t *t = *state;
	const char *env[] = {"MEMPROF_FLUSH_MS=1", NULL};
	hk_stats_t st = {0}, all = {0};

	assert_int_equal(hk_record(t->cap, NULL, "victim_churn", NULL, env), 0);
	st.skip_first_thread = 1;
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.allocs, 4000 * 101);
	assert_int_equal(st.frees, 4000 * 101);
	assert_int_equal(st.live_blocks, 0);
	assert_int_equal(st.unknown_frees, 0);
	assert_int_equal(st.double_allocs, 0);
	assert_int_equal(st.dropped, 0);
	/* Each thread's frees from its key destructor may come after memprof's
	 * own destructor unbound the thread from its ring: it then records
	 * under a second thread index (same OS thread id), never into a ring
	 * that another thread may already reuse. */
	assert_true(st.threads >= 4001 && st.threads <= 2 * 4000 + 1);
	hk_replay_ok(t->cap, &all);
	assert_int_equal(all.unknown_frees, 0);
	assert_int_equal(all.double_allocs, 0);
	assert_int_equal(all.outside_regions, 0);
}

/* --- fork and exec --------------------------------------------------------- */

/* Which of the victim's marker sizes a capture holds, as a bit set. */
static unsigned markers(const char *cap)
{
	static const uint64_t sizes[] = {1111, 2222, 3333, 4444};
	hk_stats_t st = {0};
	unsigned bits = 0;
	int i;

	st.nwatch = 4;
	for (i = 0; i < 4; i++)
		st.watch[i].size = sizes[i];
	hk_replay_ok(cap, &st);
	assert_int_equal(st.double_allocs, 0);
	for (i = 0; i < 4; i++) {
		if (st.watch[i].allocs)
			bits |= 1u << i;
		assert_true(st.watch[i].allocs <= 1);
	}
	return bits;
}

static void test_hooks_fork_exec(void **state)
{
	tmpdir_t *t = *state;
	char names[8][600];
	unsigned seen = 0;
	int n, i;

	assert_int_equal(hk_record(t->cap, NULL, "victim_fork", NULL, NULL), 0);
	assert_int_equal(markers(t->cap), 1u | 8u); /* parent: 1111 and 4444 */
	n = hk_other_captures(t->cap, names, 8);
	assert_int_equal(n, 2); /* the forked child and the program it exec'd */
	for (i = 0; i < n; i++) {
		unsigned m = markers(names[i]);
		assert_true(m == 2u || m == 4u);
		assert_int_equal(strncmp(names[i], t->dir, strlen(t->dir)), 0);
		assert_non_null(strstr(names[i], "/cap.memprof.run/"));
		seen |= m;
	}
	assert_int_equal(seen, 2u | 4u);
}

/* Fork while other threads allocate (victim_forkmt.c): every child ends --
 * none waits on a lock that another thread held at fork -- and has a
 * capture of its own with its one allocation and free. */
static void test_hooks_fork_threads(void **state)
{
	static char names[101][600];
	tmpdir_t *t = *state;
	int n, i;

	assert_int_equal(hk_record(t->cap, NULL, "victim_forkmt", NULL, NULL), 0);
	n = hk_other_captures(t->cap, names, 101);
	assert_int_equal(n, 100);
	for (i = 0; i < n; i++) {
		hk_stats_t st = {0};
		st.nwatch = 1;
		st.watch[0].size = 2222;
		hk_replay_ok(names[i], &st);
		assert_int_equal(st.watch[0].allocs, 1);
		assert_int_equal(st.allocs, 1);
		assert_int_equal(st.frees, 1);
		assert_int_equal(st.abrupt, 0);
	}
}

/* The main thread ends with pthread_exit() (victim_orphan.c): the process
 * ends when its other thread does, as untraced (the flusher, the one thread
 * left, does not keep it alive), with exit status 0, and what exit() then
 * runs -- the program's atexit handler -- is recorded. */
static void test_hooks_main_pthread_exit(void **state)
{
	tmpdir_t *t = *state;
	hk_stats_t st = {0};

	st.nwatch = 3;
	st.watch[0].size = 1111;
	st.watch[1].size = 2222;
	st.watch[2].size = 3333;
	assert_int_equal(hk_record(t->cap, NULL, "victim_orphan", NULL, NULL), 0); /* -2: it never ended */
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.abrupt, 0);
	assert_int_equal(st.watch[0].allocs, 1);
	assert_int_equal(st.watch[0].frees, 1); /* by the worker, after main ended */
	assert_int_equal(st.watch[1].allocs, 1);
	assert_int_equal(st.watch[1].frees, 0);
	assert_int_equal(st.watch[2].allocs, 1); /* the atexit handler */
	assert_int_equal(st.watch[2].frees, 1);
}

/* victim_smallstack exit, recorded with env: its 16 KiB-stack thread's
 * 1000 malloc(77)/free pairs, and the capture it closed at exit ended
 * cleanly. */
static void smallstack_exit(tmpdir_t *t, const char *const *env)
{
	const char *args[] = {"exit", NULL};
	hk_stats_t st = {0};

	st.nwatch = 1;
	st.watch[0].size = 77;
	assert_int_equal(hk_record(t->cap, NULL, "victim_smallstack", args, env), 0);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.abrupt, 0);
	assert_int_equal(st.watch[0].allocs, 1000);
	assert_int_equal(st.watch[0].frees, 1000);
}

/* Flush rounds on the program's own threads (src/core/write/help.c),
 * forced on (MEMPROF_HELP=always) with small rings so that there are
 * hundreds: 8 threads freeing each other's blocks give the same figures
 * as with the flusher's rounds; exit() while 4 threads allocate (and run
 * rounds) still ends the capture cleanly; a thread with a 16 KiB stack runs
 * rounds (they need ~13 KiB: on the writer's stack, not its own). */
static void test_hooks_help_rounds(void **state)
{
	tmpdir_t *t = *state;
	const char *env[] = {"MEMPROF_HELP=always", "MEMPROF_RING_KB=64", NULL};
	const char *small_env[] = {"MEMPROF_HELP=always", "MEMPROF_RING_KB=4", NULL};

	threads_figures(t, env);
	exit_under_threads(t, env);
	unlink(t->cap);
	smallstack_exit(t, small_env);
}

/* A thread with the smallest stack (victim_smallstack.c) closes the
 * capture at exit, opens and closes a fork child's, and execl()s with 72
 * arguments: each ends as without memprof (these crashed it before: a
 * flush round needs ~13 KiB of stack, opening ~13 KiB, execl took 32 KiB). */
static void test_hooks_small_stack(void **state)
{
	tmpdir_t *t = *state;
	const char *fork_args[] = {"fork", NULL}, *exec_args[] = {"execl", NULL};
	char names[4][600];
	hk_stats_t st = {0}, ch = {0}, ex = {0};

	smallstack_exit(t, NULL);
	unlink(t->cap);

	assert_int_equal(hk_record(t->cap, NULL, "victim_smallstack", fork_args, NULL), 0);
	assert_int_equal(hk_other_captures(t->cap, names, 4), 1);
	ch.nwatch = 1;
	ch.watch[0].size = 2222;
	hk_replay_ok(names[0], &ch);
	assert_int_equal(ch.abrupt, 0);
	assert_int_equal(ch.watch[0].allocs, 1);
	assert_int_equal(ch.watch[0].frees, 1);
	unlink(names[0]);
	unlink(t->cap);

	assert_int_equal(hk_record(t->cap, NULL, "victim_smallstack", exec_args, NULL), 0);
	assert_int_equal(hk_other_captures(t->cap, names, 4), 1);
	ex.nwatch = 1;
	ex.watch[0].size = 72; /* malloc(argc): every argument arrived */
	hk_replay_ok(names[0], &ex);
	assert_int_equal(ex.abrupt, 0);
	assert_int_equal(ex.watch[0].allocs, 1);
	assert_int_equal(ex.watch[0].frees, 1);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.abrupt, 0); /* closed before the exec, on the small stack */
}

static void test_hooks_vfork(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"vfork", NULL};
	char names[8][600];
	hk_stats_t st = {0};

	assert_int_equal(hk_record(t->cap, NULL, "victim_fork", args, NULL), 0);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.abrupt, 0); /* the vfork child did not close it */
	assert_int_equal(markers(t->cap), 1u | 8u);
	assert_int_equal(hk_other_captures(t->cap, names, 8), 1);
	assert_int_equal(markers(names[0]), 4u);
}

static void test_hooks_no_children(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--no-children", NULL};
	char names[8][600];

	assert_int_equal(hk_record(t->cap, opts, "victim_fork", NULL, NULL), 0);
	assert_int_equal(markers(t->cap), 1u | 8u);
	assert_int_equal(hk_other_captures(t->cap, names, 8), 0);
}

static void test_hooks_no_fork(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--no-fork", NULL};
	char names[8][600];

	assert_int_equal(hk_record(t->cap, opts, "victim_fork", NULL, NULL), 0);
	assert_int_equal(markers(t->cap), 1u | 8u);
	assert_int_equal(hk_other_captures(t->cap, names, 8), 1); /* only the exec'd program */
	assert_int_equal(markers(names[0]), 4u);
}

/* A setgid copy of a victim (group nogroup) runs in secure mode: the
 * loader ignores the preload and no capture is written. Skipped where the
 * copy cannot be made setgid (not root, nosuid mount). */
static void test_hooks_setgid_untraced(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"secure", NULL};
	char src[512], dst[256], cmd[2048], log[200], want[600], *out;
	struct stat sb;
	int rc;

	snprintf(src, sizeof(src), "%s/victim_seq", HK_VICTIM_DIR);
	snprintf(dst, sizeof(dst), "%s/victim_seq", t->dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chgrp 65534 '%s' && chmod g+s '%s' && '%s' secure",
		 src, dst, dst, dst, dst);
	rc = system(cmd);
	if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 41) {
		fprintf(stderr, "skip: cannot make a setgid program here (status %d)\n", rc);
		skip();
	}
	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, dst, args, NULL), 41);
	assert_int_not_equal(stat(t->cap, &sb), 0); /* no capture */
	/* and the record command says why */
	out = hk_read_text(log);
	snprintf(want, sizeof(want),
		 "memprof: warning: no capture was written: '%s' is setgid: it starts in secure mode, where the "
		 "loader ignores LD_PRELOAD and memprof never traces\n",
		 dst);
	assert_string_equal(out, want);
	free(out);
	unlink(dst);
}

/* A statically linked program has no loader to preload into: it runs
 * untraced, and `memprof record` names it as the reason, also when CMD is a
 * script whose interpreter it is. */
static void test_hooks_static_untraced(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"exit", NULL};
	char log[200], prog[512], script[200], want[1200], *out;
	struct stat sb;
	FILE *f;

	if (!HK_HAVE_STATIC) {
		fprintf(stderr, "skip: no static libc here to link victim_seq_static\n");
		skip();
	}
	snprintf(prog, sizeof(prog), "%s/victim_seq_static", HK_VICTIM_DIR);
	snprintf(want, sizeof(want),
		 "memprof: warning: no capture was written: '%s' is statically linked: it has no dynamic loader "
		 "to load the preload library, so memprof cannot hook its allocations\n",
		 prog);
	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, prog, args, NULL), 0);
	assert_int_not_equal(stat(t->cap, &sb), 0);
	out = hk_read_text(log);
	assert_string_equal(out, want);
	free(out);

	snprintf(script, sizeof(script), "%s/run.sh", t->dir);
	assert_non_null(f = fopen(script, "w"));
	fprintf(f, "#!%s secure\n", prog);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(script, 0755), 0);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, script, NULL, NULL), 40); /* ran, not secure */
	assert_int_not_equal(stat(t->cap, &sb), 0);
	out = hk_read_text(log);
	assert_string_equal(out, want);
	free(out);
	unlink(script);

	/* its dynamically linked child is traced, and the warning points there */
	{
		const char *spawn[] = {"spawn", HK_VICTIM_DIR "/victim_seq", NULL};
		char names[4][600];
		hk_stats_t st = {0};
		assert_int_equal(hk_record_logged(t->cap, log, NULL, prog, spawn, NULL), 0);
		assert_int_not_equal(stat(t->cap, &sb), 0);
		out = hk_read_text(log);
		snprintf(want, sizeof(want),
			 "memprof: warning: no capture was written for CMD itself: '%s' is statically linked: it has "
			 "no dynamic loader to load the preload library, so memprof cannot hook its allocations\n"
			 "memprof: run written to '%s.run': 1 capture\n"
			 "memprof: main process: pid ",
			 prog, t->cap);
		assert_int_equal(strncmp(out, want, strlen(want)), 0);
		free(out);
		assert_int_equal(hk_other_captures(t->cap, names, 4), 1);
		hk_replay_ok(names[0], &st);
		assert_int_equal(st.allocs, 1); /* "last": malloc(123) */
		assert_int_equal(st.peak, 123);
	}
}

/* A program of another C library (musl): given the glibc preload, its
 * loader refused to start it at all (exit 127, a page of relocation
 * errors). memprof record runs it untraced, returns its status (42), and
 * says why there is no capture. Skipped without musl-gcc. */
static void test_hooks_musl_untraced(void **state)
{
	tmpdir_t *t = *state;
	char log[200], *out;
	struct stat sb;

	if (!HK_HAVE_MUSL) {
		fprintf(stderr, "skip: musl-gcc is not installed\n");
		skip();
	}
	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, "victim_musl", NULL, NULL), 42);
	out = hk_read_text(log);
	assert_non_null(strstr(out, "is linked against another C library (its loader is '"));
	assert_non_null(strstr(out, "ld-musl-"));
	assert_null(strstr(out, "Error relocating"));
	free(out);
	assert_int_equal(stat(t->cap, &sb), -1);
}

/* ... and one that a traced program execs (victim_seq spawn: fork, then
 * execl), starts with posix_spawn (pspawn) or with system() (the traced
 * shell execs it): the hook takes our library out of its LD_PRELOAD, so it
 * runs (status 42, passed on by victim_seq) instead of dying at its loader
 * (127); the parent's own capture is whole. */
static void test_hooks_musl_child(void **state)
{
	tmpdir_t *t = *state;
	char musl[512];
	const char *args[] = {"spawn", musl, NULL};
	hk_stats_t st = {0};

	if (!HK_HAVE_MUSL) {
		fprintf(stderr, "skip: musl-gcc is not installed\n");
		skip();
	}
	snprintf(musl, sizeof(musl), "%s/victim_musl", HK_VICTIM_DIR);
	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 42);
	hk_replay_ok(t->cap, &st);
	assert_false(st.abrupt);
	/* the same through posix_spawn, and through system() */
	args[0] = "pspawn";
	remove(t->cap);
	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 42);
	args[0] = "system";
	remove(t->cap);
	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hooks_threads, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_exit_with_threads, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_thread_churn, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_fork_exec, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_fork_threads, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_main_pthread_exit, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_small_stack, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_help_rounds, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_vfork, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_no_children, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_no_fork, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_setgid_untraced, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_static_untraced, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_musl_untraced, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_musl_child, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests_name("hooks_proc", tests, NULL, NULL);
}
