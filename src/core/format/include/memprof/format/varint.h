/* varint.h - LEB128 varints and zigzag for signed deltas (internal).
 *
 * Every integer in a .memprof block is a varint: 7 bits per byte, low bits
 * first, high bit set on all but the last byte. Signed deltas (addresses,
 * steps) are zigzag-mapped first so small negative numbers stay short.
 */
#ifndef MP_VARINT_H
#define MP_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define MP_VARINT_MAX 10 /* bytes for a 64-bit value */

static inline uint64_t mp_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t mp_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Append v at p (room for MP_VARINT_MAX bytes); returns the end. */
static inline uint8_t *mp_varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* The rest of a varint whose first bytes gave x, shift bits of it (a
 * multiple of 7), from [*pp, end): 0 and *out, *pp advanced; or -1 when
 * the input ends inside the varint or the value does not fit in 64 bits
 * (more than 10 bytes, or a tenth byte above 1). The one decoder: the
 * reader's columns (mp__varint_rest_long, after the head byte and the
 * fast paths of columns.h) and protowire (mp_pw_varint_long) call it. */
static inline int mp_varint_resume(uint64_t x, unsigned shift, const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;

	while (p < end) {
		uint8_t b = *p++;
		if (shift == 63 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = x;
			*pp = p;
			return 0;
		}
		shift += 7;
		if (shift > 63)
			return -1;
	}
	return -1;
}

/* Read a varint from [*pp, end): as mp_varint_resume from its first byte. */
static inline int mp_varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	return mp_varint_resume(0, 0, pp, end, out);
}

/* Little-endian fixed-width helpers for the framing. */
static inline void mp_put_u32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t mp_get_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void mp_put_u16le(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline uint16_t mp_get_u16le(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

#endif
