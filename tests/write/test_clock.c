/* test_clock.c - the capture clock: TSC line arithmetic, re-anchoring
 * continuity, and event times that follow CLOCK_MONOTONIC whichever clock
 * the writer picked (clock.h). */
#include "test_common.h"

#include "capture_helpers.h"
#include "clock.h"

#include <memprof/capture.h>

#include <stdlib.h>
#include <time.h>

/* Hand-computed: 0.5 ns per tick anchored at (1000 ticks, 500 ns). */
static void test_line_arithmetic(void **state)
{
	mp_tsc_line_t l = {1000, 500, 1ull << 31};

	(void)state;
	assert_int_equal(mp_tsc_convert(&l, 1000), 500);
	assert_int_equal(mp_tsc_convert(&l, 3000), 1500);
	assert_int_equal(mp_tsc_convert(&l, 1001), 500); /* 0.5 ns rounds down */
	assert_int_equal(mp_tsc_convert(&l, 0), 0);       /* before the anchor */
	l.mult = 3ull << 32;                               /* 3 ns per tick */
	assert_int_equal(mp_tsc_convert(&l, 1000 + 4000000000ull), 500 + 12000000000ull);
}

/* c set up on the TSC, or the test skipped, saying why it has nothing to
 * check without it. */
static void tsc_clock(mp_capclock_t *c, const char *what)
{
	mp__capclock_init(c, 1);
	if (!c->use_tsc) {
		print_message("the kernel's clocksource is not the TSC here: %s\n", what);
		skip();
	}
}

/* Every round starts a line where the previous one was: the conversion is
 * continuous at each knot, increasing, and readings from before a knot
 * still convert with the line they fell under. */
static void test_reanchor_is_continuous(void **state)
{
	mp_capclock_t c;
	struct timespec d = {0, 2000000};
	uint64_t knot[6], value[6];
	int i;

	(void)state;
	tsc_clock(&c, "nothing to re-anchor");
	for (i = 0; i < 6; i++) {
		mp_tsc_line_t before;
		uint64_t h;

		nanosleep(&d, NULL);
		before = c.line[c.newest];
		h = mp__capclock_round(&c, UINT64_MAX);
		assert_int_equal(c.line[c.newest].ns0, h);                 /* anchored at the horizon */
		assert_int_equal(mp_tsc_convert(&before, c.line[c.newest].tsc0), h); /* where the old line was */
		assert_true(c.line[c.newest].mult > before.mult / 2 && c.line[c.newest].mult < before.mult * 3 / 2);
		knot[i] = c.line[c.newest].tsc0;
		value[i] = h;
		assert_true(i == 0 || value[i] > value[i - 1]);
	}
	/* one tick before each knot converts with the older line: just below */
	for (i = 1; i < 6; i++) {
		uint64_t below = mp__capclock_convert(&c, knot[i] - 1);
		assert_true(below <= value[i] && value[i] - below < 10);
		assert_int_equal(mp__capclock_convert(&c, knot[i]), value[i]);
	}
}

/* A record not yet tallied keeps its line: with the ring of lines full,
 * a round whose new line would replace the line of a time at or after
 * keep_ns starts none (the current line goes on), and one that would not
 * starts one. Then a reading made before those rounds converts as it did. */
static void test_line_kept_for_the_tally(void **state)
{
	mp_capclock_t c;
	struct timespec d = {0, 1000000};
	uint64_t raw, before, keep;
	unsigned newest;
	int i;

	(void)state;
	tsc_clock(&c, "one line, nothing to keep");
	nanosleep(&d, NULL);
	(void)mp__capclock_round(&c, UINT64_MAX);
	raw = mp_tsc(); /* a record made now, on the newest line */
	before = mp__capclock_convert(&c, raw);
	keep = before;
	for (i = 0; i < 3 * MP_CLOCK_LINES; i++) { /* many rounds while it waits */
		nanosleep(&d, NULL);
		newest = c.newest;
		(void)mp__capclock_round(&c, keep);
		assert_true(c.count < MP_CLOCK_LINES || c.newest == newest ||
			    c.line[(c.newest + 1) % MP_CLOCK_LINES].ns0 <= (int64_t)keep);
		assert_int_equal(mp__capclock_convert(&c, raw), before);
	}
	assert_int_equal(c.count, MP_CLOCK_LINES); /* lines were added until the ring was full */
	newest = c.newest;
	nanosleep(&d, NULL);
	(void)mp__capclock_round(&c, UINT64_MAX); /* tallied: the lines go on */
	assert_int_not_equal(c.newest, newest);
}

#define N 40
#define TOLERANCE_NS 500000 /* the first slope is measured over 50 us: < 0.1% error until re-anchored */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Each event's time lies between CLOCK_MONOTONIC read just before and just
 * after recording it, over 400 ms and many flush rounds (each re-anchors). */
static void check_times_follow_monotonic(void)
{
	char *path = mp_test_tmpfile(".memprof");
	uint64_t before[N], after[N], origin;
	mp_capture_t *cap;
	mp_source_t *src;
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t ev;
	mp_writer_options_t o = {0};
	struct timespec d = {0, 10000000};
	int i, n = 0;

	o.flush_interval_ms = 20;
	assert_int_equal(mp_writer_open(&w, path, 1, &o, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	for (i = 0; i < N; i++) {
		before[i] = mono_ns();
		assert_int_equal(mp_writer_alloc(w, 0, 4096u * (uint64_t)(i + 1), 64, 64), 0);
		after[i] = mono_ns();
		if (i % 7 == 3)
			assert_int_equal(mp_writer_flush(w), 0);
		nanosleep(&d, NULL);
	}
	assert_int_equal(mp_writer_close(w), 0);

	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	origin = mp_capture_header(cap)->clock_origin_ns;
	src = mp_capture_source(cap);
	while (mp_source_next(src, &ev, &diag) == 1) {
		if (ev.kind != MP_EV_ALLOC)
			continue;
		i = (int)(ev.address / 4096u) - 1;
		assert_true(i == n);
		if (origin + ev.time_ns + TOLERANCE_NS < before[i] || origin + ev.time_ns > after[i] + TOLERANCE_NS)
			fail_msg("event %d at %llu ns, recorded between %llu and %llu ns", i,
				 (unsigned long long)(origin + ev.time_ns), (unsigned long long)before[i],
				 (unsigned long long)after[i]);
		n++;
	}
	assert_int_equal(n, N);
	mp_capture_close(cap);
	unlink(path);
	free(path);
}

static void test_times_follow_monotonic(void **state)
{
	(void)state;
	unsetenv("MEMPROF_CLOCK");
	check_times_follow_monotonic();
}

static void test_times_follow_monotonic_without_tsc(void **state)
{
	(void)state;
	setenv("MEMPROF_CLOCK", "monotonic", 1);
	check_times_follow_monotonic();
	unsetenv("MEMPROF_CLOCK");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_arithmetic),
		cmocka_unit_test(test_reanchor_is_continuous),
		cmocka_unit_test(test_line_kept_for_the_tally),
		cmocka_unit_test(test_times_follow_monotonic),
		cmocka_unit_test(test_times_follow_monotonic_without_tsc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
