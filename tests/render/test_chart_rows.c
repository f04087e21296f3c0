/* test_chart_rows.c - the breakdown's rows as a reader tells them apart:
 * names shortened keeping the part where they differ (10 TensorFlow paths
 * that differ only in layer_N read as 10 names, not one), and one row per
 * op, its sizes listed beneath (docs/charts.md, "The breakdown at the
 * peak"). */
#include "test_common.h"

#include <memprof/array_source.h>
#include <memprof/charts.h>
#include <memprof/layout.h>
#include <memprof/plot.h>
#include <memprof/render.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>

#include "chart_check.h"
#include "plot_reads.h"

#define MiB 1048576ull

/* The bar labels of a scene, as drawn, in order; pairwise distinct? */
static void assert_labels_distinct(const mp_scene_t *s, size_t first, size_t n)
{
	for (size_t i = first; i < first + n; i++)
		for (size_t j = i + 1; j < first + n; j++) {
			const char *x = mp_scene_string(s, cc_find(s, "bar-label", i));
			const char *y = mp_scene_string(s, cc_find(s, "bar-label", j));
			if (!strcmp(x, y))
				fail_msg("bar labels %zu and %zu both read \"%s\"", i, j, x);
		}
}

/* Ten long paths that differ only in a middle component, in a column too
 * narrow for any of them: each keeps its layer_N. */
static void test_fit_apart_middle(void **state)
{
	char names[10][160], out[10][200];
	const char *p[10];

	(void)state;
	for (int i = 0; i < 10; i++) {
		snprintf(names[i], sizeof(names[i]),
			 "replica_6/bert_span_labeler/bert_encoder_1/transformer/layer_%d/self_attention/dropout_3/"
			 "dropout/Cast",
			 i * 2 + 1);
		p[i] = names[i];
	}
	for (int i = 0; i < 10; i++) {
		char layer[16];
		snprintf(layer, sizeof(layer), "/layer_%d/", i * 2 + 1);
		/* 60 characters of 10 px at 1/0.6 */
		assert_int_equal(mp_text_fit_apart(&mp_text_measure_fixed, p, 10, (size_t)i, 1 / 0.6, 0, 60, out[i],
						   sizeof(out[i])),
				 1);
		assert_true(mp_text_width(&mp_text_measure_fixed, out[i], 1 / 0.6, 0) <= 60);
		if (!strstr(out[i], layer))
			fail_msg("\"%s\" lost %s", out[i], layer);
		assert_true(!strncmp(out[i], "replica_6/", 10)); /* the start and end, as far as they go */
		assert_non_null(strstr(out[i], "/Cast"));
		for (int j = 0; j < i; j++)
			assert_string_not_equal(out[i], out[j]);
	}
	/* a name that fits is left as it is; one alone is shortened in its middle */
	assert_int_equal(mp_text_fit_apart(&mp_text_measure_fixed, p, 10, 0, 1 / 0.6, 0, 1000, out[0], sizeof(out[0])),
			 0);
	assert_string_equal(out[0], names[0]);
	assert_int_equal(mp_text_fit_apart(&mp_text_measure_fixed, p, 1, 0, 1 / 0.6, 0, 11, out[0], sizeof(out[0])), 1);
	assert_string_equal(out[0], "repli…/Cast");
}

/* The same ten as the chart's bars, at 1200 px: ten distinct labels. */
static void test_breakdown_labels_distinct(void **state)
{
	char names[10][160];
	mp_chart_bar_t bars[10];
	mp_chart_bars_t b = {"Live at the peak", "", bars, 10, 0, 0, "groups", 0};
	mp_scene_t *s = mp_scene_new(1200, 600, 0xFFFFFF);
	mp_chart_area_t a = {s, mp_render_measure(), {0, 0, 1200, 600}};

	(void)state;
	for (int i = 0; i < 10; i++) {
		snprintf(names[i], sizeof(names[i]),
			 "replica_6/bert_span_labeler/bert_encoder_1/transformer/layer_%d/self_attention/dropout_3/"
			 "dropout/attention_probs_after_dropout/Cast",
			 i + 14);
		bars[i] = (mp_chart_bar_t){names[i], "output · half [4,16,384,384] · 1 × 18.0 MiB", 18 * MiB, 0x009E73};
	}
	assert_int_equal(mp_chart_breakdown(&a, &b), 0);
	assert_int_equal(cc_count(s, "bar-label"), 10);
	assert_labels_distinct(s, 0, 10);
	assert_int_equal(cc_texts_clear(s, mp_render_measure()), 0);
	mp_scene_free(s);
	mp_render_shutdown();
}

/* The 8-GPU capture: in every panel the labels are as distinct as the
 * names. */
static void test_xplane_8gpu_distinct(void **state)
{
	const char *path = mp_test_shared("xplane/tf24-8gpu-multiworker");
	const char *args[1];
	mp_plot_options_t po = {.charts = MP_PLOT_BREAKDOWN};
	mp_plot_input_t in;
	mp_source_t *src;
	mp_solver_t *solver;
	mp_scene_t *scene;
	mp_diag_t d;
	char note[256];
	size_t n, panel_start = 0;

	(void)state;
	if (!path)
		skip();
	args[0] = path;
	assert_true(mp_xplane_open_args(&src, args, 1, NULL, note, sizeof(note), &d) > 0);
	assert_non_null(solver = mp_solver_new(NULL));
	assert_int_equal(mp_solver_run(solver, src, &d), 0);
	memset(&in, 0, sizeof(in));
	in.name = path;
	in.solver = solver;
	in.source = src;
	assert_true(tr_plot_capture(&scene, &in, 1, &po, mp_render_measure(), &d) >= 0);
	n = cc_count(scene, "bar-label");
	assert_true(n > 10);
	/* panels: a label "(in use before the capture)" or the first after an
	 * "other (...)" starts one; within a panel all labels differ */
	for (size_t i = 0; i <= n; i++) {
		if (i == n || !strncmp(mp_scene_string(scene, cc_find(scene, "bar-label", i)), "other (", 7)) {
			assert_labels_distinct(scene, panel_start, i - panel_start);
			panel_start = i + 1;
		}
	}
	assert_int_equal(cc_texts_clear(scene, mp_render_measure()), 0);
	mp_scene_free(scene);
	mp_solver_free(solver);
	mp_source_close(src);
	mp_render_shutdown();
}

/* The rows of one op are one bar, its sizes beneath, largest first; the
 * rows without op stay apart, told by count and size. */
static void test_one_bar_per_op(void **state)
{
	const char *strings[5] = {"", "cache", "step", "uint8", "float"};
	mp_memory_info_t mem[1] = {{"host", 0, MP_MEMORY_HOST, NULL}};
	mp_solver_row_t rows[6] = {
		{.op = 1, .region = MP_REGION_PERSIST, .allocated_bytes = 4 * MiB, .occurrences = 4,
		 .total_bytes = 16 * MiB},
		{.op = 2, .dtype = 4, .region = MP_REGION_TEMP, .allocated_bytes = 2 * MiB, .occurrences = 3,
		 .total_bytes = 6 * MiB},
		{.op = 1, .dtype = 3, .region = MP_REGION_PERSIST, .allocated_bytes = 4 * MiB, .occurrences = 1,
		 .total_bytes = 4 * MiB}, /* the same size, another dtype: counted with the first */
		{.region = MP_REGION_UNKNOWN, .allocated_bytes = MiB, .occurrences = 3, .total_bytes = 3 * MiB},
		{.op = 1, .region = MP_REGION_PERSIST, .allocated_bytes = MiB, .occurrences = 2, .total_bytes = 2 * MiB},
		{.region = MP_REGION_UNKNOWN, .allocated_bytes = 1000, .occurrences = 1, .total_bytes = 1000},
	};
	mp_chart_bar_t bars[6];
	char text[6 * 160];
	uint64_t rest_bytes, rest_count;
	mp_source_t *src;

	(void)state;
	assert_int_equal(mp_array_source_new(&src, NULL, 0, strings, 5, mem, 1, "r.memprof"), 0);
	assert_int_equal(mp_chart_bars_from_rows(bars, 6, rows, 6, src, text, sizeof(text), &rest_bytes, &rest_count),
			 4);
	assert_int_equal(rest_count, 0);
	assert_string_equal(bars[0].label, "cache");
	assert_string_equal(bars[0].detail, "persist · 5 × 4.00 MiB, 2 × 1.00 MiB");
	assert_int_equal(bars[0].bytes, 22 * MiB);
	assert_string_equal(bars[1].label, "step");
	assert_string_equal(bars[1].detail, "temp · float · 3 × 2.00 MiB");
	assert_string_equal(bars[2].label, "(no op) · 3 × 1.00 MiB");
	assert_string_equal(bars[3].label, "(no op) · 1 × 1000 B");
	/* with room for 2 bars: the rest summed, counted in bars */
	assert_int_equal(mp_chart_bars_from_rows(bars, 2, rows, 6, src, text, sizeof(text), &rest_bytes, &rest_count),
			 2);
	assert_int_equal(rest_count, 2);
	assert_int_equal(rest_bytes, 3 * MiB + 1000);
	mp_source_close(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_apart_middle),
		cmocka_unit_test(test_breakdown_labels_distinct),
		cmocka_unit_test(test_xplane_8gpu_distinct),
		cmocka_unit_test(test_one_bar_per_op),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
