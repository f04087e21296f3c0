/* test_layout.c - the chart arithmetic as data, without cairo: human units,
 * ticks from bytes to TiB and from µs to hours, label placement (asserted
 * on coordinates), M4 downsampling keeping the exact peak, stacking, text
 * fitting, and the memory map's per-pixel merge conserving bytes. Every
 * expected figure is worked out by hand in the comment beside it. */
#include "test_common.h"

#include <memprof/error.h>
#include <memprof/layout.h>
#include <memprof/scene.h>

#include "test_rand.h"

#include <math.h>

/* ---- units ---- */

static void test_fmt_bytes(void **state)
{
	char b[64];

	(void)state;
	assert_string_equal(mp_fmt_bytes(b, sizeof(b), 0), "0 B");
	assert_string_equal(mp_fmt_bytes(b, sizeof(b), 1023), "1023 B");
	assert_string_equal(mp_fmt_bytes(b, sizeof(b), 1024), "1.00 KiB");
	assert_string_equal(mp_fmt_bytes(b, sizeof(b), 1237319), "1.18 MiB");       /* 1.18000 MiB */
	assert_string_equal(mp_fmt_bytes(b, sizeof(b), 66060288), "63.0 MiB");      /* 63 * 2^20 */
	assert_string_equal(mp_fmt_bytes(b, sizeof(b), 536870912), "512 MiB");
	assert_string_equal(mp_fmt_bytes(b, sizeof(b), 1048575), "1.00 MiB");       /* 1023.999 KiB rounds up */
	assert_string_equal(mp_fmt_bytes(b, sizeof(b), 3298534883328ull), "3.00 TiB");
	assert_string_equal(mp_bytes_exact(b, sizeof(b), 66060288), "66060288 B (63.00 MiB)");
	assert_string_equal(mp_bytes_exact(b, sizeof(b), 512), "512 B");
	assert_string_equal(mp_fmt_count(b, sizeof(b), 1234567), "1,234,567");
	assert_string_equal(mp_fmt_count(b, sizeof(b), 999), "999");
}

static void test_fmt_time(void **state)
{
	char b[64];

	(void)state;
	assert_string_equal(mp_fmt_time(b, sizeof(b), 999), "999 ns");
	assert_string_equal(mp_fmt_time(b, sizeof(b), 278638), "278.6 µs");
	assert_string_equal(mp_fmt_time(b, sizeof(b), 999960), "1.000 ms");      /* not "1000.0 µs" */
	assert_string_equal(mp_fmt_time(b, sizeof(b), 1250000000), "1.250 s");
	assert_string_equal(mp_fmt_time(b, sizeof(b), 90000000000ull), "90.00 s");
	assert_string_equal(mp_fmt_time(b, sizeof(b), 720000000000ull), "12.00 min");
	assert_string_equal(mp_fmt_time(b, sizeof(b), 12600000000000ull), "3.500 h");
}

/* ---- ticks ---- */

static void expect_ticks(mp_axis_kind_t kind, double lo, double hi, size_t max, const char *const *labels, size_t n)
{
	mp_ticks_t t;

	assert_int_equal(mp_ticks_nice(&t, kind, lo, hi, max), 0);
	for (size_t i = 0; i < t.count && i < n; i++)
		if (strcmp(t.label[i], labels[i]))
			fail_msg("tick %zu of [%g, %g]: '%s', expected '%s'", i, lo, hi, t.label[i], labels[i]);
	assert_int_equal(t.count, n);
}

static void test_ticks_bytes(void **state)
{
	(void)state;
	/* [0, 1000 B], at most 6: raw step 200 B, nice 200 B */
	expect_ticks(MP_AXIS_BYTES, 0, 1000, 6, (const char *const[]){"0 B", "200 B", "400 B", "600 B", "800 B", "1000 B"}, 6);
	/* [0, 1.5 KiB]: unit KiB, raw 0.5 KiB */
	expect_ticks(MP_AXIS_BYTES, 0, 1536, 4, (const char *const[]){"0 KiB", "0.5 KiB", "1.0 KiB", "1.5 KiB"}, 4);
	/* [0, 64 MiB], at most 5: raw 16 MiB, nice 20 MiB */
	expect_ticks(MP_AXIS_BYTES, 0, 67108864, 5, (const char *const[]){"0 MiB", "20 MiB", "40 MiB", "60 MiB"}, 4);
	/* [0, 80 GiB], at most 9: raw 10 GiB */
	expect_ticks(MP_AXIS_BYTES, 0, 80.0 * 1073741824, 9,
		     (const char *const[]){"0 GiB", "10 GiB", "20 GiB", "30 GiB", "40 GiB", "50 GiB", "60 GiB", "70 GiB", "80 GiB"}, 9);
	/* [0, 3 TiB], at most 7: raw 0.5 TiB */
	expect_ticks(MP_AXIS_BYTES, 0, 3.0 * 1099511627776.0, 7,
		     (const char *const[]){"0 TiB", "0.5 TiB", "1.0 TiB", "1.5 TiB", "2.0 TiB", "2.5 TiB", "3.0 TiB"}, 7);
	/* [2 GiB, 2 GiB + 100 B]: a step of 20 B, in bytes, not 0.0000000186 GiB */
	{
		mp_ticks_t t;
		assert_int_equal(mp_ticks_nice(&t, MP_AXIS_BYTES, 2147483648.0, 2147483748.0, 6), 0);
		assert_true(t.step == 20);
		assert_string_equal(t.label[0], "2147483660 B");
	}
	/* [0, 10 B], at most 40: never a step under one byte */
	{
		mp_ticks_t t;
		assert_int_equal(mp_ticks_nice(&t, MP_AXIS_BYTES, 0, 10, 40), 0);
		assert_true(t.step >= 1);
		assert_int_equal(t.count, 11);
	}
}

static void test_ticks_time(void **state)
{
	(void)state;
	/* [0, 500 µs]: raw 100 µs */
	expect_ticks(MP_AXIS_TIME_NS, 0, 500e3, 6, (const char *const[]){"0 µs", "100 µs", "200 µs", "300 µs", "400 µs", "500 µs"}, 6);
	/* [0, 2.5 ms]: raw 0.5 ms, labelled in ms */
	expect_ticks(MP_AXIS_TIME_NS, 0, 2.5e6, 6, (const char *const[]){"0 ms", "0.5 ms", "1.0 ms", "1.5 ms", "2.0 ms", "2.5 ms"}, 6);
	/* [0, 130 s], at most 10: raw 14.4 s -> 15 s; minutes would need 0.25: seconds */
	expect_ticks(MP_AXIS_TIME_NS, 0, 130e9, 10,
		     (const char *const[]){"0 s", "15 s", "30 s", "45 s", "60 s", "75 s", "90 s", "105 s", "120 s"}, 9);
	/* [0, 40 min], at most 5: raw 10 min */
	expect_ticks(MP_AXIS_TIME_NS, 0, 2400e9, 5, (const char *const[]){"0 min", "10 min", "20 min", "30 min", "40 min"}, 5);
	/* [0, 3 h], at most 7: raw 30 min, labelled in hours */
	expect_ticks(MP_AXIS_TIME_NS, 0, 10800e9, 7, (const char *const[]){"0 h", "0.5 h", "1.0 h", "1.5 h", "2.0 h", "2.5 h", "3.0 h"}, 7);
	/* [2 s, 2 s + 1 µs]: 200 ns steps in µs, not "2.000000 s" twice */
	expect_ticks(MP_AXIS_TIME_NS, 2e9, 2e9 + 1000, 6,
		     (const char *const[]){"2000000.0 µs", "2000000.2 µs", "2000000.4 µs", "2000000.6 µs", "2000000.8 µs", "2000001.0 µs"}, 6);
	/* [1.2 ms, 1.7 ms]: the first tick is the first multiple inside */
	expect_ticks(MP_AXIS_TIME_NS, 1.2e6, 1.7e6, 6, (const char *const[]){"1.2 ms", "1.3 ms", "1.4 ms", "1.5 ms", "1.6 ms", "1.7 ms"}, 6);
}

static void test_ticks_other(void **state)
{
	(void)state;
	expect_ticks(MP_AXIS_PERCENT, 0, 100, 6, (const char *const[]){"0%", "20%", "40%", "60%", "80%", "100%"}, 6);
	/* raw 3086 -> 5000, grouped */
	expect_ticks(MP_AXIS_NUMBER, 0, 12345, 5, (const char *const[]){"0", "5,000", "10,000"}, 3);
	/* whole numbers (trace entry indexes): never a step under 1, however
	 * many ticks would fit; grouped as plain numbers are */
	expect_ticks(MP_AXIS_INTEGER, 0, 4, 20, (const char *const[]){"0", "1", "2", "3", "4"}, 5);
	expect_ticks(MP_AXIS_INTEGER, 0, 10307, 8, (const char *const[]){"0", "2,000", "4,000", "6,000", "8,000", "10,000"}, 6);
	{
		mp_ticks_t t;
		assert_int_equal(mp_ticks_nice(&t, MP_AXIS_NUMBER, 5, 5, 5), MP_EUSAGE);
		assert_int_equal(mp_ticks_nice(&t, MP_AXIS_NUMBER, 0, 1, 1), MP_EUSAGE);
		assert_int_equal(mp_ticks_nice(&t, MP_AXIS_NUMBER, 0, NAN, 4), MP_EUSAGE);
	}
}

/* Labels 7.2 px a character (size 12, fixed measure). On a 300 px axis the
 * densest 1-2-5 steps for [0, 1000 B] whose labels keep 9.6 px apart:
 * 100 B apart is 30 px, less than "100 B" + "200 B" (36 px) + 9.6; 200 B
 * apart is 60 px >= 36 + 9.6 (wider labels "1000 B": 39.6 px, still fit). */
static void test_ticks_fit(void **state)
{
	mp_ticks_t t;

	(void)state;
	assert_int_equal(mp_ticks_fit(&t, MP_AXIS_BYTES, 0, 1000, 300, 1, &mp_text_measure_fixed, 12), 0);
	assert_true(t.step == 200);
	/* vertical: 12 px text + 7.2 px gap; 100 px for [0, 100%]: 20 % is 20 px */
	assert_int_equal(mp_ticks_fit(&t, MP_AXIS_PERCENT, 0, 100, 100, 0, &mp_text_measure_fixed, 12), 0);
	assert_true(t.step == 20);
}

/* ---- labels ---- */

static mp_label_t label(double w, double h, double priority, const mp_box_t *cands, size_t n)
{
	mp_label_t l;

	memset(&l, 0, sizeof(l));
	l.w = w;
	l.h = h;
	l.priority = priority;
	for (size_t i = 0; i < n; i++)
		l.cand[i] = cands[i];
	l.ncand = n;
	return l;
}

static void test_labels_collide(void **state)
{
	mp_box_t bounds = {0, 0, 200, 100};
	mp_box_t a[] = {{10, 10, 0, 0}, {10, 40, 0, 0}};
	mp_box_t c[] = {{15, 12, 0, 0}};
	mp_label_t l[3];

	(void)state;
	/* l[0] low priority; l[1] high priority with the same first wish; l[2]
	 * can only overlap. */
	l[0] = label(50, 10, 1, a, 2);
	l[1] = label(50, 10, 5, a, 2);
	l[2] = label(20, 10, 0, c, 1);
	assert_int_equal(mp_labels_place(l, 3, &bounds, NULL, 0, 2), 2);
	assert_true(l[1].placed && l[1].box.x == 10 && l[1].box.y == 10);
	assert_true(l[0].placed && l[0].box.x == 10 && l[0].box.y == 40);
	assert_false(l[2].placed); /* [15,35]x[12,22] meets l[1]'s [10,60]x[10,20] */
}

static void test_labels_bounds_and_obstacles(void **state)
{
	mp_box_t bounds = {0, 0, 200, 100};
	mp_box_t right[] = {{180, 10, 0, 0}};
	mp_box_t cands[] = {{20, 10, 0, 0}, {20, 30, 0, 0}};
	mp_box_t obstacle = {0, 5, 100, 20};
	mp_label_t l[2];

	(void)state;
	/* 50 px wide at x 180 sticks out by 30: without slide it is dropped ... */
	l[0] = label(50, 10, 0, right, 1);
	assert_int_equal(mp_labels_place(l, 1, &bounds, NULL, 0, 0), 0);
	/* ... with slide it moves to x = 200 - 50 */
	l[0].slide = 1;
	assert_int_equal(mp_labels_place(l, 1, &bounds, NULL, 0, 0), 1);
	assert_true(l[0].box.x == 150 && l[0].box.y == 10);
	/* an obstacle over [0,100]x[5,25] pushes the label to its second place
	 * (y 30 keeps the 4 px gap from 25 + ... 30 - 25 = 5 > 4) */
	l[1] = label(40, 10, 0, cands, 2);
	assert_int_equal(mp_labels_place(&l[1], 1, &bounds, &obstacle, 1, 4), 1);
	assert_true(l[1].box.x == 20 && l[1].box.y == 30);
	/* ... and a gap of 6 px leaves it nowhere to go */
	assert_int_equal(mp_labels_place(&l[1], 1, &bounds, &obstacle, 1, 6), 0);
}

/* ---- series ---- */

static void test_m4_small(void **state)
{
	double x[10], y[10] = {1, 5, 2, 8, 3, 3, 9, 1, 0, 4};
	size_t out[8], n;
	const size_t want[] = {0, 3, 4, 5, 6, 8, 9};

	(void)state;
	for (int i = 0; i < 10; i++)
		x[i] = i;
	/* two columns of [0, 9]: x 0..4 (first 0, min 0, max 3, last 4) and
	 * x 5..9 (first 5, max 6, min 8, last 9) */
	n = mp_series_m4(x, y, 10, 0, 9, 2, out);
	assert_int_equal(n, 7);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i], want[i]);
	assert_int_equal(mp_series_m4(x, y, 0, 0, 9, 2, out), 0);
}

static void test_m4_keeps_peak(void **state)
{
	enum { N = 200000, COLS = 300 };
	double *x = malloc(N * sizeof(*x)), *y = malloc(N * sizeof(*y));
	size_t *out = malloc(4 * COLS * sizeof(*out)), n, peak = 123457;
	uint64_t rng = 42;
	double best = 0;

	(void)state;
	assert_non_null(x);
	assert_non_null(y);
	assert_non_null(out);
	for (size_t i = 0; i < N; i++) {
		x[i] = (double)i * 3 + (double)(mp_test_xorshift(&rng) % 3); /* uneven, ascending */
		y[i] = (double)(mp_test_xorshift(&rng) % 1000000);
	}
	y[peak] = 1e9 + 7;
	n = mp_series_m4(x, y, N, x[0], x[N - 1], COLS, out);
	assert_true(n <= 4 * COLS);
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(out[i] > out[i - 1]);
		if (y[out[i]] > best)
			best = y[out[i]];
	}
	assert_true(best == 1e9 + 7);
	/* the first and last points are always kept */
	assert_int_equal(out[0], 0);
	assert_int_equal(out[n - 1], N - 1);
	free(x);
	free(y);
	free(out);
}

/* Per pixel column of a step series: x 0, 15, 25, 35 with y 5, 1, 7, 2 on
 * [0, 40] in 4 columns of 10. Column 0 holds 5; column 1 starts at 5
 * (held since 0) and drops to 1 at 15; column 2 starts at 1, rises to 7
 * at 25; column 3 starts at 7, drops to 2 at 35. A NaN is a gap: the
 * column after it has no value until the next point. */
static void test_columns(void **state)
{
	const double x[] = {0, 15, 25, 35}, y[] = {5, 1, 7, 2}, yg[] = {5, NAN, 7, 2};
	mp_column_range_t c[4];
	const double lo[] = {5, 1, 1, 2}, hi[] = {5, 5, 7, 7};

	(void)state;
	mp_series_columns(x, y, 4, 0, 40, 4, c);
	for (int i = 0; i < 4; i++) {
		assert_true(c[i].has);
		assert_true(c[i].lo == lo[i] && c[i].hi == hi[i]);
	}
	mp_series_columns(x, yg, 4, 0, 40, 4, c);
	assert_true(c[1].has && c[1].lo == 5 && c[1].hi == 5); /* 5 until the gap at 15 */
	assert_true(c[2].has && c[2].lo == 7 && c[2].hi == 7); /* nothing carried across the gap */
	/* before the first point: no value */
	mp_series_columns(x + 1, y + 1, 3, 0, 40, 4, c);
	assert_false(c[0].has);
}

/* A million points into 300 columns: the highest column's hi is the
 * series' maximum, exactly, in the column of its x, and every column's range
 * is within the series'. */
static void test_columns_keep_peak(void **state)
{
	enum { N = 1000000, COLS = 300 };
	double *x = malloc(N * sizeof(*x)), *y = malloc(N * sizeof(*y)), best = 0;
	mp_column_range_t *c = malloc(COLS * sizeof(*c));
	uint64_t rng = 99;

	(void)state;
	assert_true(x && y && c);
	for (size_t i = 0; i < N; i++) {
		x[i] = (double)i;
		y[i] = (double)(mp_test_xorshift(&rng) % 1000000007);
	}
	y[765432] = 5e12 + 3;
	mp_series_columns(x, y, N, 0, N - 1, COLS, c);
	for (size_t i = 0; i < COLS; i++) {
		assert_true(c[i].has && c[i].lo <= c[i].hi);
		if (c[i].hi > best)
			best = c[i].hi;
	}
	assert_true(best == 5e12 + 3);
	/* and it is the column mp_series_column gives for its x: a mark put
	 * there stands over it */
	assert_true(c[mp_series_column(765432, 0, N - 1, COLS)].hi == 5e12 + 3);
	assert_int_equal(mp_series_column(-5, 0, N - 1, COLS), 0);
	assert_int_equal(mp_series_column(2.0 * N, 0, N - 1, COLS), COLS - 1);
	free(x);
	free(y);
	free(c);
}

static void test_stack(void **state)
{
	const double a[] = {1, 2, 3}, b[] = {10, 0, 5}, c[] = {100, 100, 0};
	const double *layers[] = {a, b, c};
	double tops[9];
	const double want[] = {1, 2, 3, 11, 2, 8, 111, 102, 8};

	(void)state;
	mp_series_stack(layers, 3, 3, tops);
	for (int i = 0; i < 9; i++)
		assert_true(tops[i] == want[i]);
}

/* ---- text fit ---- */

static void test_text_fit(void **state)
{
	char out[64];

	(void)state;
	/* fixed measure, size 10: 6 px a code point */
	assert_int_equal(mp_text_fit(&mp_text_measure_fixed, "attention", 10, 0, 54, MP_ELLIPSIS_END, out, sizeof(out)), 0);
	assert_string_equal(out, "attention");
	/* 30 px: 5 code points, the ellipsis one of them */
	assert_int_equal(mp_text_fit(&mp_text_measure_fixed, "attention", 10, 0, 30, MP_ELLIPSIS_END, out, sizeof(out)), 1);
	assert_string_equal(out, "atte…");
	assert_int_equal(mp_text_fit(&mp_text_measure_fixed, "model/layer/softmax", 10, 0, 42, MP_ELLIPSIS_MIDDLE, out, sizeof(out)), 1);
	assert_string_equal(out, "mod…max");
	assert_int_equal(mp_text_fit(&mp_text_measure_fixed, "model/layer/softmax", 10, 0, 48, MP_ELLIPSIS_START, out, sizeof(out)), 1);
	assert_string_equal(out, "…softmax");
	/* never splits a two-byte sequence: "µµµµ" in 18 px is "µµ…" */
	assert_int_equal(mp_text_fit(&mp_text_measure_fixed, "µµµµ", 10, 0, 18, MP_ELLIPSIS_END, out, sizeof(out)), 1);
	assert_string_equal(out, "µµ…");
	/* narrower than the ellipsis: nothing */
	assert_int_equal(mp_text_fit(&mp_text_measure_fixed, "abc", 10, 0, 5, MP_ELLIPSIS_END, out, sizeof(out)), 1);
	assert_string_equal(out, "");
}

/* Names are bytes a program chose; cairo takes UTF-8 only. */
static void test_utf8_clean(void **state)
{
	char a[] = "ok µs ⇥", b[] = "a\xff" "b", c[] = "\xc0\xaf/", d[] = "\xed\xa0\x80x", e[] = "ab\xe2\x82", f[] = "\xef\xbf\xbe!";

	(void)state;
	assert_true(mp_utf8_valid(a));
	mp_utf8_clean(a);
	assert_string_equal(a, "ok µs ⇥");           /* valid: unchanged */
	assert_false(mp_utf8_valid(b));
	mp_utf8_clean(b);
	assert_string_equal(b, "a?b");                /* a stray byte */
	mp_utf8_clean(c);
	assert_string_equal(c, "?" "?/");              /* an overlong '/' ("?" "?" keeps trigraphs out) */
	mp_utf8_clean(d);
	assert_string_equal(d, "?" "?" "?x");           /* a surrogate */
	assert_false(mp_utf8_valid(e));
	mp_utf8_clean(e);
	assert_string_equal(e, "ab");                 /* cut off by a truncation */
	mp_utf8_clean(f);
	assert_string_equal(f, "?" "?" "?!");           /* U+FFFE, a noncharacter */
	assert_true(mp_utf8_valid(f));
	/* measures take the text as drawn: a surrogate is three '?', a cut-off
	 * sequence nothing (0.6 x 10 px each) */
	assert_true(mp_text_width(&mp_text_measure_fixed, "\xed\xa0\x80x", 10, 0) == 24);
	assert_true(mp_text_width(&mp_text_measure_fixed, "ab\xe2\x82", 10, 0) == 12);
}

/* ---- memory map ---- */

/* Regions [0, 1200) and [2000, 2600) into 2 rows of 10 columns, no gap.
 * The smallest scale at which they fit in 20 columns: 13 + 7 columns at
 * 1200/13 = 92.3 B a column (14 + 6 would need 100). Blocks: [0,100) t1,
 * [100,300) t2, [600,1200) t1 in the first; [2000,2100) t3 in the second;
 * [1500,1600) between them and [2500,2700) across the second's end are
 * outside. Used 100+200+600+100 = 1000, free 1800-1000 = 800, outside
 * 300; free chunks [300,600) = 300 and [2100,2600) = 500: the largest is
 * 500 at 2100. */
static void test_memmap_small(void **state)
{
	const mp_memmap_region_t r[] = {{0, 1200}, {2000, 2600}};
	const mp_memmap_block_t b[] = {{0, 100, 1}, {100, 200, 2}, {600, 600, 1}, {1500, 100, 4}, {2000, 100, 3}, {2500, 200, 5}};
	uint64_t sum_used = 0, sum_free = 0, region_sum[2] = {0, 0};
	mp_memmap_t m;

	(void)state;
	assert_int_equal(mp_memmap_build(&m, r, 2, b, 6, 10, 2, 0), 0);
	assert_int_equal(m.ncol, 20);
	assert_int_equal(m.rows, 2);
	assert_int_equal(m.region_first[1], 13);
	assert_int_equal(m.used_bytes, 1000);
	assert_int_equal(m.free_bytes, 800);
	assert_int_equal(m.outside_bytes, 300);
	assert_int_equal(m.largest_free, 500);
	assert_int_equal(m.largest_free_addr, 2100);
	/* 2100 is in column 1 of the second region ([2085, 2171)), 2599 in its last */
	assert_int_equal(m.largest_first, 14);
	assert_int_equal(m.largest_last, 19);
	assert_int_equal(m.col[0].lo, 0);
	assert_int_equal(m.col[0].hi, 92);    /* 1200 * 1 / 13 */
	assert_int_equal(m.col[0].used[1], 92);
	assert_int_equal(m.col[1].used[1], 8); /* [92,184): 8 of t1, 84 of t2 */
	assert_int_equal(m.col[1].used[2], 84);
	assert_int_equal(m.col[1].dominant, 2);
	assert_int_equal(m.col[13].row, 1);    /* the 14th column wraps */
	assert_int_equal(m.col[13].x, 3);
	for (size_t i = 0; i < m.ncol; i++) {
		uint64_t u = 0;
		for (int t = 0; t < MP_MEMMAP_TYPES; t++)
			u += m.col[i].used[t];
		assert_int_equal(u + m.col[i].free, m.col[i].hi - m.col[i].lo);
		if (i + 1 < m.ncol && m.col[i + 1].region == m.col[i].region)
			assert_int_equal(m.col[i].hi, m.col[i + 1].lo);
		sum_used += u;
		sum_free += m.col[i].free;
		region_sum[m.col[i].region] += m.col[i].hi - m.col[i].lo;
	}
	assert_int_equal(sum_used, 1000);
	assert_int_equal(sum_free, 800);
	assert_int_equal(region_sum[0], 1200);
	assert_int_equal(region_sum[1], 600);
	mp_memmap_free(&m);
}

static int by_addr(const void *a, const void *b)
{
	const mp_memmap_block_t *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* A million blocks in 3 regions into 1100 x 6 columns: every byte in one
 * column; used = the sum of the blocks inside, as counted here. */
static void test_memmap_million(void **state)
{
	enum { N = 1000000 };
	const mp_memmap_region_t r[] = {{1 << 20, (1 << 20) + (64ull << 20)}, {1ull << 30, (1ull << 30) + (512ull << 20)},
					{1ull << 33, (1ull << 33) + (3ull << 20)}};
	mp_memmap_block_t *b = malloc(N * sizeof(*b));
	uint64_t rng = 7, inside = 0, used = 0, total = 0;
	mp_memmap_t m;
	size_t k = 0;

	(void)state;
	assert_non_null(b);
	/* blocks on a 512 B grid, some in each region, some outside */
	while (k < N) {
		uint64_t reg = mp_test_xorshift(&rng) % 4, off, size;
		if (reg == 3) {
			b[k].addr = 1ull << 31 | (mp_test_xorshift(&rng) % (1 << 20)) * 512;
			b[k].size = 512;
		} else {
			uint64_t span = r[reg].end - r[reg].base;
			off = (mp_test_xorshift(&rng) % (span / 512)) * 512;
			size = 512 * (1 + mp_test_xorshift(&rng) % 4);
			b[k].addr = r[reg].base + off;
			b[k].size = size;
		}
		b[k].type = (uint8_t)(mp_test_xorshift(&rng) % 6);
		k++;
	}
	qsort(b, N, sizeof(*b), by_addr);
	/* the union of the blocks wholly inside a region, computed apart */
	for (size_t ri = 0; ri < 3; ri++) {
		uint64_t cover = r[ri].base;
		for (size_t i = 0; i < N; i++) {
			uint64_t end = b[i].addr + b[i].size;
			if (b[i].addr < r[ri].base || end > r[ri].end)
				continue;
			if (end > cover) {
				inside += end - (b[i].addr > cover ? b[i].addr : cover);
				cover = end;
			}
		}
	}
	assert_int_equal(mp_memmap_build(&m, r, 3, b, N, 1100, 6, 4), 0);
	assert_true(m.ncol <= 1100 * 6);
	for (size_t i = 0; i < m.ncol; i++) {
		for (int t = 0; t < MP_MEMMAP_TYPES; t++)
			used += m.col[i].used[t];
		total += m.col[i].hi - m.col[i].lo;
	}
	assert_int_equal(used, inside);
	assert_int_equal(m.used_bytes, inside);
	assert_int_equal(total, (64ull << 20) + (512ull << 20) + (3ull << 20));
	assert_int_equal(m.used_bytes + m.free_bytes, total);
	mp_memmap_free(&m);
	free(b);
}

static void test_memmap_errors(void **state)
{
	const mp_memmap_region_t overlap[] = {{0, 100}, {50, 200}};
	const mp_memmap_region_t ok[] = {{0, 100}};
	const mp_memmap_block_t unsorted[] = {{50, 10, 0}, {10, 10, 0}};
	mp_memmap_t m;

	(void)state;
	assert_int_equal(mp_memmap_build(&m, overlap, 2, NULL, 0, 10, 1, 0), MP_EUSAGE);
	assert_int_equal(mp_memmap_build(&m, ok, 1, unsorted, 2, 10, 1, 0), MP_EUSAGE);
	assert_int_equal(mp_memmap_build(&m, ok, 0, NULL, 0, 10, 1, 0), MP_EUSAGE);
	assert_int_equal(mp_memmap_build(&m, ok, 1, NULL, 0, 0, 1, 0), MP_EUSAGE);
	/* no block: all free, the whole region the largest chunk */
	assert_int_equal(mp_memmap_build(&m, ok, 1, NULL, 0, 10, 1, 0), 0);
	assert_int_equal(m.free_bytes, 100);
	assert_int_equal(m.largest_free, 100);
	mp_memmap_free(&m);
}

/* ---- scene ---- */

static void test_scene(void **state)
{
	mp_scene_t *s = mp_scene_new(100, 50, MP_RGB(0xFFFFFF));
	mp_style_t st = {MP_RGB(0x0072B2), MP_NONE, 0, 0};
	mp_text_style_t ts = {12, 0, MP_ALIGN_LEFT, MP_VALIGN_TOP, 0, MP_RGB(0)};
	mp_point_t p[3] = {{0, 0}, {10, 0}, {10, 10}};
	size_t from = 0;
	long i;

	(void)state;
	assert_non_null(s);
	assert_int_equal(mp_scene_rect(s, 1, 2, 3, 4, &st), 0);
	i = mp_scene_path(s, p, 3, 1, &st);
	mp_scene_tag(s, i, "triangle");
	assert_int_equal(mp_scene_text(s, 5, 5, "", &ts), -2);
	assert_int_equal(mp_scene_text(s, 5, 5, "hello", &ts), 2);
	assert_int_equal(mp_scene_count(s), 3);
	assert_string_equal(mp_scene_string(s, mp_scene_item(s, 2)), "hello");
	assert_ptr_equal(mp_scene_find(s, "triangle", &from), mp_scene_item(s, 1));
	assert_true(mp_scene_points(s, mp_scene_item(s, 1))[2].y == 10);
	assert_null(mp_scene_find(s, "triangle", &from));
	mp_scene_note(s, 0, "a rect\n\xff", 7); /* a note and a ref: what an item stands for */
	assert_string_equal(mp_scene_item_note(s, mp_scene_item(s, 0)), "a rect\n?");
	assert_int_equal(mp_scene_item(s, 0)->ref, 7);
	assert_null(mp_scene_item_note(s, mp_scene_item(s, 1)));
	assert_int_equal(mp_scene_status(s), 0);
	mp_scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_bytes),
		cmocka_unit_test(test_fmt_time),
		cmocka_unit_test(test_ticks_bytes),
		cmocka_unit_test(test_ticks_time),
		cmocka_unit_test(test_ticks_other),
		cmocka_unit_test(test_ticks_fit),
		cmocka_unit_test(test_labels_collide),
		cmocka_unit_test(test_labels_bounds_and_obstacles),
		cmocka_unit_test(test_m4_small),
		cmocka_unit_test(test_m4_keeps_peak),
		cmocka_unit_test(test_columns),
		cmocka_unit_test(test_columns_keep_peak),
		cmocka_unit_test(test_stack),
		cmocka_unit_test(test_text_fit),
		cmocka_unit_test(test_utf8_clean),
		cmocka_unit_test(test_memmap_small),
		cmocka_unit_test(test_memmap_million),
		cmocka_unit_test(test_memmap_errors),
		cmocka_unit_test(test_scene),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
