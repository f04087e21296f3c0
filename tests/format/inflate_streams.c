/* inflate_streams.c - deflate streams written bit by bit, and the checks
 * of mp__inflate on them (inflate_streams.h). */
#include "test_common.h"

#include "inflate_streams.h"

#include <memprof/error.h>
#include <memprof/format/inflate.h>

#include <stdlib.h>
#include <string.h>
#include <zlib.h>


void put(bw_t *w, unsigned v, unsigned nbits)
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

void put_code(bw_t *w, unsigned code, unsigned len)
{
	while (len--)
		put(w, (code >> len) & 1, 1);
}

size_t bw_len(const bw_t *w)
{
	return w->n + (w->k ? 1 : 0);
}

/* Fixed Huffman codes (RFC 1951, 3.2.6). */
void fixed_lit(bw_t *w, unsigned sym)
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
void dyn_header(bw_t *w, int final, const uint8_t *lit, unsigned nlen, const uint8_t *dist, unsigned ndist)
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
void expect_ok(const uint8_t *in, size_t in_len, const void *want, size_t n)
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
void expect_err(const uint8_t *in, size_t in_len, size_t n, int code)
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
int zlib_ok(const uint8_t *in, size_t in_len, size_t n)
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
void expect_strict(const uint8_t *in, size_t in_len, size_t n)
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
