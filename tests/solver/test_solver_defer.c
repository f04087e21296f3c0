/* test_solver_defer.c - the solver applies fragmentation-index updates
 * lazily (src/solver/defer.c): they wait in a log until a figure is due and
 * a free cancels its block's pending insertion. Here the points are sparse,
 * so the log runs long, fills up (more than 2^18 index updates), and marks
 * (peak and timeline candidates) fall in the middle of it: 500,000 random
 * events whose live set swells and shrinks in waves, regions toggled now
 * and then, failed allocations. Every point the solver reports (timeline,
 * peak, OOM records) must equal a brute-force recomputation at its event,
 * with the timeline on and off. */
#include "test_common.h"

#include "ev.h"

#include <memprof/array_source.h>
#include <memprof/solver.h>

#include <math.h>

#include "bruteforce.h"

#define NEV 500000
#define NREG 3
#define MAXLIVE 4096 /* live blocks at most */

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(uint64_t n)
{
	return bf_rand(&rng, n);
}

static const uint64_t rb[NREG] = {0x1000000, 0x2000000, 0x3000000}, rs[NREG] = {1 << 20, 1 << 20, 1 << 19};

static void bf_remove(bf_t *s, uint64_t addr)
{
	size_t i = bf_lower(s, addr);

	if (i < s->n && s->b[i].addr == addr)
		bf_remove_at(s, i);
}

static mp_event_t *make_events(void)
{
	static bf_t st;
	mp_event_t *ev = calloc(NEV, sizeof(*ev));
	int rlive[NREG] = {0};

	assert_non_null(ev);
	st.n = 0;
	st.heap = 0;
	for (size_t n = 0; n < NEV; n++) {
		/* the live set aims at a target that rises and falls in waves */
		size_t target = 200 + (size_t)(1400.0 * (1.0 + sin((double)n / 9000.0)) * (0.5 + (double)n / NEV));
		uint64_t roll = rnd(100000);
		mp_event_t e;

		if (n < NREG) {
			e = ev_region(0, n, rb[n], rs[n]);
			rlive[n] = 1;
		} else if (n > 470000 && roll < 30) { /* toggle a region */
			int r = (int)rnd(NREG);
			e = rlive[r] ? ev_region_rm(0, n, rb[r]) : ev_region(0, n, rb[r], rs[r]);
			rlive[r] = !rlive[r];
		} else if ((n < 10000 || n > 470000) && roll < 250) { /* none in between: the log fills */
			e = ev_failed(0, n, 1 << 16, 1);
		} else if (st.n > 0 && (st.n > target || st.n >= MAXLIVE - 1 || (st.n == target && rnd(2)))) {
			size_t i = rnd(st.n);
			e = ev_free(0, n, st.b[i].addr);
			bf_remove(&st, st.b[i].addr);
		} else {
			uint64_t size = 16 * (1 + rnd(32)), addr;
			int r = (int)rnd(NREG), tries = 0;
			do
				addr = rb[r] + 16 * rnd(rs[r] / 16 + 4); /* a few straddle the end */
			while (bf_overlaps(&st, addr, size) && ++tries < 20);
			if (tries == 20) {
				e = ev_make(MP_EV_MARK, 0, n, 0);
			} else {
				e = ev_alloc(0, n, addr, size, size);
				bf_insert(&st, &(blk_t){.addr = addr, .size = size});
			}
		}
		ev[n] = e;
	}
	return ev;
}

/* Replay the events through a brute force; check each point at its event. */
static void check_points(const mp_event_t *ev, const mp_solver_point_t *const *pts, size_t npts, uint64_t peak,
			 uint64_t peak_at)
{
	static bf_t st;
	int rlive[NREG] = {0};
	uint64_t max = 0, max_at = 0;
	size_t k = 0;

	st.n = 0;
	st.heap = 0;
	for (size_t n = 0; n < NEV; n++) {
		const mp_event_t *e = &ev[n];
		if (e->kind == MP_EV_ALLOC) {
			bf_insert(&st, &(blk_t){.addr = e->address, .size = e->allocated_bytes});
		} else if (e->kind == MP_EV_FREE) {
			bf_remove(&st, e->address);
		} else if (e->kind == MP_EV_REGION_ADD || e->kind == MP_EV_REGION_REMOVE) {
			for (int r = 0; r < NREG; r++)
				if (rb[r] == e->address)
					rlive[r] = e->kind == MP_EV_REGION_ADD;
		}
		if (e->kind != MP_EV_MARK && st.heap > max) {
			max = st.heap;
			max_at = n;
		}
		for (; k < npts && pts[k]->event_index == n; k++) {
			uint64_t largest, total;
			bf_frag(&st, NREG, rb, rs, rlive, &largest, &total);
			assert_int_equal(pts[k]->heap_bytes, st.heap);
			if (!rlive[0] && !rlive[1] && !rlive[2]) {
				assert_false(pts[k]->has_largest);
				continue;
			}
			assert_true(pts[k]->has_largest);
			assert_int_equal(pts[k]->largest_free_bytes, largest);
			assert_int_equal(pts[k]->region_free_bytes, total);
			assert_true(pts[k]->fragmentation == (total ? 1.0 - (double)largest / (double)total : 0.0));
		}
	}
	assert_int_equal(k, npts); /* every point was checked */
	assert_int_equal(max, peak);
	assert_int_equal(max_at, peak_at);
}

static int cmp_pt(const void *a, const void *b)
{
	const mp_solver_point_t *x = *(const mp_solver_point_t *const *)a, *y = *(const mp_solver_point_t *const *)b;
	return x->event_index < y->event_index ? -1 : x->event_index > y->event_index;
}

static void run_case(uint32_t points, int timeline)
{
	mp_event_t *ev = make_events();
	const mp_solver_point_t **pts;
	const mp_solver_device_t *d;
	mp_solver_options_t o;
	mp_source_t *src;
	mp_solver_t *s;
	mp_diag_t diag;
	size_t n = 0;

	mp_solver_options_init(&o);
	o.timeline_points = points;
	o.timeline = timeline;
	s = mp_solver_new(&o);
	assert_int_equal(mp_array_source_new(&src, ev, NEV, NULL, 0, NULL, 0, "defer"), 0);
	mp_diag_clear(&diag);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	d = mp_solver_find(s, 0);
	assert_non_null(d);
	assert_true(d->oom_count > 50);
	assert_int_equal(d->timeline_count > 0, timeline);
	pts = calloc(d->timeline_count + d->oom_count + 1, sizeof(*pts));
	assert_non_null(pts);
	for (size_t i = 0; i < d->timeline_count; i++)
		pts[n++] = &d->timeline[i];
	for (size_t i = 0; i < d->oom_count; i++)
		pts[n++] = &d->oom[i].at;
	pts[n++] = &d->peak;
	qsort(pts, n, sizeof(*pts), cmp_pt);
	check_points(ev, pts, n, d->peak_bytes, d->peak.event_index);
	/* the first event at the maximum */
	for (size_t i = 0; i < d->timeline_count; i++)
		assert_true(d->timeline[i].heap_bytes < d->peak_bytes ||
			    (d->timeline[i].heap_bytes == d->peak_bytes && d->timeline[i].event_index >= d->peak.event_index));
	free(pts);
	mp_source_close(src);
	mp_solver_free(s);
	free(ev);
}

static void test_sparse_timeline(void **state)
{
	(void)state;
	run_case(37, 1);
}

static void test_no_timeline(void **state)
{
	(void)state;
	run_case(1000, 0);
}

/* mp_solver_run reads in a second thread once the stream outgrows its
 * first batch: a source error far into the stream still comes back, with
 * its diag, after the events before it (here, one allocation each). */
static void test_pipeline_error(void **state)
{
	enum { N = 5000, AT = 3000 };
	mp_event_t *ev = calloc(N, sizeof(*ev));
	mp_source_t *src;
	mp_solver_t *s;
	mp_diag_t d;

	(void)state;
	assert_non_null(ev);
	for (size_t i = 0; i < N; i++)
		ev[i] = ev_alloc(0, i, 0x100000 + 64 * i, 32, 32);
	for (int round = 0; round < 2; round++) {
		s = mp_solver_new(NULL);
		assert_int_equal(mp_array_source_new(&src, ev, N, NULL, 0, NULL, 0, "piped"), 0);
		if (round == 0)
			mp_array_source_fail_at(src, AT, MP_ECORRUPT);
		mp_diag_clear(&d);
		if (round == 0) {
			assert_int_equal(mp_solver_run(s, src, &d), MP_ECORRUPT);
			assert_string_equal(d.file, "piped");
			assert_int_equal(mp_solver_event_count(s), AT); /* every event before the error */
		} else {
			assert_int_equal(mp_solver_run(s, src, &d), 0);
			assert_int_equal(mp_solver_find(s, 0)->peak_bytes, 32ull * N);
			assert_int_equal(mp_solver_find(s, 0)->peak.event_index, N - 1);
		}
		mp_source_close(src);
		mp_solver_free(s);
	}
	free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sparse_timeline),
		cmocka_unit_test(test_no_timeline),
		cmocka_unit_test(test_pipeline_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
