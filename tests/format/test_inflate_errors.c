/* test_inflate_errors.c - the reader's deflate decoder (src/core/format/
 * inflate.c) on malformed streams, each against zlib's verdict on the same
 * bytes: over-subscribed and incomplete codes (and zlib's exception, one
 * 1-bit code, with its unused half invalid), no end-of-block code, bad
 * distance codes; block type 3, stored lengths that disagree, too many
 * codes, bad code-length codes; symbols and distances that do not exist or
 * reach before the output, near the ends and in the fast loop. Each gives
 * an error with a reason; good streams cut short or lengthened too. */
#include "test_common.h"

#include "inflate_streams.h"

#include <memprof/error.h>
#include <memprof/format/inflate.h>

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- malformed */

/* w := the header of a final dynamic block with these code lengths; the
 * caller appends the data's codes. */
static void dyn_stream(bw_t *w, const uint8_t *lit, unsigned nlen, const uint8_t *dist, unsigned ndist)
{
	memset(w, 0, sizeof(*w));
	dyn_header(w, 1, lit, nlen, dist, ndist);
}

static void test_code_lengths(void **state)
{
	uint8_t lit[286] = {0}, dist[30] = {0};
	bw_t w;
	(void)state;

	/* 'A' 1 bit, end 1 bit: complete. Data "A", end. */
	lit['A'] = 1;
	lit[256] = 1;
	dyn_stream(&w, lit, 257, dist, 1);
	put_code(&w, 0, 1);
	put_code(&w, 1, 1);
	expect_ok(w.b, bw_len(&w), "A", 1);
	assert_true(zlib_ok(w.b, bw_len(&w), 1));
	expect_strict(w.b, bw_len(&w), 1);

	/* Over-subscribed: three 1-bit codes. */
	lit['B'] = 1;
	dyn_stream(&w, lit, 257, dist, 1);
	put_code(&w, 0, 1);
	put_code(&w, 1, 1);
	expect_err(w.b, bw_len(&w), 1, MP_ECORRUPT);
	assert_false(zlib_ok(w.b, bw_len(&w), 1));

	/* Incomplete: 'A' 1 bit, end 2 bits (one 2-bit code unused). */
	lit['B'] = 0;
	lit[256] = 2;
	dyn_stream(&w, lit, 257, dist, 1);
	put_code(&w, 0, 1);
	put_code(&w, 2, 2);
	expect_err(w.b, bw_len(&w), 1, MP_ECORRUPT);
	assert_false(zlib_ok(w.b, bw_len(&w), 1));

	/* zlib's exception: only the end of block, one 1-bit code. */
	lit['A'] = 0;
	lit[256] = 1;
	dyn_stream(&w, lit, 257, dist, 1);
	put_code(&w, 0, 1);
	expect_ok(w.b, bw_len(&w), "", 0);
	assert_true(zlib_ok(w.b, bw_len(&w), 0));
	/* ... whose unused half is an invalid symbol. */
	dyn_stream(&w, lit, 257, dist, 1);
	put_code(&w, 1, 1);
	expect_err(w.b, bw_len(&w), 0, MP_ECORRUPT);
	assert_false(zlib_ok(w.b, bw_len(&w), 0));

	/* No end-of-block code. */
	memset(lit, 0, sizeof(lit));
	lit['A'] = 1;
	lit['B'] = 1;
	dyn_stream(&w, lit, 257, dist, 1);
	put_code(&w, 0, 1);
	expect_err(w.b, bw_len(&w), 1, MP_ECORRUPT);
	assert_false(zlib_ok(w.b, bw_len(&w), 1));

	/* Distance codes: one 1-bit code is accepted, and used; "AAAA". */
	memset(lit, 0, sizeof(lit));
	lit['A'] = 2;
	lit[256] = 2;
	lit[258] = 1; /* length 4 */
	dist[0] = 1;  /* distance 1 */
	dyn_stream(&w, lit, 259, dist, 1);
	put_code(&w, 2, 2); /* 258: 0, A: 10, end: 11 */
	put_code(&w, 0, 1);
	put_code(&w, 0, 1); /* distance code 0 */
	put_code(&w, 3, 2);
	expect_ok(w.b, bw_len(&w), "AAAAA", 5);
	assert_true(zlib_ok(w.b, bw_len(&w), 5));
	expect_strict(w.b, bw_len(&w), 5);
	/* ... its unused half is an invalid distance. */
	dyn_stream(&w, lit, 259, dist, 1);
	put_code(&w, 2, 2);
	put_code(&w, 0, 1);
	put_code(&w, 1, 1); /* the missing half */
	put_code(&w, 3, 2);
	expect_err(w.b, bw_len(&w), 5, MP_ECORRUPT);
	assert_false(zlib_ok(w.b, bw_len(&w), 5));
	/* Two 2-bit distance codes: incomplete, refused. */
	dist[0] = 2;
	dist[1] = 2;
	dyn_stream(&w, lit, 259, dist, 2);
	put_code(&w, 2, 2);
	put_code(&w, 0, 1);
	put_code(&w, 0, 2);
	put_code(&w, 3, 2);
	expect_err(w.b, bw_len(&w), 5, MP_ECORRUPT);
	assert_false(zlib_ok(w.b, bw_len(&w), 5));
	/* Over-subscribed distances. */
	dist[0] = 1;
	dist[1] = 1;
	dist[2] = 1;
	dyn_stream(&w, lit, 259, dist, 3);
	put_code(&w, 2, 2);
	put_code(&w, 3, 2);
	expect_err(w.b, bw_len(&w), 1, MP_ECORRUPT);
	assert_false(zlib_ok(w.b, bw_len(&w), 1));
	/* No distance codes at all: fine without matches... */
	memset(dist, 0, sizeof(dist));
	dyn_stream(&w, lit, 259, dist, 1);
	put_code(&w, 2, 2);
	put_code(&w, 3, 2);
	expect_ok(w.b, bw_len(&w), "A", 1);
	assert_true(zlib_ok(w.b, bw_len(&w), 1));
	/* ... a match is an invalid distance. */
	dyn_stream(&w, lit, 259, dist, 1);
	put_code(&w, 2, 2);
	put_code(&w, 0, 1);
	put_code(&w, 0, 1);
	put_code(&w, 3, 2);
	expect_err(w.b, bw_len(&w), 5, MP_ECORRUPT);
	assert_false(zlib_ok(w.b, bw_len(&w), 5));
}

static void test_header_errors(void **state)
{
	uint8_t lit[288] = {0}, dist[32] = {0};
	bw_t w;
	(void)state;

	/* Block type 3. */
	memset(&w, 0, sizeof(w));
	put(&w, 1, 1);
	put(&w, 3, 2);
	put(&w, 0, 13);
	expect_err(w.b, bw_len(&w), 0, MP_ECORRUPT);
	/* Stored length and complement disagree. */
	{
		static const uint8_t s[] = {0x01, 0x05, 0x00, 0xfa, 0xfe, 'h', 'e', 'l', 'l', 'o'};
		expect_err(s, sizeof(s), 5, MP_ECORRUPT);
		assert_false(zlib_ok(s, sizeof(s), 5));
	}
	/* 287 literal/length codes; 31 distance codes. */
	lit[256] = 1;
	lit['A'] = 1;
	dyn_stream(&w, lit, 287, dist, 1);
	put_code(&w, 1, 1);
	expect_err(w.b, bw_len(&w), 0, MP_ECORRUPT);
	assert_false(zlib_ok(w.b, bw_len(&w), 0));
	dyn_stream(&w, lit, 257, dist, 31);
	put_code(&w, 1, 1);
	expect_err(w.b, bw_len(&w), 0, MP_ECORRUPT);
	assert_false(zlib_ok(w.b, bw_len(&w), 0));

	/* Code-length code: over-subscribed (three 1-bit codes), incomplete
	 * (one 1-bit code), a repeat with nothing before it, a repeat past
	 * the last length. Symbols 0, 16, 18 with 1, 2, 2 bits is complete. */
	{
		static const unsigned bad[3][4] = {{1, 1, 1, 0}, {0, 0, 1, 0}, {0, 0, 0, 0}};
		for (int k = 0; k < 3; k++) {
			memset(&w, 0, sizeof(w));
			put(&w, 1, 1);
			put(&w, 2, 2);
			put(&w, 0, 5);
			put(&w, 0, 5);
			put(&w, 0, 4); /* 16 17 18 0 */
			for (int i = 0; i < 4; i++)
				put(&w, bad[k][i], 3);
			put(&w, 0, 32);
			expect_err(w.b, bw_len(&w), 0, MP_ECORRUPT);
			assert_false(zlib_ok(w.b, bw_len(&w), 0));
		}
	}
	for (int k = 0; k < 2; k++) {
		memset(&w, 0, sizeof(w));
		put(&w, 1, 1);
		put(&w, 2, 2);
		put(&w, 0, 5);
		put(&w, 0, 5);
		put(&w, 0, 4);
		put(&w, 2, 3); /* 16: 2 bits -> 10 */
		put(&w, 0, 3);
		put(&w, 2, 3); /* 18: 2 bits -> 11 */
		put(&w, 1, 3); /* 0: 1 bit -> 0 */
		if (k == 0) {
			put_code(&w, 2, 2); /* repeat previous: there is none */
			put(&w, 0, 2);
		} else {
			put_code(&w, 0, 1); /* one zero, then 2 x 138 zeros > 257 */
			put_code(&w, 3, 2);
			put(&w, 127, 7);
			put_code(&w, 3, 2);
			put(&w, 127, 7);
		}
		put(&w, 0, 32);
		expect_err(w.b, bw_len(&w), 0, MP_ECORRUPT);
		assert_false(zlib_ok(w.b, bw_len(&w), 0));
	}
}

static void test_symbol_errors(void **state)
{
	bw_t w;
	(void)state;

	/* Fixed literal/length symbols 286 and 287 do not exist. */
	for (unsigned sym = 286; sym <= 287; sym++) {
		memset(&w, 0, sizeof(w));
		put(&w, 1, 1);
		put(&w, 1, 2);
		fixed_lit(&w, 'a');
		fixed_lit(&w, sym);
		put(&w, 0, 16);
		expect_err(w.b, bw_len(&w), 4, MP_ECORRUPT);
		assert_false(zlib_ok(w.b, bw_len(&w), 4));
	}
	/* Fixed distance symbols 30 and 31 do not exist. */
	for (unsigned sym = 30; sym <= 31; sym++) {
		memset(&w, 0, sizeof(w));
		put(&w, 1, 1);
		put(&w, 1, 2);
		fixed_lit(&w, 'a');
		fixed_lit(&w, 257);
		put_code(&w, sym, 5);
		fixed_lit(&w, 256);
		expect_err(w.b, bw_len(&w), 4, MP_ECORRUPT);
		assert_false(zlib_ok(w.b, bw_len(&w), 4));
	}
	/* A distance of 2 after one byte; 1 is fine. */
	for (unsigned d = 0; d < 2; d++) {
		memset(&w, 0, sizeof(w));
		put(&w, 1, 1);
		put(&w, 1, 2);
		fixed_lit(&w, 'a');
		fixed_lit(&w, 257);
		put_code(&w, d, 5);
		fixed_lit(&w, 256);
		if (d == 0)
			expect_ok(w.b, bw_len(&w), "aaaa", 4);
		else
			expect_err(w.b, bw_len(&w), 4, MP_ECORRUPT);
		assert_int_equal(zlib_ok(w.b, bw_len(&w), 4), d == 0);
	}
	/* The same far back in a long stream (the fast loop): 300 literals,
	 * then a distance of 301. */
	memset(&w, 0, sizeof(w));
	put(&w, 1, 1);
	put(&w, 1, 2);
	for (int i = 0; i < 300; i++)
		fixed_lit(&w, 'a' + i % 7);
	fixed_lit(&w, 257);
	put_code(&w, 16, 5);
	put(&w, 44, 7);
	for (int i = 0; i < 300; i++)
		fixed_lit(&w, 'a');
	fixed_lit(&w, 256);
	expect_err(w.b, bw_len(&w), 603, MP_ECORRUPT);
	assert_false(zlib_ok(w.b, bw_len(&w), 603));
	/* Empty input, NULL output. */
	assert_int_equal(mp__inflate(w.b, 0, NULL, 0, NULL), MP_ETRUNCATED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_lengths),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_symbol_errors),
	};
	return cmocka_run_group_tests_name("inflate errors", tests, NULL, NULL);
}
