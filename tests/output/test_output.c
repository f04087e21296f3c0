/* test_output.c - the output layer's shared helpers (src/output): byte
 * units in both forms, CSV quoting, JSON values. Every expected string is
 * worked out by hand in the comment beside it. */
#include "test_common.h"

#include <memprof/output/csv.h>
#include <memprof/output/json.h>
#include <memprof/output/units.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- byte units ---- */

static void test_bytes_human(void **state)
{
	char b[MP_BYTES_BUF];

	(void)state;
	assert_string_equal(mp_bytes_human(b, sizeof(b), 0), "0 B");
	assert_string_equal(mp_bytes_human(b, sizeof(b), 1023), "1023 B");           /* below 1 KiB: exact */
	assert_string_equal(mp_bytes_human(b, sizeof(b), 1024), "1.00 KiB");
	assert_string_equal(mp_bytes_human(b, sizeof(b), 1536), "1.50 KiB");         /* 1536 / 1024 */
	assert_string_equal(mp_bytes_human(b, sizeof(b), 110110000), "105.01 MiB");  /* / 2^20 = 105.0091 */
	assert_string_equal(mp_bytes_human(b, sizeof(b), 1ull << 40), "1.00 TiB");
	assert_string_equal(mp_bytes_human(b, sizeof(b), 1ull << 60), "1.00 EiB");   /* the top unit */
	assert_string_equal(mp_bytes_human(b, sizeof(b), UINT64_MAX), "16.00 EiB");  /* 2^64 / 2^60 */
}

static void test_bytes_exact(void **state)
{
	char b[MP_BYTES_BUF], small[8];

	(void)state;
	assert_string_equal(mp_bytes_exact(b, sizeof(b), 512), "512 B");
	assert_string_equal(mp_bytes_exact(b, sizeof(b), 1024), "1024 B (1.00 KiB)");
	assert_string_equal(mp_bytes_exact(b, sizeof(b), 66060288), "66060288 B (63.00 MiB)"); /* 63 * 2^20 */
	assert_string_equal(mp_bytes_exact(b, sizeof(b), 1237319), "1237319 B (1.18 MiB)");    /* 1.1800 MiB */
	/* the longest text: 20 digits + " B (16.00 EiB)" = 34 characters */
	assert_string_equal(mp_bytes_exact(b, sizeof(b), UINT64_MAX), "18446744073709551615 B (16.00 EiB)");
	/* a short buffer truncates like snprintf, NUL-terminated */
	assert_string_equal(mp_bytes_exact(small, sizeof(small), 66060288), "6606028");
}

static void test_bytes_signed(void **state)
{
	char b[MP_BYTES_BUF];

	(void)state;
	assert_string_equal(mp_bytes_human_signed(b, sizeof(b), 0), "0 B");
	assert_string_equal(mp_bytes_human_signed(b, sizeof(b), -512), "-512 B");
	assert_string_equal(mp_bytes_human_signed(b, sizeof(b), -1024), "-1.00 KiB");
	assert_string_equal(mp_bytes_human_signed(b, sizeof(b), -1536), "-1.50 KiB");
	assert_string_equal(mp_bytes_human_signed(b, sizeof(b), 3 * 1048576), "3.00 MiB");
	assert_string_equal(mp_bytes_human_signed(b, sizeof(b), INT64_MIN), "-8.00 EiB"); /* -2^63 / 2^60 */
	assert_string_equal(mp_bytes_human_signed(b, sizeof(b), INT64_MAX), "8.00 EiB");
}

/* ---- CSV ---- */

/* What mp_csv_field writes for s. Caller frees. */
static char *csv_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	mp_csv_field(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void expect_csv(const char *in, const char *want)
{
	char *got = csv_of(in);

	assert_string_equal(got, want);
	free(got);
}

static void test_csv_quoting(void **state)
{
	(void)state;
	expect_csv("", "");                                   /* empty: an empty field */
	expect_csv("GPU_0_bfc", "GPU_0_bfc");                 /* nothing to quote */
	expect_csv("a b;c\t'd'", "a b;c\t'd'");               /* spaces, ';', tabs, ' need none */
	expect_csv("f32[8,128]", "\"f32[8,128]\"");           /* a comma */
	expect_csv("say \"hi\"", "\"say \"\"hi\"\"\"");       /* quotes doubled */
	expect_csv("\"", "\"\"\"\"");                         /* a lone quote: 4 quotes */
	expect_csv("two\nlines", "\"two\nlines\"");           /* a line feed */
	expect_csv("cr\r", "\"cr\r\"");                       /* a carriage return */
	expect_csv("a,\"b\"\n", "\"a,\"\"b\"\"\n\"");         /* all at once */
}

/* ---- JSON ---- */

/* The compact text of v (stolen). Caller frees. */
static char *dump(json_t *v)
{
	char *s;

	assert_non_null(v);
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	json_decref(v);
	assert_non_null(s);
	return s;
}

static void expect_json(json_t *v, const char *want)
{
	char *got = dump(v);

	assert_string_equal(got, want);
	free(got);
}

static void test_json_integers(void **state)
{
	(void)state;
	expect_json(mp_json_u64(0), "0");
	/* 2^53 + 1: the first integer a double cannot hold; exact here */
	expect_json(mp_json_u64(9007199254740993ull), "9007199254740993");
	expect_json(mp_json_u64(18000000000000000000ull - 1), "9223372036854775807"); /* above 2^63 - 1: clamped */
	expect_json(mp_json_u64((uint64_t)INT64_MAX), "9223372036854775807");
	expect_json(mp_json_u64(UINT64_MAX), "9223372036854775807");                   /* not -1 */
}

static void test_json_put(void **state)
{
	json_t *o = json_object(), *v;
	int bad = 0;

	(void)state;
	assert_non_null(o);
	mp_json_put(o, "bytes", mp_json_u64(66060288), &bad);
	assert_int_equal(bad, 0);
	v = json_object_get(o, "bytes");
	assert_true(json_is_integer(v));
	assert_int_equal(json_integer_value(v), 66060288);
	/* a failed builder (NULL) is remembered, and nothing is set */
	mp_json_put(o, "lost", NULL, &bad);
	assert_int_equal(bad, 1);
	assert_null(json_object_get(o, "lost"));
	bad = 0;
	mp_json_put(o, "name", mp_json_text("pool"), &bad);
	assert_int_equal(bad, 0);
	expect_json(o, "{\"bytes\":66060288,\"name\":\"pool\"}");
}

static void test_json_text(void **state)
{
	(void)state;
	expect_json(mp_json_text(NULL), "\"\"");
	expect_json(mp_json_text("h\xc3\xa9llo"), "\"h\xc3\xa9llo\""); /* valid UTF-8 kept as it is */
	/* not UTF-8 (0xff, a lone continuation byte): those bytes become '?' */
	expect_json(mp_json_text("a\xff" "b\x80"), "\"a?b?\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes_human),  cmocka_unit_test(test_bytes_exact), cmocka_unit_test(test_bytes_signed),
		cmocka_unit_test(test_csv_quoting),  cmocka_unit_test(test_json_integers), cmocka_unit_test(test_json_put),
		cmocka_unit_test(test_json_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
