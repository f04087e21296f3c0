/* test_inflate.c - the reader's deflate decoder (inflate.c): hand-made
 * streams with known bytes, round trips of zlib's and deflate_huff's
 * output, and every kind of malformed stream giving an error. */
#include "test_common.h"
#include "test_rand.h"

#include <memprof/format/deflate_huff.h>
#include <memprof/format/inflate.h>

#include <memprof/error.h>

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ------------------------------------------------------------ bit writer */

/* Streams are written by hand with this: values LSB first, Huffman codes
 * MSB first (RFC 1951, 3.1.1). */
typedef struct {
	uint8_t b[4096];
	size_t n;   /* whole bytes */
	unsigned k; /* bits in b[n] */
} bw_t;

static void put(bw_t *w, unsigned v, unsigned nbits)
{
	while (nbits--) {
		if (w->k == 0)
			w->b[w->n] = 0;
		w->b[w->n] |= (uint8_t)((v & 1) << w->k);
		v >>= 1;
		if (++w->k == 8) {
			w->k = 0;
			w->n++;
		}
	}
}

static void put_code(bw_t *w, unsigned code, unsigned len)
{
	while (len--)
		put(w, (code >> len) & 1, 1);
}

static size_t bw_len(const bw_t *w)
{
	return w->n + (w->k ? 1 : 0);
}

/* Fixed Huffman codes (RFC 1951, 3.2.6). */
static void fixed_lit(bw_t *w, unsigned sym)
{
	if (sym < 144)
		put_code(w, 0x30 + sym, 8);
	else if (sym < 256)
		put_code(w, 0x190 + sym - 144, 9);
	else if (sym < 280)
		put_code(w, sym - 256, 7);
	else
		put_code(w, 0xc0 + sym - 280, 8);
}

/* A dynamic block header for the given code lengths, each sent as a
 * literal code-length symbol 0..15 with a flat 4-bit code-length code. */
static void dyn_header(bw_t *w, int final, const uint8_t *lit, unsigned nlen, const uint8_t *dist, unsigned ndist)
{
	static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
	unsigned i;

	put(w, (unsigned)final, 1);
	put(w, 2, 2);
	put(w, nlen - 257, 5);
	put(w, ndist - 1, 5);
	put(w, 19 - 4, 4);
	for (i = 0; i < 19; i++)
		put(w, order[i] < 16 ? 4 : 0, 3);
	for (i = 0; i < nlen; i++)
		put_code(w, lit[i], 4); /* symbol s has code s */
	for (i = 0; i < ndist; i++)
		put_code(w, dist[i], 4);
}

/* Decode expecting success and exactly want[0..n). */
static void expect_ok(const uint8_t *in, size_t in_len, const void *want, size_t n)
{
	uint8_t *out = malloc(n ? n : 1); /* exact: ASan sees overwrites */
	const char *why = "";

	assert_non_null(out);
	if (mp__inflate(in, in_len, out, n, &why) != 0)
		fail_msg("mp__inflate failed: %s", why);
	assert_memory_equal(out, want, n);
	free(out);
}

/* Decode expecting the error code, with a reason. */
static void expect_err(const uint8_t *in, size_t in_len, size_t n, int code)
{
	uint8_t *out = malloc(n ? n : 1);
	const char *why = NULL;

	assert_non_null(out);
	assert_int_equal(mp__inflate(in, in_len, out, n, &why), code);
	assert_non_null(why);
	assert_true(strlen(why) > 0);
	free(out);
}

/* zlib's verdict on the same stream (raw, all input consumed, exact size). */
static int zlib_ok(const uint8_t *in, size_t in_len, size_t n)
{
	uint8_t *out = malloc(n + 1);
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, -15), Z_OK);
	z.next_in = (uint8_t *)(uintptr_t)in;
	z.avail_in = (uInt)in_len;
	z.next_out = out;
	z.avail_out = (uInt)n;
	rc = inflate(&z, Z_FINISH);
	rc = rc == Z_STREAM_END && z.total_out == n && z.avail_in == 0;
	inflateEnd(&z);
	free(out);
	return rc;
}

/* Every strict prefix is truncated (the last byte always holds bits of the
 * final block), n +- 1 is the wrong size, a byte more is trailing. */
static void expect_strict(const uint8_t *in, size_t in_len, size_t n)
{
	uint8_t *copy = malloc(in_len + 1);
	size_t k;

	for (k = 0; k < in_len; k++) {
		/* A fresh allocation of exactly k bytes, so ASan sees overreads.
		 * Padding bits may decode as something wrong before the end is
		 * noticed, so any error will do. */
		uint8_t *p = malloc(k ? k : 1), *out = malloc(n + 1);
		assert_non_null(p);
		assert_non_null(out);
		memcpy(p, in, k);
		assert_int_not_equal(mp__inflate(p, k, out, n, NULL), 0);
		free(out);
		free(p);
	}
	if (n > 0)
		expect_err(in, in_len, n - 1, MP_ECORRUPT);
	expect_err(in, in_len, n + 1, MP_ECORRUPT);
	memcpy(copy, in, in_len);
	copy[in_len] = 0;
	expect_err(copy, in_len + 1, n, MP_ECORRUPT);
	free(copy);
}

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
		cmocka_unit_test(test_code_lengths),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_symbol_errors),
		cmocka_unit_test(test_zlib_levels),
		cmocka_unit_test(test_small_sizes),
		cmocka_unit_test(test_deflate_huff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
