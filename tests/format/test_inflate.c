/* test_inflate.c - the reader's deflate decoder (src/core/format/inflate.c)
 * on hand-made streams with known bytes (stored, fixed codes with
 * overlapping matches, dynamic codes) and on round trips of zlib's output
 * at every level and strategy and of deflate_huff's; its errors are
 * test_inflate_errors.c's. */
#include "test_common.h"
#include "test_rand.h"

#include "inflate_streams.h"

#include <memprof/error.h>
#include <memprof/format/deflate_huff.h>
#include <memprof/format/inflate.h>

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ------------------------------------------------------ hand-made streams */

static void test_stored(void **state)
{
	static const uint8_t s[] = {0x01, 0x05, 0x00, 0xfa, 0xff, 'h', 'e', 'l', 'l', 'o'};
	/* Two blocks: an empty stored one, then the final one. */
	static const uint8_t s2[] = {0x00, 0x00, 0x00, 0xff, 0xff, 0x01, 0x02, 0x00, 0xfd, 0xff, 'o', 'k'};
	(void)state;

	expect_ok(s, sizeof(s), "hello", 5);
	assert_true(zlib_ok(s, sizeof(s), 5));
	expect_strict(s, sizeof(s), 5);
	expect_ok(s2, sizeof(s2), "ok", 2);
	expect_strict(s2, sizeof(s2), 2);
}

/* Fixed codes: literals, a match with extra bits on both codes, an
 * overlapping distance-1 match of the longest length. */
static void test_fixed_matches(void **state)
{
	const char *want = "abcdeabcdeabcdeab"; /* "abcde" + (12, 5) */
	uint8_t runs[259 + 2 + 3];
	bw_t w = {0};
	(void)state;

	put(&w, 1, 1);
	put(&w, 1, 2);
	for (const char *c = "abcde"; *c; c++)
		fixed_lit(&w, (uint8_t)*c);
	fixed_lit(&w, 265); /* length 11 + 1 extra bit */
	put(&w, 1, 1);
	put_code(&w, 4, 5); /* distance 5 + 1 extra bit */
	put(&w, 0, 1);
	fixed_lit(&w, 256);
	expect_ok(w.b, bw_len(&w), want, 17);
	assert_true(zlib_ok(w.b, bw_len(&w), 17));
	expect_strict(w.b, bw_len(&w), 17);

	/* "x", (258, 1), "qr", (3, 261): 259 'x', "qr", then "xxx" from the start. */
	memset(&w, 0, sizeof(w));
	put(&w, 1, 1);
	put(&w, 1, 2);
	fixed_lit(&w, 'x');
	fixed_lit(&w, 285); /* length 258, no extra */
	put_code(&w, 0, 5); /* distance 1 */
	fixed_lit(&w, 'q');
	fixed_lit(&w, 'r');
	fixed_lit(&w, 257);  /* length 3 */
	put_code(&w, 16, 5); /* distance 257 + 7 extra bits */
	put(&w, 4, 7);       /* 261: back to 'x' number 0 */
	fixed_lit(&w, 256);
	memset(runs, 'x', 259);
	runs[259] = 'q';
	runs[260] = 'r';
	memset(runs + 261, 'x', 3);
	expect_ok(w.b, bw_len(&w), runs, 264);
	assert_true(zlib_ok(w.b, bw_len(&w), 264));
	expect_strict(w.b, bw_len(&w), 264);
}

/* A dynamic block written bit by bit: 'a' has a 1-bit code, 'b' and the
 * end of block 2-bit codes; no distance codes (one zero length). The code
 * lengths use the run symbol 18 and a 2-bit code-length code. */
static void test_dynamic(void **state)
{
	bw_t w = {0};
	(void)state;

	put(&w, 1, 1);
	put(&w, 2, 2);
	put(&w, 0, 5);  /* 257 literal/length codes */
	put(&w, 0, 5);  /* 1 distance code */
	put(&w, 14, 4); /* 18 code-length code lengths */
	/* order: 16 17 18 0 8 7 9 6 10 5 11 4 12 3 13 2 14 1 */
	{
		static const unsigned cl[18] = {0, 0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2};
		for (int i = 0; i < 18; i++)
			put(&w, cl[i], 3);
	}
	/* code-length codes: 0 -> 00, 1 -> 01, 2 -> 10, 18 -> 11 */
	put_code(&w, 3, 2);
	put(&w, 97 - 11, 7); /* 97 zeros */
	put_code(&w, 1, 2);  /* 'a': 1 */
	put_code(&w, 2, 2);  /* 'b': 2 */
	put_code(&w, 3, 2);
	put(&w, 127, 7); /* 138 zeros */
	put_code(&w, 3, 2);
	put(&w, 8, 7);      /* 19 zeros: up to 255 */
	put_code(&w, 2, 2); /* end of block: 2 */
	put_code(&w, 0, 2); /* the distance code: 0 */
	/* 'a' -> 0, 'b' -> 10, end -> 11 */
	put_code(&w, 0, 1);
	put_code(&w, 2, 2);
	put_code(&w, 2, 2);
	put_code(&w, 0, 1);
	put_code(&w, 3, 2);
	expect_ok(w.b, bw_len(&w), "abba", 4);
	assert_true(zlib_ok(w.b, bw_len(&w), 4));
	expect_strict(w.b, bw_len(&w), 4);
}

/* ------------------------------------------------------------ round trips */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_rand(void)
{
	return (uint32_t)mp_test_xorshift(&rng);
}

enum { SHAPE_RANDOM, SHAPE_TEXT, SHAPE_VARINT, SHAPE_RUNS, NSHAPES };

static void fill(uint8_t *p, size_t n, int shape)
{
	static const char *words[] = {"alloc ", "free ", "region ", "step ", "tensor", "\n", "f32[1024,512] ", "0x7f3a"};
	size_t i = 0;

	while (i < n) {
		switch (shape) {
		case SHAPE_RANDOM:
			p[i++] = (uint8_t)next_rand();
			break;
		case SHAPE_TEXT: {
			const char *w = words[next_rand() % 8];
			while (*w && i < n)
				p[i++] = (uint8_t)*w++;
			break;
		}
		case SHAPE_VARINT: { /* small deltas: mostly one-byte varints */
			uint32_t v = next_rand() % 100 < 90 ? next_rand() % 24 : next_rand() % 5000;
			do
				p[i++] = (uint8_t)((v & 127) | (v > 127 ? 128 : 0));
			while ((v >>= 7) && i < n);
			break;
		}
		default: { /* runs of a period of 1..3 bytes */
			unsigned period = 1 + next_rand() % 3, len = 3 + next_rand() % 600, k;
			uint8_t pat[3] = {(uint8_t)next_rand(), (uint8_t)next_rand(), (uint8_t)next_rand()};
			for (k = 0; k < len && i < n; k++)
				p[i++] = pat[k % period];
			break;
		}
		}
	}
}

/* Compress with zlib (raw), decode, compare; also check zlib's verdict. */
static void zlib_roundtrip(const uint8_t *data, size_t n, int level, int strategy)
{
	uLong bound = deflateBound(NULL, (uLong)n) + 64;
	uint8_t *c = malloc(bound);
	z_stream z;

	assert_non_null(c);
	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, level, Z_DEFLATED, -15, 8, strategy), Z_OK);
	z.next_in = (uint8_t *)(uintptr_t)data;
	z.avail_in = (uInt)n;
	z.next_out = c;
	z.avail_out = (uInt)bound;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	expect_ok(c, z.total_out, data, n);
	if (n < 2000 && (level == 6 || level == 0))
		expect_strict(c, z.total_out, n);
	deflateEnd(&z);
	free(c);
}

static void test_zlib_levels(void **state)
{
	static const int levels[] = {0, 1, 6, 9};
	size_t n = 300000;
	uint8_t *data = malloc(n);
	(void)state;

	assert_non_null(data);
	for (int shape = 0; shape < NSHAPES; shape++) {
		fill(data, n, shape);
		for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++)
			zlib_roundtrip(data, n, levels[l], Z_DEFAULT_STRATEGY);
		zlib_roundtrip(data, n, 6, Z_HUFFMAN_ONLY);
		zlib_roundtrip(data, n, 6, Z_RLE);
		zlib_roundtrip(data, n, 6, Z_FIXED);
	}
	free(data);
}

/* Every small size, where the fast loop hands over to the careful one at
 * every possible point. */
static void test_small_sizes(void **state)
{
	uint8_t data[1500];
	(void)state;

	for (size_t n = 0; n < sizeof(data); n += 1 + n / 16) {
		for (int shape = 0; shape < NSHAPES; shape++) {
			fill(data, n, shape);
			zlib_roundtrip(data, n, 6, Z_DEFAULT_STRATEGY);
			zlib_roundtrip(data, n, 1, Z_FIXED);
		}
	}
}

/* deflate_huff.c's streams: a Huffman block per segment, stored ones. */
static void test_deflate_huff(void **state)
{
	size_t n = 400000, done = 0, clen;
	uint8_t *data = malloc(n), *c = malloc(mp_dh_bound(n) + 1024);
	mp_dh_writer_t w;
	int i = 0;
	(void)state;

	assert_non_null(data);
	assert_non_null(c);
	fill(data, n, SHAPE_VARINT);
	for (size_t k = 0; k < 5000; k++) /* a column of one byte value */
		data[100000 + k] = 7;
	mp__dh_begin(&w, c);
	while (done < n) {
		size_t seg = 2048 + next_rand() % 30000;
		if (seg > n - done)
			seg = n - done;
		mp__dh_segment(&w, data + done, seg, done + seg == n, i++ % 7 == 3);
		done += seg;
	}
	clen = (size_t)(mp__dh_end(&w) - c);
	assert_true(clen < n - n / 10); /* Huffman blocks, not only stored ones */
	expect_ok(c, clen, data, n);
	assert_true(zlib_ok(c, clen, n));
	free(data);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stored),
		cmocka_unit_test(test_fixed_matches),
		cmocka_unit_test(test_dynamic),
		cmocka_unit_test(test_zlib_levels),
		cmocka_unit_test(test_small_sizes),
		cmocka_unit_test(test_deflate_huff),
	};
	return cmocka_run_group_tests_name("inflate", tests, NULL, NULL);
}
