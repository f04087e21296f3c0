/* test_chart_words.c - what the capture charts say in words, where a
 * reader found them wrong: no dtype "INVALID" in the bars, "the chart"
 * for one chart, one line for every memory id without a map. */
#include "test_common.h"

#include <math.h>

#include <memprof/array_source.h>
#include <memprof/charts.h>
#include <memprof/plot.h>
#include <memprof/render.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>

#include "plot_reads.h"
#include "render_check.h"

#define MiB 1048576ull

/* A dtype "INVALID" (TensorFlow's DataType 0, every JAX allocation) is
 * no dtype: the bars show none, as for a row without one. */
static void test_breakdown_invalid_dtype(void **state)
{
	const char *strings[4] = {"", "INVALID", "float", "matmul"};
	mp_memory_info_t mem[1] = {{"GPU_0_bfc", 0, MP_MEMORY_DEVICE, NULL}};
	mp_solver_row_t rows[3] = {
		{.dtype = 1, .region = MP_REGION_UNKNOWN, .allocated_bytes = 240 * MiB, .occurrences = 1,
		 .total_bytes = 240 * MiB},
		{.op = 3, .dtype = 1, .region = MP_REGION_TEMP, .allocated_bytes = MiB, .occurrences = 2,
		 .total_bytes = 2 * MiB},
		{.op = 3, .dtype = 2, .region = MP_REGION_TEMP, .allocated_bytes = MiB, .occurrences = 1,
		 .total_bytes = MiB},
	};
	mp_chart_bar_t bars[3];
	char text[3 * 160];
	uint64_t rest_bytes, rest_count;
	mp_source_t *src;

	(void)state;
	assert_int_equal(mp_array_source_new(&src, NULL, 0, strings, 4, mem, 1, "jax.xplane.pb"), 0);
	/* the two rows of matmul are one bar (one per op): their dtypes
	 * differ, so it names none */
	assert_int_equal(mp_chart_bars_from_rows(bars, 3, rows, 3, src, text, sizeof(text), &rest_bytes, &rest_count),
			 2);
	assert_string_equal(bars[0].label, "(no op) · 1 × 240 MiB");
	assert_string_equal(bars[0].detail, ""); /* nothing more is known */
	assert_string_equal(bars[1].detail, "temp · 3 × 1.00 MiB");
	mp_source_close(src);
}

/* Too small a height for one chart names "the chart", not "these 1 charts". */
static void test_one_chart_too_small(void **state)
{
	mp_memory_info_t mem[1] = {{"pool", 0, MP_MEMORY_DEVICE, NULL}};
	mp_event_t ev[2];
	mp_solver_t *s = mp_solver_new(NULL);
	mp_plot_options_t po = {.charts = MP_PLOT_TIMELINE, .height = 50};
	mp_plot_input_t in;
	mp_scene_t *scene;
	mp_source_t *src;
	mp_diag_t d;

	(void)state;
	memset(ev, 0, sizeof(ev));
	ev[0].kind = MP_EV_ALLOC, ev[0].time_ns = 1000, ev[0].address = 4096;
	ev[0].requested_bytes = ev[0].allocated_bytes = MiB;
	ev[1].kind = MP_EV_FREE, ev[1].time_ns = 2000, ev[1].address = 4096;
	assert_int_equal(mp_array_source_new(&src, ev, 2, NULL, 0, mem, 1, "one.memprof"), 0);
	assert_int_equal(mp_solver_run(s, src, &d), 0);
	memset(&in, 0, sizeof(in));
	in.name = "one.memprof";
	in.solver = s;
	in.source = src;
	assert_int_equal(tr_plot_capture(&scene, &in, 1, &po, mp_render_measure(), &d), MP_EUSAGE);
	assert_non_null(strstr(d.text, "a height of 50 px is too small for the chart: it needs at least "));
	mp_source_close(src);
	mp_solver_free(s);
	mp_render_shutdown();
}

/* The memory ids without regions (an xplane capture's) have no map: one
 * line names them all, no panel each. */
static void test_no_map_one_line(void **state)
{
	const char *path = mp_test_shared("xplane/tf24-gpu-e4040-2022/logs/fit/20221104-212610/train/plugins/profile/"
					  "2022_11_04_21_26_12/instance-ecbm.xplane.pb");
	mp_plot_options_t po = {.charts = MP_PLOT_ALL};
	mp_plot_input_t in;
	mp_source_t *src;
	mp_solver_t *s = mp_solver_new(NULL);
	mp_scene_t *scene;
	mp_diag_t d;
	char note[256];
	size_t lines = 0;

	(void)state;
	if (!path) {
		mp_solver_free(s);
		skip();
	}
	assert_true(mp_xplane_open_args(&src, &path, 1, NULL, note, sizeof(note), &d) > 0);
	assert_int_equal(mp_solver_run(s, src, &d), 0);
	memset(&in, 0, sizeof(in));
	in.name = path;
	in.solver = s;
	in.source = src;
	assert_int_equal(tr_plot_capture(&scene, &in, 1, &po, mp_render_measure(), &d), 0);
	for (size_t i = 0; i < mp_scene_count(scene); i++) {
		const mp_scene_item_t *it = mp_scene_item(scene, i);
		const char *t = it->kind == MP_SCENE_TEXT ? mp_scene_string(scene, it) : "";
		if (strstr(t, "no map"))
			fail_msg("a panel per memory id: %s", t);
		if (strstr(t, "no memory map for ")) {
			lines++;
			assert_string_equal(t, "no memory map for GPU_0_bfc (device), gpu_host_bfc (pinned_host): no regions "
					       "(pools, segments, arenas) were declared");
			assert_true(it->y > mp_scene_height(scene) - 60); /* the picture's last line */
		}
	}
	assert_int_equal(lines, 1);
	mp_scene_free(scene);
	mp_solver_free(s);
	mp_source_close(src);
	mp_render_shutdown();
}

/* A timeline from rounds says what its two areas are: each column's
 * least and, in a band, its most -- in a round, or, for a kept run's
 * whole-run file, in a span of rounds (one block every few rounds). */
static void test_rounds_words(void **state)
{
	mp_memory_info_t mem[1] = {{"host", 0, MP_MEMORY_HOST, NULL}};
	mp_solver_point_t pts[3];
	mp_chart_band_t band[2] = {{0, 90000000, 0, 3 * MiB}, {90000000, 180000000, MiB, 2 * MiB}};
	const mp_chart_band_t *bands[1] = {band};
	size_t nbands[1] = {2};
	mp_solver_device_t dev;
	mp_plot_options_t po = {.charts = MP_PLOT_TIMELINE};
	mp_plot_input_t in;
	mp_source_t *src;
	mp_diag_t d;

	(void)state;
	memset(pts, 0, sizeof(pts));
	for (int i = 0; i < 3; i++) {
		pts[i].time_ns = (uint64_t)i * 90000000;
		pts[i].step = -1;
		pts[i].heap_bytes = (uint64_t)(i + 1) * MiB;
		pts[i].fragmentation = NAN;
	}
	memset(&dev, 0, sizeof(dev));
	dev.has_peak = 1;
	dev.peak_bytes = dev.lifetime_peak_bytes = 3 * MiB;
	dev.peak = pts[2];
	dev.timeline = pts;
	dev.timeline_count = 3;
	dev.allocations = 3;
	assert_int_equal(mp_array_source_new(&src, NULL, 0, NULL, 0, mem, 1, "run.memprof"), 0);
	for (int spans = 0; spans < 2; spans++) {
		const char *least = spans ? "least in use in a span of rounds" : "least in use in a round";
		const char *most = spans ? "most in use in a span of rounds" : "most in use in a round";
		int got_least = 0, got_most = 0, got_header = 0;
		mp_scene_t *scene;
		memset(&in, 0, sizeof(in));
		in.name = "run.memprof";
		in.source = src;
		in.devices = &dev;
		in.ndevices = 1;
		in.bands = bands;
		in.nbands = nbands;
		in.spans = spans;
		assert_int_equal(mp_plot_capture(&scene, &in, 1, &po, mp_render_measure(), &d), 0);
		for (size_t i = 0; i < mp_scene_count(scene); i++) {
			const mp_scene_item_t *it = mp_scene_item(scene, i);
			const char *t = it->kind == MP_SCENE_TEXT ? mp_scene_string(scene, it) : "";
			got_least += !strcmp(t, least);
			got_most += !strcmp(t, most);
			got_header += strstr(t, spans ? " · from the run's spans of rounds" : " · from the capture's rounds") != NULL;
			if (!strcmp(t, "in use (live allocations)"))
				fail_msg("the solid area of a timeline from rounds is each column's least, not what was in use");
		}
		assert_int_equal(got_least, 1);
		assert_int_equal(got_most, 1);
		assert_int_equal(got_header, 1);
		mp_scene_free(scene);
	}
	mp_source_close(src);
	mp_render_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_breakdown_invalid_dtype),
		cmocka_unit_test(test_one_chart_too_small),
		cmocka_unit_test(test_no_map_one_line),
		cmocka_unit_test(test_rounds_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
