/* memprof/format/columns.h - the columnar layout of a chunk's records
 * (shared by the capture's writer and reader; mp__ names are internal to
 * them).
 *
 * In the file, records are rows of varints (a tag, then the record's
 * fields; docs/format.md), laid out as columns -- tags, time deltas,
 * address deltas, indices (reuse slots and ages), sizes, everything else
 * -- so that each column is homogeneous and compresses well on its own.
 * Since format 2.0 each varint column is stored as two parts: the first
 * byte of every varint (its "head") and the bytes after it ("tails"). The
 * heads say most about a value and the tails are alike in another way;
 * with a Huffman table each, they code smaller than the whole varints do
 * (time deltas by about 15%). The writer's flusher writes the parts
 * straight from its rings' fixed-width records (src/core/write/encoder.h);
 * the reader decodes records from them in place, after mp__chunk_check
 * (columns.c). 1.x chunks (five columns of whole varints) are rewritten
 * into the 2.0 parts when they are read (mp__chunk_upgrade), so one
 * decoder serves both.
 */
#ifndef MP_FORMAT_COLUMNS_H
#define MP_FORMAT_COLUMNS_H

#include <stddef.h>
#include <stdint.h>

/* The delta-encoding state of a thread's records, as a chunk header
 * carries it (docs/format.md, CHUNK). */
enum {
	MP_ST_TIME,      /* time of the previous record */
	MP_ST_ADDR,      /* address of the previous record */
	MP_ST_MEMORY,    /* current memory id */
	MP_ST_OP,        /* current context */
	MP_ST_REGION,
	MP_ST_DTYPE,
	MP_ST_SHAPE,
	MP_ST_REUSE,     /* the freed-address cache, MP_REUSE_SLOTS entries */
	MP_ST_COUNT = MP_ST_REUSE + 64
};
#define MP_ST_REUSE_AT MP_ST_REUSE

/* The columns of the 2.0 layout. */
enum { MP_COL_TAG, MP_COL_TIME, MP_COL_ADDR, MP_COL_IDX, MP_COL_SIZE, MP_COL_MISC, MP_COLS };
/* Its parts, in file order: the tag bytes, then per varint column its
 * heads and its tails. */
#define MP_PARTS (2 * MP_COLS - 1)
#define MP_HEAD(c) (2 * (c) - 1)
#define MP_TAIL(c) (2 * (c))
/* The five columns of the 1.x layout (whole varints; reuse slots and ages
 * in the address column). */
enum { MP_COL1_TAG, MP_COL1_TIME, MP_COL1_ADDR, MP_COL1_SIZE, MP_COL1_MISC, MP_COLS1 };

/* The reader's check of a 2.0 chunk's parts (lengths lens, summing to n)
 * before it decodes them in place: known record kinds, in each column
 * exactly one head per varint its records need, and tails that hold
 * exactly one terminated run per head that says it continues -- so that
 * records decoded part by part (decode.c) use every byte and never run past
 * a part. Returns 0, or -1 when the parts are inconsistent. Varints longer
 * than 10 bytes are left to the decoder (a corrupted record). */
int mp__chunk_check(const uint8_t *parts, const uint64_t lens[MP_PARTS], size_t n);

/* A 1.x chunk's columns (lengths lens1, summing to n) rewritten in the 2.0
 * layout: out (n bytes: the same varints, split and regrouped) and the part
 * lengths. Returns 0, -1 when the columns are inconsistent (a record kind
 * 1.x did not have, a column that ends early or has bytes left), or -2 when
 * out of memory. */
int mp__chunk_upgrade(const uint8_t *cols, const uint64_t lens1[MP_COLS1], size_t n, uint8_t *out,
		      uint64_t lens[MP_PARTS]);

/* The rest of a split varint whose head h has the high bit set, from the
 * tails at [*tp, te): 0 and *v, or -1 when the tails end inside it or the
 * value does not fit in 64 bits (the checks of mp_varint_get). Varints of
 * three bytes and more go out of line (mp__varint_rest_long). */
int mp__varint_rest_long(uint64_t h, const uint8_t **tp, const uint8_t *te, uint64_t *v);

static inline __attribute__((always_inline)) int mp_varint_rest(uint64_t h, const uint8_t **tp,
								 const uint8_t *te, uint64_t *v)
{
	const uint8_t *p = *tp;

	if (__builtin_expect(p < te && *p < 0x80, 1)) { /* two bytes in all */
		*v = (h & 0x7f) | (uint64_t)*p << 7;
		*tp = p + 1;
		return 0;
	}
	if (p + 1 < te && p[1] < 0x80) { /* three (address deltas often) */
		*v = (h & 0x7f) | (uint64_t)(p[0] & 0x7f) << 7 | (uint64_t)p[1] << 14;
		*tp = p + 2;
		return 0;
	}
	return mp__varint_rest_long(h, tp, te, v);
}

/* The next split varint of a column: head at [*hp, he), tails at [*tp, te). */
static inline __attribute__((always_inline)) int mp_varint_get2(const uint8_t **hp, const uint8_t *he,
								const uint8_t **tp, const uint8_t *te, uint64_t *v)
{
	const uint8_t *h = *hp;

	if (h >= he)
		return -1;
	*hp = h + 1;
	if (*h < 0x80) {
		*v = *h;
		return 0;
	}
	return mp_varint_rest(*h, tp, te, v);
}

#endif
