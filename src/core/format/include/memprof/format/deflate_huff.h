/* deflate_huff.h - a fast writer of raw deflate streams made of Huffman-only
 * and stored blocks (internal).
 *
 * The flusher has to compress as fast as one thread records (tens of
 * millions of events a second, about 5 bytes each) on one core. zlib's
 * Huffman-only mode runs at ~100 MB/s here; this writer, which does only
 * what the capture needs -- one dynamic Huffman table per column segment,
 * byte literals, no matching -- runs several times faster and, because each
 * column gets its own table, compresses better. The output is ordinary
 * deflate (RFC 1951), which any inflater reads (memprof's reader uses
 * inflate.c; docs/compression.md says why both coders are memprof's own).
 */
#ifndef MP_DEFLATE_HUFF_H
#define MP_DEFLATE_HUFF_H

#include <stddef.h>
#include <stdint.h>

typedef struct mp_dh_writer {
	uint8_t *out;      /* next byte to write; room checked by the caller */
	uint64_t bits;     /* pending bits, LSB first */
	unsigned nbits;    /* how many (< 8 between calls) */
} mp_dh_writer_t;

/* Output bytes that appending n input bytes as one segment may take, at
 * most (stored blocks of 65535 bytes, each 5 bytes of overhead, or a
 * Huffman block no larger than that), plus 8 bytes of write slack. */
static inline size_t mp_dh_bound(size_t n)
{
	return n + 5 * (n / 65535 + 1) + 8 + 8;
}

/* Start a stream writing at out. */
void mp__dh_begin(mp_dh_writer_t *w, uint8_t *out);

/* Append n bytes (n >= 1) as one segment: a dynamic Huffman block with the
 * segment's own table, or stored blocks when those are not clearly larger
 * (coding must save 7%) or when store_only. final marks the stream's last segment. The output buffer must
 * have mp_dh_bound(n) bytes of room. Returns MP_DH_CODED, MP_DH_STORED, or
 * MP_DH_NOISE: stored because coding would have saved less than 3% (data
 * that looks random: its next segment of the same kind likely is too, and
 * the caller may store that one without looking, store_only). */
enum { MP_DH_CODED, MP_DH_STORED, MP_DH_NOISE };
int mp__dh_segment(mp_dh_writer_t *w, const uint8_t *data, size_t n, int final, int store_only);

/* Flush the last bits; returns the end of the stream's bytes. */
uint8_t *mp__dh_end(mp_dh_writer_t *w);

#endif
