/* inflate_streams.h - deflate streams written bit by bit for the inflate
 * tests (test_inflate.c, test_inflate_errors.c), and what they expect of
 * mp__inflate, as cmocka assertions. */
#ifndef MP_TEST_INFLATE_STREAMS_H
#define MP_TEST_INFLATE_STREAMS_H

#include <stddef.h>
#include <stdint.h>

/* Streams are written by hand with this: values LSB first, Huffman codes
 * MSB first (RFC 1951, 3.1.1). */
typedef struct {
	uint8_t b[4096];
	size_t n;   /* whole bytes */
	unsigned k; /* bits in b[n] */
} bw_t;

/* Append the low nbits of v, LSB first (header fields, extra bits). */
void put(bw_t *w, unsigned v, unsigned nbits);

/* Append a Huffman code of len bits, MSB first. */
void put_code(bw_t *w, unsigned code, unsigned len);

/* Bytes written, the partial last one included. */
size_t bw_len(const bw_t *w);

/* Fixed Huffman codes (RFC 1951, 3.2.6). */
void fixed_lit(bw_t *w, unsigned sym);

/* A dynamic block header for the given code lengths, each sent as a
 * literal code-length symbol 0..15 with a flat 4-bit code-length code. */
void dyn_header(bw_t *w, int final, const uint8_t *lit, unsigned nlen, const uint8_t *dist, unsigned ndist);

/* Decode expecting success and exactly want[0..n). */
void expect_ok(const uint8_t *in, size_t in_len, const void *want, size_t n);

/* Decode expecting the error code, with a reason. */
void expect_err(const uint8_t *in, size_t in_len, size_t n, int code);

/* zlib's verdict on the same stream (raw, all input consumed, exact size). */
int zlib_ok(const uint8_t *in, size_t in_len, size_t n);

/* Every strict prefix is truncated (the last byte always holds bits of the
 * final block), n +- 1 is the wrong size, a byte more is trailing. */
void expect_strict(const uint8_t *in, size_t in_len, size_t n);

#endif
