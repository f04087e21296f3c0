/* test_diff.c - `memprof diff` end to end: two captures written with the
 * capture writer that differ by one tensor (every figure worked out by
 * hand), two generated PyTorch snapshots one with an extra block (the
 * generator's own model gives the peaks), the shared real snapshots and
 * TF 2.4 runs (their independent figures), identity, the gates' exit
 * codes and the one-line errors. Every JSON document is validated against
 * docs/schema/diff.schema.json first. */
#include "test_common.h"

#include "json_check.h"
#include "torch_test.h"
#include <memprof/capture.h>

#include <jansson.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define MIB 1048576ull
#define BASE 0x10000000ull

static char *cap_a, *cap_b, *cap_c, *snapdir;
static json_t *snap_expected;

/* gpu: region 1 MiB; step 0: matmul temp float [32,32] 4096 B at BASE and
 * BASE+8K; step 1: conv output float [] 4096 B at BASE+1M-4K (A's peak:
 * 12288 B); with extra: attn output float [64] 8192 B at BASE+16K (B's
 * peak: 20480 B) and a failed 2 MiB request; then BASE is freed.
 * host: one 100-byte block never freed. name, host_name: the memories'
 * names. */
static char *write_capture(int extra, const char *name, const char *host_name)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_t *w;
	mp_diag_t d;
	int gpu, host;

	mp_diag_clear(&d);
	assert_int_equal(mp_writer_open(&w, path, 0, NULL, &d), 0);
	gpu = mp_writer_memory(w, name, MP_MEMORY_DEVICE, 0);
	host = mp_writer_memory(w, host_name, MP_MEMORY_HOST, 0);
	assert_true(gpu >= 0 && host >= 0);
	uint32_t mm = mp_writer_intern(w, "matmul"), cv = mp_writer_intern(w, "conv"), at = mp_writer_intern(w, "attn"),
		 fl = mp_writer_intern(w, "float"), sh = mp_writer_intern(w, "[32,32]"), s64 = mp_writer_intern(w, "[64]");
	assert_int_equal(mp_writer_step(w, 0), 0);
	assert_int_equal(mp_writer_region_add(w, (uint32_t)gpu, BASE, MIB), 0);
	mp_writer_set_context(w, mm, MP_REGION_TEMP, fl, sh);
	assert_int_equal(mp_writer_alloc(w, (uint32_t)gpu, BASE, 4096, 4096), 0);
	assert_int_equal(mp_writer_alloc(w, (uint32_t)gpu, BASE + 8192, 4096, 4096), 0);
	assert_int_equal(mp_writer_step(w, 1), 0);
	mp_writer_set_context(w, cv, MP_REGION_OUTPUT, fl, 0);
	assert_int_equal(mp_writer_alloc(w, (uint32_t)gpu, BASE + MIB - 4096, 4096, 4096), 0);
	if (extra) {
		mp_writer_set_context(w, at, MP_REGION_OUTPUT, fl, s64);
		assert_int_equal(mp_writer_alloc(w, (uint32_t)gpu, BASE + 16384, 8192, 8192), 0);
		assert_int_equal(mp_writer_alloc_failed(w, (uint32_t)gpu, 2 * MIB), 0);
	}
	assert_int_equal(mp_writer_free(w, (uint32_t)gpu, BASE), 0);
	mp_writer_set_context(w, 0, MP_REGION_UNKNOWN, 0, 0);
	assert_int_equal(mp_writer_alloc(w, (uint32_t)host, 0x5000, 100, 100), 0);
	assert_int_equal(mp_writer_close(w), 0);
	return path;
}

static int setup(void **state)
{
	(void)state;
	cap_a = write_capture(0, "gpu", "host");
	cap_b = write_capture(1, "gpu", "host");
	cap_c = write_capture(1, "cuda", "cpu");
	snapdir = mp_test_tmpfile(".snaps");
	snap_expected = mp_test_gen_snapshots(snapdir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[4096];

	(void)state;
	unlink(cap_a);
	unlink(cap_b);
	unlink(cap_c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", snapdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", snapdir);
	free(cap_a);
	free(cap_b);
	free(cap_c);
	free(snapdir);
	json_decref(snap_expected);
	return 0;
}

/* Run `memprof diff ARGS`; returns the exit code, stdout in *out, stderr
 * in *err (both owned by the caller). */
static int run(const char *args, char **out, char **err)
{
	char cmd[MP_TEST_CMD_MAX];

	snprintf(cmd, sizeof(cmd), "%s diff %s", MEMPROF, args);
	return mp_test_capture(cmd, out, err);
}

/* The memory named name in a diff document. */
static json_t *memory(json_t *doc, const char *name)
{
	json_t *mems = json_object_get(doc, "memories"), *m;
	size_t i;

	json_array_foreach(mems, i, m)
		if (!strcmp(mp_test_json_str(json_object_get(m, "a"), "name"), name))
			return m;
	fail_msg("no memory '%s' in the diff", name);
	return NULL;
}

static json_t *diff_json(const char *opts, const char *a, const char *b, int want_rc)
{
	char args[MP_TEST_CMD_MAX], *out, *err;
	json_t *doc;
	int w = snprintf(args, sizeof(args), "--json %s '%s' '%s'", opts, a, b);

	assert_true(w > 0 && (size_t)w < sizeof(args));
	assert_int_equal(run(args, &out, &err), want_rc);
	doc = mp_test_json_loads(out, "diff");
	free(out);
	free(err);
	return doc;
}

/* A and B differ by one tensor: every row and figure. */
static void test_captures(void **state)
{
	json_t *doc = diff_json("", cap_a, cap_b, 0), *m, *a, *b, *rows, *r;

	(void)state;
	assert_string_equal(mp_test_json_str(doc, "format"), "memprof-diff");
	assert_int_equal(mp_test_json_int(doc, "version"), 1);
	assert_string_equal(mp_test_json_str(doc, "kind"), "capture");
	assert_string_equal(mp_test_json_str(doc, "rows_by"), "breakdown");
	assert_int_equal(json_array_size(json_object_get(doc, "memories")), 2);
	assert_int_equal(json_array_size(json_object_get(doc, "only_in_a")), 0);
	m = memory(doc, "gpu");
	a = json_object_get(m, "a");
	b = json_object_get(m, "b");
	assert_int_equal(mp_test_json_int(a, "peak_bytes"), 12288);
	assert_int_equal(mp_test_json_int(b, "peak_bytes"), 20480);
	assert_int_equal(mp_test_json_int(m, "change_bytes"), 8192);
	assert_string_equal(mp_test_json_str(m, "change"), "+8.00 KiB");
	assert_true(fabs(json_real_value(json_object_get(m, "change_percent")) - 100.0 * 8192 / 12288) < 1e-9);
	assert_int_equal(mp_test_json_int(a, "step"), 1);
	assert_int_equal(mp_test_json_int(b, "step"), 1);
	assert_int_equal(mp_test_json_int(a, "reserved_bytes"), MIB);
	assert_int_equal(mp_test_json_int(b, "reserved_bytes"), MIB);
	/* free inside the region: A 4096 + 1032192, B 4096 + 4096 + 1019904 */
	assert_true(fabs(json_real_value(json_object_get(a, "fragmentation")) - 4096.0 / 1036288.0) < 1e-12);
	assert_true(fabs(json_real_value(json_object_get(b, "fragmentation")) - 8192.0 / 1028096.0) < 1e-12);
	assert_int_equal(mp_test_json_int(a, "failed_allocations"), 0);
	assert_int_equal(mp_test_json_int(b, "failed_allocations"), 1);
	assert_int_equal(mp_test_json_int(m, "new"), 1);
	assert_int_equal(mp_test_json_int(m, "grown") + mp_test_json_int(m, "shrunk") + mp_test_json_int(m, "gone"), 0);
	assert_int_equal(mp_test_json_int(m, "unchanged_rows"), 2);
	assert_int_equal(mp_test_json_int(m, "unchanged_bytes"), 12288);
	rows = json_object_get(m, "rows");
	assert_int_equal(json_array_size(rows), 1);
	r = json_array_get(rows, 0);
	assert_string_equal(mp_test_json_str(r, "kind"), "new");
	assert_string_equal(mp_test_json_str(r, "op"), "attn");
	assert_string_equal(mp_test_json_str(r, "region"), "output");
	assert_string_equal(mp_test_json_str(r, "dtype"), "float");
	assert_string_equal(mp_test_json_str(r, "shape"), "[64]");
	assert_int_equal(mp_test_json_int(r, "a_bytes"), 0);
	assert_int_equal(mp_test_json_int(r, "b_bytes"), 8192);
	assert_int_equal(mp_test_json_int(r, "change_bytes"), 8192);
	assert_int_equal(mp_test_json_int(r, "a_count"), 0);
	assert_int_equal(mp_test_json_int(r, "b_count"), 1);
	m = memory(doc, "host");
	assert_int_equal(mp_test_json_int(json_object_get(m, "a"), "peak_bytes"), 100);
	assert_int_equal(mp_test_json_int(m, "change_bytes"), 0);
	assert_int_equal(json_array_size(json_object_get(m, "rows")), 0);
	json_decref(doc);

	/* B against A: the same row, gone; the change negative */
	doc = diff_json("", cap_b, cap_a, 0);
	m = memory(doc, "gpu");
	assert_int_equal(mp_test_json_int(m, "change_bytes"), -8192);
	r = json_array_get(json_object_get(m, "rows"), 0);
	assert_string_equal(mp_test_json_str(r, "kind"), "gone");
	assert_int_equal(mp_test_json_int(r, "change_bytes"), -8192);
	assert_int_equal(mp_test_json_int(r, "a_count"), 1);
	json_decref(doc);
}

/* The text: the figures side by side and the row, readable at a glance. */
static void test_text(void **state)
{
	char args[MP_TEST_CMD_MAX], *out, *err;

	(void)state;
	snprintf(args, sizeof(args), "'%s' '%s'", cap_a, cap_b);
	assert_int_equal(run(args, &out, &err), 0);
	assert_non_null(strstr(out, "memprof diff (capture)"));
	assert_non_null(strstr(out, "12288 B (12.00 KiB)"));
	assert_non_null(strstr(out, "20480 B (20.00 KiB)"));
	assert_non_null(strstr(out, "+8192 B (+8.00 KiB, +66.67%)"));
	assert_non_null(strstr(out, "1 new, 0 gone; 2 unchanged (12.00 KiB)"));
	assert_non_null(strstr(out, "0 -> 1"));
	assert_non_null(strstr(out, "attn  output  float  [64]"));
	assert_string_equal(err, "");
	free(out);
	free(err);
}

/* diff A A: nothing changed, and no gate fails. */
static void test_identity(void **state)
{
	static const char *const gates[] = {"--fail-above 0%", "--fail-above 0", "--fail-above total:0B",
					    "--fail-above gpu:0% --fail-above host:0KiB"};
	const char *inputs[] = {cap_a, cap_b};

	(void)state;
	for (size_t k = 0; k < 2; k++)
		for (size_t g = 0; g < 4; g++) {
			json_t *doc = diff_json(gates[g], inputs[k], inputs[k], 0), *m;
			size_t i;
			json_array_foreach(json_object_get(doc, "memories"), i, m) {
				assert_int_equal(mp_test_json_int(m, "change_bytes"), 0);
				assert_int_equal(json_array_size(json_object_get(m, "rows")), 0);
			}
			json_array_foreach(json_object_get(doc, "gates"), i, m)
				assert_true(json_is_false(json_object_get(m, "failed")));
			json_decref(doc);
		}
}

/* --fail-above: exit 1 and one line per memory id above its limit. */
static void test_gates(void **state)
{
	static const struct {
		const char *gate;
		int rc;
		const char *says;
	} cases[] = {
		{"66%", 1, "memprof: diff: regression: gpu: peak +8192 B (+8.00 KiB, +66.67%) from 12288 B to 20480 B, "
			   "above --fail-above 66%\n"},
		{"67%", 0, NULL},
		{"8192", 0, NULL},
		{"8191", 1, "gpu: peak +8192 B"},
		{"8KiB", 0, NULL},
		{"0.0078MiB", 1, "above --fail-above 0.0078MiB"},
		{"gpu:5%", 1, "gpu: peak +8192 B"},
		{"host:5%", 0, NULL},
		{"total:8191B", 1, "total: peak +8192 B (+8.00 KiB, +66.13%) from 12388 B to 20580 B"},
		{"total:67%", 0, NULL},
	};
	char args[MP_TEST_CMD_MAX], *out, *err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(args, sizeof(args), "--fail-above %s '%s' '%s'", cases[i].gate, cap_a, cap_b);
		assert_int_equal(run(args, &out, &err), cases[i].rc);
		if (cases[i].says) {
			if (!strstr(err, cases[i].says))
				fail_msg("--fail-above %s: '%s' does not say '%s'", cases[i].gate, err, cases[i].says);
			assert_int_equal(mp_test_lines(err), 1);
		} else {
			assert_string_equal(err, "");
		}
		free(out);
		free(err);
	}
}

/* Usage errors (2), unreadable input (3), not a capture (4): one line. */
static void test_errors(void **state)
{
	char args[MP_TEST_CMD_MAX], snap[4096], *out, *err;

	(void)state;
	snprintf(snap, sizeof(snap), "%s/blocks.pickle", snapdir);
	snprintf(args, sizeof(args), "'%s' '%s'", cap_a, snap);
	assert_int_equal(run(args, &out, &err), 2);
	assert_int_equal(mp_test_lines(err), 1);
	assert_non_null(strstr(err, "is a memprof capture and"));
	assert_non_null(strstr(err, "a PyTorch snapshot: diff compares two inputs of the same kind"));
	free(out);
	free(err);
	/* no common memory id: both lists said; --map pairs them */
	snprintf(args, sizeof(args), "'%s' '%s'", cap_a, cap_c);
	assert_int_equal(run(args, &out, &err), 2);
	assert_int_equal(mp_test_lines(err), 1);
	assert_non_null(strstr(err, "no memory id in common"));
	assert_non_null(strstr(err, "has 'gpu', 'host';"));
	assert_non_null(strstr(err, "has 'cuda', 'cpu' (pair them with --map A_NAME=B_NAME)"));
	free(out);
	free(err);
	snprintf(args, sizeof(args), "--map gpu=cuda '%s' '%s'", cap_a, cap_c);
	assert_int_equal(run(args, &out, &err), 0);
	assert_non_null(strstr(out, "gpu = cuda"));
	assert_non_null(strstr(out, "only in A: host"));
	assert_non_null(strstr(out, "only in B: cpu"));
	free(out);
	free(err);
	{
		json_t *doc = diff_json("--map gpu=cuda", cap_a, cap_c, 0), *m = memory(doc, "gpu");
		assert_string_equal(mp_test_json_str(json_object_get(m, "b"), "name"), "cuda");
		assert_int_equal(mp_test_json_int(m, "change_bytes"), 8192);
		json_decref(doc);
	}
	static const struct {
		const char *args;
		int rc;
		const char *says;
	} bad[] = {
		{"--fail-above 5x", 2, "invalid --fail-above '5x'"},
		{"--fail-above -5%", 2, "invalid --fail-above '-5%'"},
		{"--fail-above nosuch:5%", 2, "--fail-above 'nosuch:5%': no memory id 'nosuch' in both inputs"},
		{"--map gpu", 2, "invalid --map 'gpu'"},
		{"--map nosuch=gpu", 2, "has no memory id named 'nosuch'"},
		{"--top 0", 2, "invalid --top"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "%s '%s' '%s'", bad[i].args, cap_a, cap_b);
		assert_int_equal(run(args, &out, &err), bad[i].rc);
		if (!strstr(err, bad[i].says))
			fail_msg("%s: '%s' does not say '%s'", bad[i].args, err, bad[i].says);
		assert_int_equal(mp_test_lines(err), 1);
		free(out);
		free(err);
	}
	snprintf(args, sizeof(args), "'%s'", cap_a);
	assert_int_equal(run(args, &out, &err), 2);
	free(out);
	free(err);
	snprintf(args, sizeof(args), "'%s' /nonexistent/b.memprof", cap_a);
	assert_int_equal(run(args, &out, &err), 3);
	assert_int_equal(mp_test_lines(err), 1);
	free(out);
	free(err);
	snprintf(args, sizeof(args), "'%s' '%s/expected.json'", cap_a, snapdir);
	assert_int_equal(run(args, &out, &err), 4);
	assert_int_equal(mp_test_lines(err), 1);
	free(out);
	free(err);
}

/* Two generated snapshots, B with one more 1 MiB block at the peak. */
static void test_snapshots(void **state)
{
	char a[4096], b[4096];
	json_t *doc, *m, *r, *ea, *eb;

	(void)state;
	if (!snap_expected)
		fail_msg("gen_snapshots.py gave no expected figures");
	ea = json_array_get(json_object_get(snap_expected, "blocks"), 0);
	eb = json_array_get(json_object_get(snap_expected, "blocks_plus"), 0);
	snprintf(a, sizeof(a), "%s/blocks.pickle", snapdir);
	snprintf(b, sizeof(b), "%s/blocks_plus.pickle", snapdir);
	for (int by_function = 0; by_function < 2; by_function++) {
		doc = diff_json(by_function ? "--by-function" : "", a, b, 0);
		assert_string_equal(mp_test_json_str(doc, "kind"), "snapshot");
		m = memory(doc, "cuda:0");
		assert_int_equal(mp_test_json_int(json_object_get(m, "a"), "peak_bytes"), mp_test_json_int(ea, "peak_allocated"));
		assert_int_equal(mp_test_json_int(json_object_get(m, "b"), "peak_bytes"), mp_test_json_int(eb, "peak_allocated"));
		assert_int_equal(mp_test_json_int(m, "change_bytes"), 1048576); /* 13 MiB - 12 MiB */
		assert_int_equal(mp_test_json_int(json_object_get(m, "a"), "time_ns"), mp_test_json_int(ea, "peak_time_ns"));
		assert_int_equal(mp_test_json_int(json_object_get(m, "b"), "time_ns"), mp_test_json_int(eb, "peak_time_ns"));
		assert_int_equal(mp_test_json_int(json_object_get(m, "a"), "reserved_bytes"), 20 * MIB);
		/* free in the 20 MiB segment: A 1024 + (8 MiB - 1024);
		 * B 1024 + (2 MiB - 1024) + 5 MiB, largest 5 MiB */
		assert_true(fabs(json_real_value(json_object_get(json_object_get(m, "a"), "fragmentation")) -
				 1024.0 / (8.0 * MIB)) < 1e-12);
		assert_true(fabs(json_real_value(json_object_get(json_object_get(m, "b"), "fragmentation")) - 2.0 / 7.0) <
			    1e-12);
		assert_int_equal(mp_test_json_int(m, "unchanged_rows"), 3); /* forward, backward, step */
		assert_int_equal(mp_test_json_int(m, "unchanged_bytes"), 12 * MIB);
		assert_int_equal(json_array_size(json_object_get(m, "rows")), 1);
		r = json_array_get(json_object_get(m, "rows"), 0);
		assert_string_equal(mp_test_json_str(r, "kind"), "new");
		assert_string_equal(mp_test_json_str(r, by_function ? "function" : "op"),
				    "_alloc (/usr/lib/python3/dist-packages/torch/cuda/memory.py:120)");
		assert_int_equal(mp_test_json_int(r, "b_bytes"), 1048576);
		assert_int_equal(mp_test_json_int(r, "b_count"), 1);
		assert_int_equal(mp_test_json_int(r, "a_count"), 0);
		json_decref(doc);
	}
}

/* Shared real data: the change of each peak is the difference of the
 * independent figures (expected.json; TF's own memory_profile.json). */
static void test_shared(void **state)
{
	const char *t = mp_test_shared("torch/expected.json");
	char a[8192], b[8192], exp[4096];
	json_t *e, *doc, *m;

	(void)state;
	if (!t)
		skip();
	snprintf(exp, sizeof(exp), "%s", t);
	e = json_load_file(exp, 0, NULL);
	assert_non_null(e);
	snprintf(a, sizeof(a), "%s", mp_test_shared("torch/cnn_counterfactual_marks.pickle"));
	snprintf(b, sizeof(b), "%s", mp_test_shared("torch/llama_lora_no_time.pickle"));
	doc = diff_json("", a, b, 0);
	m = memory(doc, "cuda:0");
	json_int_t pa = mp_test_json_int(json_array_get(json_object_get(e, "cnn_counterfactual_marks.pickle"), 0), "allocated_peak_bytes_min"),
		   pb = mp_test_json_int(json_array_get(json_object_get(e, "llama_lora_no_time.pickle"), 0), "allocated_peak_bytes_min");
	assert_int_equal(mp_test_json_int(m, "change_bytes"), pb - pa); /* 5914094592 - 110110720 */
	assert_int_equal(mp_test_json_int(m, "change_bytes"), 5803983872ll);
	assert_string_equal(mp_test_json_str(json_object_get(doc, "b"), "time_unit"), "trace entry");
	json_decref(doc);
	json_decref(e);
	/* identity on a real snapshot, under a 0% gate */
	json_decref(diff_json("--fail-above 0%", a, a, 0));

	/* two TF 2.4 runs (log directories); peakBytesInUse of their
	 * memory_profile.json.gz: GPU_0_bfc 53543168 and 56235008,
	 * gpu_host_bfc 3072 and 7424 */
	const char *fit = mp_test_shared("xplane/tf24-gpu-e4040-2022/logs/fit");
	if (!fit)
		skip();
	assert_true(snprintf(a, sizeof(a), "%s/20221104-212610", fit) < (int)sizeof(a));
	assert_true(snprintf(b, sizeof(b), "%s/20221104-213654", fit) < (int)sizeof(b));
	doc = diff_json("--fail-above 6%", a, b, 1);
	assert_string_equal(mp_test_json_str(doc, "kind"), "xplane");
	m = memory(doc, "GPU_0_bfc");
	assert_int_equal(mp_test_json_int(json_object_get(m, "a"), "peak_bytes"), 53543168);
	assert_int_equal(mp_test_json_int(json_object_get(m, "b"), "peak_bytes"), 56235008);
	assert_int_equal(mp_test_json_int(m, "change_bytes"), 2691840);
	m = memory(doc, "gpu_host_bfc");
	assert_int_equal(mp_test_json_int(m, "change_bytes"), 4352);
	json_decref(doc);
	doc = diff_json("--fail-above GPU_0_bfc:6%", a, b, 0);
	json_decref(doc);
}

/* Synthetic captures with stacks (memprof_gen_capture): what was live at
 * each peak sums to the peak (address model), so the rows' changes sum to
 * the change of the peak, by breakdown and by function; identity. */
static void test_rows_sum(void **state)
{
	char *g1 = mp_test_tmpfile(".memprof"), *g2 = mp_test_tmpfile(".memprof"), cmd[MP_TEST_CMD_MAX];
	static const char *const by[] = {"", "--by-function"};

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "%s/tests/report/memprof_gen_capture '%s' --events 3000 --live 200 --stacks 8 --seed 1 >/dev/null && "
		 "%s/tests/report/memprof_gen_capture '%s' --events 3000 --live 300 --stacks 8 --seed 2 >/dev/null",
		 MEMPROF_BINARY_DIR, g1, MEMPROF_BINARY_DIR, g2);
	assert_int_equal(system(cmd), 0);
	for (int k = 0; k < 2; k++) {
		json_t *doc = diff_json(by[k], g1, g2, 0), *m, *r;
		json_int_t sum = 0, grown = 0;
		size_t i;
		assert_string_equal(mp_test_json_str(doc, "rows_by"), k ? "function" : "breakdown");
		m = memory(doc, "pool");
		json_array_foreach(json_object_get(m, "rows"), i, r) {
			sum += mp_test_json_int(r, "change_bytes");
			assert_int_equal(mp_test_json_int(r, "change_bytes"), mp_test_json_int(r, "b_bytes") - mp_test_json_int(r, "a_bytes"));
			grown += !strcmp(mp_test_json_str(r, "kind"), "grown");
		}
		assert_int_equal(sum, mp_test_json_int(m, "change_bytes"));
		assert_int_equal(grown, mp_test_json_int(m, "grown"));
		assert_true(mp_test_json_int(m, "change_bytes") > 0); /* 300 live blocks against 200 */
		json_decref(doc);
		doc = diff_json(k ? "--by-function --fail-above 0%" : "--fail-above 0%", g2, g2, 0);
		m = memory(doc, "pool");
		assert_int_equal(mp_test_json_int(m, "change_bytes"), 0);
		assert_int_equal(json_array_size(json_object_get(m, "rows")), 0);
		assert_true(mp_test_json_int(m, "unchanged_rows") > 0);
		assert_int_equal(mp_test_json_int(m, "unchanged_bytes"), mp_test_json_int(json_object_get(m, "a"), "peak_bytes"));
		json_decref(doc);
	}
	unlink(g1);
	unlink(g2);
	free(g1);
	free(g2);
}

/* plot --diff: the picture is written; one input, or two of different
 * kinds, are usage errors and leave nothing. */
static void test_plot(void **state)
{
	char cmd[MP_TEST_CMD_MAX], *png = mp_test_tmpfile(".png");
	struct stat st;
	int rc;

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s plot --diff '%s' '%s' -o '%s' 2>/dev/null", MEMPROF, cap_a, cap_b, png);
	rc = system(cmd);
	assert_int_equal(WEXITSTATUS(rc), 0);
	assert_int_equal(stat(png, &st), 0);
	assert_true(st.st_size > 1000);
	unlink(png);
	snprintf(cmd, sizeof(cmd), "%s plot --diff '%s' -o '%s' 2>/dev/null", MEMPROF, cap_a, png);
	assert_int_equal(WEXITSTATUS(system(cmd)), 2);
	snprintf(cmd, sizeof(cmd), "%s plot --diff '%s' '%s/blocks.pickle' -o '%s' 2>/dev/null", MEMPROF, cap_a, snapdir,
		 png);
	assert_int_equal(WEXITSTATUS(system(cmd)), 2);
	assert_int_equal(stat(png, &st), -1);
	free(png);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captures), cmocka_unit_test(test_text),      cmocka_unit_test(test_identity),
		cmocka_unit_test(test_gates),    cmocka_unit_test(test_errors),    cmocka_unit_test(test_snapshots),
		cmocka_unit_test(test_shared),   cmocka_unit_test(test_plot),
		cmocka_unit_test(test_rows_sum),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
