/* test_hooks_runlist.c - report's process tree and record's closing lines
 * of a run with many processes (docs/report.md "Runs", docs/hooks.md):
 * the helpers on one line, the 5 largest others and a count of the rest,
 * command lines shortened; --all-processes and --json list every one. */
#include "test_common.h"

#include "hooks_run.h"
#include "json_check.h"

#include <jansson.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* `memprof report ARGS --json RUN`, validated; owned by the caller. */
static json_t *report_json(const char *args, const char *run)
{
	char cmd[1200];
	json_error_t err;
	json_t *root;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' report %s --json '%s' 2>/dev/null", HK_MEMPROF, args, run);
	assert_non_null(p = popen(cmd, "r"));
	root = mp_test_json_loadf(p, 0, "report", &err);
	assert_int_equal(pclose(p), 0);
	if (!root)
		fail_msg("`%s` gave no JSON: %s", cmd, err.text);
	return root;
}

/* `memprof report ARGS RUN` as text; owned by the caller. */
static char *report_text(const tmpdir_t *t, const char *args, const char *run)
{
	char cmd[1400];

	snprintf(cmd, sizeof(cmd), "'%s' report %s '%s' > '%s/report.txt' 2>&1", HK_MEMPROF, args, run, t->dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/report.txt", t->dir);
	return hk_read_text(cmd);
}

/* The lines of the process tree in report's text (after its column
 * header, up to the blank line): how many, and how many of them start
 * with prefix. */
static size_t tree_lines(const char *text, const char *prefix, size_t *with_prefix)
{
	const char *l = strstr(text, "  pid      parent");
	size_t n = 0;

	*with_prefix = 0;
	assert_non_null(l);
	for (l = strchr(l, '\n') + 1; *l && *l != '\n'; l = strchr(l, '\n') + 1) {
		n++;
		*with_prefix += !strncmp(l, prefix, strlen(prefix));
		if (!strchr(l, '\n'))
			break;
	}
	return n;
}

/* A shell script named name in t's directory, its body formatted from fmt
 * after "#!/bin/sh"; its path into path (n bytes). */
static void __attribute__((format(printf, 5, 6)))
write_script(const tmpdir_t *t, const char *name, char *path, size_t n, const char *fmt, ...)
{
	va_list ap;
	FILE *f;

	snprintf(path, n, "%s/%s", t->dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs("#!/bin/sh\n", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

/* A wrapper script that runs 52 short helpers (as a pyenv shim does),
 * then execs the program: report's text names the helpers on one line by
 * default, and --all-processes lists each. */
static void test_hooks_runlist_helpers(void **state)
{
	tmpdir_t *t = *state;
	char script[300], run[600];

	write_script(t, "wrap.sh", script, sizeof(script),
		     "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do\n"
		     "  x=$(uname); env true; (exit 0); /bin/true\n"
		     "done\n"
		     "exec %s/victim_launch work 6\n",
		     HK_VICTIM_DIR);
	assert_int_equal(hk_record(t->cap, NULL, script, NULL, NULL), 0);
	hk_run_path(t->cap, run, sizeof(run));
	/* report's text: the helpers on one line by default, naming the most
	 * common programs; --all-processes lists each */
	{
		char *text = report_text(t, "", run);
		size_t dash, n = tree_lines(text, "- ", &dash);
		const char *h = strstr(text, "\n- ");
		int nh = 0;
		assert_int_equal(n, 2); /* the program, the helpers' line */
		assert_int_equal(dash, 1);
		assert_non_null(h);
		assert_int_equal(sscanf(h, "\n- %d helpers: ", &nh), 1);
		assert_true(nh >= 52);
		/* the script and its subshells (27), true and /bin/true (26) */
		assert_non_null(strstr(text, " helpers: wrap.sh, true, "));
		assert_non_null(strstr(text, "(--all-processes lists them)"));
		free(text);
		text = report_text(t, "--all-processes", run);
		n = tree_lines(text, "- ", &dash);
		assert_true(dash >= 52);
		assert_null(strstr(text, " helpers: "));
		free(text);
	}
}

/* 30 workers at once (a dataloader's, torchrun's ranks), each with a
 * command line longer than a terminal's line (the program behind a
 * directory of 200 characters): record's closing lines name the 5
 * largest besides the main process and count the rest; report's tree has
 * as many lines, command lines shortened to the program's name and their
 * end; --all-processes and --json list every one in full. */
static void test_hooks_runlist_workers(void **state)
{
	tmpdir_t *t = *state;
	char script[300], run[600], log[300], longdir[600], link[900], name[201], *out, *l;
	size_t n, also = 0, other_lines, blank;
	json_t *root;
	int rest = 0;

	memset(name, 'a', 200);
	name[200] = '\0';
	snprintf(longdir, sizeof(longdir), "%s/%s", t->dir, name);
	assert_int_equal(mkdir(longdir, 0755), 0);
	snprintf(link, sizeof(link), "%s/victim_launch", longdir);
	assert_int_equal(symlink(HK_VICTIM_DIR "/victim_launch", link), 0);
	write_script(t, "pool.sh", script, sizeof(script),
		     "i=1\nwhile [ $i -le 30 ]; do '%s' work $i & i=$((i + 1)); done\nwait\n", link);
	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, script, NULL, NULL), 0);
	hk_run_path(t->cap, run, sizeof(run));

	out = hk_read_text(log);
	for (l = out; (l = strstr(l, "memprof:   also pid ")); l++)
		also++;
	assert_int_equal(also, 5);
	assert_non_null(l = strstr(out, "memprof:   and "));
	assert_int_equal(sscanf(l, "memprof:   and %d other processes, peaks up to", &rest), 1);
	assert_true(rest >= 24);
	assert_non_null(strstr(out, "victim_launch ... "));
	assert_non_null(strstr(out, "/victim_launch work 30', peak "));
	assert_non_null(strstr(out, "/victim_launch work 26', peak"));
	assert_null(strstr(out, name)); /* every command line shortened */
	free(out);

	out = report_text(t, "", run);
	n = tree_lines(out, "* ", &blank);
	assert_int_equal(blank, 1);
	other_lines = n - 1;
	assert_true(other_lines <= 5 + 2); /* 5 largest, the rest's count, the helpers' line */
	assert_non_null(strstr(out, " other processes, peaks up to "));
	assert_non_null(strstr(out, "victim_launch ... "));
	assert_null(strstr(out, name));
	free(out);

	out = report_text(t, "--all-processes", run);
	assert_true(tree_lines(out, "* ", &blank) >= 31);
	assert_non_null(strstr(out, name));
	free(out);

	root = report_json("", run); /* JSON lists every process */
	assert_true(json_array_size(json_object_get(json_array_get(json_object_get(root, "runs"), 0), "processes")) >=
		    31);
	json_decref(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hooks_runlist_helpers, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_runlist_workers, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
