/* test_diff_chart.c - the picture of `memprof plot --diff` (mp_plot_diff)
 * from hand-made timelines and changes: both series on one axis, their
 * peaks where their bytes and times put them, diverging bars from one
 * zero line in proportion to the changes; timelines aligned at the first
 * step both have, failed allocations marked. */
#include "test_common.h"

#include <memprof/plot.h>
#include <memprof/render.h>

#include <math.h>

static const mp_scene_item_t *one(const mp_scene_t *s, const char *tag)
{
	size_t from = 0;
	const mp_scene_item_t *it = mp_scene_find(s, tag, &from);

	if (!it)
		fail_msg("no item tagged %s", tag);
	assert_null(mp_scene_find(s, tag, &from)); /* exactly one */
	return it;
}

static void test_geometry(void **state)
{
	/* A: 0, 4096, 12288 (peak at 2000 ns), 8192; B: 0, 4096, 20480 (peak
	 * at 2500 ns), 8192, over 4000 ns */
	mp_solver_point_t pa[4], pb[4];
	static const uint64_t ta[] = {0, 1000, 2000, 3000}, ha[] = {0, 4096, 12288, 8192};
	static const uint64_t tb[] = {0, 1000, 2500, 4000}, hb[] = {0, 4096, 20480, 8192};
	mp_solver_device_t a, b;
	mp_plot_diff_bar_t bars[2] = {{"attn  output  float  [64]", 8192, "new"}, {"conv", -4096, NULL}};
	mp_plot_diff_memory_t m;
	mp_scene_t *s = NULL;
	mp_diag_t diag;
	const mp_scene_item_t *sa, *ka, *kb, *g, *k;
	const mp_point_t *p;

	(void)state;
	memset(pa, 0, sizeof(pa));
	memset(pb, 0, sizeof(pb));
	for (int i = 0; i < 4; i++) {
		pa[i].time_ns = ta[i];
		pa[i].heap_bytes = ha[i];
		pb[i].time_ns = tb[i];
		pb[i].heap_bytes = hb[i];
	}
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.timeline = pa;
	a.timeline_count = 4;
	a.has_peak = 1;
	a.peak_bytes = 12288;
	a.peak = pa[2];
	b.timeline = pb;
	b.timeline_count = 4;
	b.has_peak = 1;
	b.peak_bytes = 20480;
	b.peak = pb[2];
	m = (mp_plot_diff_memory_t){"gpu", &a, &b, "a.memprof", "b.memprof", 0, bars, 2};
	mp_diag_clear(&diag);
	assert_int_equal(mp_plot_diff(&s, &m, 1, 0, mp_render_measure(), &diag), 0);
	assert_true(mp_scene_width(s) == 1200);
	sa = one(s, "diff-series-a");
	one(s, "diff-series-b");
	ka = one(s, "diff-peak-a");
	kb = one(s, "diff-peak-b");
	p = mp_scene_points(s, sa);
	assert_int_equal(sa->count, 7); /* a step function: 4 points and 3 corners */
	assert_true(p[1].x == p[2].x && p[1].y == p[0].y); /* 4096 B up to 1000 ns */
	/* p[0]: (time 0, 0 bytes): the origin of both scales */
	double xa = ka->x + ka->w / 2 - p[0].x, xb = kb->x + kb->w / 2 - p[0].x;
	double ya = p[0].y - (ka->y + ka->h / 2), yb = p[0].y - (kb->y + kb->h / 2);
	assert_true(fabs(xb / xa - 2500.0 / 2000.0) < 1e-9);
	assert_true(fabs(yb / ya - 20480.0 / 12288.0) < 1e-9);
	/* the axis runs to B's last point: A's last point at 3/4 of it */
	assert_true(fabs((p[6].x - p[0].x) / (mp_scene_points(s, one(s, "diff-series-b"))[6].x - p[0].x) - 0.75) < 1e-9);
	g = one(s, "diff-bar-grown");
	k = one(s, "diff-bar-shrunk");
	assert_true(fabs(g->x - (k->x + k->w)) < 1e-9); /* both from the zero line */
	assert_true(fabs(g->w - 2 * k->w) < 1e-9);      /* 8192 against 4096 */
	assert_true(fabs(g->y + g->h / 2 - (k->y + k->h / 2) + 22.0) < 1e-9); /* one row apart, largest first */
	mp_scene_free(s);

	/* nothing to draw, too narrow */
	assert_int_equal(mp_plot_diff(&s, &m, 0, 0, mp_render_measure(), &diag), MP_ENODATA);
	assert_null(s);
	assert_int_equal(mp_plot_diff(&s, &m, 1, 300, mp_render_measure(), &diag), MP_EUSAGE);
	assert_null(s);
	mp_render_shutdown();
}

static void fill(mp_solver_point_t *p, const uint64_t *t, const uint64_t *h, const int64_t *step, size_t n)
{
	memset(p, 0, n * sizeof(*p));
	for (size_t i = 0; i < n; i++) {
		p[i].time_ns = t[i];
		p[i].heap_bytes = h[i];
		p[i].step = step[i];
	}
}

/* Steps in both: aligned at the first step both have. A: step 2 at 0 ns,
 * step 3 from 1000 ns (peak 12288 at 2000), step 4 at 3000; a failed
 * allocation at 500 ns. B: step 3 from 0 ns (peak 20480 at 500), step 4
 * from 1500 (a failed allocation there) to 2500. Step 3 starts 1000 ns
 * into A and at once in B: B is drawn 1000 ns later, the axis runs to
 * 2500 + 1000 = 3500 ns. Without steps in A both start at 0. */
static void test_align_failed(void **state)
{
	mp_solver_point_t pa[4], pb[4];
	static const uint64_t ta[] = {0, 1000, 2000, 3000}, ha[] = {4096, 4096, 12288, 8192};
	static const uint64_t tb[] = {0, 500, 1500, 2500}, hb[] = {4096, 20480, 8192, 8192};
	static const int64_t sa_[] = {2, 3, 3, 4}, sb_[] = {3, 3, 4, 4}, none[] = {-1, -1, -1, -1};
	mp_solver_oom_t oa = {{0}, 0, 1 << 20, NULL, 0}, ob = {{0}, 0, 1 << 21, NULL, 0};
	mp_solver_device_t a, b;
	mp_plot_diff_memory_t m;
	mp_scene_t *s = NULL;
	mp_diag_t diag;
	const mp_point_t *p, *q, *fa, *fb;
	const mp_scene_item_t *line, *kb;
	size_t from = 0;
	double x0, w;

	(void)state;
	fill(pa, ta, ha, sa_, 4);
	fill(pb, tb, hb, sb_, 4);
	oa.at.time_ns = 500;
	ob.at.time_ns = 1500;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a = (mp_solver_device_t){.timeline = pa, .timeline_count = 4, .has_peak = 1, .peak_bytes = 12288, .peak = pa[2],
				 .oom = &oa, .oom_count = 1, .oom_total = 1, .failed_allocations = 1};
	b = (mp_solver_device_t){.timeline = pb, .timeline_count = 4, .has_peak = 1, .peak_bytes = 20480, .peak = pb[1],
				 .oom = &ob, .oom_count = 1, .oom_total = 1, .failed_allocations = 1};
	m = (mp_plot_diff_memory_t){"gpu", &a, &b, "a.memprof", "b.memprof", 0, NULL, 0};
	mp_diag_clear(&diag);
	assert_int_equal(mp_plot_diff(&s, &m, 1, 0, mp_render_measure(), &diag), 0);
	p = mp_scene_points(s, one(s, "diff-series-a"));
	q = mp_scene_points(s, one(s, "diff-series-b"));
	x0 = p[0].x;
	w = q[6].x - x0; /* 3500 ns (points 0, 2, 4, 6; corners between) */
	assert_true(fabs(q[0].x - p[2].x) < 1e-9);             /* step 3's starts on one x */
	assert_true(fabs((p[6].x - x0) / w - 3000.0 / 3500.0) < 1e-9);
	kb = one(s, "diff-peak-b");
	assert_true(fabs((kb->x + kb->w / 2 - x0) / w - 1500.0 / 3500.0) < 1e-9);
	line = one(s, "diff-step-align");
	assert_true(fabs(mp_scene_points(s, line)[0].x - p[2].x) <= 0.5); /* the aligned step's line, pixel-snapped */
	/* failed allocations: a triangle each, pointing at its time */
	fa = mp_scene_points(s, one(s, "diff-failed-a"));
	fb = mp_scene_points(s, one(s, "diff-failed-b"));
	assert_true(fabs((fa[2].x - x0) / w - 500.0 / 3500.0) < 1e-9);
	assert_true(fabs((fb[2].x - x0) / w - 2500.0 / 3500.0) < 1e-9);
	assert_true(fb[0].y > fa[0].y); /* B's under A's */
	mp_scene_free(s);

	/* no steps in A: both from their first point, no aligned step */
	fill(pa, ta, ha, none, 4);
	a.peak = pa[2];
	assert_int_equal(mp_plot_diff(&s, &m, 1, 0, mp_render_measure(), &diag), 0);
	assert_null(mp_scene_find(s, "diff-step-align", &from));
	p = mp_scene_points(s, one(s, "diff-series-a"));
	q = mp_scene_points(s, one(s, "diff-series-b"));
	assert_true(fabs(q[0].x - p[0].x) < 1e-9);
	assert_true(fabs((q[6].x - p[0].x) / (p[6].x - p[0].x) - 2500.0 / 3000.0) < 1e-9);
	mp_scene_free(s);
	mp_render_shutdown();
}

/* Both flat after 2000 ns (A's last change, 4 B at 10000 ns, is under 1%
 * of the peak): the axis ends at 2000 * 1.05 = 2100 ns, A's tail cut there. */
static void test_flat_tail(void **state)
{
	mp_solver_point_t pa[4], pb[3];
	static const uint64_t ta[] = {0, 1000, 2000, 10000}, ha[] = {4096, 8192, 4096, 4100};
	static const uint64_t tb[] = {0, 1000, 2000}, hb[] = {4096, 8192, 4096};
	static const int64_t none[] = {-1, -1, -1, -1};
	mp_solver_device_t a, b;
	mp_plot_diff_memory_t m;
	mp_scene_t *s = NULL;
	mp_diag_t diag;
	const mp_point_t *p, *q;

	(void)state;
	fill(pa, ta, ha, none, 4);
	fill(pb, tb, hb, none, 3);
	a = (mp_solver_device_t){.timeline = pa, .timeline_count = 4, .has_peak = 1, .peak_bytes = 8192, .peak = pa[1]};
	b = (mp_solver_device_t){.timeline = pb, .timeline_count = 3, .has_peak = 1, .peak_bytes = 8192, .peak = pb[1]};
	m = (mp_plot_diff_memory_t){"gpu", &a, &b, "a", "b", 0, NULL, 0};
	mp_diag_clear(&diag);
	assert_int_equal(mp_plot_diff(&s, &m, 1, 0, mp_render_measure(), &diag), 0);
	p = mp_scene_points(s, one(s, "diff-series-a"));
	q = mp_scene_points(s, one(s, "diff-series-b"));
	assert_true(fabs((p[6].x - p[0].x) / (q[4].x - q[0].x) - 2100.0 / 2000.0) < 1e-9);
	assert_true(fabs(q[4].x - p[4].x) < 1e-9);
	mp_scene_free(s);
	mp_render_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_align_failed),
		cmocka_unit_test(test_flat_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
