/* test_report_ranks.c - `memprof report` on runs made by hand (captures
 * written with the capture writer, each in a forked child so that each has
 * its own pid):
 * - several runs, one per rank: the table of ranks has each rank's peak
 *   (worked out by hand), the highest is marked and is the only one
 *   reported in detail, with its step and main op;
 * - --process all on one run writes, one process at a time, exactly the
 *   report of each process's capture given alone, in the run's order. */
#include "test_common.h"

#include "json_check.h"
#include "json_schema.h"
#include <memprof/capture.h>

#include <jansson.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define MIB 1048576u
#define BASE 0x10000000ull

static char dir[256];

/* A capture in run directory d of a process (forked) whose host heap
 * peaks at 'peak' bytes: blocks of 'peak/4' at step 0 and 1, then 'peak/2'
 * by op "matmul" at step 2, all freed after. The process is named name. */
static void write_proc(const char *d, const char *name, uint64_t peak)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		mp_writer_options_t o = {.command_line = name};
		mp_writer_t *w;
		mp_diag_t diag;
		char path[512];
		int host, mm, ok;

		snprintf(path, sizeof(path), "%s/%d.memprof", d, (int)getpid());
		if (mp_writer_open(&w, path, 0, &o, &diag))
			_exit(1);
		host = mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
		mm = mp_writer_intern(w, "matmul");
		ok = mp_writer_step(w, 0) == 0 && mp_writer_alloc(w, (uint32_t)host, BASE, peak / 4, peak / 4) == 0 &&
		     mp_writer_step(w, 1) == 0 &&
		     mp_writer_alloc(w, (uint32_t)host, BASE + peak, peak / 4, peak / 4) == 0 &&
		     mp_writer_step(w, 2) == 0;
		mp_writer_set_context(w, mm, MP_REGION_TEMP, 0, 0);
		ok = ok && mp_writer_alloc(w, (uint32_t)host, BASE + 4 * peak, peak / 2, peak / 2) == 0;
		mp_writer_set_context(w, 0, MP_REGION_UNKNOWN, 0, 0);
		ok = ok && mp_writer_free(w, (uint32_t)host, BASE + 4 * peak) == 0 &&
		     mp_writer_free(w, (uint32_t)host, BASE) == 0 && mp_writer_free(w, (uint32_t)host, BASE + peak) == 0;
		_exit(ok && mp_writer_close(w) == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* An empty run directory d (its marker). */
static void make_run(const char *d)
{
	FILE *f;
	char marker[400];

	assert_int_equal(mkdir(d, 0755), 0);
	snprintf(marker, sizeof(marker), "%s/memprof.run", d);
	assert_non_null(f = fopen(marker, "w"));
	fprintf(f, "memprof-run 1\ncommand=train.py\npid=1\nstarted=1\n");
	fclose(f);
}

static int setup(void **state)
{
	char d[300];
	/* rank peaks: 4 MiB, 12 MiB, 8 MiB */
	static const uint64_t peaks[3] = {4 * MIB, 12 * MIB, 8 * MIB};

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/memprof-ranks-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	for (int r = 0; r < 3; r++) {
		snprintf(d, sizeof(d), "%s/rank%d", dir, r);
		make_run(d);
		write_proc(d, "python train.py", peaks[r]);
	}
	/* one run of three workers (2, 3 and 5 MiB) for --process all */
	snprintf(d, sizeof(d), "%s/all", dir);
	make_run(d);
	write_proc(d, "worker a", 2 * MIB);
	write_proc(d, "worker b", 3 * MIB);
	write_proc(d, "worker c", 5 * MIB);
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *run_ok(const char *args)
{
	char cmd[MP_TEST_CMD_MAX], *out, *err;

	snprintf(cmd, sizeof(cmd), "%s %s", MEMPROF, args);
	assert_int_equal(mp_test_capture(cmd, &out, &err), 0);
	free(err);
	return out;
}

static void test_ranks_json(void **state)
{
	char args[1024], *out;
	json_t *doc, *rows;
	json_error_t je;
	static const json_int_t peaks[3] = {4 * MIB, 12 * MIB, 8 * MIB};

	(void)state;
	snprintf(args, sizeof(args), "report --json %s/rank0 %s/rank1 %s/rank2", dir, dir, dir);
	out = run_ok(args);
	assert_non_null(doc = json_loads(out, 0, &je));
	/* the document is the highest rank's report, with "ranks" */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "ranks"), "highest")), 1);
	assert_non_null(strstr(json_string_value(json_object_get(doc, "file")), "/rank1/"));
	rows = json_object_get(json_object_get(doc, "ranks"), "rows");
	assert_int_equal(json_array_size(rows), 3);
	for (size_t r = 0; r < 3; r++) {
		json_t *row = json_array_get(rows, r);
		assert_int_equal(json_integer_value(json_object_get(row, "rank")), (json_int_t)r);
		assert_int_equal(json_integer_value(json_object_get(row, "peak_bytes")), peaks[r]);
		assert_string_equal(json_string_value(json_object_get(row, "memory")), "host");
		assert_string_equal(json_string_value(json_object_get(row, "program")), "python");
		/* step and op only for the rank analysed */
		if (r == 1) {
			assert_int_equal(json_integer_value(json_object_get(row, "step")), 2);
			assert_string_equal(json_string_value(json_object_get(row, "op")), "matmul");
		} else {
			assert_true(json_is_null(json_object_get(row, "step")));
			assert_true(json_is_null(json_object_get(row, "op")));
		}
	}
	{ /* the document the schema describes */
		char err[512];
		json_t *schema = json_load_file(MEMPROF_SOURCE_DIR "/docs/schema/report.schema.json", 0, &je);
		assert_non_null(schema);
		if (mp_schema_validate(schema, NULL, doc, err, sizeof(err))) {
			fprintf(stderr, "schema: %s\n", err);
			fail();
		}
		json_decref(schema);
	}
	/* the one run shown in detail */
	assert_int_equal(json_array_size(json_object_get(doc, "runs")), 1);
	json_decref(doc);
	free(out);
}

static void test_ranks_text(void **state)
{
	char args[1024], *out, line[300];

	(void)state;
	snprintf(args, sizeof(args), "report %s/rank0 %s/rank1 %s/rank2", dir, dir, dir);
	out = run_ok(args);
	assert_non_null(strstr(out, "Ranks: 3 runs"));
	/* the highest marked, step 2 and matmul; the others '-' */
	assert_non_null(strstr(out, "12582912 B (12.00 MiB)"));
	snprintf(line, sizeof(line), "%s/rank1\n", dir);
	assert_non_null(strstr(out, line));
	assert_non_null(strstr(out, "* 1 "));
	assert_non_null(strstr(out, "      2  matmul "));
	assert_non_null(strstr(out, "skew: the highest peak is rank 1's, 12582912 B (12.00 MiB), the lowest rank 0's, "
				    "4194304 B (4.00 MiB): 3.00x"));
	/* then one report: rank 1's */
	assert_non_null(strstr(out, "/rank1/"));
	assert_null(strstr(strstr(out, "skew:"), "/rank0/"));
	assert_int_equal(mp_test_lines(strstr(out, "peak in use")) > 0, 1);
	free(out);
}

/* --process all: the run's tree, then each process's report exactly as
 * the report of its capture alone, in the run's order (main first). */
static void test_process_all(void **state)
{
	char args[1024], *all, *json, *rest;
	json_t *doc, *files;
	json_error_t je;

	(void)state;
	snprintf(args, sizeof(args), "report --process all %s/all", dir);
	all = run_ok(args);
	snprintf(args, sizeof(args), "report --json --process all %s/all", dir);
	json = run_ok(args);
	assert_non_null(doc = json_loads(json, 0, &je));
	files = json_object_get(doc, "files");
	assert_int_equal(json_array_size(files), 3);
	assert_int_equal(json_array_size(json_object_get(doc, "runs")), 1);
	assert_true(!strncmp(all, "Run ", 4));
	rest = strstr(all, "\n\n") + 2; /* after the tree */
	for (size_t i = 0; i < 3; i++) {
		const char *path = json_string_value(json_object_get(json_array_get(files, i), "file"));
		char *one, *one_json;
		json_t *j;
		size_t n;

		snprintf(args, sizeof(args), "report '%s'", path);
		one = run_ok(args);
		n = strlen(one);
		assert_true(!strncmp(rest, one, n)); /* the same bytes */
		rest += n + (i < 2);                 /* a blank line between */
		snprintf(args, sizeof(args), "report --json '%s'", path);
		one_json = run_ok(args);
		assert_non_null(j = json_loads(one_json, 0, &je));
		assert_true(json_equal(j, json_array_get(files, i)));
		json_decref(j);
		free(one);
		free(one_json);
	}
	assert_string_equal(rest, "");
	{ /* CSV: the peak table holds the three processes, in the same order */
		char *csv, *line;
		snprintf(args, sizeof(args), "report --csv --process all %s/all", dir);
		csv = run_ok(args);
		assert_true(!strncmp(csv, "section,file,device,", 20));
		line = strchr(csv, '\n') + 1;
		for (size_t i = 0; i < 3; i++) {
			char want[600];
			snprintf(want, sizeof(want), "summary,%s,",
				 json_string_value(json_object_get(json_array_get(files, i), "file")));
			assert_true(!strncmp(line, want, strlen(want)));
			line = strchr(line, '\n') + 1;
		}
		assert_true(*line == '\n' || *line == '\0'); /* the table ends there */
		free(csv);
	}
	/* main first: the largest peak, 5 MiB */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_array_get(json_object_get(
					json_array_get(files, 0), "devices"), 0), "peak"), "bytes")),
			 5 * MIB);
	json_decref(doc);
	free(all);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranks_json),
		cmocka_unit_test(test_ranks_text),
		cmocka_unit_test(test_process_all),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
