/* test_hooks_cmd.c - the `memprof record` command's own behaviour: it never
 * overwrites a file, names its capture in a directory, forwards SIGTERM,
 * names its flusher thread, exits with the program's status, prints its
 * summary, and keeps recording when the program closes or takes over the
 * capture's descriptor. Figures are hand-computed in each victim_*.c;
 * captures are replayed with hooks_check.c.
 */
#include "test_common.h"

#include "hooks_run.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>

/* --- the command itself ---------------------------------------------------- */

static void test_hooks_never_overwrites(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"exit", NULL};
	char run[600], log[200], *out;
	struct stat sb;
	FILE *f;

	hk_run_path(t->cap, run, sizeof(run));
	assert_non_null(f = fopen(run, "w"));
	fputs("precious", f);
	fclose(f);
	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 3);
	assert_int_equal(stat(run, &sb), 0);
	assert_int_equal(sb.st_size, 8);
	/* nor an earlier run: memprof record refuses it by name */
	assert_int_equal(unlink(run), 0);
	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 0);
	snprintf(log, sizeof(log), "%s/again.log", t->dir);
	strcat(run, "/"); /* (the harness passes a name ending in '/' as it is) */
	assert_int_equal(hk_record_logged(run, log, NULL, "victim_seq", args, NULL), 3);
	out = hk_read_text(log);
	assert_non_null(strstr(out, "is a run already; remove it or choose another name with -o"));
	free(out);
	assert_int_equal(stat(t->cap, &sb), 0); /* the first run's capture is still there */
}

/* -o DIR (with or without its trailing slash), or no -o at all (in the
 * current directory, d2): the capture gets the default name,
 * memprof.victim_seq.<pid>.memprof, in DIR, and the name printed is the
 * absolute path (before, without -o it read ".../d2/./memprof..."); a name
 * ending in a slash that is not a directory is an error before CMD runs. */
static void test_hooks_output_dir(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"exit", NULL};
	char log[200], dir[200], want[400], path[600], *out, *p, *q;
	hk_stats_t st = {0};
	int slash;

	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	for (slash = 0; slash < 3; slash++) {
		char here[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s/d%d%s", t->dir, slash, slash == 1 ? "/" : "");
		assert_int_equal(mkdir(dir, 0700), 0);
		if (slash < 2) {
			assert_int_equal(hk_record_logged(dir, log, NULL, "victim_seq", args, NULL), 0);
		} else {
			assert_non_null(getcwd(here, sizeof(here)));
			assert_int_equal(chdir(dir), 0);
			assert_int_equal(hk_record_logged(NULL, log, NULL, "victim_seq", args, NULL), 0);
			assert_int_equal(chdir(here), 0);
		}
		out = hk_read_text(log);
		snprintf(want, sizeof(want), "memprof: run written to '%s/d%d/memprof.victim_seq.", t->dir, slash);
		assert_non_null(p = strstr(out, want));
		p += strlen("memprof: run written to '");
		assert_non_null(q = strchr(p, '\''));
		snprintf(path, sizeof(path), "%.*s", (int)(q - p), p);
		free(out);
		/* the pid, then the extension; the run holds that pid's capture */
		p = path + strlen(want) - strlen("memprof: run written to '");
		assert_true(*p >= '1' && *p <= '9');
		q = p;
		while (*p >= '0' && *p <= '9')
			p++;
		assert_string_equal(p, ".memprof");
		{
			char pidname[32];
			snprintf(pidname, sizeof(pidname), "/%.*s.memprof", (int)(p - q), q);
			strcat(path, pidname);
		}
		memset(&st, 0, sizeof(st));
		hk_replay_ok(path, &st);
		assert_int_equal(st.allocs, 6);
		assert_int_equal(st.frees, 4);
		assert_int_equal(st.peak, 208000);
	}
	snprintf(dir, sizeof(dir), "%s/none/", t->dir);
	assert_int_equal(hk_record(dir, NULL, "victim_seq", args, NULL), 3);
}

/* SIGTERM sent to memprof record alone (kill, a supervisor): passed on to
 * CMD, and memprof record stays to report. victim_seq "window" runs 1 s in
 * all: once its capture (flushed every 20 ms, read while it is written)
 * holds the sequence and the first window block (7 allocations, 4 frees),
 * memprof record gets SIGTERM. The capture then ends abruptly before the
 * window's third block, and memprof record says how CMD ended, where the
 * capture went, and exits 143 (128 + SIGTERM, CMD's end). Before, memprof record died at once,
 * silent, and the victim ran on, to a clean end with 9 allocations. */
static void test_hooks_sigterm_forwarded(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--flush", "20", NULL};
	const char *args[] = {"window", NULL};
	struct timespec ts = {0, 20 * 1000000L};
	char log[200], want[400], *out;
	hk_stats_t st = {0};
	int i;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	pid = hk_record_start(t->cap, log, opts, "victim_seq", args, NULL);
	assert_true(pid > 0);
	for (i = 0; i < 500 && st.allocs < 7; i++) {
		char root[700], run[600];
		nanosleep(&ts, NULL);
		memset(&st, 0, sizeof(st));
		hk_run_path(t->cap, run, sizeof(run));
		snprintf(root, sizeof(root), "%s/%d.memprof", run, hk_run_root_pid(t->cap));
		if (access(root, F_OK) == 0)
			(void)hk_replay(root, &st);
	}
	assert_int_equal(st.allocs, 7);
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(hk_record_wait(pid, "victim_seq"), 128 + SIGTERM);
	hk_link_root(t->cap);
	out = hk_read_text(log);
	snprintf(want, sizeof(want), "memprof: run written to '%s.run': 1 capture\n", t->cap);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "memprof: CMD was killed by signal 15 (Terminated)\n"));
	assert_non_null(strstr(out, ", ended abruptly (killed by signal 15 (Terminated): read to its last flush)\n"));
	assert_non_null(strstr(out, "(the capture ended abruptly)\n"));
	free(out);
	memset(&st, 0, sizeof(st));
	hk_replay_ok(t->cap, &st);
	assert_in_range(st.allocs, 7, 8);
	assert_int_equal(st.frees, 4);
	assert_true(st.abrupt);
}

/* The capture's flusher is a thread of the program: it is named
 * "memprof-flush", so that top -H and perf say whose CPU time it is.
 * victim_seq "threads" exits 0 when it finds that name among its threads
 * (6 without: the name was the program's). */
static void test_hooks_flusher_named(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"threads", NULL};

	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 0);
}

static void test_hooks_exit_status(void **state)
{
	tmpdir_t *t = *state;
	char log[200], here[PATH_MAX], *out;

	/* victim_fork with a bogus argument still exits 0; use a missing program */
	assert_int_equal(hk_record(t->cap, NULL, "no_such_victim", NULL, NULL), 127);
	/* a bare name is looked up in PATH, as a shell does; one that is in
	 * the current directory instead gets the hint (the likely slip) */
	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_non_null(getcwd(here, sizeof(here)));
	assert_int_equal(chdir(HK_VICTIM_DIR), 0);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, "=victim_seq", NULL, NULL), 127);
	assert_int_equal(chdir(here), 0);
	out = hk_read_text(log);
	assert_string_equal(out, "memprof: error: cannot run 'victim_seq': command not found in PATH (for the one "
				 "in this directory: './victim_seq')\n");
	free(out);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, "=no_such_victim", NULL, NULL), 127);
	out = hk_read_text(log);
	assert_string_equal(out, "memprof: error: cannot run 'no_such_victim': command not found in PATH\n");
	free(out);
}

/* What memprof record says on standard error when CMD ends: where the
 * run went, its main process and a summary line, figures of victim_seq's
 * known sequence (hand-computed in victim_seq.c: 208000 B requested at the
 * peak = 203.125 KiB, printed to two places as 203.12), counted as report
 * counts them, in the bytes glibc's malloc reserves (x86-64: a chunk of
 * request + 8 rounded up to 16, of which all but 8 bytes usable, at least
 * 24; an mmapped one of request + 8 rounded up to 16, then + 8 rounded up
 * to a page, all but 16 usable): c 5000 + d 3000 + e 200688 = 208688 B at
 * the peak (203.80 KiB), e 200688 + f 24 = 200712 B (196.01 KiB) live at
 * the end. */
#define SEQ_SUMMARY                                                                              \
	" events; host heap: 6 allocations, 4 frees, 0 failed, peak 208688 B (203.80 KiB) in use,"   \
	" 208000 B (203.12 KiB) requested; live at the end: 2 blocks, 200712 B (196.01 KiB)" /* then "\n", or "; N distinct call stacks" */

static void test_hooks_record_summary(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"exit", NULL};
	char log[200], want[800], *out;

	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, "victim_seq", args, NULL), 0);
	out = hk_read_text(log);
	snprintf(want, sizeof(want),
		 "memprof: run written to '%s.run': 1 capture\n"
		 "memprof: main process: pid %d '%s/victim_seq exit', peak ",
		 t->cap, hk_run_root_pid(t->cap), HK_VICTIM_DIR);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, SEQ_SUMMARY));
	free(out);
}

/* CMD a wrapper that execs (victim_seq exec -> hop -> last, one process):
 * the run holds the three programs of that pid; the main process is the
 * one with the largest peak (here the wrapper, 208000 B requested), and
 * the others are helpers: hop exec'd, last peaked at 123 B. */
static void test_hooks_record_summary_exec(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"exec", NULL};
	char log[200], want[800], run[600], last[700], hop[700], *out;
	hk_stats_t st = {0}, hs = {0};
	int pid;

	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, "victim_seq", args, NULL), 0);
	out = hk_read_text(log);
	pid = hk_run_root_pid(t->cap);
	snprintf(want, sizeof(want),
		 "memprof: run written to '%s.run': 3 captures (2 of helpers: shells, launchers, exec'd wrappers)\n"
		 "memprof: main process: pid %d '%s/victim_seq exec', peak ",
		 t->cap, pid, HK_VICTIM_DIR);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, SEQ_SUMMARY)); /* the wrapper's own capture */
	assert_null(strstr(out, "memprof:   also")); /* no other process did work */
	hk_run_path(t->cap, run, sizeof(run));
	snprintf(hop, sizeof(hop), "%s/%d-1.memprof", run, pid);
	snprintf(last, sizeof(last), "%s/%d-2.memprof", run, pid);
	hk_replay_ok(last, &st);
	assert_int_equal(st.allocs, 1);
	assert_int_equal(st.frees, 0);
	assert_int_equal(st.peak, 123);
	assert_int_equal(st.live_bytes, 123);
	assert_int_equal(st.abrupt, 0);
	hk_replay_ok(hop, &hs);
	assert_int_equal(hs.allocs, 1);
	assert_int_equal(hs.frees, 1);
	assert_int_equal(hs.peak, 50);
	assert_int_equal(hs.abrupt, 0);
	free(out);
}

/* --- the capture's descriptor in the program's hands ---------------------- */

/* victim_fds MODE FILE (hand-computed figures in victim_fds.c): FILE holds
 * exactly what the program wrote, and the capture every event, though the
 * program closed or took over the capture's descriptor mid-run. */
static void check_fds(tmpdir_t *t, const char *mode)
{
	char file[200], *text;
	const char *args[] = {mode, file, NULL};
	const char *env[] = {"MEMPROF_FLUSH_MS=10", NULL};
	hk_stats_t st = {0};
	struct stat sb;

	snprintf(file, sizeof(file), "%s/user.txt", t->dir);
	assert_int_equal(hk_record(t->cap, NULL, "victim_fds", args, env), 0);
	assert_int_equal(stat(file, &sb), 0);
	assert_int_equal(sb.st_size, 9); /* no capture block in it */
	text = hk_read_text(file);
	assert_string_equal(text, "USERDATA\n");
	free(text);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.allocs, 600);
	assert_int_equal(st.frees, 600);
	assert_int_equal(st.peak, 200000);
	assert_int_equal(st.live_blocks, 0);
	assert_int_equal(st.live_bytes, 0);
	assert_int_equal(st.unknown_frees, 0);
	assert_int_equal(st.double_allocs, 0);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.abrupt, 0);
}

/* A daemon closing every descriptor above stderr, then opening a file into
 * the lowest number. */
static void test_hooks_fds_closed(void **state)
{
	check_fds(*state, "close");
}

/* A program dup2()ing its file onto the capture's very number. */
static void test_hooks_fds_taken(void **state)
{
	check_fds(*state, "dup");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hooks_never_overwrites, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_output_dir, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_sigterm_forwarded, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_flusher_named, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_exit_status, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_record_summary, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_record_summary_exec, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_fds_closed, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_fds_taken, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests_name("hooks_cmd", tests, NULL, NULL);
}
