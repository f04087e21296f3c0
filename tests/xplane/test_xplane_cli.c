/* test_xplane_cli.c - `memprof report` and `memprof convert` on xplane
 * inputs, through the binary: --compat=xprof JSON against the reference's
 * memory_profile.json.gz, log directories and --run, captures without
 * memory events, damaged files, and the export round trip. */
#include "test_common.h"

#include "json_check.h"

#include <jansson.h>
#include <sys/wait.h>
#include <zlib.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define FIT "xplane/tf24-gpu-e4040-2022/logs/fit"
#define RUN1 FIT "/20221104-212610/train/plugins/profile/2022_11_04_21_26_12/instance-ecbm"

/* Run a shell command; stdout into *out (caller frees), stderr into err. */
static int run(const char *cmd, char **out, char *err, size_t errsize)
{
	char full[8192], *errpath = mp_test_tmpfile(".err");
	FILE *p, *e;
	size_t len = 0, cap = 1 << 16;
	int status;

	snprintf(full, sizeof(full), "%s 2>%s", cmd, errpath);
	p = popen(full, "r");
	assert_non_null(p);
	*out = malloc(cap);
	for (;;) {
		size_t n;

		if (len + 4096 > cap)
			*out = realloc(*out, cap *= 2);
		n = fread(*out + len, 1, cap - len - 1, p);
		if (n == 0)
			break;
		len += n;
	}
	(*out)[len] = '\0';
	status = pclose(p);
	err[0] = '\0';
	e = fopen(errpath, "r");
	if (e) {
		size_t n = fread(err, 1, errsize - 1, e);

		err[n] = '\0';
		fclose(e);
	}
	unlink(errpath);
	free(errpath);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static json_t *load_gz(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	static char buf[1 << 20];
	json_error_t jerr;
	int n;

	assert_non_null(gz);
	n = gzread(gz, buf, sizeof(buf) - 1);
	gzclose(gz);
	assert_true(n > 0);
	return json_loadb(buf, (size_t)n, 0, &jerr);
}

static uint64_t num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!v)
		return 0;
	return json_is_string(v) ? strtoull(json_string_value(v), NULL, 10) : (uint64_t)json_integer_value(v);
}

static const char *str(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return v && json_is_string(v) ? json_string_value(v) : "";
}

/* --compat=xprof --json: every figure and row of the reference's JSON,
 * under the report's names (version 2: docs/xplane.md maps them). */
static void compat_json_matches_reference(void **state)
{
	const char *p = mp_test_shared(RUN1 ".xplane.pb");
	char cmd[MP_TEST_CMD_MAX], err[4096], gz[4200], *out;
	json_t *mine, *ref, *per, *mems;
	size_t i, r;

	(void)state;
	if (!p)
		skip();
	snprintf(cmd, sizeof(cmd), MEMPROF " report --compat=xprof --json '%s'", p);
	snprintf(gz, sizeof(gz), "%s", mp_test_shared(RUN1 ".memory_profile.json.gz"));
	assert_int_equal(run(cmd, &out, err, sizeof(err)), 0);
	mine = mp_test_json_loads(out, "report");
	ref = load_gz(gz);
	assert_non_null(ref);
	per = json_object_get(ref, "memoryProfilePerAllocator");
	mems = json_object_get(mine, "devices");
	assert_int_equal(json_array_size(mems), 2);
	assert_true(json_equal(json_object_get(json_object_get(mine, "xprof"), "memory_ids"),
			       json_object_get(ref, "memoryIds")));
	for (i = 0; i < 2; i++) {
		json_t *m = json_array_get(mems, i), *a = json_object_get(per, str(m, "name"));
		json_t *pk = json_object_get(m, "peak");
		json_t *sum = json_object_get(a, "profileSummary"), *ps = json_object_get(sum, "peakStats");
		json_t *snaps = json_object_get(a, "memoryProfileSnapshots"), *act = json_object_get(a, "activeAllocations");
		json_t *rows = json_object_get(m, "breakdown");

		assert_non_null(a);
		assert_string_equal(str(m, "name"), json_string_value(json_array_get(json_object_get(ref, "memoryIds"), i)));
		assert_int_equal(num(pk, "bytes"), num(ps, "peakBytesInUse"));
		assert_int_equal(num(pk, "time_ps"), num(sum, "peakStatsTimePs"));
		assert_int_equal(num(m, "capacity_bytes"), num(sum, "memoryCapacity"));
		assert_int_equal(num(pk, "free_bytes"), num(ps, "freeMemoryBytes"));
		assert_int_equal(num(pk, "heap_bytes"), num(ps, "heapAllocatedBytes"));
		assert_int_equal(num(pk, "stack_bytes"), num(ps, "stackReservedBytes"));
		assert_int_equal(num(json_object_get(m, "xprof"), "peak_bytes_usage_lifetime"),
				 num(sum, "peakBytesUsageLifetime"));
		assert_true(json_real_value(json_object_get(pk, "fragmentation")) ==
			    json_number_value(json_object_get(ps, "fragmentation")));
		assert_int_equal(json_array_size(rows), json_array_size(act));
		for (r = 0; r < json_array_size(rows); r++) {
			json_t *row = json_array_get(rows, r), *ar = json_array_get(act, r), *md;
			long long si = strtoll(str(ar, "snapshotIndex"), NULL, 10);

			md = si >= 0 ? json_object_get(json_array_get(snaps, (size_t)si), "activityMetadata")
				     : json_array_get(json_object_get(a, "specialAllocations"), (size_t)(-si - 1));
			assert_string_equal(str(row, "op"), str(md, "tfOpName"));
			assert_int_equal(num(row, "allocated_bytes"), num(md, "allocationBytes"));
			assert_int_equal(num(row, "requested_bytes"), num(md, "requestedBytes"));
			assert_string_equal(str(row, "region"), str(md, "regionType"));
			assert_string_equal(str(row, "dtype"), str(md, "dataType"));
			assert_string_equal(str(row, "shape"), str(md, "tensorShape"));
			assert_int_equal(num(row, "occurrences"), num(ar, "numOccurrences"));
		}
	}
	json_decref(mine);
	json_decref(ref);
	free(out);
}

static uint64_t gpu0_peak(const char *json_text)
{
	json_t *doc = mp_test_json_loads(json_text, "report"), *mems;
	uint64_t v;

	mems = json_object_get(doc, "devices");
	assert_string_equal(str(json_array_get(mems, 0), "name"), "GPU_0_bfc");
	v = num(json_object_get(json_array_get(mems, 0), "peak"), "bytes");
	json_decref(doc);
	return v;
}

/* A log directory: the newest run by default, --run to choose; the peak
 * levels are the reference's (SUMMARY.txt of the shared data). */
static void log_directory_runs(void **state)
{
	const char *p = mp_test_shared(FIT);
	char cmd[MP_TEST_CMD_MAX], err[4096], *out;

	(void)state;
	if (!p)
		skip();
	snprintf(cmd, sizeof(cmd), MEMPROF " report --compat=xprof --json '%s'", p);
	assert_int_equal(run(cmd, &out, err, sizeof(err)), 0);
	assert_int_equal(gpu0_peak(out), 53543936); /* 2022_11_04_21_57_24 */
	assert_non_null(strstr(err, "2022_11_04_21_57_24"));
	assert_non_null(strstr(err, "--run"));
	free(out);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --compat=xprof --json --run 2022_11_04_21_36_56 '%s'", p);
	assert_int_equal(run(cmd, &out, err, sizeof(err)), 0);
	assert_int_equal(gpu0_peak(out), 56235008);
	free(out);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --run 1999_01_01 '%s'", p);
	assert_int_equal(run(cmd, &out, err, sizeof(err)), 2);
	assert_non_null(strstr(err, "2022_11_04_21_49_36")); /* runs are listed */
	assert_non_null(strstr(err, "instance-ecbm"));       /* with their hosts */
	free(out);
}

/* The CPU-only run has no memory events: a message and exit 0. */
static void no_memory_events(void **state)
{
	const char *p = mp_test_shared(FIT "/20221031-190907");
	char cmd[MP_TEST_CMD_MAX], err[4096], *out;

	(void)state;
	if (!p)
		skip();
	snprintf(cmd, sizeof(cmd), MEMPROF " report '%s'", p);
	assert_int_equal(run(cmd, &out, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "no memory events in this capture"));
	free(out);
}

/* A truncated file: exit 4 (format) and the offset where reading stopped. */
static void truncated_file(void **state)
{
	const char *p = mp_test_shared(RUN1 ".xplane.pb");
	char *cut, cmd[MP_TEST_CMD_MAX], err[4096], *out, buf[60000];
	FILE *in, *o;
	size_t n;

	(void)state;
	if (!p)
		skip();
	cut = mp_test_tmpfile(".xplane.pb"); /* after the skip: it is not freed there */
	in = fopen(p, "rb");
	n = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	o = fopen(cut, "wb");
	fwrite(buf, 1, n, o);
	fclose(o);
	snprintf(cmd, sizeof(cmd), MEMPROF " report '%s'", cut);
	assert_int_equal(run(cmd, &out, err, sizeof(err)), 4);
	assert_non_null(strstr(err, "offset"));
	assert_non_null(strstr(err, cut));
	free(out);
	unlink(cut);
	free(cut);
}

/* A zero-byte file: exit 4 (not a capture), one line saying it is empty,
 * no hint about memory events. */
static void empty_file(void **state)
{
	char *empty = mp_test_tmpfile(".xplane.pb"), cmd[MP_TEST_CMD_MAX], err[4096], *out, *nl;

	(void)state;
	fclose(fopen(empty, "w"));
	snprintf(cmd, sizeof(cmd), MEMPROF " report '%s'", empty);
	assert_int_equal(run(cmd, &out, err, sizeof(err)), 4);
	assert_non_null(strstr(err, "the file is empty (0 bytes): not a capture"));
	assert_non_null(strstr(err, empty));
	assert_null(strstr(err, "host_trace_level"));
	nl = strchr(err, '\n');
	assert_true(nl && nl[1] == '\0'); /* one line */
	free(out);
	snprintf(cmd, sizeof(cmd), MEMPROF " plot '%s' -o %s.png", empty, empty);
	assert_int_equal(run(cmd, &out, err, sizeof(err)), 4);
	assert_non_null(strstr(err, "the file is empty"));
	free(out);
	unlink(empty);
	free(empty);
}

/* convert -> report: the same JSON report as the original (but the name). */
static void convert_round_trip(void **state)
{
	const char *p = mp_test_shared(RUN1 ".xplane.pb");
	char *x, cmd[MP_TEST_CMD_MAX], err[4096], *a, *b;
	json_t *ja, *jb;

	(void)state;
	if (!p)
		skip();
	x = mp_test_tmpfile(".xplane.pb"); /* after the skip: it is not freed there */
	snprintf(cmd, sizeof(cmd), MEMPROF " convert '%s' -o '%s'", p, x);
	assert_int_equal(run(cmd, &a, err, sizeof(err)), 0);
	free(a);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --json '%s'", p);
	assert_int_equal(run(cmd, &a, err, sizeof(err)), 0);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --json '%s'", x);
	assert_int_equal(run(cmd, &b, err, sizeof(err)), 0);
	ja = mp_test_json_loads(a, "report");
	jb = mp_test_json_loads(b, "report");
	json_object_del(ja, "file");
	json_object_del(jb, "file");
	assert_true(json_equal(ja, jb));
	json_decref(jb);
	free(b);
	/* --logdir: the TensorBoard layout, read back as a log directory */
	{
		char dir[] = "/tmp/memprof-test-lgXXXXXX";

		assert_non_null(mkdtemp(dir));
		snprintf(cmd, sizeof(cmd), MEMPROF " convert --host h1 '%s' --logdir '%s'", p, dir);
		assert_int_equal(run(cmd, &b, err, sizeof(err)), 0);
		free(b);
		assert_non_null(strstr(err, "/plugins/profile/"));
		assert_non_null(strstr(err, "/h1.xplane.pb"));
		snprintf(cmd, sizeof(cmd), MEMPROF " report --json '%s'", dir);
		assert_int_equal(run(cmd, &b, err, sizeof(err)), 0);
		jb = mp_test_json_loads(b, "report");
		json_object_del(jb, "file");
		assert_true(json_equal(ja, jb));
		json_decref(jb);
		free(b);
		snprintf(cmd, sizeof(cmd), "rm -r '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	json_decref(ja);
	free(a);
	unlink(x);
	free(x);
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[65536];
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
}

/* Two hosts in one run (and the same two files named explicitly): memory
 * ids prefixed with the host, figures per host unchanged. */
static void several_hosts(void **state)
{
	const char *p = mp_test_shared(RUN1 ".xplane.pb");
	char dir[] = "/tmp/memprof-test-runXXXXXX", sub[256], a[300], b[300], cmd[1200], err[4096], *out;
	static const char *const want[] = {"hostA/GPU_0_bfc", "hostA/gpu_host_bfc", "hostB/GPU_0_bfc",
					   "hostB/gpu_host_bfc"};
	json_t *doc, *ids;
	int round;
	size_t i;

	(void)state;
	if (!p)
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/plugins", dir);
	mkdir(sub, 0755);
	snprintf(sub, sizeof(sub), "%s/plugins/profile", dir);
	mkdir(sub, 0755);
	snprintf(sub, sizeof(sub), "%s/plugins/profile/2024_01_01_00_00_00", dir);
	mkdir(sub, 0755);
	snprintf(a, sizeof(a), "%s/hostA.xplane.pb", sub);
	snprintf(b, sizeof(b), "%s/hostB.xplane.pb", sub);
	copy_file(p, a);
	copy_file(p, b);
	for (round = 0; round < 2; round++) {
		if (round == 0)
			snprintf(cmd, sizeof(cmd), MEMPROF " report --compat=xprof --json '%s'", dir);
		else
			snprintf(cmd, sizeof(cmd), MEMPROF " report --compat=xprof --json '%s' '%s'", a, b);
		assert_int_equal(run(cmd, &out, err, sizeof(err)), 0);
		doc = mp_test_json_loads(out, "report");
		ids = json_object_get(json_object_get(doc, "xprof"), "memory_ids");
		assert_int_equal(json_array_size(ids), 4);
		for (i = 0; i < 4; i++) {
			json_t *m = json_array_get(json_object_get(doc, "devices"), i), *pk = json_object_get(m, "peak");

			assert_string_equal(json_string_value(json_array_get(ids, i)), want[i]);
			assert_string_equal(str(m, "name"), want[i]);
			assert_int_equal(num(pk, "bytes"), i % 2 == 0 ? 53543168 : 3072);
			assert_int_equal(num(pk, "time_ps"), i % 2 == 0 ? 303747097000ULL : 302109894000ULL);
		}
		json_decref(doc);
		free(out);
	}
	/* the default report reads them together too */
	snprintf(cmd, sizeof(cmd), MEMPROF " report --device hostB/GPU_0_bfc '%s'", dir);
	assert_int_equal(run(cmd, &out, err, sizeof(err)), 0);
	assert_non_null(strstr(out, "53543168"));
	free(out);
	unlink(a);
	unlink(b);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/plugins/profile", dir);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/plugins", dir);
	rmdir(sub);
	rmdir(dir);
}

/* CSV output and current xprof's row name. */
static void csv_and_v1_names(void **state)
{
	const char *p = mp_test_shared(RUN1 ".xplane.pb");
	char cmd[MP_TEST_CMD_MAX], err[4096], *out;

	(void)state;
	if (!p)
		skip();
	snprintf(cmd, sizeof(cmd), MEMPROF " report --compat=xprof-v1 --csv --device GPU_0_bfc '%s'", p);
	assert_int_equal(run(cmd, &out, err, sizeof(err)), 0);
	assert_non_null(strstr(out, "section,file,memory,peak_bytes,"));
	assert_non_null(strstr(out, ",GPU_0_bfc,53543168,303747097000,0,53543168,14595110784,14648653952,"));
	assert_non_null(strstr(out, ",GPU_0_bfc,unused preallocated device memory,1913088,1913088,1,"
				    "persist/dynamic,INVALID,unknown\n"));
	assert_null(strstr(out, "gpu_host_bfc"));
	free(out);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --compat=xprof --device nope '%s'", p);
	assert_int_equal(run(cmd, &out, err, sizeof(err)), 2);
	free(out);
}

/* `memprof record` of the demo program, exported and re-read: the same
 * report. Skipped while the record command is not built. */
static void record_round_trip(void **state)
{
	char *cap = mp_test_tmpfile(".memprof"), *x = mp_test_tmpfile(".xplane.pb");
	char cmd[MP_TEST_CMD_MAX], err[4096], *a, *b;
	json_t *ja, *jb;

	(void)state;
	if (run(MEMPROF " record --help", &a, err, sizeof(err)) != 0) {
		free(a);
		fprintf(stderr, "skip: 'memprof record' is not available in this build\n");
		free(cap);
		free(x);
		skip();
	}
	free(a);
	snprintf(cmd, sizeof(cmd), MEMPROF " record -o '%s' -- " MEMPROF_BINARY_DIR "/src/demo/memprof_demo_victim", cap);
	assert_int_equal(run(cmd, &a, err, sizeof(err)), 0);
	free(a);
	snprintf(cmd, sizeof(cmd), MEMPROF " convert '%s' -o '%s'", cap, x);
	assert_int_equal(run(cmd, &a, err, sizeof(err)), 0);
	free(a);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --json '%s'", cap);
	assert_int_equal(run(cmd, &a, err, sizeof(err)), 0);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --json '%s'", x);
	assert_int_equal(run(cmd, &b, err, sizeof(err)), 0);
	ja = mp_test_json_loads(a, "report");
	jb = mp_test_json_loads(b, "report");
	{
		json_t *da = json_object_get(ja, "devices"), *db = json_object_get(jb, "devices");
		size_t i, j;

		/* per memory name: the same peak and breakdown */
		for (i = 0; i < json_array_size(da); i++) {
			json_t *x1 = json_array_get(da, i), *y1 = NULL;

			for (j = 0; j < json_array_size(db); j++)
				if (!strcmp(str(json_array_get(db, j), "name"), str(x1, "name")))
					y1 = json_array_get(db, j);
			static const char *const same[] = {"capacity_bytes", "lifetime_peak_bytes", "allocations",
							   "deallocations", "breakdown"};
			static const char *const same_peak[] = {"bytes", "time_ns", "step", "stack_bytes",
								"heap_bytes", "free_bytes", "fragmentation"};
			size_t k;

			if (num(x1, "allocations") == 0)
				continue;
			assert_non_null(y1);
			for (k = 0; k < sizeof(same) / sizeof(same[0]); k++)
				if (!json_equal(json_object_get(x1, same[k]), json_object_get(y1, same[k])))
					fail_msg("%s: %s differs", str(x1, "name"), same[k]);
			/* not the event index (regions and failed allocations are
			 * not exported) nor the region details of fragmentation */
			for (k = 0; k < sizeof(same_peak) / sizeof(same_peak[0]); k++)
				if (!json_equal(json_object_get(json_object_get(x1, "peak"), same_peak[k]),
						json_object_get(json_object_get(y1, "peak"), same_peak[k])))
					fail_msg("%s: peak %s differs", str(x1, "name"), same_peak[k]);
		}
	}
	json_decref(ja);
	json_decref(jb);
	free(a);
	free(b);
	unlink(cap);
	unlink(x);
	free(cap);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(compat_json_matches_reference),
		cmocka_unit_test(log_directory_runs),
		cmocka_unit_test(no_memory_events),
		cmocka_unit_test(truncated_file),
		cmocka_unit_test(empty_file),
		cmocka_unit_test(convert_round_trip),
		cmocka_unit_test(several_hosts),
		cmocka_unit_test(csv_and_v1_names),
		cmocka_unit_test(record_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
