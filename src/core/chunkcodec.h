/* chunkcodec.h - the columnar layout of a chunk's records (internal).
 *
 * Threads write their records row by row (tag, then the record's fields).
 * Before compressing, the flusher splits a chunk's records into five
 * columns -- tags, time deltas, addresses, sizes, everything else -- so that
 * each column is homogeneous and compresses well on its own (tags and time
 * deltas shrink by 3-5x; interleaved, deflate barely helps). The reader
 * joins the columns back into rows. Same bytes, reordered: the split never
 * grows a chunk.
 */
#ifndef MP_CHUNKCODEC_H
#define MP_CHUNKCODEC_H

#include <stddef.h>
#include <stdint.h>

enum { MP_COL_TAG, MP_COL_TIME, MP_COL_ADDR, MP_COL_SIZE, MP_COL_MISC, MP_COLS };

/* Split n bytes of records into columns written one after the other at out
 * (n bytes); lens receives each column's length. Returns 0, or -1 when the
 * records do not parse (a writer bug; the caller stores them as they are). */
int mp__chunk_split(const uint8_t *rows, size_t n, uint8_t *out, uint64_t lens[MP_COLS]);

/* The inverse: n bytes of columns (lengths lens, summing to n) into rows.
 * Returns 0, or -1 when the columns are inconsistent (corrupted input). */
int mp__chunk_join(const uint8_t *cols, const uint64_t lens[MP_COLS], uint8_t *rows, size_t n);

#endif

#ifndef MP_CHUNKCODEC_AGE
#define MP_CHUNKCODEC_AGE
#include "mbuf.h"
/* Rewrite each FREE whose block was allocated earlier in the same chunk as
 * a FREE_AGED record: the number of allocations since that one, instead of
 * an address delta (frees are half of all events, and their addresses are
 * the least predictable field). st is the chunk's start state (MP_ST_*).
 * Writes at most n bytes to out and returns the new length, or (size_t)-1
 * when the records do not parse. scratch is working memory. */
size_t mp__chunk_age_frees(const uint8_t *rows, size_t n, const uint64_t *st, uint8_t *out, mp_mbuf_t *scratch);
#endif
