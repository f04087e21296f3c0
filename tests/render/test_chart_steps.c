/* test_chart_steps.c - the step lanes of the timeline: drawn from the
 * input's step marks (MP_EV_STEP: their time and number), the same spans
 * in every panel of one input however late a memory id's first event
 * comes, in time order, and one note line when the marks' ids repeat or
 * go backwards; on the shared TF 2.4 capture (steps carried by each event,
 * no marks), the same spans in both panels, ids never going backwards. */
#include "test_common.h"

#include <memprof/array_source.h>
#include <memprof/capture.h>
#include <memprof/plot.h>
#include <memprof/render.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>

#include "chart_check.h"
#include "plot_reads.h"

#include <math.h>

#define MS 1000000ull

typedef struct plotted {
	mp_event_t *ev;
	mp_source_t *src;
	mp_solver_t *solver;
	mp_scene_t *scene;
} plotted_t;

/* Two memory ids: "early" allocates every ms from 0 to 100 ms, "late" from
 * 35 ms (65 % of the input's span: its panel keeps the input's axis); the
 * steps marked at marks_ms[i] with ids[i]. */
static void plot_marks(plotted_t *p, const uint64_t *marks_ms, const int64_t *ids, size_t nmarks)
{
	static const char *strings[1] = {""};
	mp_memory_info_t mem[2] = {{"early", 0, MP_MEMORY_HOST, NULL}, {"late", 0, MP_MEMORY_HOST, NULL}};
	mp_plot_options_t po = {.charts = MP_PLOT_TIMELINE};
	mp_plot_input_t in;
	size_t n = 0, k = 0;
	int64_t step = -1;
	mp_diag_t d;

	p->ev = calloc(200 + nmarks, sizeof(*p->ev));
	for (uint64_t t = 0; t <= 100; t++) {
		for (; k < nmarks && marks_ms[k] <= t; k++) {
			mp_event_t *e = &p->ev[n++];
			e->kind = MP_EV_STEP;
			e->time_ns = marks_ms[k] * MS;
			e->step = step = ids[k];
		}
		for (uint32_t m = 0; m < 2; m++) {
			mp_event_t *e = &p->ev[n++];
			if (m == 1 && t < 35) {
				n--;
				continue;
			}
			e->kind = MP_EV_ALLOC;
			e->time_ns = t * MS;
			e->memory = m;
			e->step = step;
			e->address = 4096 * (t + 1) + m * (1ull << 32);
			e->requested_bytes = e->allocated_bytes = 1024 * (m + 1);
		}
	}
	assert_int_equal(mp_array_source_new(&p->src, p->ev, n, strings, 1, mem, 2, "steps.memprof"), 0);
	assert_non_null(p->solver = mp_solver_new(NULL));
	assert_int_equal(mp_solver_run(p->solver, p->src, &d), 0);
	memset(&in, 0, sizeof(in));
	in.name = "steps.memprof";
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
	free(p->ev);
}

/* The step spans of each panel (told apart by their y), left edges and
 * right edges; returns the panels found. */
#define MAXS 64
typedef struct lane {
	double y, x0[MAXS], x1[MAXS];
	size_t n;
} lane_t;

static size_t lanes(const mp_scene_t *s, lane_t *l, size_t max)
{
	size_t from = 0, nl = 0;
	const mp_scene_item_t *it;

	while ((it = mp_scene_find(s, "step", &from))) {
		size_t i = 0;
		while (i < nl && fabs(l[i].y - it->y) > 0.01)
			i++;
		if (i == nl) {
			assert_true(nl < max);
			memset(&l[nl++], 0, sizeof(*l));
			l[i].y = it->y;
		}
		assert_true(l[i].n < MAXS);
		l[i].x0[l[i].n] = it->x;
		l[i].x1[l[i].n++] = it->x + it->w;
	}
	return nl;
}

/* Where x is along panel p's plot, 0 to 1 (the panels' left margins
 * follow their tick labels). */
static double along(const mp_scene_t *s, size_t p, double x)
{
	const mp_scene_item_t *plot = cc_find(s, "plot", p);

	return (x - plot->x) / plot->w;
}

/* Every panel's spans: in time order, touching, at the same times as the
 * first panel's. */
static void same_spans(const mp_scene_t *s, const lane_t *l, size_t nl)
{
	for (size_t p = 0; p < nl; p++) {
		assert_int_equal(l[p].n, l[0].n);
		for (size_t i = 0; i < l[p].n; i++) {
			assert_true(l[p].x1[i] > l[p].x0[i]);
			if (i)
				assert_true(fabs(l[p].x0[i] - l[p].x1[i - 1]) < 0.01);
			assert_true(fabs(along(s, p, l[p].x0[i]) - along(s, 0, l[0].x0[i])) < 1e-6);
			assert_true(fabs(along(s, p, l[p].x1[i]) - along(s, 0, l[0].x1[i])) < 1e-6);
		}
	}
}

static size_t texts(const mp_scene_t *s, const char *text)
{
	size_t n = 0;

	for (size_t i = 0; i < mp_scene_count(s); i++) {
		const mp_scene_item_t *it = mp_scene_item(s, i);
		n += it->kind == MP_SCENE_TEXT && !strcmp(mp_scene_string(s, it), text);
	}
	return n;
}

/* Monotonic marks: four spans per panel at the marks' times, the second
 * memory id's panel (first event at 35 ms) with the same edges, the
 * numbers in order, no note. */
static void test_marks_monotonic(void **state)
{
	static const uint64_t at[] = {10, 30, 60, 80};
	static const int64_t id[] = {0, 1, 2, 3};
	plotted_t p;
	lane_t l[4];
	size_t nl;

	(void)state;
	plot_marks(&p, at, id, 4);
	nl = lanes(p.scene, l, 4);
	assert_int_equal(nl, 2);
	assert_int_equal(l[0].n, 4);
	same_spans(p.scene, l, nl);
	/* from the first mark (10 % of the axis in), not from the plot's left */
	assert_true(l[0].x0[0] > cc_find(p.scene, "plot", 0)->x + 10);
	assert_int_equal(texts(p.scene, "step 0"), 2);
	assert_int_equal(texts(p.scene, "step 3"), 2);
	assert_int_equal(cc_count(p.scene, "step-note"), 0);
	/* a dotted line where each starts, in both panels */
	assert_int_equal(cc_count(p.scene, "step-tick"), 8);
	release(&p);
}

/* Marks that repeat an id or go backwards are drawn as marked, with one
 * note line per panel saying so; a mark of the step already current is
 * not a new step. */
static void test_marks_backwards(void **state)
{
	static const uint64_t at[] = {10, 20, 30, 60};
	static const int64_t again[] = {0, 0, 1, 0}, back[] = {0, 2, 1, 3};
	plotted_t p;
	lane_t l[4];
	const char *s;

	(void)state;
	plot_marks(&p, at, again, 4);
	assert_int_equal(lanes(p.scene, l, 4), 2);
	assert_int_equal(l[0].n, 3); /* 0 (marked twice), 1, 0 */
	same_spans(p.scene, l, 2);
	assert_int_equal(cc_count(p.scene, "step-note"), 2);
	s = mp_scene_string(p.scene, cc_find(p.scene, "step-note", 0));
	assert_string_equal(s, "steps repeat (0 again after 1): drawn as the capture marks them");
	release(&p);

	plot_marks(&p, at, back, 4);
	assert_int_equal(lanes(p.scene, l, 4), 2);
	assert_int_equal(l[0].n, 4);
	same_spans(p.scene, l, 2);
	s = mp_scene_string(p.scene, cc_find(p.scene, "step-note", 1));
	assert_string_equal(s, "steps go backwards (2 \xe2\x86\x92 1): drawn as the capture marks them");
	release(&p);
}

/* The shared TF 2.4 capture: steps carried by each event, per allocator
 * (GPU_0_bfc and gpu_host_bfc disagreed: "step 0 | step 1 | step 0"):
 * one span per step id from its first event, the same steps in both
 * panels. */
static void test_xplane_tf_steps(void **state)
{
	const char *path = mp_test_shared("xplane/tf24-gpu-e4040-2022/logs/fit/20221104-212610/train/plugins/profile/"
					  "2022_11_04_21_26_12/instance-ecbm.xplane.pb");
	const char *args[1];
	mp_solver_options_t so;
	mp_plot_options_t po = {.charts = MP_PLOT_TIMELINE};
	mp_plot_input_t in;
	mp_source_t *src;
	mp_solver_t *solver;
	mp_scene_t *scene;
	mp_diag_t d;
	char note[256];
	lane_t l[4];
	size_t nl, zero = 0;

	(void)state;
	if (!path)
		skip();
	args[0] = path;
	mp_solver_options_init(&so);
	so.timeline_points = 2000;
	assert_true(mp_xplane_open_args(&src, args, 1, NULL, note, sizeof(note), &d) > 0);
	assert_non_null(solver = mp_solver_new(&so));
	assert_int_equal(mp_solver_run(solver, src, &d), 0);
	memset(&in, 0, sizeof(in));
	in.name = path;
	in.solver = solver;
	in.source = src;
	if (tr_plot_capture(&scene, &in, 1, &po, mp_render_measure(), &d) < 0)
		fail_msg("mp_plot_capture: %s", d.text);
	nl = lanes(scene, l, 4);
	assert_int_equal(nl, 2);
	assert_true(l[0].n >= 1);
	/* gpu_host_bfc's 3 allocations span 1.9 of the input's 9.95 ms: its
	 * panel has an axis of its own (a strip under it shows where), so its
	 * spans are the same steps at other x; in time order, touching */
	assert_int_equal(cc_count(scene, "overview-span"), 1);
	for (size_t p = 0; p < nl; p++)
		for (size_t i = 0; i < l[p].n; i++) {
			assert_true(l[p].x1[i] > l[p].x0[i]);
			if (i)
				assert_true(fabs(l[p].x0[i] - l[p].x1[i - 1]) < 0.01);
		}
	assert_int_equal(l[0].n, l[1].n);
	assert_int_equal(cc_count(scene, "step-note"), 0);
	for (size_t i = 0; i < mp_scene_count(scene); i++) {
		const mp_scene_item_t *it = mp_scene_item(scene, i);
		zero += it->kind == MP_SCENE_TEXT && !strcmp(mp_scene_string(scene, it), "step 0");
	}
	assert_true(zero <= nl); /* step 0 drawn once a panel at most */
	{ /* GPU_0_bfc's peak (3.738 ms) is in its events' step 0 but in the
	   * lane's step 1 (gpu_host_bfc's events reached step 1 at 1.05 ms):
	   * the label and the subtitle say both, never a bare "step 0" */
		size_t said = 0, bare = 0;
		for (size_t i = 0; i < mp_scene_count(scene); i++) {
			const mp_scene_item_t *it = mp_scene_item(scene, i);
			const char *s = it->kind == MP_SCENE_TEXT ? mp_scene_string(scene, it) : "";
			said += strstr(s, "step 0 (lane: 1)") != NULL ||
				strstr(s, "step 0 by its allocator's count (the steps' lane: 1)") != NULL;
			bare += strstr(s, ", step 0") && !strstr(s, ", step 0 (lane: 1)") && !strstr(s, ", step 0 by its");
		}
		assert_true(said >= 2);
		assert_int_equal(bare, 0);
	}
	mp_scene_free(scene);
	mp_solver_free(solver);
	mp_source_close(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marks_monotonic),
		cmocka_unit_test(test_marks_backwards),
		cmocka_unit_test(test_xplane_tf_steps),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	mp_render_shutdown();
	return rc;
}
