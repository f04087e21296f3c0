/* test_charts.c - the capture charts: the demo capture (its figures worked
 * out by hand in tests/demo/test_demo.c: peak 63 MiB at step 3, one failed
 * 6 MiB request with 25 MiB free in chunks of at most 2 MiB), the shared
 * xplane captures, and a stream with names long enough to break a layout.
 * What is drawn is compared with `memprof report --json`; pixels sampled
 * where the scene put the peak, the areas and the largest free chunk must
 * have their colours; every text stays on the canvas, clear of the others.
 * `memprof plot` and `report --svg/--png` end to end: sizes, XML, the same
 * bytes twice, and the documented errors leave no file. */
#include "test_common.h"

#include "json_check.h"
#include <memprof/array_source.h>
#include <memprof/capture.h>
#include <memprof/render.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>

#include "chart_check.h"
#include "plot_reads.h"
#include "render_check.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <sys/wait.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define MiB 1048576ull

static char *demo; /* the demo capture, recorded once */

static int record_demo(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	demo = mp_test_tmpfile(".memprof");
	pid = fork();
	if (pid == 0) {
		setenv("MEMPROF_OUTPUT", demo, 1);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execl(MEMPROF_DEMO_VICTIM, MEMPROF_DEMO_VICTIM, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int remove_demo(void **state)
{
	(void)state;
	unlink(demo);
	free(demo);
	mp_render_shutdown();
	return 0;
}

/* `memprof report --peak --oom --json FILE`, parsed. */
static json_t *report_json(const char *file)
{
	char cmd[4096], *out;
	json_t *doc;

	snprintf(cmd, sizeof(cmd), "%s report --peak --oom --json '%s' 2>/dev/null", MEMPROF, file);
	assert_int_equal(rc_run(cmd, &out), 0);
	doc = mp_test_json_loads(out, "report");
	free(out);
	return doc;
}

static uint64_t jnum(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_true(json_is_integer(v));
	return (uint64_t)json_integer_value(v);
}

typedef struct analysed {
	mp_source_t *src;
	mp_solver_t *solver;
	mp_scene_t *scene;
} analysed_t;

/* What `memprof plot` does, in process: the solver with the plot's
 * options, then the charts asked for at 1200 px. */
static void analyse(analysed_t *a, const char *path, unsigned charts, double height)
{
	mp_solver_options_t so;
	mp_plot_options_t po = {.charts = charts, .height = height};
	mp_plot_input_t in;
	const char *args[1] = {path};
	mp_diag_t d;
	char note[256];

	mp_solver_options_init(&so);
	so.timeline_points = 2000;
	memset(a, 0, sizeof(*a));
	if (mp_xplane_open_args(&a->src, args, 1, NULL, note, sizeof(note), &d) <= 0)
		assert_int_equal(mp_capture_open_source(&a->src, path, &d), 0);
	assert_non_null(a->solver = mp_solver_new(&so));
	assert_int_equal(mp_solver_run(a->solver, a->src, &d), 0);
	memset(&in, 0, sizeof(in));
	in.name = path;
	in.solver = a->solver;
	in.source = a->src;
	if (tr_plot_capture(&a->scene, &in, 1, &po, mp_render_measure(), &d) < 0)
		fail_msg("mp_plot_capture: %s", d.text);
}

static void release(analysed_t *a)
{
	mp_scene_free(a->scene);
	mp_solver_free(a->solver);
	mp_source_close(a->src);
}

static char *write_png(const mp_scene_t *s)
{
	char *png = mp_test_tmpfile(".png");
	mp_diag_t d;

	if (mp_render_write(s, png, MP_RENDER_PNG, &d) < 0)
		fail_msg("%s", d.text);
	return png;
}

#define assert_pixel(png, x, y, rgb)                                                                           \
	do {                                                                                                    \
		long px_ = rc_png_pixel(png, (int)(x), (int)(y));                                               \
		if (px_ != (long)(rgb))                                                                         \
			fail_msg("pixel (%d, %d) is %06lx, expected %06x", (int)(x), (int)(y), px_, (unsigned)(rgb)); \
	} while (0)

/* ---- the demo ---- */

static void test_demo_timeline(void **state)
{
	json_t *doc = report_json(demo), *dev = json_array_get(json_object_get(doc, "devices"), 0);
	json_t *peak = json_object_get(dev, "peak"), *oom = json_array_get(json_object_get(dev, "oom"), 0);
	const mp_solver_device_t *d;
	const mp_scene_item_t *plot, *line, *label, *mark;
	analysed_t a;
	char want[128], *png;
	double t0, t1, x;

	(void)state;
	analyse(&a, demo, MP_PLOT_TIMELINE, 0);
	assert_true(mp_scene_width(a.scene) == 1200 && mp_scene_height(a.scene) == 700);
	d = mp_solver_device(a.solver, 0);
	/* the peak drawn is the peak reported: 63 MiB, at its time */
	assert_int_equal(jnum(peak, "bytes"), 63 * MiB);
	label = cc_find(a.scene, "peak-label", 0);
	snprintf(want, sizeof(want), "peak %" PRIu64 " B (63.00 MiB)", jnum(peak, "bytes"));
	assert_string_equal(mp_scene_string(a.scene, label), want);
	plot = cc_find(a.scene, "plot", 0);
	line = cc_find(a.scene, "peak-line", 0);
	t0 = (double)d->timeline[0].time_ns;
	t1 = (double)d->timeline[d->timeline_count - 1].time_ns;
	/* the plot frame is drawn a pixel outside the plot: x + 1, w - 1.
	 * The frame's corner and width are whole pixels (floor) and the line
	 * is put on a pixel's middle (cx_crisp), while the plot's own edge and
	 * width are fractions (its left margin is the width of measured
	 * labels): the x worked out here from the frame and the line drawn
	 * from the plot differ by less than two pixels, by where the peak
	 * falls, which follows the demo's real timing (with 1.0 here the
	 * check failed in 1 run of 20 with two CPU hogs). */
	x = plot->x + 1 + ((double)jnum(peak, "time_ns") - t0) / (t1 - t0) * (plot->w - 1);
	assert_true(fabs(mp_scene_points(a.scene, line)[0].x - x) < 2.0);
	/* one failed allocation, marked at its time (the mark's tip is its x) */
	assert_int_equal(cc_count(a.scene, "oom-mark"), 1);
	mark = cc_find(a.scene, "oom-mark", 0);
	x = plot->x + 1 + ((double)jnum(oom, "time_ns") - t0) / (t1 - t0) * (plot->w - 1);
	assert_true(fabs(mp_scene_points(a.scene, mark)[2].x - x) < 2.0); /* (the frame's pixels: above) */
	/* five steps, each started after the weights were made (no step) */
	assert_int_equal(cc_count(a.scene, "step-tick"), 5);
	assert_int_equal(cc_count(a.scene, "area-heap"), 1);
	assert_int_equal(cc_count(a.scene, "area-free"), 1);
	assert_int_equal(cc_count(a.scene, "area-stack"), 0); /* nothing reserved */
	assert_int_equal(cc_texts_clear(a.scene, mp_render_measure()), 0);

	png = write_png(a.scene);
	x = mp_scene_points(a.scene, line)[0].x;
	/* the peak line above the peak (63 of 66.6 MiB), under the failure's triangle (the top 9 px) */
	assert_true(rc_png_count_column(png, (int)x, (int)plot->y + 12, (int)plot->y + 20, MP_COLOR_PEAK) >= 3);
	/* in use just before the peak, near the axis: most of the six columns
	 * there (the fragmentation line, whose steps follow the demo's real
	 * timing, may cross one or two of them: it crossed the one column
	 * checked before, in one CI run) */
	{
		int heap = 0, dx;
		for (dx = 3; dx <= 8; dx++)
			heap += rc_png_pixel(png, (int)(x - dx), (int)(plot->y + plot->h - 8)) == (long)MP_COLOR_HEAP;
		if (heap < 4)
			fail_msg("%d of the 6 pixels before the peak near the axis are in use", heap);
	}
	/* at the start nothing is in use: the pool is all free */
	assert_pixel(png, plot->x + 4, plot->y + plot->h / 2, MP_COLOR_FREE);
	unlink(png);
	free(png);
	release(&a);
	json_decref(doc);
}

static double item_width(const mp_scene_t *s, const char *tag, size_t nth)
{
	return cc_find(s, tag, nth)->w;
}

/* Widths of a comparison bar that wraps: every row of it. */
static double bar_total(const mp_scene_t *s, const char *tag)
{
	size_t from = 0;
	const mp_scene_item_t *it;
	double w = 0;

	while ((it = mp_scene_find(s, tag, &from)))
		w += it->w + 1; /* drawn a pixel short, to leave a seam */
	return w;
}

static void test_demo_maps(void **state)
{
	analysed_t a;
	const mp_scene_item_t *lf;
	double req, largest, all;
	char *png;
	int titles = 0, causes = 0;

	(void)state;
	analyse(&a, demo, MP_PLOT_MAP, 0);
	/* two maps: the peak (1 MiB free in one chunk) and the failure */
	for (size_t i = 0; i < mp_scene_count(a.scene); i++) {
		const mp_scene_item_t *it = mp_scene_item(a.scene, i);
		const char *s = mp_scene_string(a.scene, it);
		titles += !strncmp(s, "Memory map of GPU_0_bfc (device) at the peak", 44) ||
			  !strcmp(s, "Memory map of GPU_0_bfc (device) at failed allocation 1 of 1: 6.00 MiB asked");
		/* the failure's subtitle says why, as the report does */
		causes += strstr(s, "cause: fragmentation (enough bytes free, but no free chunk that large)") != NULL;
	}
	assert_int_equal(titles, 2);
	assert_int_equal(causes, 1);
	assert_int_equal(cc_count(a.scene, "largest-free-label"), 2);
	assert_string_equal(mp_scene_string(a.scene, cc_find(a.scene, "largest-free-label", 0)), "largest free chunk 1.00 MiB");
	assert_string_equal(mp_scene_string(a.scene, cc_find(a.scene, "largest-free-label", 1)), "largest free chunk 2.00 MiB");
	/* the request, the largest free chunk and all free bytes at one scale:
	 * 6 : 2 : 25 MiB (widths are not rounded: within a pixel) */
	req = bar_total(a.scene, "request");
	largest = bar_total(a.scene, "largest-free-bar");
	all = bar_total(a.scene, "free-bar");
	assert_true(req > 100);
	assert_true(fabs(req - 3 * largest) <= 1);
	assert_true(fabs(all - req * 25 / 6) <= 1);
	/* the outline of the 2 MiB chunk in the map is as wide as its bar */
	lf = cc_find(a.scene, "largest-free", cc_count(a.scene, "largest-free") - 1);
	assert_true(fabs((lf->w + 2) - largest) <= 2);
	assert_int_equal(cc_texts_clear(a.scene, mp_render_measure()), 0);

	png = write_png(a.scene);
	/* the outline's left edge (2 px wide, centred on x + 1) */
	assert_pixel(png, lf->x, lf->y + lf->h / 2, MP_COLOR_OOM);
	/* the first block of the pool is a 4 MiB weight (persist, blue) */
	lf = cc_find(a.scene, "map-row", 0);
	assert_pixel(png, lf->x + 2, lf->y + lf->h / 2, mp_color_region(MP_REGION_PERSIST));
	unlink(png);
	free(png);
	release(&a);
}

static void test_demo_all(void **state)
{
	json_t *doc = report_json(demo), *dev = json_array_get(json_object_get(doc, "devices"), 0);
	json_t *bd = json_object_get(dev, "breakdown");
	analysed_t a;
	double w0, w1;

	(void)state;
	analyse(&a, demo, MP_PLOT_ALL, 0);
	/* the breakdown: 5 groups, no rest; bars proportional to their bytes */
	assert_int_equal(cc_count(a.scene, "bar"), json_array_size(bd));
	w0 = item_width(a.scene, "bar", 0);
	w1 = item_width(a.scene, "bar", 1);
	assert_true(fabs(w0 / w1 - (double)jnum(json_array_get(bd, 0), "total_bytes") /
					 (double)jnum(json_array_get(bd, 1), "total_bytes")) < 0.01);
	assert_string_equal(mp_scene_string(a.scene, cc_find(a.scene, "bar-label", 0)), "data/shuffle_buffer");
	assert_int_equal(cc_count(a.scene, "peak-label"), 1);
	assert_int_equal(cc_count(a.scene, "largest-free-label"), 2);
	assert_int_equal(cc_texts_clear(a.scene, mp_render_measure()), 0);
	release(&a);
	json_decref(doc);
}

/* ---- a stream made to break layouts ---- */

static void test_long_names(void **state)
{
	enum { N = 4000 };
	static char longop[600];
	const char *strings[3];
	mp_memory_info_t mem[2] = {{"a memory id with a name long enough to push the capacity out of the title", 64 * MiB,
				    MP_MEMORY_DEVICE, NULL},
				   {"host", 0, MP_MEMORY_HOST, NULL}};
	mp_event_t *ev = calloc(N, sizeof(*ev));
	mp_solver_t *s = mp_solver_new(NULL);
	mp_plot_input_t in;
	mp_plot_options_t po = {.charts = MP_PLOT_ALL, .width = 900, .max_oom_maps = 8, .top = 20};
	mp_scene_t *scene;
	mp_source_t *src;
	mp_diag_t d;

	(void)state;
	for (size_t i = 0; i < sizeof(longop) - 1; i++)
		longop[i] = "model/layer_12/attention/"[i % 25];
	strings[0] = "";
	strings[1] = longop;
	strings[2] = "f32[8192,8192,8192,8192,8192,8192,8192,8192]\xff\xfe"; /* not UTF-8 */
	/* two regions, blocks of every size, a failure every 300 events,
	 * a step every 40 events */
	ev[0].kind = MP_EV_REGION_ADD, ev[0].address = 1 << 20, ev[0].requested_bytes = 32 * MiB;
	ev[1].kind = MP_EV_REGION_ADD, ev[1].address = 1ull << 32, ev[1].requested_bytes = 32 * MiB;
	for (size_t i = 2; i < N; i++) {
		mp_event_t *e = &ev[i];
		e->time_ns = i * 1000;
		e->step = (int64_t)(i / 40);
		e->op = 1;
		e->shape = 2;
		e->region = (uint8_t)(i % 6);
		if (i % 300 == 0) {
			e->kind = MP_EV_ALLOC_FAILED;
			e->requested_bytes = 40 * MiB;
		} else if (i % 3 == 2 && i > 10) {
			e->kind = MP_EV_FREE;
			e->address = ev[i - 2].address;
		} else {
			e->kind = MP_EV_ALLOC;
			e->address = (i % 2 ? 1 << 20 : 1ull << 32) + (i * 7919 % 4096) * 8192;
			e->requested_bytes = e->allocated_bytes = 4096 + (i % 5) * 1024;
		}
		e->memory = i % 7 == 0;
	}
	assert_int_equal(mp_array_source_new(&src, ev, N, strings, 3, mem, 2, "long.memprof"), 0);
	assert_int_equal(mp_solver_run(s, src, &d), 0);
	memset(&in, 0, sizeof(in));
	in.name = "a/very/long/path/to/a/capture/whose/name/is/long/as/well/long.memprof";
	in.solver = s;
	in.source = src;
	if (tr_plot_capture(&scene, &in, 1, &po, mp_render_measure(), &d) < 0)
		fail_msg("%s", d.text);
	assert_true(mp_scene_width(scene) == 900);
	assert_true(cc_count(scene, "oom-mark") > 10);
	assert_int_equal(cc_texts_clear(scene, mp_render_measure()), 0);
	{ /* the bytes that are not UTF-8 do not stop cairo */
		char *png = write_png(scene);
		unlink(png);
		free(png);
	}
	mp_scene_free(scene);
	/* too small a height is refused, naming what the charts need */
	po.height = 300;
	assert_int_equal(tr_plot_capture(&scene, &in, 1, &po, mp_render_measure(), &d), MP_EUSAGE);
	assert_non_null(strstr(d.text, "too small"));
	mp_source_close(src);
	mp_solver_free(s);
	free(ev);
}

/* ---- shared xplane captures ---- */

static void test_xplane_tf(void **state)
{
	const char *path = mp_test_shared("xplane/tf24-gpu-e4040-2022/logs/fit/20221104-212610/train/plugins/profile/"
					  "2022_11_04_21_26_12/instance-ecbm.xplane.pb");
	analysed_t a;
	char *png;
	const mp_scene_item_t *plot, *line;

	(void)state;
	if (!path)
		skip();
	analyse(&a, path, MP_PLOT_ALL, 0);
	/* TensorFlow's own memory_profile.json.gz of the run says
	 * peakBytesInUse 53543168 for GPU_0_bfc, 3072 for gpu_host_bfc */
	assert_string_equal(mp_scene_string(a.scene, cc_find(a.scene, "peak-label", 0)), "peak 53543168 B (51.06 MiB)");
	assert_string_equal(mp_scene_string(a.scene, cc_find(a.scene, "peak-label", 1)), "peak 3072 B (3.00 KiB)");
	/* no regions in xplane captures: no map, and the picture says why */
	assert_int_equal(cc_count(a.scene, "map-row"), 0);
	assert_int_equal(cc_texts_clear(a.scene, mp_render_measure()), 0);
	png = write_png(a.scene);
	plot = cc_find(a.scene, "plot", 0);
	line = cc_find(a.scene, "peak-line", 0);
	/* the capacity (13.6 GiB) is far above the 51 MiB peak: the scale
	 * follows what was used, so the peak reaches 80 % of the plot */
	assert_pixel(png, mp_scene_points(a.scene, line)[0].x + 1, plot->y + plot->h * 0.5, MP_COLOR_HEAP);
	unlink(png);
	free(png);
	release(&a);
}

static void test_xplane_multi(void **state)
{
	const char *path = mp_test_shared("xplane/tf24-8gpu-multiworker/demo/plugins/profile/GPU-multi-worker/"
					  "34.83.195.179_6003.xplane.pb");
	analysed_t a;
	json_t *doc;
	size_t ndev, i;
	const mp_scene_item_t *prev = NULL;

	(void)state;
	if (!path)
		skip();
	doc = report_json(path);
	ndev = json_array_size(json_object_get(doc, "devices"));
	analyse(&a, path, MP_PLOT_TIMELINE, 0);
	/* one panel per memory id with a peak, highest peak first */
	assert_int_equal(cc_count(a.scene, "peak-label"), ndev);
	for (i = 0; i < ndev; i++) {
		const mp_scene_item_t *l = cc_find(a.scene, "peak-label", i);
		if (prev) {
			uint64_t p = strtoull(mp_scene_string(a.scene, prev) + 5, NULL, 10);
			uint64_t q = strtoull(mp_scene_string(a.scene, l) + 5, NULL, 10);
			assert_true(p >= q);
		}
		prev = l;
	}
	assert_int_equal(cc_texts_clear(a.scene, mp_render_measure()), 0);
	release(&a);
	json_decref(doc);
	/* 8 short panels of peaks near their right edge (mi300x): each peak's
	 * label over none of what was in use (the scale makes room above) */
	if (!(path = mp_test_shared("xplane/jax-mi300x-tracelens/tests/traces/mi300/jax_conv_minimal_legacy/"
				    "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb")))
		return;
	analyse(&a, path, MP_PLOT_TIMELINE, 1920);
	assert_int_equal(cc_count(a.scene, "peak-label"), 8);
	for (i = 0; i < 8; i++)
		assert_int_equal(cc_label_over_area(a.scene, cc_find(a.scene, "peak-label", i),
						    cc_find(a.scene, "area-heap", i), mp_render_measure()), 0);
	release(&a);
}

/* ---- the command line ---- */

static void test_cli_plot_files(void **state)
{
	char cmd[4096], root[16], w[32], h[32], err[256];
	char *svg = mp_test_tmpfile(".svg"), *svg2 = mp_test_tmpfile(".svg"), *png = mp_test_tmpfile(".png"),
	     *png2 = mp_test_tmpfile(".png");
	int pw, ph;

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s plot '%s' --chart all --width 1000 -o %s 2>/dev/null", MEMPROF, demo, svg);
	assert_int_equal(rc_run(cmd, NULL), 0);
	if (rc_svg_parse(svg, root, sizeof(root), w, h, sizeof(w), err, sizeof(err)) < 0)
		fail_msg("%s: %s", svg, err);
	assert_string_equal(root, "svg");
	assert_string_equal(w, "1000px");
	snprintf(cmd, sizeof(cmd), "%s plot '%s' --chart all --width 1000 -o %s 2>/dev/null", MEMPROF, demo, svg2);
	assert_int_equal(rc_run(cmd, NULL), 0);
	assert_true(rc_same_bytes(svg, svg2));
	snprintf(cmd, sizeof(cmd), "%s plot '%s' --chart all --width 1000 -o %s 2>/dev/null", MEMPROF, demo, png);
	assert_int_equal(rc_run(cmd, NULL), 0);
	snprintf(cmd, sizeof(cmd), "%s plot '%s' --chart all --width 1000 -o %s 2>/dev/null", MEMPROF, demo, png2);
	assert_int_equal(rc_run(cmd, NULL), 0);
	assert_true(rc_same_bytes(png, png2));
	assert_int_equal(rc_png_size(png, &pw, &ph), 0);
	assert_int_equal(pw, 1000);
	assert_int_equal(ph, atoi(h)); /* the SVG and the PNG of one picture */
	/* a height asked for is the height drawn */
	snprintf(cmd, sizeof(cmd), "%s plot '%s' --width 800 --height 500 -o %s 2>/dev/null", MEMPROF, demo, svg);
	assert_int_equal(rc_run(cmd, NULL), 0);
	assert_int_equal(rc_svg_parse(svg, root, sizeof(root), w, h, sizeof(w), err, sizeof(err)), 0);
	assert_string_equal(w, "800px");
	assert_string_equal(h, "500px");
	unlink(svg);
	unlink(svg2);
	unlink(png);
	unlink(png2);
	free(svg);
	free(svg2);
	free(png);
	free(png2);
}

/* A command that must fail with `code`, print one line naming `what`,
 * and leave no file at out. */
static void expect_failure(const char *args, const char *out, int code, const char *what)
{
	char cmd[4096], *err;
	struct stat st;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1 >/dev/null", MEMPROF, args);
	assert_int_equal(rc_run(cmd, &err), code);
	if (!strstr(err, what))
		fail_msg("'%s' says '%s', expected it to name '%s'", args, err, what);
	assert_true(stat(out, &st) != 0);
	free(err);
}

static void test_cli_plot_errors(void **state)
{
	char args[4096], *empty = mp_test_tmpfile(".memprof"), *out = mp_test_tmpfile(".svg");
	mp_writer_t *w;
	mp_diag_t d;

	(void)state;
	snprintf(args, sizeof(args), "plot '%s' -o /tmp/chart.pdf", demo);
	expect_failure(args, "/tmp/chart.pdf", 2, "chart.pdf");
	snprintf(args, sizeof(args), "plot '%s' --chart pie -o %s", demo, out);
	expect_failure(args, out, 2, "pie");
	snprintf(args, sizeof(args), "plot '%s' -o /nonexistent-dir/chart.svg", demo);
	expect_failure(args, "/nonexistent-dir/chart.svg", 3, "/nonexistent-dir/chart.svg");
	snprintf(args, sizeof(args), "plot '%s' --chart all --height 300 -o %s", demo, out);
	expect_failure(args, out, 2, "too small");
	snprintf(args, sizeof(args), "report --svg %s.png '%s'", out, demo);
	expect_failure(args, out, 2, ".svg");
	/* a capture without memory events: said, nothing written */
	assert_int_equal(mp_writer_open(&w, empty, 1, NULL, &d), 0);
	assert_true(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0) >= 0);
	assert_int_equal(mp_writer_close(w), 0);
	snprintf(args, sizeof(args), "plot '%s' -o %s", empty, out);
	expect_failure(args, out, 1, "no memory events");
	unlink(empty);
	free(empty);
	free(out);
}

static void test_cli_report_picture(void **state)
{
	char cmd[4096], *out, *png = mp_test_tmpfile(".png");
	json_t *doc;
	int w, h;

	(void)state;
	/* the text report as always, and the picture beside it */
	snprintf(cmd, sizeof(cmd), "%s report '%s' --png %s 2>/dev/null", MEMPROF, demo, png);
	assert_int_equal(rc_run(cmd, &out), 0);
	assert_non_null(strstr(out, "peak in use       66060288 B (63.00 MiB)"));
	free(out);
	assert_int_equal(rc_png_size(png, &w, &h), 0);
	assert_int_equal(w, 1200);
	/* JSON on stdout stays JSON, the report's */
	snprintf(cmd, sizeof(cmd), "%s report --json '%s' --png %s 2>/dev/null", MEMPROF, demo, png);
	assert_int_equal(rc_run(cmd, &out), 0);
	doc = mp_test_json_loads(out, "report");
	json_decref(doc);
	free(out);
	unlink(png);
	free(png);
}

/* A capture of two million events keeps its pictures small: the timeline
 * is cut to the pixel columns (at most 300 KiB, whatever the length: the
 * benchmark checks 100 million events), and a map is an image per row
 * whatever its block count (the 20,000 live blocks here, or millions). */
static void test_cli_big_capture(void **state)
{
	char cmd[4096], *cap = mp_test_tmpfile(".memprof"), *svg = mp_test_tmpfile(".svg");
	struct stat st;
	static const struct {
		const char *chart;
		long long max;
	} want[] = {{"timeline", 300 * 1024}, {"map", 500 * 1024}};

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s/tests/report/memprof_gen_capture %s --events 2000000 --live 20000 --oom 3 >/dev/null",
		 MEMPROF_BINARY_DIR, cap);
	assert_int_equal(rc_run(cmd, NULL), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s plot '%s' --chart %s -o %s 2>/dev/null", MEMPROF, cap, want[i].chart, svg);
		assert_int_equal(rc_run(cmd, NULL), 0);
		assert_int_equal(stat(svg, &st), 0);
		if (st.st_size > want[i].max)
			fail_msg("%s chart: %lld bytes, more than %lld", want[i].chart, (long long)st.st_size, want[i].max);
	}
	unlink(cap);
	unlink(svg);
	free(cap);
	free(svg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demo_timeline),
		cmocka_unit_test(test_demo_maps),
		cmocka_unit_test(test_demo_all),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_xplane_tf),
		cmocka_unit_test(test_xplane_multi),
		cmocka_unit_test(test_cli_plot_files),
		cmocka_unit_test(test_cli_plot_errors),
		cmocka_unit_test(test_cli_report_picture),
		cmocka_unit_test(test_cli_big_capture),
	};

	return cmocka_run_group_tests(tests, record_demo, remove_demo);
}
