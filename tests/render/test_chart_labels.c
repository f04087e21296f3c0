/* test_chart_labels.c - the timeline's labels hide nothing drawn (issue
 * 41, item 1): the peak's and the failed allocation's boxes never lie over
 * what was in use, nor over the fragmentation line, wherever the peak and
 * the failure fall; a label put away from its line gets a leader. On the
 * demo capture (its timing differs from run to run: recorded here) and on
 * a made pool whose peak fills it (64 MiB of 64) and whose fragmentation
 * is 93.75 % (16 holes of 64 KiB) when a 6 MiB request fails, at several
 * sizes. */
#include "test_common.h"

#include <memprof/array_source.h>
#include <memprof/capture.h>
#include <memprof/plot.h>
#include <memprof/render.h>
#include <memprof/solver.h>

#include "chart_check.h"
#include "plot_reads.h"

#include <math.h>
#include <sys/wait.h>

#define MiB 1048576ull
#define KiB 1024ull
#define US 1000ull

/* Whether box b hides any of path it: an area (closed: what lies under
 * its horizontal runs, down to bottom) or a line (each segment's box). */
static int hides(const mp_scene_t *s, const mp_box_t *b, const mp_scene_item_t *it, double bottom)
{
	const mp_point_t *p = mp_scene_points(s, it);

	for (uint32_t i = 0; i + 1 < it->count; i++) {
		double x0 = fmin(p[i].x, p[i + 1].x), x1 = fmax(p[i].x, p[i + 1].x);
		double y0 = fmin(p[i].y, p[i + 1].y), y1 = fmax(p[i].y, p[i + 1].y);
		if (it->closed) {
			if (p[i].y != p[i + 1].y || p[i].y >= bottom - 0.5)
				continue; /* the area's sides and its base */
			y1 = bottom;
		}
		if (x1 > b->x && x0 < b->x + b->w && y1 > b->y && y0 < b->y + b->h)
			return 1;
	}
	return 0;
}

/* Every label box of the panel whose plot is the p-th: over none of what
 * was in use, the fragmentation line; returns how many boxes. */
static size_t check_labels(const mp_scene_t *s, size_t p)
{
	const mp_scene_item_t *plot = cc_find(s, "plot", p), *heap = cc_find(s, "area-heap", p);
	double bottom = plot->y + plot->h - 1, next = 1e300;
	size_t n = 0;

	if (p + 1 < cc_count(s, "plot"))
		next = cc_find(s, "plot", p + 1)->y;
	for (size_t i = 0; i < cc_count(s, "label-box"); i++) {
		const mp_scene_item_t *lb = cc_find(s, "label-box", i);
		mp_box_t b = {lb->x, lb->y, lb->w, lb->h};
		if (lb->y < plot->y - 1 || lb->y > next)
			continue;
		if (hides(s, &b, heap, bottom))
			fail_msg("a label box at (%.0f, %.0f) hides what was in use", b.x, b.y);
		for (size_t k = 0; k < cc_count(s, "fragmentation"); k++) {
			const mp_scene_item_t *f = cc_find(s, "fragmentation", k);
			if (mp_scene_points(s, f)[0].y >= plot->y - 1 && mp_scene_points(s, f)[0].y <= bottom + 1 &&
			    hides(s, &b, f, bottom))
				fail_msg("a label box at (%.0f, %.0f) hides the fragmentation line", b.x, b.y);
		}
		n++;
	}
	return n;
}

/* ---- a made pool ---- */

static mp_event_t *pool_events(size_t *n)
{
	mp_event_t *ev = calloc(4096, sizeof(*ev));
	const uint64_t base = 1ull << 32, blk = 64 * KiB;
	size_t k = 0;

	ev[k++] = (mp_event_t){.kind = MP_EV_REGION_ADD, .address = base, .requested_bytes = 64 * MiB, .step = -1};
	for (uint64_t i = 0; i < 1024; i++) { /* 200 blocks at once, held, then up to the full pool */
		uint64_t t = i < 200 ? i : 600 + (i - 200) * 200 / 824;
		ev[k++] = (mp_event_t){.time_ns = t * US, .kind = MP_EV_ALLOC, .address = base + i * blk,
				       .requested_bytes = blk, .allocated_bytes = blk, .step = -1};
	}
	for (uint64_t h = 0; h < 16; h++) /* 16 holes far apart: 1 MiB free, the largest 64 KiB */
		ev[k++] = (mp_event_t){.time_ns = (801 + h) * US, .kind = MP_EV_FREE, .address = base + (h * 64 + 7) * blk,
				       .step = -1};
	ev[k++] = (mp_event_t){.time_ns = 820 * US, .kind = MP_EV_ALLOC_FAILED, .requested_bytes = 6 * MiB, .step = -1};
	for (uint64_t i = 1023; i >= 300; i--) /* then back to 300 blocks */
		if ((i % 64) != 7)
			ev[k++] = (mp_event_t){.time_ns = (900 - (i - 300) * 70 / 723) * US, .kind = MP_EV_FREE,
					       .address = base + i * blk, .step = -1};
	for (size_t i = 0; i < k; i++)
		ev[i].index = i;
	*n = k;
	return ev;
}

static void test_made_pool(void **state)
{
	static const char *strings[1] = {""};
	static const double sizes[][2] = {{1200, 700}, {1200, 420}, {800, 420}, {1600, 900}, {600, 420}};
	mp_memory_info_t mem = {"pool", 64 * MiB, MP_MEMORY_DEVICE, NULL};
	mp_source_t *src;
	mp_solver_t *solver;
	mp_event_t *ev;
	size_t n;
	mp_diag_t d;

	(void)state;
	ev = pool_events(&n);
	for (size_t i = 1; i < n; i++) /* a stream's times go forwards */
		assert_true(ev[i].time_ns >= ev[i - 1].time_ns);
	assert_int_equal(mp_array_source_new(&src, ev, n, strings, 1, &mem, 1, "pool.memprof"), 0);
	assert_non_null(solver = mp_solver_new(NULL));
	assert_int_equal(mp_solver_run(solver, src, &d), 0);
	assert_int_equal(mp_solver_device(solver, 0)->peak_bytes, 64 * MiB);
	assert_int_equal(mp_solver_device(solver, 0)->oom_count, 1);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		mp_plot_options_t po = {.charts = MP_PLOT_TIMELINE, .width = sizes[i][0], .height = sizes[i][1]};
		mp_plot_input_t in;
		mp_scene_t *s;
		memset(&in, 0, sizeof(in));
		in.name = "pool.memprof";
		in.solver = solver;
		in.source = src;
		if (tr_plot_capture(&s, &in, 1, &po, mp_render_measure(), &d) < 0)
			fail_msg("mp_plot_capture: %s", d.text);
		assert_int_equal(cc_count(s, "peak-label"), 1);
		assert_int_equal(cc_count(s, "oom-label"), 1);
		assert_true(cc_count(s, "fragmentation") >= 1);
		assert_int_equal(check_labels(s, 0), 2);
		assert_int_equal(cc_texts_clear(s, mp_render_measure()), 0);
		mp_scene_free(s);
	}
	mp_solver_free(solver);
	mp_source_close(src);
	free(ev);
}

/* ---- the demo, recorded ---- */

static void test_demo(void **state)
{
	char *demo = mp_test_tmpfile(".memprof");
	mp_plot_options_t po = {.charts = MP_PLOT_TIMELINE};
	mp_plot_input_t in;
	mp_source_t *src;
	mp_solver_t *solver;
	mp_scene_t *s;
	mp_diag_t d;
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	if (pid == 0) {
		setenv("MEMPROF_OUTPUT", demo, 1);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execl(MEMPROF_DEMO_VICTIM, MEMPROF_DEMO_VICTIM, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(mp_capture_open_source(&src, demo, &d), 0);
	assert_non_null(solver = mp_solver_new(NULL));
	assert_int_equal(mp_solver_run(solver, src, &d), 0);
	memset(&in, 0, sizeof(in));
	in.name = demo;
	in.solver = solver;
	in.source = src;
	if (tr_plot_capture(&s, &in, 1, &po, mp_render_measure(), &d) < 0)
		fail_msg("mp_plot_capture: %s", d.text);
	assert_int_equal(check_labels(s, 0), 2); /* the peak's and the failure's */
	mp_scene_free(s);
	mp_solver_free(solver);
	mp_source_close(src);
	unlink(demo);
	free(demo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_made_pool),
		cmocka_unit_test(test_demo),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	mp_render_shutdown();
	return rc;
}
