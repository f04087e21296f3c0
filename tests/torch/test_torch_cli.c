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
	/* --by-function: rows by the user's frame; the 6 MiB backward block
	 * is live at the peak and at the end, the 4 MiB forward one only at
	 * the peak (it is freed, and forward's 1000 B block too) */
	assert_int_equal(sh(MEMPROF " report --by-function --json " OUT "/blocks.pickle", out, sizeof(out)), 0);
	{
		json_t *doc = mp_test_json_loads(out, "report"), *row;
		json_t *rows = json_object_get(json_object_get(doc, "functions"), "rows");
		size_t i, found = 0;
		assert_non_null(rows);
		json_array_foreach(rows, i, row) {
			const char *fn = json_string_value(json_object_get(row, "function"));
			if (!strcmp(fn, "backward (/home/u/model.py:17)")) {
				assert_int_equal(json_integer_value(json_object_get(row, "peak_bytes")), 6291456);
				assert_int_equal(json_integer_value(json_object_get(row, "leak_bytes")), 6291456);
				found++;
			} else if (!strcmp(fn, "forward (/home/u/train.py:42)")) {
				assert_int_equal(json_integer_value(json_object_get(row, "allocations")), 2);
				assert_int_equal(json_integer_value(json_object_get(row, "requested_bytes")), 4194304 + 1000);
				assert_int_equal(json_integer_value(json_object_get(row, "peak_bytes")), 4194304);
				assert_int_equal(json_integer_value(json_object_get(row, "leak_bytes")), 0);
				found++;
			}
		}
		assert_int_equal(found, 2);
		json_decref(doc);
	}
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
