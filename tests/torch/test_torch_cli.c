/* test_torch_cli.c - `memprof report` and `memprof plot` on generated
 * PyTorch snapshots: detection by name and by content, the OOM diagnosis
 * in text and JSON, the chart, and the exit codes of bad files. */
#include "test_common.h"

#include "json_check.h"

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define OUT MEMPROF_BINARY_DIR "/tests/torch/fixtures-cli"

/* Run cmd; its stdout+stderr into buf. Returns the exit status. */
static int sh(const char *cmd, char *buf, size_t size)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0;
	int st;

	assert_non_null(f);
	while (n + 1 < size && !feof(f))
		n += fread(buf + n, 1, size - 1 - n, f);
	buf[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int setup(void **state)
{
	(void)state;
	return system("python3 " MEMPROF_SOURCE_DIR "/tests/torch/gen_snapshots.py " OUT) == 0 ? 0 : -1;
}

static void test_report_oom(void **state)
{
	static char out[65536];

	(void)state;
	assert_int_equal(sh(MEMPROF " report --oom " OUT "/oom.pickle 2>&1", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "memory 0 'cuda:0'"));
	assert_non_null(strstr(out, "asked 8388608 B (8.00 MiB)"));
	assert_non_null(strstr(out, "device free 6291456 B (6.0 MiB)"));
	assert_non_null(strstr(out, "largest free chunk 5242880 B (5.00 MiB)"));
	assert_non_null(strstr(out, "cause: fragmentation"));
	assert_int_equal(sh(MEMPROF " report --peak --oom --timeline --json " OUT "/ring.pickle.gz", out, sizeof(out)), 0);
	json_decref(mp_test_json_loads(out, "report")); /* the published schema holds */
	assert_non_null(strstr(out, "\"lifetime_peak_bytes\": 13631488"));
	/* a snapshot under any name: detected by its first bytes */
	assert_int_equal(system("cp " OUT "/blocks.pickle " OUT "/blocks.bin"), 0);
	assert_int_equal(sh(MEMPROF " report " OUT "/blocks.bin 2>&1", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "12582912 B (12.00 MiB)"));
	assert_int_equal(sh(MEMPROF " report --by-function " OUT "/blocks.pickle 2>&1", out, sizeof(out)), 2);
	assert_non_null(strstr(out, "--breakdown"));
}

static void test_bad_files(void **state)
{
	static char out[4096];

	(void)state;
	assert_int_equal(sh(MEMPROF " report " OUT "/global.pickle 2>&1", out, sizeof(out)), 4);
	assert_non_null(strstr(out, "global.pickle: pickle offset 2: opcode GLOBAL"));
	assert_int_equal(sh(MEMPROF " report " OUT "/truncated.pickle 2>&1", out, sizeof(out)), 4);
	assert_non_null(strstr(out, "truncated"));
}

static void test_plot(void **state)
{
	static char out[4096];
	struct stat st;

	(void)state;
	unlink(OUT "/oom.svg");
	assert_int_equal(sh(MEMPROF " plot " OUT "/oom.pickle --chart all -o " OUT "/oom.svg 2>&1", out, sizeof(out)), 0);
	assert_int_equal(stat(OUT "/oom.svg", &st), 0);
	assert_true(st.st_size > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_oom),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_plot),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
