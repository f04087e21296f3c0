/* test_solver_random.c - 120,000 random events on a few regions (added,
 * removed and re-added while blocks are live), blocks outside regions, a
 * second memory id without regions, unknown frees and failed allocations.
 * After every event the solver's fragmentation and heap (read from a
 * timeline with one point per event) must equal a brute-force
 * recomputation from a sorted list of blocks; the peak, the breakdown at the
 * peak and the leaks must equal the brute force's. */
#include "test_common.h"

#include "ev.h"

#include <memprof/array_source.h>
#include <memprof/solver.h>

#include <math.h>

#include "bruteforce.h"

#define NEV 120000
#define NREG 3

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(uint64_t n)
{
	return bf_rand(&rng, n);
}

/* The solver's rows must be exactly the brute force's live blocks grouped. */
static void check_rows(const mp_solver_row_t *rows, size_t nrows, const blk_t *b, size_t n)
{
	uint64_t occ = 0;

	for (size_t r = 0; r < nrows; r++) {
		uint64_t c = 0;
		for (size_t i = 0; i < n; i++)
			c += b[i].op == rows[r].op && b[i].shape == rows[r].shape && b[i].req == rows[r].requested_bytes &&
			     b[i].size == rows[r].allocated_bytes;
		assert_int_equal(c, rows[r].occurrences);
		assert_int_equal(rows[r].total_bytes, c * rows[r].allocated_bytes);
		if (r)
			assert_true(rows[r].total_bytes <= rows[r - 1].total_bytes);
		occ += c;
	}
	assert_int_equal(occ, n);
}

static void test_random_vs_bruteforce(void **state)
{
	static bf_t bf[2];
	static blk_t at_peak[BF_MAXB], bf_leak[BF_MAXB];
	const uint64_t rb[NREG] = {0x100000, 0x200000, 0x300000}, rs[NREG] = {65536, 65536, 32768};
	int rlive[NREG] = {0};
	mp_event_t *ev = calloc(NEV, sizeof(*ev));
	uint64_t *exp_largest = calloc(NEV, sizeof(uint64_t)), *exp_total = calloc(NEV, sizeof(uint64_t));
	uint64_t *exp_heap = calloc(NEV, sizeof(uint64_t));
	uint64_t peak = 0, peak_idx = 0, checked = 0;
	size_t n_at_peak = 0, n;
	int have_peak = 0;
	mp_solver_options_t o;
	mp_source_t *src;
	mp_solver_t *s;
	mp_diag_t d;

	(void)state;
	for (n = 0; n < NEV; n++) {
		uint32_t mem = rnd(10) < 8 ? 0 : 1;
		bf_t *st = &bf[mem];
		uint64_t roll = rnd(1000);
		mp_event_t e;

		if (n < NREG) { /* declare the regions first */
			e = ev_region(0, n, rb[n], rs[n]);
			rlive[n] = 1;
			mem = 0;
		} else if (mem == 0 && roll < 2) { /* toggle a region */
			int r = (int)rnd(NREG);
			e = rlive[r] ? ev_region_rm(0, n, rb[r]) : ev_region(0, n, rb[r], rs[r]);
			rlive[r] = !rlive[r];
		} else if (roll < 6) {
			e = ev_free(mem, n, 0x777); /* never allocated */
		} else if (roll < 9) {
			e = ev_failed(mem, n, 1 << 20, 1);
		} else if (st->n > 0 && (roll < 480 || st->n > 600)) {
			size_t i = rnd(st->n);
			e = ev_free(mem, n, st->b[i].addr);
			bf_remove_at(st, i);
		} else {
			blk_t b;
			int tries = 0;
			b.size = 16 * (1 + rnd(128));
			b.req = b.size - rnd(16);
			b.op = 1 + (uint32_t)rnd(4);
			b.shape = (uint32_t)rnd(3);
			do {
				if (mem == 1 || rnd(20) == 0) /* sometimes outside any region */
					b.addr = 0x800000 + 16 * rnd(1 << 16);
				else {
					int r = (int)rnd(NREG);
					b.addr = rb[r] + 16 * rnd(rs[r] / 16 + 8); /* a few straddle the end */
				}
			} while (bf_overlaps(st, b.addr, b.size) && ++tries < 20);
			if (tries == 20) {
				e = ev_make(MP_EV_MARK, mem, n, 0);
			} else {
				e = ev_alloc(mem, n, b.addr, b.req, b.size);
				e.op = b.op;
				e.shape = b.shape;
				bf_insert(st, &b);
			}
		}
		ev[n] = e;
		exp_heap[n] = bf[e.memory].heap;
		if (e.memory == 0)
			bf_frag(&bf[0], NREG, rb, rs, rlive, &exp_largest[n], &exp_total[n]);
		if (e.memory == 0 && e.kind != MP_EV_MARK && (!have_peak || bf[0].heap > peak)) {
			have_peak = 1;
			peak = bf[0].heap;
			peak_idx = n;
			memcpy(at_peak, bf[0].b, bf[0].n * sizeof(blk_t));
			n_at_peak = bf[0].n;
		}
	}
	memcpy(bf_leak, bf[0].b, bf[0].n * sizeof(blk_t));

	mp_solver_options_init(&o);
	o.timeline_points = NEV; /* one point per sample: state after every event */
	s = mp_solver_new(&o);
	assert_int_equal(mp_array_source_new(&src, ev, NEV, NULL, 0, NULL, 0, "random"), 0);
	mp_diag_clear(&d);
	assert_int_equal(mp_solver_run(s, src, &d), 0);

	const mp_solver_device_t *dv = mp_solver_find(s, 0);
	assert_non_null(dv);
	for (size_t k = 0; k < dv->timeline_count; k++) {
		const mp_solver_point_t *p = &dv->timeline[k];
		size_t i = (size_t)p->event_index;
		assert_int_equal(ev[i].memory, 0);
		assert_int_equal(p->heap_bytes, exp_heap[i]);
		if (p->has_largest) {
			double f = exp_total[i] ? 1.0 - (double)exp_largest[i] / (double)exp_total[i] : 0.0;
			assert_int_equal(p->largest_free_bytes, exp_largest[i]);
			assert_true(p->fragmentation == f);
			checked++;
		} else {
			assert_int_equal(exp_total[i], 0); /* no live region */
			assert_true(isnan(p->fragmentation));
		}
	}
	/* Every event of memory 0 but the marks is a timeline point. */
	{
		size_t want = 0;
		for (size_t i = 0; i < NEV; i++)
			want += ev[i].memory == 0 && ev[i].kind != MP_EV_MARK;
		assert_int_equal(dv->timeline_count, want);
		assert_true(checked > want / 2);
	}
	assert_int_equal(dv->peak_bytes, peak);
	assert_int_equal(dv->peak.event_index, peak_idx);
	assert_true(dv->has_breakdown);
	check_rows(dv->breakdown, dv->breakdown_count, at_peak, n_at_peak);
	check_rows(dv->leaks, dv->leak_count, bf_leak, bf[0].n);
	assert_int_equal(dv->leak_bytes, bf[0].heap);
	assert_true(dv->unknown_frees > 0 && dv->failed_allocations > 0);
	assert_int_equal(dv->oom_count, dv->failed_allocations);

	/* Memory 1: no regions, so no fragmentation, but heap and peak exact. */
	dv = mp_solver_find(s, 1);
	assert_non_null(dv);
	assert_true(isnan(dv->peak.fragmentation));
	for (size_t k = 0; k < dv->timeline_count; k++)
		assert_int_equal(dv->timeline[k].heap_bytes, exp_heap[dv->timeline[k].event_index]);
	check_rows(dv->leaks, dv->leak_count, bf[1].b, bf[1].n);

	mp_source_close(src);
	mp_solver_free(s);
	free(ev);
	free(exp_largest);
	free(exp_total);
	free(exp_heap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_vs_bruteforce),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
