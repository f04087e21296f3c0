/* test_deflate_huff.c - the writer's own deflate blocks inflate with zlib
 * to exactly the input: each block type, code-length edge cases, streams of
 * many segments. */
#include "test_common.h"
#include "test_rand.h"

#include "cpufeat_helpers.h"
#include <memprof/format/deflate_huff.h>

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

/* 200 segments of mixed kinds and sizes (lengths in seg, 200 of them), as
 * a block has: alphabets of 1 to 256 symbols, every tenth segment up to
 * 70000 bytes. Caller frees. */
static uint8_t *mixed_segments(size_t *seg, size_t *total)
{
	size_t i, j, k = 0;
	uint8_t *buf;

	*total = 0;
	for (i = 0; i < 200; i++) {
		seg[i] = 1 + next_rand() % (i % 10 == 0 ? 70000 : 3000);
		*total += seg[i];
	}
	buf = malloc(*total);
	assert_non_null(buf);
	for (i = 0; i < 200; i++) {
		unsigned alphabet = 1 + (unsigned)(i * 37 % 256);
		for (j = 0; j < seg[i]; j++)
			buf[k++] = (uint8_t)(next_rand() % alphabet);
	}
	return buf;
}

/* Many segments in one stream. */
static void test_many_segments(void **state)
{
	size_t seg[200], total;
	uint8_t *buf = mixed_segments(seg, &total);

	(void)state;
	roundtrip(buf, seg, 200, 0);
	free(buf);
}

/* The coding loop's two variants (BMI2 where the CPU has it, portable:
 * deflate_huff.c) each inflate to the input, at the same size: the mixed
 * segments above, coded and stored. Where the CPU lacks BMI2 both
 * runs take the portable one. */
static void test_variants_agree(void **state)
{
	size_t seg[200], total, size[2];
	uint8_t *buf = mixed_segments(seg, &total);
	int v;

	(void)state;
	for (v = 0; v < 2; v++) {
		mp__cpu_features_limit(v ? 0 : ~0u); /* v = 1: the portable variant */
		size[v] = roundtrip(buf, seg, 200, 0);
	}
	mp__cpu_features_limit(~0u);
	assert_int_equal(size[0], size[1]);
	assert_true(size[0] < total); /* some segments were coded */
	free(buf);
}

/* Many codes at the 15-bit limit, back to back: 100 symbols seen once
 * under a ladder of 12 symbols of doubling frequency would be 19 bits deep
 * unlimited; limited, they share the longest codes, and coming first and
 * one after another they are 1500 bits of 15-bit codes in a row (four of
 * them and the pending bits do not fit 64). */
static void test_length_limit_runs(void **state)
{
	size_t n = 100, k = 0, seg[1], i, j;
	uint8_t *buf;
	(void)state;

	for (i = 6; i <= 17; i++)
		n += (size_t)1 << i;
	buf = malloc(n);
	assert_non_null(buf);
	for (i = 0; i < 100; i++)
		buf[k++] = (uint8_t)(100 + i);
	for (i = 6; i <= 17; i++)
		for (j = 0; j < ((size_t)1 << i); j++)
			buf[k++] = (uint8_t)i;
	seg[0] = n;
	assert_true(roundtrip(buf, seg, 1, 0) < n / 2);
	free(buf);
}

/* Codes of every length up to the limit, the longest ones in runs: the
 * coder packs four codes per store where none is longer than 14 bits (56
 * bits on top of up to 7 pending) and three otherwise, and both must hold
 * at the bound. Skewed alphabets (p(v) ~ q^v) of many sizes and slopes,
 * each 32-byte stretch sorted rarest first so that long codes come
 * together. */
static void test_long_codes_in_runs(void **state)
{
	size_t seg[120], total = 0, i, j, k = 0;
	uint8_t *buf;
	(void)state;

	for (i = 0; i < 120; i++) {
		seg[i] = 500 + next_rand() % 40000;
		total += seg[i];
	}
	buf = malloc(total);
	assert_non_null(buf);
	for (i = 0; i < 120; i++) {
		double q = 0.30 + 0.006 * (double)i, cdf[256], sum = 0, p = 1;
		unsigned nsym = 16 + (unsigned)(i * 53 % 240), v;
		for (v = 0; v < nsym; v++, p *= q)
			cdf[v] = (sum += p);
		for (j = 0; j < seg[i]; j++) {
			double u = (double)next_rand() / 4294967296.0 * sum;
			for (v = 0; v + 1 < nsym && cdf[v] < u; v++)
				;
			buf[k + j] = (uint8_t)v;
		}
		for (j = 0; j + 32 <= seg[i]; j += 32) { /* rarest (largest) first */
			size_t a, b;
			for (a = 1; a < 32; a++)
				for (b = a; b > 0 && buf[k + j + b - 1] < buf[k + j + b]; b--) {
					uint8_t t = buf[k + j + b];
					buf[k + j + b] = buf[k + j + b - 1];
					buf[k + j + b - 1] = t;
				}
		}
		k += seg[i];
	}
	roundtrip(buf, seg, 120, 0);
	free(buf);
}

/* What mp__dh_segment says it wrote: coded (skewed bytes), stored (180
 * equally likely values: an optimal code averages 7.58 bits, 5.3% under
 * stored, short of the 7% coding must save), noise (random bytes: coding
 * would save nothing), stored when asked or tiny. */
static void test_segment_verdicts(void **state)
{
	size_t n = 100000, i;
	uint8_t *buf = malloc(n), *out = malloc(mp_dh_bound(n));
	mp_dh_writer_t w;
	(void)state;

	assert_non_null(buf);
	assert_non_null(out);
	for (i = 0; i < n; i++)
		buf[i] = (next_rand() % 100) < 90 ? 7 : (uint8_t)next_rand();
	mp__dh_begin(&w, out);
	assert_int_equal(mp__dh_segment(&w, buf, n, 1, 0), MP_DH_CODED);
	mp__dh_begin(&w, out);
	assert_int_equal(mp__dh_segment(&w, buf, n, 1, 1), MP_DH_STORED);
	mp__dh_begin(&w, out);
	assert_int_equal(mp__dh_segment(&w, buf, 63, 1, 0), MP_DH_STORED);
	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)(next_rand() % 180);
	mp__dh_begin(&w, out);
	assert_int_equal(mp__dh_segment(&w, buf, n, 1, 0), MP_DH_STORED);
	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)next_rand();
	mp__dh_begin(&w, out);
	assert_int_equal(mp__dh_segment(&w, buf, n, 1, 0), MP_DH_NOISE);
	free(buf);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_and_degenerate),
		cmocka_unit_test(test_skewed_compresses),
		cmocka_unit_test(test_length_limit),
		cmocka_unit_test(test_random_is_stored),
		cmocka_unit_test(test_many_segments),
		cmocka_unit_test_teardown(test_variants_agree, mp_test_all_features),
		cmocka_unit_test(test_long_codes_in_runs),
		cmocka_unit_test(test_length_limit_runs),
		cmocka_unit_test(test_segment_verdicts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
