/* test_solver_cases.c - hand-computed solver cases: exact fragmentation in a
 * 1 MiB region after each event, peak ties, unknown frees, the steps window,
 * grouping and sums of the breakdown, the stats model, OOM records. */
#include "test_common.h"

#include "ev.h"

#include <memprof/array_source.h>
#include <memprof/solver.h>

#include <math.h>

#define MIB 1048576ull
#define BASE 0x10000000ull

static mp_solver_t *run(const mp_event_t *ev, size_t n, const mp_solver_options_t *opts)
{
	static const char *const strings[] = {"", "matmul", "conv", "float", "[4,4]", "relu"};
	mp_memory_info_t mem[2] = {{"GPU_0_bfc", 0, MP_MEMORY_DEVICE, NULL}, {"host", 0, MP_MEMORY_HOST, NULL}};
	mp_source_t *src = NULL;
	mp_solver_t *s = mp_solver_new(opts);
	mp_diag_t d;

	assert_non_null(s);
	assert_int_equal(mp_array_source_new(&src, ev, n, strings, 6, mem, 2, "cases"), 0);
	mp_diag_clear(&d);
	assert_int_equal(mp_solver_run(s, src, &d), 0);
	mp_source_close(src);
	return s;
}

static void assert_frag(const mp_solver_point_t *p, uint64_t largest, uint64_t total)
{
	assert_true(p->has_largest);
	assert_int_equal(p->largest_free_bytes, largest);
	if (total == 0)
		assert_true(p->fragmentation == 0.0);
	else
		assert_true(fabs(p->fragmentation - (1.0 - (double)largest / (double)total)) < 1e-15);
}

/* One 1 MiB region; A [0,4K), B [8K,12K), C [1M-4K,1M); then frees. The
 * free gaps after each event are worked out by hand in the comments. */
static void test_fragmentation_exact(void **state)
{
	mp_event_t ev[] = {
		ev_region(0, 10, BASE, MIB),
		ev_alloc(0, 20, BASE, 4000, 4096),                 /* gaps: 1044480 */
		ev_alloc(0, 30, BASE + 8192, 4096, 4096),          /* 4096, 1036288 */
		ev_alloc(0, 40, BASE + MIB - 4096, 4096, 4096),    /* 4096, 1032192 */
		ev_free(0, 50, BASE),                              /* 8192, 1032192 */
		ev_free(0, 60, BASE + 8192),                       /* 1044480 */
		ev_free(0, 70, BASE + MIB - 4096),                 /* 1048576 */
	};
	static const uint64_t largest[] = {MIB, 1044480, 1036288, 1032192, 1032192, 1044480, MIB};
	static const uint64_t total[] = {MIB, 1044480, 1040384, 1036288, 1040384, 1044480, MIB};
	static const uint64_t heap[] = {0, 4096, 8192, 12288, 8192, 4096, 0};
	mp_solver_t *s = run(ev, 7, NULL);
	const mp_solver_device_t *d = mp_solver_find(s, 0);

	(void)state;
	assert_non_null(d);
	assert_int_equal(d->timeline_count, 7); /* fewer samples than points: one point per event */
	for (size_t i = 0; i < 7; i++) {
		assert_int_equal(d->timeline[i].event_index, i);
		assert_int_equal(d->timeline[i].heap_bytes, heap[i]);
		assert_int_equal(d->timeline[i].free_bytes, MIB - heap[i]);
		assert_frag(&d->timeline[i], largest[i], total[i]);
	}
	/* Fragmentation 2/254 after the first free: 8192 / 1040384. */
	assert_true(fabs(d->timeline[4].fragmentation - 8192.0 / 1040384.0) < 1e-15);
	assert_int_equal(d->peak_bytes, 12288);
	assert_int_equal(d->peak.event_index, 3);
	assert_int_equal(d->peak.time_ns, 40);
	assert_int_equal(d->capacity_bytes, MIB); /* no declared capacity: the region sizes */
	assert_int_equal(d->allocations, 3);
	assert_int_equal(d->deallocations, 3);
	assert_int_equal(d->leak_count, 0);
	assert_int_equal(d->breakdown_count, 2); /* B and C share a group */
	assert_int_equal(d->breakdown[0].total_bytes, 8192);
	assert_int_equal(d->breakdown[0].occurrences, 2);
	assert_int_equal(d->breakdown[1].requested_bytes, 4000);
	mp_solver_free(s);
}

/* A full region has no free byte: fragmentation 0, not NaN. Blocks outside
 * the region count in heap only. */
static void test_full_region_and_outside(void **state)
{
	mp_event_t ev[] = {
		ev_region(0, 1, BASE, 8192),
		ev_alloc(0, 2, BASE, 8192, 8192),
		ev_alloc(0, 3, 0x900000000ull, 100, 128),  /* outside any region */
		ev_alloc(0, 4, BASE + 8000, 1000, 1000),  /* straddles the end: outside */
	};
	mp_solver_t *s = run(ev, 4, NULL);
	const mp_solver_device_t *d = mp_solver_find(s, 0);

	(void)state;
	assert_int_equal(d->timeline_count, 4);
	assert_frag(&d->timeline[1], 0, 0);
	assert_frag(&d->timeline[2], 0, 0);
	assert_int_equal(d->timeline[3].heap_bytes, 8192 + 128 + 1000);
	assert_int_equal(d->timeline[3].free_bytes, 0); /* clamped: heap > capacity */
	assert_int_equal(d->duplicate_allocations, 0);
	mp_solver_free(s);
}

/* Regions declared after their blocks, removed with blocks live. */
static void test_region_lifecycle(void **state)
{
	mp_event_t ev[] = {
		ev_alloc(0, 1, BASE + 1024, 1024, 1024),
		ev_region(0, 2, BASE, 4096),                /* block joins: gaps 1024, 2048 */
		ev_region(0, 3, BASE + 2048, 4096),          /* overlaps: rejected */
		ev_region(0, 4, BASE + 4096, 4096),          /* adjacent: gaps 1024, 2048, 4096 */
		ev_region_rm(0, 5, BASE),                   /* gaps 4096; block stays live */
		ev_region_rm(0, 6, BASE + 12345),           /* unknown: rejected */
		ev_free(0, 7, BASE + 1024),
	};
	mp_solver_t *s = run(ev, 7, NULL);
	const mp_solver_device_t *d = mp_solver_find(s, 0);

	(void)state;
	assert_int_equal(d->timeline_count, 7);
	assert_false(d->timeline[0].has_largest);
	assert_true(isnan(d->timeline[0].fragmentation));
	assert_frag(&d->timeline[1], 2048, 3072);
	assert_frag(&d->timeline[2], 2048, 3072);
	assert_frag(&d->timeline[3], 4096, 7168);
	assert_int_equal(d->timeline[3].free_bytes, 8192 - 1024);
	assert_frag(&d->timeline[4], 4096, 4096);
	assert_int_equal(d->timeline[4].heap_bytes, 1024);
	assert_int_equal(d->timeline[6].heap_bytes, 0);
	assert_int_equal(d->rejected_regions, 2);
	mp_solver_free(s);
}

/* A REGION_ADD at a declared region's base, larger, grows it (heaps grow
 * like that); smaller, it overlaps itself and is rejected. A block made
 * past the old end before the growth joins the index with it. */
static void test_region_grow(void **state)
{
	mp_event_t ev[] = {
		ev_region(0, 1, BASE, 4096),
		ev_alloc(0, 2, BASE, 1024, 1024),            /* gaps 3072 */
		ev_alloc(0, 3, BASE + 6144, 1024, 1024),     /* outside: not indexed */
		ev_region(0, 4, BASE, 8192),                 /* grows: gaps 5120, 1024 */
		ev_region(0, 5, BASE + 8192, 4096),          /* adjacent: gaps 5120, 1024, 4096 */
		ev_region(0, 6, BASE, 16384),                /* would overlap the next: rejected */
		ev_region(0, 7, BASE, 2048),                 /* smaller: rejected */
		ev_free(0, 8, BASE + 6144),                  /* gaps 7168, 4096 */
	};
	mp_solver_t *s = run(ev, 8, NULL);
	const mp_solver_device_t *d = mp_solver_find(s, 0);

	(void)state;
	assert_int_equal(d->timeline_count, 8);
	assert_frag(&d->timeline[1], 3072, 3072);
	assert_frag(&d->timeline[2], 3072, 3072);
	assert_frag(&d->timeline[3], 5120, 6144);
	assert_int_equal(d->timeline[3].free_bytes, 8192 - 2048);
	assert_frag(&d->timeline[4], 5120, 10240);
	assert_frag(&d->timeline[5], 5120, 10240);
	assert_frag(&d->timeline[6], 5120, 10240);
	assert_frag(&d->timeline[7], 7168, 11264);
	assert_int_equal(d->rejected_regions, 2);
	mp_solver_free(s);
}

/* Ties: the first time the maximum is reached wins. */
static void test_peak_tie_first_wins(void **state)
{
	mp_event_t ev[] = {
		ev_alloc(0, 100, 0x1000, 100, 100),
		ev_free(0, 200, 0x1000),
		ev_alloc(0, 300, 0x2000, 100, 100),
		ev_free(0, 400, 0x2000),
	};
	mp_solver_t *s = run(ev, 4, NULL);
	const mp_solver_device_t *d = mp_solver_find(s, 0);

	(void)state;
	assert_true(d->has_peak);
	assert_int_equal(d->peak_bytes, 100);
	assert_int_equal(d->peak.event_index, 0);
	assert_int_equal(d->peak.time_ns, 100);
	assert_int_equal(d->lifetime_peak_bytes, 100);
	assert_true(isnan(d->peak.fragmentation));
	assert_string_equal(d->fragmentation_reason, "no regions declared for this memory id");
	assert_int_equal(d->capacity_bytes, 0);
	assert_false(d->peak.has_free);
	mp_solver_free(s);
}

static void test_unknown_free_and_duplicate(void **state)
{
	mp_event_t ev[] = {
		ev_free(0, 1, 0xdead),
		ev_alloc(0, 2, 0x1000, 10, 16),
		ev_alloc(0, 3, 0x1000, 20, 32), /* same address again: the old one is dropped */
		ev_free(0, 4, 0xbeef),
	};
	mp_solver_t *s = run(ev, 4, NULL);
	const mp_solver_device_t *d = mp_solver_find(s, 0);

	(void)state;
	assert_int_equal(d->unknown_frees, 2);
	assert_int_equal(d->duplicate_allocations, 1);
	assert_int_equal(d->deallocations, 2);
	assert_int_equal(d->peak_bytes, 32);
	assert_int_equal(d->leak_count, 1);
	assert_int_equal(d->leak_bytes, 32);
	assert_int_equal(d->leaks[0].requested_bytes, 20);
	mp_solver_free(s);
}

/* Grouping: same (op, region, dtype, shape, requested, allocated) merge;
 * rows by total bytes; the rows sum to heap at the peak. */
static void test_breakdown_groups(void **state)
{
	mp_event_t ev[12];
	size_t n = 0;
	uint64_t sum = 0;

	for (int i = 0; i < 3; i++) { /* 3 x matmul float [4,4] 64/256 */
		ev[n] = ev_alloc(0, (uint64_t)n, 0x1000 + 0x1000 * (uint64_t)i, 64, 256);
		ev[n].op = 1, ev[n].dtype = 3, ev[n].shape = 4, ev[n].region = MP_REGION_TEMP;
		n++;
	}
	ev[n] = ev_alloc(0, (uint64_t)n, 0x9000, 64, 256); /* same sizes, other op */
	ev[n].op = 2, ev[n].dtype = 3, ev[n].shape = 4, ev[n].region = MP_REGION_TEMP;
	n++;
	ev[n] = ev_alloc(0, (uint64_t)n, 0xa000, 1000, 1024); /* relu, output */
	ev[n].op = 5, ev[n].region = MP_REGION_OUTPUT;
	n++;
	ev[n] = ev_alloc(0, (uint64_t)n, 0xb000, 5, 0); /* no allocated size: requested counts */
	n++;
	ev[n] = ev_free(0, (uint64_t)n, 0x9000);    /* after the peak */
	n++;
	mp_solver_t *s = run(ev, n, NULL);
	const mp_solver_device_t *d = mp_solver_find(s, 0);

	(void)state;
	assert_int_equal(d->peak_bytes, 3 * 256 + 256 + 1024 + 5);
	assert_int_equal(d->peak.event_index, 5);
	assert_true(d->has_breakdown);
	assert_int_equal(d->breakdown_count, 4);
	assert_int_equal(d->breakdown[0].total_bytes, 1024);
	assert_int_equal(d->breakdown[0].op, 5);
	assert_int_equal(d->breakdown[0].region, MP_REGION_OUTPUT);
	assert_int_equal(d->breakdown[1].total_bytes, 768);
	assert_int_equal(d->breakdown[1].occurrences, 3);
	assert_int_equal(d->breakdown[1].op, 1);
	assert_int_equal(d->breakdown[1].requested_bytes, 64);
	assert_int_equal(d->breakdown[1].allocated_bytes, 256);
	assert_int_equal(d->breakdown[1].dtype, 3);
	assert_int_equal(d->breakdown[1].shape, 4);
	assert_int_equal(d->breakdown[2].op, 2);
	assert_int_equal(d->breakdown[2].occurrences, 1);
	assert_int_equal(d->breakdown[3].allocated_bytes, 5);
	for (size_t i = 0; i < d->breakdown_count; i++)
		sum += d->breakdown[i].total_bytes;
	assert_int_equal(sum, d->peak.heap_bytes);
	/* Leaks: everything but the conv. */
	assert_int_equal(d->leak_count, 3);
	assert_int_equal(d->leak_bytes, 3 * 256 + 1024 + 5);
	mp_solver_free(s);
}

/* Steps window 1:1 — the step-0 allocation is live in it (and in the
 * breakdown), step-2 events do not count, leaks are taken at its end. */
static void test_steps_window(void **state)
{
	mp_event_t ev[] = {
		ev_alloc(0, 1, 0x1000, 1000, 1000),
		ev_alloc(0, 2, 0x2000, 500, 500),
		ev_free(0, 3, 0x2000),
		ev_alloc(0, 4, 0x3000, 300, 300),
		ev_alloc(0, 5, 0x4000, 5000, 5000), /* step 2: outside, bigger */
		ev_free(0, 6, 0x3000),
		ev_alloc(1, 7, 0x9000, 64, 64),     /* step 2, a memory id first seen after the window */
	};
	mp_solver_options_t o;

	(void)state;
	ev[1].step = ev[2].step = ev[3].step = 1;
	ev[4].step = ev[5].step = ev[6].step = 2;
	mp_solver_options_init(&o);
	o.steps_set = 1;
	o.step_first = 1;
	o.step_last = 1;
	mp_solver_t *s = run(ev, 7, &o);
	const mp_solver_device_t *d = mp_solver_find(s, 0);

	assert_int_equal(d->allocations, 2);
	assert_int_equal(d->deallocations, 1);
	assert_int_equal(d->peak_bytes, 1500);
	assert_int_equal(d->peak.event_index, 1);
	assert_int_equal(d->peak.step, 1);
	assert_int_equal(d->lifetime_peak_bytes, 6300);
	assert_int_equal(d->breakdown_count, 2);
	assert_int_equal(d->breakdown[0].total_bytes, 1000);
	assert_int_equal(d->timeline_count, 3);
	assert_int_equal(d->leak_bytes, 1300);
	assert_int_equal(d->leak_count, 2);
	d = mp_solver_find(s, 1);
	assert_false(d->has_peak);
	assert_int_equal(d->leak_count, 0);
	assert_int_equal(d->lifetime_peak_bytes, 64);
	mp_solver_free(s);
}

/* The stats model on the reference's own unit-test figures: window peak
 * 7000 at the third event, lifetime 9500, capacity 10000, breakdown = the
 * tracked 300 B row + 4700 B of unknown origin (sums to heap 5000). */
static void test_stats_model(void **state)
{
	mp_event_t ev[3];

	(void)state;
	ev[0] = ev_alloc(0, 40, 0xa0, 256, 256);
	ev[0].stats = (mp_allocator_stats_t){2000, 3000, 5000, 8500, 0.25};
	ev[1] = ev_free(0, 50, 0xa0);
	ev[1].stats = (mp_allocator_stats_t){2000, 2744, 5256, 8500, 0.25};
	ev[2] = ev_alloc(0, 70, 0xb0, 300, 300);
	ev[2].op = 1;
	ev[2].stats = (mp_allocator_stats_t){2000, 5000, 3000, 9500, 0.5};
	for (int i = 0; i < 3; i++)
		ev[i].flags = MP_EVENT_F_STATS;
	mp_solver_t *s = run(ev, 3, NULL);
	const mp_solver_device_t *d = mp_solver_find(s, 0);

	assert_true(d->stats_model);
	assert_int_equal(d->peak_bytes, 7000);
	assert_int_equal(d->peak.time_ns, 70);
	assert_int_equal(d->peak.stack_bytes, 2000);
	assert_int_equal(d->peak.heap_bytes, 5000);
	assert_int_equal(d->peak.free_bytes, 3000);
	assert_true(d->peak.fragmentation == 0.5);
	assert_int_equal(d->capacity_bytes, 10000);
	assert_int_equal(d->lifetime_peak_bytes, 9500);
	assert_int_equal(d->breakdown_count, 2);
	assert_true(d->breakdown[0].unknown_origin);
	assert_int_equal(d->breakdown[0].total_bytes, 4700);
	assert_int_equal(d->breakdown[1].total_bytes, 300);
	assert_int_equal(d->breakdown[1].op, 1);
	mp_solver_free(s);
}

/* OOM: 1 MiB region, 512 KiB free in two 256 KiB holes; a 384 KiB request
 * fails although 512 KiB are free: fragmentation 0.5. */
static void test_oom_record(void **state)
{
	mp_event_t ev[] = {
		ev_region(0, 1, BASE, MIB),
		ev_alloc(0, 2, BASE, 256 * 1024, 256 * 1024),                 /* [0,256K) */
		ev_alloc(0, 3, BASE + 512 * 1024, 256 * 1024, 256 * 1024),    /* [512K,768K) */
		ev_failed(0, 4, 384 * 1024, 5),
	};
	mp_solver_options_t o;

	(void)state;
	ev[1].op = 1;
	ev[2].op = 2;
	mp_solver_options_init(&o);
	o.top = 1;
	mp_solver_t *s = run(ev, 4, &o);
	const mp_solver_device_t *d = mp_solver_find(s, 0);

	assert_int_equal(d->failed_allocations, 1);
	assert_int_equal(d->oom_total, 1);
	assert_int_equal(d->oom_count, 1);
	assert_int_equal(d->oom[0].requested_bytes, 384 * 1024);
	assert_int_equal(d->oom[0].op, 5);
	assert_int_equal(d->oom[0].at.time_ns, 4);
	assert_int_equal(d->oom[0].at.heap_bytes, 512 * 1024);
	assert_int_equal(d->oom[0].at.free_bytes, 512 * 1024);
	assert_frag(&d->oom[0].at, 256 * 1024, 512 * 1024);
	assert_true(d->oom[0].at.fragmentation == 0.5);
	assert_int_equal(d->oom[0].top_count, 1); /* --top 1: the larger/first of the two */
	assert_int_equal(d->oom[0].top[0].total_bytes, 256 * 1024);
	assert_int_equal(d->oom[0].top[0].op, 1);
	mp_solver_free(s);

	o.top = UINT32_MAX; /* a huge --top costs only the groups that exist */
	s = run(ev, 4, &o);
	d = mp_solver_find(s, 0);
	assert_int_equal(d->oom[0].top_count, 2);
	assert_int_equal(d->oom[0].top[1].op, 2);
	mp_solver_free(s);
}

/* Down-sampling: 10000 samples into at most 100 points, time-ordered, the
 * peak (a single spike) kept. */
static void test_timeline_downsample(void **state)
{
	size_t n = 10000;
	mp_event_t *ev = calloc(n, sizeof(*ev));
	mp_solver_options_t o;
	int saw_peak = 0;

	(void)state;
	for (size_t i = 0; i < n; i += 2) {
		uint64_t size = i == 6666 ? 1000000 : 100 + i % 7;
		ev[i] = ev_alloc(0, i, 0x1000, size, size);
		ev[i + 1] = ev_free(0, i + 1, 0x1000);
	}
	mp_solver_options_init(&o);
	o.timeline_points = 100;
	mp_solver_t *s = run(ev, n, &o);
	const mp_solver_device_t *d = mp_solver_find(s, 0);

	assert_true(d->timeline_count <= 100 && d->timeline_count >= 50);
	for (size_t i = 0; i < d->timeline_count; i++) {
		if (i)
			assert_true(d->timeline[i].time_ns > d->timeline[i - 1].time_ns);
		if (d->timeline[i].event_index == 6666) {
			saw_peak = 1;
			assert_int_equal(d->timeline[i].heap_bytes, 1000000);
		}
	}
	assert_true(saw_peak);
	assert_int_equal(d->peak.event_index, 6666);
	mp_solver_free(s);
	free(ev);
}

/* Several memory ids are independent; an id out of range is an error. */
static void test_devices_and_limits(void **state)
{
	mp_event_t ev[] = {
		ev_alloc(0, 1, 0x1000, 10, 10),
		ev_alloc(1, 2, 0x1000, 20, 20),
		ev_free(1, 3, 0x1000),
	};
	mp_event_t bad = ev_alloc(MP_SOLVER_MAX_MEMORY, 4, 0x1, 1, 1);
	mp_solver_t *s = run(ev, 3, NULL);
	mp_diag_t d;

	(void)state;
	assert_int_equal(mp_solver_device_count(s), 2);
	assert_int_equal(mp_solver_device(s, 0)->peak_bytes, 10);
	assert_int_equal(mp_solver_device(s, 1)->peak_bytes, 20);
	assert_int_equal(mp_solver_device(s, 1)->leak_count, 0);
	mp_solver_free(s);

	s = mp_solver_new(NULL);
	mp_diag_clear(&d);
	assert_int_equal(mp_solver_feed(s, &bad, &d), MP_ELIMIT);
	assert_non_null(strstr(d.text, "memory id 65536"));
	mp_solver_free(s);
}

/* A source error in either pass comes back with its diag. */
static void test_source_error(void **state)
{
	mp_event_t ev[] = {ev_alloc(0, 1, 0x1000, 10, 10), ev_free(0, 2, 0x1000)};
	mp_source_t *src = NULL;
	mp_solver_t *s = mp_solver_new(NULL);
	mp_diag_t d;

	(void)state;
	assert_int_equal(mp_array_source_new(&src, ev, 2, NULL, 0, NULL, 0, "x"), 0);
	mp_array_source_fail_at(src, 1, MP_ECORRUPT);
	mp_diag_clear(&d);
	assert_int_equal(mp_solver_run(s, src, &d), MP_ECORRUPT);
	assert_string_equal(d.file, "x");
	mp_source_close(src);
	mp_solver_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fragmentation_exact),
		cmocka_unit_test(test_full_region_and_outside),
		cmocka_unit_test(test_region_lifecycle),
		cmocka_unit_test(test_region_grow),
		cmocka_unit_test(test_peak_tie_first_wins),
		cmocka_unit_test(test_unknown_free_and_duplicate),
		cmocka_unit_test(test_breakdown_groups),
		cmocka_unit_test(test_steps_window),
		cmocka_unit_test(test_stats_model),
		cmocka_unit_test(test_oom_record),
		cmocka_unit_test(test_timeline_downsample),
		cmocka_unit_test(test_devices_and_limits),
		cmocka_unit_test(test_source_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
