/* test_input_options.c - the input options are one table, parsed in one
 * place: every command that takes one says the same line of a bad value,
 * with exit code 2, before it opens any file; a command that does not take
 * one refuses it as an unknown option; every command prints its --help on
 * stdout with exit code 0. The expected lines are docs/cli.md's. */
#include "test_common.h"

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"

/* memprof ARGS: its exit code and its stderr (caller frees). The inputs
 * named need not exist: the options are parsed first. */
static int run(const char *args, char **err)
{
	char cmd[MP_TEST_CMD_MAX], *out;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s </dev/null", MEMPROF, args);
	st = mp_test_capture(cmd, &out, err);
	free(out);
	return st;
}

/* Each of cmds (NULL-ended) given OPTION and its inputs says want. */
static void check_all(const char *const *cmds, const char *option, const char *want)
{
	for (size_t i = 0; cmds[i]; i++) {
		char args[512], *err;
		int inputs2 = !strcmp(cmds[i], "diff");

		snprintf(args, sizeof(args), "%s %s %s%s", cmds[i], option,
			 !strcmp(cmds[i], "plot") ? "-o /nonexistent/x.svg " : !strcmp(cmds[i], "convert") ? "-o x.xplane.pb " : "",
			 inputs2 ? "a.memprof b.memprof" : "a.memprof");
		assert_int_equal(run(args, &err), 2);
		if (strcmp(err, want)) {
			fprintf(stderr, "memprof %s: got '%s', want '%s'\n", args, err, want);
			fail();
		}
		free(err);
	}
}

static void test_steps(void **state)
{
	static const char *const cmds[] = {"report", "plot", "diff", NULL};

	(void)state;
	check_all(cmds, "--steps 5:2", "memprof: error: invalid --steps range '5:2' (expected A:B with 0 <= A <= B)\n");
	check_all(cmds, "--steps :", "memprof: error: invalid --steps range ':' (expected A:B with 0 <= A <= B)\n");
}

static void test_pid_process(void **state)
{
	static const char *const pid[] = {"report", "plot", "convert", "dump", NULL};
	static const char *const process[] = {"report", "plot", NULL};

	(void)state;
	check_all(pid, "--pid x", "memprof: error: --pid expects a process id, got 'x'\n");
	check_all(pid, "--pid 0", "memprof: error: --pid expects a process id, got '0'\n");
	check_all(process, "--process some", "memprof: error: --process expects 'main' or 'all', got 'some'\n");
}

static void test_user_code(void **state)
{
	static const char *const cmds[] = {"report", "plot", "diff", NULL};

	(void)state;
	check_all(cmds, "--user-code a,,b",
		  "memprof: error: invalid --user-code 'a,,b' (expected a comma-separated list of 'packages', package "
		  "names and path prefixes)\n");
	check_all(cmds, "--user-code a --user-code b",
		  "memprof: error: --user-code given twice (give one comma-separated list)\n");
}

/* An input option a command does not take is unknown to it. */
static void test_not_taken(void **state)
{
	static const char *const convert[] = {"convert", NULL};
	char *err;

	(void)state;
	check_all(convert, "--steps 0:1",
		  "memprof: error: unknown or incomplete option '--steps' (see 'memprof convert --help')\n");
	check_all(convert, "--process all",
		  "memprof: error: unknown or incomplete option '--process' (see 'memprof convert --help')\n");
	/* dump, hlo: getopt's line, then the usage */
	assert_int_equal(run("dump --device 0 a.memprof", &err), 2);
	assert_non_null(strstr(err, "usage: memprof dump"));
	free(err);
	assert_int_equal(run("hlo --steps 0:1 a.hlo.pb", &err), 2);
	assert_non_null(strstr(err, "usage: memprof hlo"));
	free(err);
}

static void test_help(void **state)
{
	static const char *const cmds[] = {"report", "plot", "diff", "convert", "dump", "hlo", "record", "demo", NULL};

	(void)state;
	for (size_t i = 0; cmds[i]; i++) {
		char cmd[MP_TEST_CMD_MAX], want[64], *out, *err;

		snprintf(cmd, sizeof(cmd), "%s %s --help", MEMPROF, cmds[i]);
		assert_int_equal(mp_test_capture(cmd, &out, &err), 0);
		snprintf(want, sizeof(want), "usage: memprof %s", cmds[i]);
		assert_memory_equal(out, want, strlen(want));
		assert_string_equal(err, "");
		free(out);
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps),     cmocka_unit_test(test_pid_process), cmocka_unit_test(test_user_code),
		cmocka_unit_test(test_not_taken), cmocka_unit_test(test_help),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
