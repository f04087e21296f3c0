/* test_chart_span.c - the timeline's time axis (issue 41, item 2): a
 * memory id whose history is a sliver of its input's gets an axis of its
 * own span, with a strip under it showing where that lies in the input's;
 * times count from the input's first event, not from the clock the capture
 * kept (docs/charts.md, "One time axis per input"). */
#include "test_common.h"

#include <memprof/plot.h>
#include <memprof/render.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>

#include "chart_check.h"
#include "plot_reads.h"

typedef struct plotted {
	mp_source_t *src;
	mp_solver_t *solver;
	mp_scene_t *scene;
} plotted_t;

static void plot_xplane(plotted_t *p, const char *path)
{
	const char *args[1] = {path};
	mp_solver_options_t so;
	mp_plot_options_t po = {.charts = MP_PLOT_TIMELINE};
	mp_plot_input_t in;
	mp_diag_t d;
	char note[256];

	mp_solver_options_init(&so);
	so.timeline_points = 2000;
	assert_true(mp_xplane_open_args(&p->src, args, 1, NULL, note, sizeof(note), &d) > 0);
	assert_non_null(p->solver = mp_solver_new(&so));
	assert_int_equal(mp_solver_run(p->solver, p->src, &d), 0);
	memset(&in, 0, sizeof(in));
	in.name = path;
	in.solver = p->solver;
	in.source = p->src;
	if (tr_plot_capture(&p->scene, &in, 1, &po, mp_render_measure(), &d) < 0)
		fail_msg("mp_plot_capture: %s", d.text);
}

static void release(plotted_t *p)
{
	mp_scene_free(p->scene);
	mp_solver_free(p->solver);
	mp_source_close(p->src);
}

/* The first event of the input, on the capture's clock. */
static uint64_t first_event(const mp_solver_t *s)
{
	uint64_t t = UINT64_MAX;

	for (size_t i = 0; i < mp_solver_device_count(s); i++) {
		const mp_solver_device_t *d = mp_solver_device(s, i);
		if (d->timeline_count && d->timeline[0].time_ns < t)
			t = d->timeline[0].time_ns;
	}
	return t;
}

/* The x extent of what panel p shows in use: the heap area's points above
 * the axis. */
static void data_extent(const mp_scene_t *s, size_t p, double *x0, double *x1)
{
	const mp_scene_item_t *plot = cc_find(s, "plot", p), *area = cc_find(s, "area-heap", p);
	const mp_point_t *pt = mp_scene_points(s, area);
	double bottom = plot->y + plot->h - 1; /* the frame is a pixel outside the plot */

	*x0 = 1e300;
	*x1 = -1e300;
	for (uint32_t i = 0; i < area->count; i++)
		if (pt[i].y < bottom - 0.5) {
			*x0 = pt[i].x < *x0 ? pt[i].x : *x0;
			*x1 = pt[i].x > *x1 ? pt[i].x : *x1;
		}
}

/* Panel p's x tick labels (texts centred on the line under its plot),
 * in ns, into v (room for max); returns how many. */
static size_t x_ticks(const mp_scene_t *s, size_t p, double *v, size_t max)
{
	const mp_scene_item_t *plot = cc_find(s, "plot", p);
	size_t n = 0;

	for (size_t i = 0; i < mp_scene_count(s) && n < max; i++) {
		const mp_scene_item_t *it = mp_scene_item(s, i);
		const char *t;
		char *end;
		double x;
		if (it->kind != MP_SCENE_TEXT || it->text_style.halign != MP_ALIGN_CENTER ||
		    it->y < plot->y + plot->h || it->y > plot->y + plot->h + 12)
			continue;
		t = mp_scene_string(s, it);
		x = strtod(t, &end);
		if (end == t)
			continue;
		v[n++] = !strcmp(end, " ms") ? x * 1e6 : !strcmp(end, " s") ? x * 1e9 : !strcmp(end, " \xC2\xB5s") ? x * 1e3 : x;
	}
	return n;
}

/* The 8-GPU TF capture: GPU_1_bfc's 19 allocations lie in its last 13 ms
 * of 2.65 s, GPU_6_bfc's in its last 0.49 s. Every panel's data spans at
 * least 60 % of its plot; those two have an axis of their own and a strip
 * whose dark part is where they lie (GPU_1's at the right end); no tick
 * reads a time past the input's span (2.647 s from its first event). */
static void test_multi_gpu_spans(void **state)
{
	const char *path = mp_test_shared("xplane/tf24-8gpu-multiworker/demo/plugins/profile/GPU-multi-worker/"
					  "34.83.195.179_6003.xplane.pb");
	plotted_t p;
	size_t n, own = 0;
	char want[160], clock[32];

	(void)state;
	if (!path)
		skip();
	plot_xplane(&p, path);
	n = cc_count(p.scene, "plot");
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++) {
		const mp_scene_item_t *plot = cc_find(p.scene, "plot", i);
		double x0, x1, v[64];
		size_t nt = x_ticks(p.scene, i, v, 64);
		data_extent(p.scene, i, &x0, &x1);
		if (x1 - x0 < 0.6 * plot->w)
			fail_msg("panel %zu: its data spans %.0f of %.0f px", i, x1 - x0, plot->w);
		assert_true(nt >= 3);
		for (size_t k = 0; k < nt; k++)
			assert_true(v[k] >= 0 && v[k] <= 2.65e9);
	}
	/* GPU_6 (first panel) and GPU_1 (third) have axes of their own */
	assert_int_equal(cc_count(p.scene, "overview"), 2);
	for (size_t k = 0; k < 2; k++) {
		const mp_scene_item_t *o = cc_find(p.scene, "overview", k), *sp = cc_find(p.scene, "overview-span", k);
		assert_true(sp->x >= o->x - 1e-9 && sp->x + sp->w <= o->x + o->w + 1e-9);
		assert_true(sp->w < 0.3 * o->w);
		own++;
	}
	assert_int_equal(own, 2);
	{ /* GPU_1's at the end: 2.633 - 2.646 s of 2.647 s */
		const mp_scene_item_t *o = cc_find(p.scene, "overview", 1), *sp = cc_find(p.scene, "overview-span", 1);
		assert_true(sp->x + sp->w >= o->x + o->w - 1);
	}
	/* the panels on the input's axis start at 0 and say what 0 is */
	{
		double v[64];
		size_t nt = x_ticks(p.scene, 1, v, 64);
		assert_true(nt >= 3 && v[0] == 0);
	}
	mp_fmt_time(clock, sizeof(clock), first_event(p.solver));
	snprintf(want, sizeof(want), "time 0: the input's first event, %s on the capture's clock", clock);
	{
		size_t said = 0;
		for (size_t i = 0; i < mp_scene_count(p.scene); i++) {
			const mp_scene_item_t *it = mp_scene_item(p.scene, i);
			said += it->kind == MP_SCENE_TEXT && strstr(mp_scene_string(p.scene, it), want) != NULL;
		}
		assert_int_equal(said, 2); /* GPU_4 and gpu_host */
	}
	assert_int_equal(cc_texts_clear(p.scene, mp_render_measure()), 0);
	release(&p);
}

/* A JAX capture whose first event is 1.634 s into the profiler's session:
 * its axis reads 0 ms to 32 ms, not 1634 ms to 1666 ms. */
static void test_jax_relative(void **state)
{
	const char *path = mp_test_shared("xplane/jax-mi300x-tracelens/tests/traces/mi300/jax_conv_minimal_legacy/"
					  "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb");
	plotted_t p;

	(void)state;
	if (!path)
		skip();
	plot_xplane(&p, path);
	assert_true(first_event(p.solver) > 1600000000ull);
	for (size_t i = 0; i < cc_count(p.scene, "plot"); i++) {
		double v[64];
		size_t nt = x_ticks(p.scene, i, v, 64);
		assert_true(nt >= 3);
		assert_true(v[0] == 0);
		for (size_t k = 0; k < nt; k++)
			assert_true(v[k] < 40e6);
	}
	release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multi_gpu_spans),
		cmocka_unit_test(test_jax_relative),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	mp_render_shutdown();
	return rc;
}
