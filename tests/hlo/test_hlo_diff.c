/* test_hlo_diff.c - `memprof diff a.hlo.pb b.hlo.pb` on modules built here
 * with known buffers (every figure worked out by hand): B's temporary
 * fusion.2 doubled and one padded temporary more; a module whose fusion.1
 * was renumbered; identity; the gates; inputs of different kinds. */
#include "test_common.h"

#include "hlo_fixture.h"
#include "json_check.h"

#include <jansson.h>
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define F32 11 /* xla PrimitiveType */

static char *mod_a, *mod_b, *mod_c;

/* "step": parameter p0 f32[16384] (65536 B, indefinite); temporaries
 * fusion.1 f32[8192] (32768 B) and fusion.2 f32[16384] (65536 B, with
 * big: f32[32768], 131072 B); with big also fusion.3 f32[5120] in a
 * 24576-byte buffer (4096 B of padding). Trace: alloc fusion.1, fusion.2
 * (fusion.3), then free them. t1: fusion.1's name. */
static char *write_module(int big, const char *t1)
{
	fx_t *fx = fx_new("step", 1);
	int64_t d0 = 16384, d1 = 8192, d2 = big ? 32768 : 16384, d3 = 5120;
	int64_t s2 = d2 * 4, temp_size = 32768 + s2 + (big ? 24576 : 0);
	Xla__BufferAllocationProto *par, *tmp;
	Xla__HeapSimulatorTrace *t;
	char *path = mp_test_tmpfile(".hlo.pb");
	size_t len;
	uint8_t *buf;
	FILE *fp;

	fx_instr(fx, 1, "p0", "parameter", fx_array(fx, F32, 1, &d0), NULL);
	fx_lb(fx, 1, 65536, 1, 0, NULL, 0);
	par = fx_alloc(fx, 0, 65536, 0, FX_PARAM);
	fx_assign(fx, par, 1, 0, 65536);
	tmp = fx_alloc(fx, 1, temp_size, 0, 0);
	fx_instr(fx, 2, t1, "fusion", fx_array(fx, F32, 1, &d1), "jit(step)/mul");
	fx_lb(fx, 2, 32768, 2, 0, NULL, 0);
	fx_assign(fx, tmp, 2, 0, 32768);
	fx_instr(fx, 3, "fusion.2", "fusion", fx_array(fx, F32, 1, &d2), "jit(step)/add");
	fx_lb(fx, 3, s2, 3, 0, NULL, 0);
	fx_assign(fx, tmp, 3, 32768, s2);
	if (big) {
		fx_instr(fx, 4, "fusion.3", "fusion", fx_array(fx, F32, 1, &d3), "jit(step)/exp");
		fx_lb(fx, 4, 24576, 4, 0, NULL, 0);
		fx_assign(fx, tmp, 4, 32768 + s2, 24576);
	}
	t = fx_trace(fx);
	fx_event(fx, t, FX_ALLOC, 2, 0, t1);
	fx_event(fx, t, FX_ALLOC, 3, 0, "fusion.2");
	if (big)
		fx_event(fx, t, FX_ALLOC, 4, 0, "fusion.3");
	fx_event(fx, t, FX_FREE, 2, 0, "end");
	fx_event(fx, t, FX_FREE, 3, 0, "end");
	if (big)
		fx_event(fx, t, FX_FREE, 4, 0, "end");
	buf = fx_pack(fx, &len);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(buf, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
	free(buf);
	fx_free(fx);
	return path;
}

static int setup(void **state)
{
	(void)state;
	mod_a = write_module(0, "fusion.1");
	mod_b = write_module(1, "fusion.1");
	mod_c = write_module(0, "fusion.7");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(mod_a);
	unlink(mod_b);
	unlink(mod_c);
	free(mod_a);
	free(mod_b);
	free(mod_c);
	return 0;
}

/* `memprof diff ARGS`: the exit code, stdout in *out, stderr's first
 * errsize - 1 bytes in err and its lines in *errlines. */
static int run(const char *args, char **out, int *errlines, char *err, size_t errsize)
{
	char cmd[MP_TEST_CMD_MAX], *e;
	int st;

	snprintf(cmd, sizeof(cmd), "%s diff %s", MEMPROF, args);
	st = mp_test_capture(cmd, out, &e);
	*errlines = mp_test_lines(e);
	snprintf(err, errsize, "%s", e);
	free(e);
	return st;
}

static json_t *diff_json(const char *a, const char *b, int want)
{
	char args[MP_TEST_CMD_MAX], err[4096], *out;
	int lines;
	json_t *doc;

	snprintf(args, sizeof(args), "--json '%s' '%s'", a, b);
	assert_int_equal(run(args, &out, &lines, err, sizeof(err)), want);
	doc = mp_test_json_loads(out, "diff");
	free(out);
	return doc;
}

static void test_figures(void **state)
{
	json_t *doc = diff_json(mod_a, mod_b, 0), *h, *a, *b, *r;

	(void)state;
	assert_string_equal(mp_test_json_str(doc, "kind"), "hlo");
	h = json_object_get(doc, "hlo");
	a = json_object_get(h, "a");
	b = json_object_get(h, "b");
	/* A: 65536 indefinite + 32768 + 65536; B: + 131072 + 24576 instead */
	assert_int_equal(mp_test_json_int(a, "peak_heap_bytes"), 163840);
	assert_int_equal(mp_test_json_int(b, "peak_heap_bytes"), 253952);
	assert_int_equal(mp_test_json_int(h, "change_bytes"), 90112);
	assert_string_equal(mp_test_json_str(a, "peak_instruction"), "fusion.2");
	assert_string_equal(mp_test_json_str(b, "peak_instruction"), "fusion.3");
	assert_int_equal(mp_test_json_int(a, "peak_position"), 1);
	assert_int_equal(mp_test_json_int(b, "peak_position"), 2);
	assert_int_equal(mp_test_json_int(a, "padding_bytes"), 0);
	assert_int_equal(mp_test_json_int(b, "padding_bytes"), 4096); /* 24576 - 5120 * 4 */
	assert_int_equal(mp_test_json_int(a, "indefinite_bytes"), 65536);
	assert_int_equal(mp_test_json_int(h, "indefinite_change_bytes"), 0);
	assert_int_equal(mp_test_json_int(h, "grown"), 1);
	assert_int_equal(mp_test_json_int(h, "new"), 1);
	assert_int_equal(mp_test_json_int(h, "shrunk") + mp_test_json_int(h, "gone"), 0);
	assert_int_equal(mp_test_json_int(h, "unchanged"), 2); /* p0, fusion.1 */
	assert_int_equal(mp_test_json_int(h, "unchanged_bytes"), 98304);
	assert_int_equal(json_array_size(json_object_get(h, "rows")), 2);
	r = json_array_get(json_object_get(h, "rows"), 0);
	assert_string_equal(mp_test_json_str(r, "kind"), "grown");
	assert_string_equal(mp_test_json_str(r, "instruction"), "fusion.2");
	assert_int_equal(mp_test_json_int(r, "a_bytes"), 65536);
	assert_int_equal(mp_test_json_int(r, "b_bytes"), 131072);
	assert_int_equal(mp_test_json_int(r, "change_bytes"), 65536);
	r = json_array_get(json_object_get(h, "rows"), 1);
	assert_string_equal(mp_test_json_str(r, "kind"), "new");
	assert_string_equal(mp_test_json_str(r, "instruction"), "fusion.3");
	assert_string_equal(mp_test_json_str(r, "category"), "Temporary");
	assert_int_equal(mp_test_json_int(r, "b_bytes"), 24576);
	assert_int_equal(mp_test_json_int(r, "b_unpadded_bytes"), 20480);
	assert_int_equal(mp_test_json_int(r, "a_bytes"), 0);
	json_decref(doc);

	/* fusion.1 renumbered fusion.7: matched by opcode, shape and size */
	doc = diff_json(mod_a, mod_c, 0);
	h = json_object_get(doc, "hlo");
	assert_int_equal(mp_test_json_int(h, "change_bytes"), 0);
	assert_int_equal(mp_test_json_int(h, "unchanged"), 3);
	assert_int_equal(json_array_size(json_object_get(h, "rows")), 0);
	json_decref(doc);
}

static void test_text_gates_errors(void **state)
{
	static const struct {
		const char *args;
		int rc;
		const char *says;
	} cases[] = {
		{"--fail-above 0%", 1, "above --fail-above 0%"},
		{"--fail-above 54%", 1, "memprof: diff: regression: step: peak +90112 B (+88.00 KiB, +55.00%) from 163840 B to 253952 B, "
					"above --fail-above 54%"},
		{"--fail-above 55%", 0, NULL}, /* 90112 / 163840 is 55% exactly: not more */
		{"--fail-above step:90112", 0, NULL},
		{"--fail-above step:90111", 1, "regression: step: peak +90112 B"},
		{"--fail-above total:88KiB", 0, NULL},
		{"--fail-above other:5%", 2, "--fail-above 'other:5%': the modules are 'step' and 'step'"},
		{"--by-function", 2, "do not apply to HLO modules"},
	};
	char args[MP_TEST_CMD_MAX], err[4096], *out;
	int lines;

	(void)state;
	snprintf(args, sizeof(args), "'%s' '%s'", mod_a, mod_b);
	assert_int_equal(run(args, &out, &lines, err, sizeof(err)), 0);
	assert_non_null(strstr(out, "memprof diff (hlo)"));
	assert_non_null(strstr(out, "+90112 B (+88.00 KiB, +55.00%)"));
	assert_non_null(strstr(out, "#2 fusion.3"));
	assert_non_null(strstr(out, "1 grown, 0 shrunk, 1 new, 0 gone; 2 unchanged (96.00 KiB)"));
	assert_non_null(strstr(out, "fusion.3: f32[5120]{0} (Temporary)"));
	free(out);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* the gates against A itself never fail */
		snprintf(args, sizeof(args), "%s '%s' '%s'", cases[i].args, mod_a, mod_a);
		assert_int_equal(run(args, &out, &lines, err, sizeof(err)), cases[i].rc == 1 ? 0 : cases[i].rc);
		free(out);
		snprintf(args, sizeof(args), "%s '%s' '%s'", cases[i].args, mod_a, mod_b);
		assert_int_equal(run(args, &out, &lines, err, sizeof(err)), cases[i].rc);
		if (cases[i].says) {
			if (!strstr(err, cases[i].says))
				fail_msg("%s: '%s' does not say '%s'", cases[i].args, err, cases[i].says);
			assert_int_equal(lines, 1);
		} else {
			assert_int_equal(lines, 0);
		}
		free(out);
	}
	/* an HLO module and a capture: different kinds */
	snprintf(args, sizeof(args), "'%s' /nonexistent/b.memprof", mod_a);
	assert_int_equal(run(args, &out, &lines, err, sizeof(err)), 2);
	assert_int_equal(lines, 1);
	assert_non_null(strstr(err, "is an HLO module and '/nonexistent/b.memprof' is not"));
	free(out);
	snprintf(args, sizeof(args), "'%s' /nonexistent/b.hlo.pb", mod_a);
	assert_int_equal(run(args, &out, &lines, err, sizeof(err)), 3);
	assert_int_equal(lines, 1);
	free(out);
}

#define MAXTEXT "hlo/maxtext-h100/"
#define INIT "module_0003.jit__unnamed_wrapped_function_.sm_9.0_gpu_after_optimizations.hlo.pb"
#define STEP "module_0016.jit_train_step.sm_9.0_gpu_after_optimizations.hlo.pb"

/* The reference peak (bytes) and its position of one module's colour 0. */
static int64_t golden_peak(json_t *g, const char *file, json_int_t *position)
{
	json_t *c = json_object_get(json_object_get(g, file), "color0");
	double mib = json_number_value(json_object_get(c, "peak_heap_mib"));

	assert_non_null(c);
	*position = json_integer_value(json_object_get(c, "peak_heap_size_position"));
	return (int64_t)llround(mib * 1048576.0);
}

/* MaxText's init module (A) against its training step (B): each peak as the
 * reference gives it (2007644692 B at event 34; 5817896006 B at event 929),
 * the change their difference (+3810251314 B), and the rows of buffers at
 * the peaks adding up to it. */
static void test_maxtext(void **state)
{
	const char *gpath = mp_test_shared(MAXTEXT "golden_memviewer_ref.json");
	char a[4096], b[4096];
	json_error_t jerr;
	json_t *g, *doc, *h, *r;
	json_int_t pos_a, pos_b, sum = 0;
	int64_t peak_a, peak_b;
	size_t i;

	(void)state;
	if (!gpath) {
		fprintf(stderr, "skipped: no shared/data/" MAXTEXT " (the MaxText modules)\n");
		skip();
	}
	assert_non_null(g = json_load_file(gpath, 0, &jerr));
	snprintf(a, sizeof(a), "%s", mp_test_shared(MAXTEXT INIT));
	snprintf(b, sizeof(b), "%s", mp_test_shared(MAXTEXT STEP));
	peak_a = golden_peak(g, INIT, &pos_a);
	peak_b = golden_peak(g, STEP, &pos_b);
	assert_int_equal(peak_a, 2007644692); /* the reference as read by hand */
	assert_int_equal(peak_b, 5817896006);
	doc = diff_json(a, b, 0);
	h = json_object_get(doc, "hlo");
	assert_int_equal(mp_test_json_int(json_object_get(h, "a"), "peak_heap_bytes"), peak_a);
	assert_int_equal(mp_test_json_int(json_object_get(h, "b"), "peak_heap_bytes"), peak_b);
	assert_int_equal(mp_test_json_int(json_object_get(h, "a"), "peak_position"), pos_a);
	assert_int_equal(mp_test_json_int(json_object_get(h, "b"), "peak_position"), pos_b);
	assert_int_equal(mp_test_json_int(h, "change_bytes"), peak_b - peak_a);
	assert_int_equal(mp_test_json_int(h, "change_bytes"), 3810251314);
	json_array_foreach(json_object_get(h, "rows"), i, r)
		sum += mp_test_json_int(r, "change_bytes");
	assert_int_equal(sum, peak_b - peak_a);
	json_decref(doc);
	/* B against itself: no change, and its peak again */
	doc = diff_json(b, b, 0);
	h = json_object_get(doc, "hlo");
	assert_int_equal(mp_test_json_int(h, "change_bytes"), 0);
	assert_int_equal(mp_test_json_int(json_object_get(h, "a"), "peak_heap_bytes"), peak_b);
	assert_int_equal(json_array_size(json_object_get(h, "rows")), 0);
	json_decref(doc);
	json_decref(g);
}

/* plot --diff does not draw HLO modules: one line, exit 2, no file. */
static void test_plot_diff_hlo(void **state)
{
	char cmd[MP_TEST_CMD_MAX], *png = mp_test_tmpfile(".png"), *errpath = mp_test_tmpfile(".err"), line[512];
	FILE *f;
	int st, lines = 0;

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s plot --diff '%s' '%s' -o '%s' 2>'%s'", MEMPROF, mod_a, mod_b, png, errpath);
	st = system(cmd);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 2);
	assert_int_not_equal(access(png, F_OK), 0);
	assert_non_null(f = fopen(errpath, "r"));
	while (fgets(line, sizeof(line), f))
		if (lines++ == 0)
			assert_non_null(strstr(line, "plot --diff of HLO modules is not supported"));
	fclose(f);
	assert_int_equal(lines, 1);
	unlink(errpath);
	free(errpath);
	free(png);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_text_gates_errors),
		cmocka_unit_test(test_maxtext),
		cmocka_unit_test(test_plot_diff_hlo),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
