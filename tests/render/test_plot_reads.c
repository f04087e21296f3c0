/* test_plot_reads.c - the layout reads no input (issue 42): it names what
 * a picture needs read (mp_plot_capture_reads), the analysis side reads it
 * (mp_replay_read) and the layout draws what it is handed. A hand-made
 * stream: one pool [1 MiB, 2 MiB), 4 KiB then 8 KiB allocated (the peak,
 * 12 KiB, at event 3), a phase "warmup" around the second, the first
 * freed, a request of 2 MiB failing at event 6. */
#include "test_common.h"

#include <memprof/array_source.h>
#include <memprof/plot.h>
#include <memprof/render.h>
#include <memprof/replay.h>
#include <memprof/solver.h>

#define MiB 1048576ull

typedef struct stream {
	mp_source_t *src;
	mp_solver_t *solver;
	mp_plot_input_t in;
} stream_t;

static void open_stream(stream_t *s)
{
	static const char *strings[2] = {"", "warmup"};
	static mp_memory_info_t mem[1] = {{"pool", 0, MP_MEMORY_DEVICE, NULL}};
	mp_event_t ev[8];
	mp_diag_t d;

	memset(ev, 0, sizeof(ev));
	ev[0] = (mp_event_t){.kind = MP_EV_REGION_ADD, .address = MiB, .requested_bytes = MiB};
	ev[1] = (mp_event_t){.kind = MP_EV_ALLOC, .address = MiB, .requested_bytes = 4096, .allocated_bytes = 4096};
	ev[2] = (mp_event_t){.kind = MP_EV_MARK, .label = 1, .flags = MP_EVENT_F_PHASE_BEGIN};
	ev[3] = (mp_event_t){.kind = MP_EV_ALLOC, .address = MiB + 4096, .requested_bytes = 8192, .allocated_bytes = 8192};
	ev[4] = (mp_event_t){.kind = MP_EV_MARK, .label = 1, .flags = MP_EVENT_F_PHASE_END};
	ev[5] = (mp_event_t){.kind = MP_EV_FREE, .address = MiB};
	ev[6] = (mp_event_t){.kind = MP_EV_ALLOC_FAILED, .requested_bytes = 2 * MiB};
	ev[7] = (mp_event_t){.kind = MP_EV_ALLOC, .address = MiB + 16384, .requested_bytes = 2048, .allocated_bytes = 2048};
	for (size_t i = 0; i < 8; i++) {
		ev[i].time_ns = 1000 * (i + 1);
		ev[i].step = -1; /* no steps: the marks' pass is for the phase */
	}
	assert_int_equal(mp_array_source_new(&s->src, ev, 8, strings, 2, mem, 1, "pool.memprof"), 0);
	assert_non_null(s->solver = mp_solver_new(NULL));
	assert_int_equal(mp_solver_run(s->solver, s->src, &d), 0);
	memset(&s->in, 0, sizeof(s->in));
	s->in.name = "pool.memprof";
	s->in.solver = s->solver;
	s->in.source = s->src;
}

static void close_stream(stream_t *s)
{
	mp_solver_free(s->solver);
	mp_source_close(s->src);
}

/* What each kind of picture asks to be read. */
static void test_what_is_asked(void **state)
{
	mp_plot_options_t maps = {.charts = MP_PLOT_MAP}, failures = {.charts = MP_PLOT_MAP, .failures_only = 1},
			  timeline = {.charts = MP_PLOT_TIMELINE};
	mp_snapshot_target_t *t;
	size_t nt;
	int marks;
	stream_t s;

	(void)state;
	open_stream(&s);
	/* the map at the peak and at the failed allocation; no timeline */
	assert_int_equal(mp_plot_capture_reads(&s.in, &maps, &t, &nt, &marks), 0);
	assert_int_equal(nt, 2);
	assert_int_equal(t[0].memory, 0);
	assert_int_equal(t[0].event_index, 3);
	assert_int_equal(t[1].event_index, 6);
	assert_int_equal(marks, 0);
	free(t);
	assert_int_equal(mp_plot_capture_reads(&s.in, &failures, &t, &nt, &marks), 0);
	assert_int_equal(nt, 1);
	assert_int_equal(t[0].event_index, 6);
	free(t);
	/* a timeline wants the phase the solver saw; no map */
	assert_int_equal(mp_plot_capture_reads(&s.in, &timeline, &t, &nt, &marks), 0);
	assert_int_equal(nt, 0);
	assert_null(t);
	assert_int_equal(marks, 1);
	close_stream(&s);
}

/* What the analysis side reads: the live blocks at each event asked, the
 * phase; the layout draws them, and says what was not read. */
static void test_read_and_drawn(void **state)
{
	mp_snapshot_target_t t[2] = {{0, 3}, {0, 6}};
	mp_plot_options_t po = {.charts = MP_PLOT_ALL};
	mp_replay_t r;
	mp_scene_t *scene = NULL;
	mp_diag_t d;
	stream_t s;

	(void)state;
	open_stream(&s);
	assert_int_equal(mp_replay_read(s.src, s.in.name, t, 2, 1, &r, &d), 0);
	assert_int_equal(r.nmaps, 2);
	assert_int_equal(r.maps[0].nregions, 1);
	assert_int_equal(r.maps[0].regions[0].base, MiB);
	assert_int_equal(r.maps[0].regions[0].end, 2 * MiB);
	assert_int_equal(r.maps[0].nblocks, 2);
	assert_int_equal(r.maps[0].blocks[0].addr, MiB);
	assert_int_equal(r.maps[0].blocks[0].size, 4096);
	assert_int_equal(r.maps[0].blocks[1].addr, MiB + 4096);
	assert_int_equal(r.maps[0].blocks[1].size, 8192);
	assert_int_equal(r.maps[1].nblocks, 1); /* the first freed by then */
	assert_int_equal(r.maps[1].blocks[0].addr, MiB + 4096);
	assert_int_equal(r.nphases, 1);
	assert_string_equal(r.phases[0].name, "warmup");
	assert_int_equal(r.phases[0].t0_ns, 3000);
	assert_int_equal(r.phases[0].t1_ns, 5000);
	assert_int_equal(r.phases[0].depth, 0);
	assert_int_equal(r.nsteps, 0);
	/* not handed over: the layout does not read it, it says so */
	assert_int_equal(mp_plot_capture(&scene, &s.in, 1, &po, mp_render_measure(), &d), MP_ENOTFOUND);
	assert_null(scene);
	assert_non_null(strstr(d.text, "the map of memory 0 at event 3 was not read"));
	s.in.replay = &r;
	assert_int_equal(mp_plot_capture(&scene, &s.in, 1, &po, mp_render_measure(), &d), 0);
	assert_non_null(scene);
	mp_scene_free(scene);
	mp_replay_free(&r);
	assert_int_equal(r.nmaps, 0);
	close_stream(&s);
	mp_render_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_what_is_asked),
		cmocka_unit_test(test_read_and_drawn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
