/* inflate.h - the capture reader's raw deflate decoder (internal).
 *
 * Block payloads are one raw deflate stream (RFC 1951) whose decompressed
 * size the block header gives exactly. Most of them come from
 * deflate_huff.c: one dynamic Huffman block per column segment, byte
 * literals only, with short codes (a column's varint bytes are skewed).
 * zlib's inflate decodes one symbol per step and was ~60% of the reader's
 * time; this decoder knows the output size up front, refills a 64-bit bit
 * buffer eight bytes at a time and decodes up to three literals per table
 * lookup, so it runs several times faster on such blocks and at least as
 * fast as zlib on zlib's own output (levels 2-9 contain matches).
 */
#ifndef MP_INFLATE_H
#define MP_INFLATE_H

#include <stddef.h>
#include <stdint.h>

/* Decode the complete raw deflate stream in[0..in_len) into exactly
 * out_len bytes at out (out may be NULL when out_len is 0). Every part of
 * RFC 1951 is accepted (stored, fixed and dynamic Huffman blocks, matches
 * including overlapping ones); code lengths follow zlib's rules, including
 * its acceptance of an incomplete code made of one code of length 1 for the
 * literal/length and distance codes.
 *
 * Strict about the ends: the stream must produce exactly out_len bytes and
 * end, at its final block, in the last input byte (the unused high bits of
 * that byte are ignored, whatever they are). Trailing bytes are an error:
 * the writer never leaves any, so they mean damage. (zlib stops at the final
 * block and leaves them unread.)
 *
 * Returns 0, MP_ETRUNCATED (input ends inside the stream) or MP_ECORRUPT
 * (anything else); on error *why, when why is not NULL, is a short static
 * phrase ("distance farther back than the output so far"). On error the
 * contents of out are unspecified. The input is treated as hostile: nothing
 * outside in[0..in_len) is read and nothing outside out[0..out_len) is
 * written, whatever the bytes. Thread-safe; uses about 40 KiB of stack. */
int mp__inflate(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len, const char **why);

#endif
