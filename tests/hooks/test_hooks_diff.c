/* test_hooks_diff.c - `memprof diff` of two real `memprof record` runs:
 * each run is compared by its main process (the largest peak), or by the
 * processes --pid A_PID:B_PID names (docs/diff.md, "Runs").
 *
 * The figures come from victim_launch.c's annotated memory id "pool"
 * (exact, hand-computed there): "launch N" forks and execs N workers, the
 * i-th as "work 4*i", which peaks at 4*i MiB. So "launch 2"'s main process
 * is "work 8" (8 MiB) and "launch 4"'s is "work 16" (16 MiB): the diff of
 * the two runs is +8 MiB (+100%); --pid of "work 4" in the first and
 * "work 12" in the second gives 4 MiB -> 12 MiB, +8 MiB (+200%). */
#include "test_common.h"

#include "hooks_run.h"
#include "json_check.h"

#include <jansson.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>

#define MIB 1048576

/* `memprof CMD ARGS` (stderr to /dev/null); its exit code, stdout parsed
 * against schema when schema is not NULL (owned by the caller). */
static json_t *memprof_json(const char *cmd_args, const char *schema, int *rc)
{
	char cmd[2000];
	json_error_t err;
	json_t *root;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' %s 2>/dev/null", HK_MEMPROF, cmd_args);
	assert_non_null(p = popen(cmd, "r"));
	root = mp_test_json_loadf(p, 0, schema, &err);
	st = pclose(p);
	*rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (!root)
		fail_msg("`%s` gave no JSON: %s", cmd, err.text);
	return root;
}

static json_int_t get_int(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* The diff's memory id named name (in both). */
static json_t *memory(json_t *diff, const char *name)
{
	size_t i;
	json_t *m;

	json_array_foreach(json_object_get(diff, "memories"), i, m)
		if (!strcmp(json_string_value(json_object_get(json_object_get(m, "a"), "name")), name))
			return m;
	fail_msg("no memory '%s' in the diff", name);
	return NULL;
}

/* The pid of the process whose command line ends with tail in run. */
static json_int_t pid_of(const char *run, const char *tail)
{
	char args[700];
	json_t *root, *r, *p;
	size_t i, n = strlen(tail);
	json_int_t pid = -1;
	int rc;

	snprintf(args, sizeof(args), "report --peak --json '%s'", run);
	root = memprof_json(args, "report", &rc);
	assert_int_equal(rc, 0);
	r = json_array_get(json_object_get(root, "runs"), 0);
	json_array_foreach(json_object_get(r, "processes"), i, p) {
		const char *c = json_string_value(json_object_get(p, "command_line"));
		if (strlen(c) >= n && !strcmp(c + strlen(c) - n, tail))
			pid = get_int(p, "pid");
	}
	json_decref(root);
	if (pid < 0)
		fail_msg("no process '...%s' in %s", tail, run);
	return pid;
}

static void expect_pool(json_t *diff, json_int_t a, json_int_t b)
{
	json_t *m = memory(diff, "pool");

	assert_string_equal(json_string_value(json_object_get(diff, "kind")), "capture");
	assert_int_equal(get_int(json_object_get(m, "a"), "peak_bytes"), a);
	assert_int_equal(get_int(json_object_get(m, "b"), "peak_bytes"), b);
	assert_int_equal(get_int(m, "change_bytes"), b - a);
	assert_true(fabs(json_real_value(json_object_get(m, "change_percent")) - 100.0 * (double)(b - a) / (double)a) <
		    1e-9);
}

static void test_hooks_diff_runs(void **state)
{
	tmpdir_t *t = *state;
	const char *two[] = {"launch", "2", NULL}, *four[] = {"launch", "4", NULL};
	char cap_a[200], cap_b[200], run_a[600], run_b[600], args[2000];
	json_t *d;
	int rc;

	snprintf(cap_a, sizeof(cap_a), "%s/a.memprof", t->dir);
	snprintf(cap_b, sizeof(cap_b), "%s/b.memprof", t->dir);
	assert_int_equal(hk_record(cap_a, NULL, "victim_launch", two, NULL), 0);
	assert_int_equal(hk_record(cap_b, NULL, "victim_launch", four, NULL), 0);
	hk_run_path(cap_a, run_a, sizeof(run_a));
	hk_run_path(cap_b, run_b, sizeof(run_b));

	/* the main processes: "work 8" against "work 16" */
	snprintf(args, sizeof(args), "diff --json '%s' '%s'", run_a, run_b);
	d = memprof_json(args, "diff", &rc);
	assert_int_equal(rc, 0);
	expect_pool(d, 8 * MIB, 16 * MIB);
	json_decref(d);

	/* the gate sees the same: +8 MiB is above 50%, not above 8 MiB */
	snprintf(args, sizeof(args), "diff --json --fail-above pool:50%% '%s' '%s'", run_a, run_b);
	json_decref(memprof_json(args, "diff", &rc));
	assert_int_equal(rc, 1);
	snprintf(args, sizeof(args), "diff --json --fail-above pool:8MiB '%s' '%s'", run_a, run_b);
	json_decref(memprof_json(args, "diff", &rc));
	assert_int_equal(rc, 0);

	/* --pid: "work 4" of the first run against "work 12" of the second */
	snprintf(args, sizeof(args), "diff --json --pid %lld:%lld '%s' '%s'",
		 (long long)pid_of(run_a, "victim_launch work 4"), (long long)pid_of(run_b, "victim_launch work 12"),
		 run_a, run_b);
	d = memprof_json(args, "diff", &rc);
	assert_int_equal(rc, 0);
	expect_pool(d, 4 * MIB, 12 * MIB);
	json_decref(d);
	/* one side only: B's main process ("work 16") */
	snprintf(args, sizeof(args), "diff --json --pid %lld: '%s' '%s'",
		 (long long)pid_of(run_a, "victim_launch work 4"), run_a, run_b);
	d = memprof_json(args, "diff", &rc);
	assert_int_equal(rc, 0);
	expect_pool(d, 4 * MIB, 16 * MIB);
	json_decref(d);
}

/* --pid's errors: one line, exit 2. */
static void test_hooks_diff_pid_errors(void **state)
{
	tmpdir_t *t = *state;
	const char *one[] = {"launch", "1", NULL};
	char run[600], cmd[2000];

	assert_int_equal(hk_record(t->cap, NULL, "victim_launch", one, NULL), 0);
	hk_run_path(t->cap, run, sizeof(run));
	snprintf(cmd, sizeof(cmd), "'%s' diff --pid 12 '%s' '%s' >/dev/null 2>&1", HK_MEMPROF, run, run);
	assert_int_equal(WEXITSTATUS(system(cmd)), 2); /* no colon */
	snprintf(cmd, sizeof(cmd), "'%s' diff --pid : '%s' '%s' >/dev/null 2>&1", HK_MEMPROF, run, run);
	assert_int_equal(WEXITSTATUS(system(cmd)), 2);
	snprintf(cmd, sizeof(cmd), "'%s' diff --pid 1:1 '%s' '%s' >/dev/null 2>&1", HK_MEMPROF, run, run);
	assert_int_equal(WEXITSTATUS(system(cmd)), 2); /* no such pid in the run */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hooks_diff_runs, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_diff_pid_errors, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
