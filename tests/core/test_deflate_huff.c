/* test_deflate_huff.c - the writer's own deflate blocks inflate with zlib
 * to exactly the input: each block type, code-length edge cases, streams of
 * many segments. */
#include "test_common.h"
#include "test_rand.h"

#include "deflate_huff.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Encode the segments (lengths seg[0..nseg)) of data as one stream, inflate
 * it, compare. Returns the compressed size. */
static size_t roundtrip(const uint8_t *data, const size_t *seg, int nseg, int store_only)
{
	size_t total = 0, bound = 0, clen;
	uint8_t *out, *back, *end;
	mp_dh_writer_t w;
	z_stream z;
	int i;

	for (i = 0; i < nseg; i++) {
		total += seg[i];
		bound += mp_dh_bound(seg[i]);
	}
	out = malloc(bound);
	back = malloc(total + 1);
	assert_non_null(out);
	assert_non_null(back);
	mp__dh_begin(&w, out);
	for (i = 0, total = 0; i < nseg; i++) {
		mp__dh_segment(&w, data + total, seg[i], i == nseg - 1, store_only);
		total += seg[i];
	}
	end = mp__dh_end(&w);
	clen = (size_t)(end - out);
	assert_true(clen <= bound);

	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, -15), Z_OK);
	z.next_in = out;
	z.avail_in = (uInt)clen;
	z.next_out = back;
	z.avail_out = (uInt)total + 1;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, total);
	assert_int_equal(z.avail_in, 0); /* the stream ends exactly where we said */
	assert_memory_equal(back, data, total);
	inflateEnd(&z);
	free(out);
	free(back);
	return clen;
}

static uint64_t rng = 88172645463325252ull;
static uint32_t next_rand(void)
{
	return (uint32_t)mp_test_xorshift(&rng);
}

static void test_small_and_degenerate(void **state)
{
	uint8_t buf[300];
	size_t n;
	(void)state;

	for (n = 1; n <= sizeof(buf); n += (n < 80 ? 1 : 37)) {
		size_t seg[1] = {n};
		memset(buf, 'a', n); /* one symbol (+ end of block) */
		roundtrip(buf, seg, 1, 0);
		buf[n / 2] = 0; /* two */
		roundtrip(buf, seg, 1, 0);
		roundtrip(buf, seg, 1, 1);
	}
}

/* Skewed: a column of mostly one byte compresses to ~1/8 of its size; the
 * header's code-length runs (16, 17, 18) are all exercised. */
static void test_skewed_compresses(void **state)
{
	size_t n = 100000, seg[1] = {n}, i, c;
	uint8_t *buf = malloc(n);
	(void)state;

	for (i = 0; i < n; i++)
		buf[i] = (next_rand() % 100) < 97 ? 3 : (uint8_t)(next_rand() % 40);
	c = roundtrip(buf, seg, 1, 0);
	assert_true(c < n / 4);
	free(buf);
}

/* Frequencies in a Fibonacci ladder make an unlimited Huffman tree deeper
 * than 15 bits: the code must be limited and still decode. */
static void test_length_limit(void **state)
{
	size_t fib[26] = {1, 1}, n = 0, i, k, seg[1];
	uint8_t *buf;
	(void)state;

	for (i = 2; i < 26; i++)
		fib[i] = fib[i - 1] + fib[i - 2];
	for (i = 0; i < 26; i++)
		n += fib[i];
	buf = malloc(n);
	for (i = 0, k = 0; i < 26; i++) {
		size_t j;
		for (j = 0; j < fib[i]; j++)
			buf[k++] = (uint8_t)(i * 7);
	}
	for (i = n - 1; i > 0; i--) { /* shuffle */
		size_t j = next_rand() % (i + 1);
		uint8_t t = buf[i];
		buf[i] = buf[j];
		buf[j] = t;
	}
	seg[0] = n;
	assert_true(roundtrip(buf, seg, 1, 0) < n);
	free(buf);
}

/* Random bytes do not compress: stored blocks, split at 65535 bytes. */
static void test_random_is_stored(void **state)
{
	size_t n = 200000, seg[1] = {n}, i;
	uint8_t *buf = malloc(n);
	(void)state;

	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)next_rand();
	assert_int_equal(roundtrip(buf, seg, 1, 0), n + 5 * (n / 65535 + 1));
	free(buf);
}

/* Many segments of mixed kinds and sizes in one stream, as a block has. */
static void test_many_segments(void **state)
{
	size_t seg[200], total = 0, i, j, k = 0;
	uint8_t *buf;
	(void)state;

	for (i = 0; i < 200; i++) {
		seg[i] = 1 + next_rand() % (i % 10 == 0 ? 70000 : 3000);
		total += seg[i];
	}
	buf = malloc(total);
	for (i = 0; i < 200; i++) {
		unsigned alphabet = 1 + (unsigned)(i * 37 % 256);
		for (j = 0; j < seg[i]; j++)
			buf[k++] = (uint8_t)(next_rand() % alphabet);
	}
	roundtrip(buf, seg, 200, 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_and_degenerate),
		cmocka_unit_test(test_skewed_compresses),
		cmocka_unit_test(test_length_limit),
		cmocka_unit_test(test_random_is_stored),
		cmocka_unit_test(test_many_segments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
