/* fuzz_inflate.c - libFuzzer targets for the reader's deflate decoder
 * (src/core/format/inflate.c). Built twice:
 *
 * fuzz_inflate (differential): the input is a selector byte and a raw
 * deflate stream. mp__inflate must succeed exactly when zlib's inflate
 * (raw, -15, Z_FINISH, an output buffer of out_len bytes) reaches
 * Z_STREAM_END having produced out_len bytes and consumed every input byte,
 * and then both outputs must be equal. That last condition is where the two
 * legitimately differ: zlib stops at the final block and leaves trailing
 * bytes unread, mp__inflate refuses them (inflate.h). out_len is zlib's own
 * output length when the stream ends (so success is reachable), shifted
 * by -8..+7 when the selector's high nibble is 0xf; otherwise two bytes of
 * the selector region give it.
 *
 * fuzz_inflate_rt (round trip, MP_FUZZ_ROUNDTRIP): the input after three
 * selector bytes is compressed by zlib (level, strategy, memLevel picked by
 * the selectors) or by deflate_huff.c (the capture writer's encoder, cut
 * into segments), and mp__inflate must give it back exactly.
 */
#include <memprof/format/deflate_huff.h>
#include <memprof/format/inflate.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXOUT (1u << 20)

static void check(int cond)
{
	if (!cond)
		abort();
}

#ifndef MP_FUZZ_ROUNDTRIP

/* zlib's verdict with an out_len-byte buffer; *produced gets total_out. */
static int zlib_inflate(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len, size_t *produced,
			int *trailing)
{
	uint8_t dummy[1];
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	check(inflateInit2(&z, -15) == Z_OK);
	z.next_in = (uint8_t *)(uintptr_t)in;
	z.avail_in = (uInt)in_len;
	z.next_out = out_len ? out : dummy;
	z.avail_out = (uInt)out_len;
	rc = inflate(&z, Z_FINISH);
	*produced = z.total_out;
	*trailing = z.avail_in != 0;
	inflateEnd(&z);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *in;
	uint8_t *zout, *mout;
	size_t in_len, out_len, produced;
	int rc, trailing, zok, mok;

	if (size < 3)
		return 0;
	in = data + 3;
	in_len = size - 3;
	/* First, how much zlib makes of it with room to spare. */
	zout = malloc(MAXOUT);
	check(zout != NULL);
	rc = zlib_inflate(in, in_len, zout, MAXOUT, &produced, &trailing);
	free(zout);
	if (rc == Z_STREAM_END) {
		out_len = produced;
		if ((data[0] & 0xf0) == 0xf0 && out_len + (data[0] & 15) >= 8)
			out_len = out_len + (data[0] & 15) - 8;
	} else {
		out_len = ((size_t)data[1] | (size_t)data[2] << 8) % MAXOUT;
	}
	/* Exact-size buffers: ASan sees any write past out_len. */
	zout = malloc(out_len ? out_len : 1);
	mout = malloc(out_len ? out_len : 1);
	check(zout && mout);
	rc = zlib_inflate(in, in_len, zout, out_len, &produced, &trailing);
	zok = rc == Z_STREAM_END && produced == out_len && !trailing;
	{
		/* An exact-size copy of the input too, for overreads. */
		uint8_t *copy = malloc(in_len ? in_len : 1);
		const char *why = NULL;
		check(copy != NULL);
		if (in_len)
			memcpy(copy, in, in_len);
		mok = mp__inflate(copy, in_len, mout, out_len, &why) == 0;
		check(mok || (why && *why));
		free(copy);
	}
	check(zok == mok);
	if (zok)
		check(out_len == 0 || memcmp(zout, mout, out_len) == 0);
	free(zout);
	free(mout);
	return 0;
}

#else /* MP_FUZZ_ROUNDTRIP */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED};
	const uint8_t *raw;
	uint8_t *c, *back;
	size_t n, clen, bound;
	int level;

	if (size < 3 || size - 3 > MAXOUT)
		return 0;
	raw = data + 3;
	n = size - 3;
	level = data[0] % 11; /* 10: deflate_huff */
	if (level == 10) {
		mp_dh_writer_t w;
		size_t done = 0, seg;

		bound = mp_dh_bound(n) + 64 * 32; /* at most 64 segments */
		c = malloc(bound);
		check(c != NULL);
		mp__dh_begin(&w, c);
		if (n == 0) {
			/* deflate_huff needs a byte: an empty final stored block. */
			memcpy(c, "\x01\x00\x00\xff\xff", 5);
			clen = 5;
		} else {
			unsigned k = 0;
			while (done < n) {
				/* Segment lengths from the selectors: 1 byte up to all. */
				seg = 1 + ((size_t)data[1] * 131 + (size_t)data[2] * 7 + k * 977) % (n - done);
				if (k == 63)
					seg = n - done;
				mp__dh_segment(&w, raw + done, seg, done + seg == n, k < 8 && ((data[2] >> k) & 1));
				k++;
				done += seg;
			}
			clen = (size_t)(mp__dh_end(&w) - c);
		}
	} else {
		z_stream z;

		memset(&z, 0, sizeof(z));
		check(deflateInit2(&z, level, Z_DEFLATED, -15, 1 + data[2] % 9, strategies[data[1] % 5]) == Z_OK);
		bound = deflateBound(&z, (uLong)n) + 16;
		c = malloc(bound);
		check(c != NULL);
		z.next_in = (uint8_t *)(uintptr_t)raw;
		z.avail_in = (uInt)n;
		z.next_out = c;
		z.avail_out = (uInt)bound;
		check(deflate(&z, Z_FINISH) == Z_STREAM_END);
		clen = z.total_out;
		deflateEnd(&z);
	}
	back = malloc(n ? n : 1);
	check(back != NULL);
	check(mp__inflate(c, clen, back, n, NULL) == 0);
	check(n == 0 || memcmp(back, raw, n) == 0);
	free(back);
	free(c);
	return 0;
}

#endif
