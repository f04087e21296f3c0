/* test_pipeline.c - mp_solver_run's two threads with a source that helps
 * (mp_source_help): whatever the helping costs and returns, every event is
 * solved once, in order, and neither side sleeps on a ring the other has
 * just filled or emptied while it was helping. A lost wake-up there hangs
 * this test (ctest's timeout fails it). */
#include "test_common.h"

#include "ev.h"

#include <memprof/array_source.h>
#include <memprof/solver.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

/* An array source whose help() takes a while: long enough for the other
 * side to fill (or drain) the whole ring meanwhile. */
typedef struct slow_source {
	mp_source_t src; /* first: the ops get it back */
	mp_source_ops_t ops;
	mp_source_t *inner;
	atomic_uint calls;
	unsigned sleep_ms;
	unsigned nexts; /* events read (the reader thread's only) */
} slow_source_t;

#define SLOW(s) ((slow_source_t *)(s))

/* Halfway, the reader waits until the solver has asked for help (up to
 * 10 s): whether either side would otherwise find the ring empty or full
 * depends on how the two threads run (once in many runs under ASan on two
 * busy cores, neither did, and the test failed on that alone). */
#define NBLK 200000u /* blocks, and events read before the pause (the events: below) */
#define PAUSE_AT NBLK

static int sl_next(mp_source_t *s, mp_event_t *ev, mp_diag_t *d)
{
	slow_source_t *sl = SLOW(s);

	if (++sl->nexts == PAUSE_AT) {
		struct timespec ms = {0, 1000000L};
		int i;
		for (i = 0; i < 10000 && atomic_load(&sl->calls) == 0; i++)
			nanosleep(&ms, NULL);
	}
	return mp_source_next(sl->inner, ev, d);
}
static int sl_rewind(mp_source_t *s, mp_diag_t *d) { return mp_source_rewind(SLOW(s)->inner, d); }
static const char *sl_string(const mp_source_t *s, uint32_t id) { return mp_source_string(((const slow_source_t *)s)->inner, id); }
static const mp_memory_info_t *sl_memory(const mp_source_t *s, uint32_t id)
{
	return mp_source_memory(((const slow_source_t *)s)->inner, id);
}
static uint32_t sl_memory_count(const mp_source_t *s) { return mp_source_memory_count(((const slow_source_t *)s)->inner); }
static mp_end_status_t sl_end_status(const mp_source_t *s) { return mp_source_end_status(((const slow_source_t *)s)->inner); }
static void sl_close(mp_source_t *s)
{
	mp_source_close(SLOW(s)->inner);
	free(s);
}

/* Sleeps, then says it did something on every other call: both answers
 * make the caller look at the ring again before it sleeps. */
static int sl_help(mp_source_t *s)
{
	slow_source_t *sl = SLOW(s);
	struct timespec ts = {0, (long)sl->sleep_ms * 1000000L};
	unsigned n = atomic_fetch_add(&sl->calls, 1);

	nanosleep(&ts, NULL);
	return (int)(n & 1);
}

/* Events: blocks 0..n-1 of 100 B at base + 128 i, block i freed after
 * block i+3 is allocated, then one block of 1000 B: the peak is 300 + 1000
 * B at the very last event, so every event must have been solved. */
#define BASE 0x10000000ull

static mp_source_t *slow_source_new(unsigned sleep_ms)
{
	size_t n = 0, cap = 2 * NBLK + 1;
	mp_event_t *ev = calloc(cap, sizeof(*ev));
	mp_memory_info_t mem = {0};
	slow_source_t *sl = calloc(1, sizeof(*sl));
	uint64_t t = 1;

	assert_non_null(ev);
	assert_non_null(sl);
	for (uint32_t i = 0; i < NBLK; i++) {
		ev[n++] = ev_alloc(0, t++, BASE + 128ull * i, 100, 100);
		if (i >= 3)
			ev[n++] = ev_free(0, t++, BASE + 128ull * (i - 3));
	}
	ev[n++] = ev_alloc(0, t++, BASE + 128ull * NBLK, 1000, 1000);
	mem.name = "pool";
	assert_int_equal(mp_array_source_new(&sl->inner, ev, n, NULL, 0, &mem, 1, "slow"), 0);
	free(ev);
	sl->ops = (mp_source_ops_t){sl_next,	   sl_rewind, sl_string, sl_memory, sl_memory_count,
				    sl_end_status, sl_close,  NULL,	 sl_help, NULL, NULL, NULL, NULL, NULL};
	sl->src.ops = &sl->ops;
	sl->src.path = "slow";
	sl->sleep_ms = sleep_ms;
	return &sl->src;
}

static void run_and_check(unsigned sleep_ms)
{
	mp_source_t *src = slow_source_new(sleep_ms);
	mp_solver_t *s = mp_solver_new(NULL);
	const mp_solver_device_t *d;
	mp_diag_t diag;

	assert_non_null(s);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	assert_int_equal(mp_solver_device_count(s), 1);
	d = mp_solver_device(s, 0);
	assert_int_equal(d->allocations, NBLK + 1);
	assert_int_equal(d->deallocations, NBLK - 3);
	assert_int_equal(d->peak_bytes, 300 + 1000);
	assert_int_equal(d->peak.event_index, 2 * NBLK - 3); /* the last event */
	assert_int_equal(d->leak_bytes, 300 + 1000);
	/* the helper was asked: the consumer ran dry at least once */
	assert_true(atomic_load(&SLOW(src)->calls) > 0);
	mp_solver_free(s);
	mp_source_close(src);
}

static void test_pipeline_slow_help(void **state)
{
	(void)state;
	run_and_check(20);
}

static void test_pipeline_quick_help(void **state)
{
	(void)state;
	run_and_check(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipeline_slow_help),
		cmocka_unit_test(test_pipeline_quick_help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
