/* blockio.h - fetching one block frame of a capture, and reading ahead.
 *
 * A block is fetched in three steps that need nothing from the reader's
 * state but the block's offset and expected index: read its 24-byte header
 * and payload, check both checksums, inflate the payload. That is most of
 * the reader's work (inflation alone was 60% of it), so the reader can have
 * a second thread do it for the next blocks while it decodes this one
 * (mp__readahead_*): the report then runs as a three-stage pipeline (fetch,
 * decode and merge, solve) on as many cores.
 *
 * The read-ahead thread only ever delivers what mp__fetch_block says, in
 * file order, and stops at the first thing that is not a good block (the
 * end, the trailer, an error): whatever the reader does with it, it does the
 * same as when it fetches the block itself, diagnostics included.
 */
#ifndef MP_BLOCKIO_H
#define MP_BLOCKIO_H

#include <memprof/error.h>

#include "format.h"
#include "mbuf.h"

#include <stdint.h>
#include <stdio.h>

/* Fuzzing builds accept wrong checksums: otherwise almost every mutation is
 * stopped by a CRC and the decoders behind it are never exercised. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CRC_BAD(computed, stored) ((void)(computed), (void)(stored), 0)
#else
#define CRC_BAD(computed, stored) ((computed) != (stored))
#endif

typedef enum {
	MP_FETCH_BLOCK,   /* a whole, valid block: raw.data[0..rlen) */
	MP_FETCH_ABRUPT,  /* the data stops here (nothing, or a cut-off frame) */
	MP_FETCH_TRAILER, /* the trailer starts here: first[0..8) read */
	MP_FETCH_ERROR    /* corrupted, or out of memory: code and diag */
} mp_fetch_kind_t;

typedef struct mp_fetch {
	mp_fetch_kind_t kind;
	uint64_t offset;                  /* where the frame starts */
	uint64_t next;                    /* MP_FETCH_BLOCK: where the next one starts */
	uint8_t first[8];                 /* MP_FETCH_TRAILER: its first 8 bytes */
	uint32_t rlen;                    /* MP_FETCH_BLOCK: bytes in raw */
	mp_mbuf_t payload, raw;           /* owned buffers, reused from fetch to fetch */
	int code;                         /* MP_FETCH_ERROR */
	mp_diag_t diag;                   /* MP_FETCH_ERROR: "block N at offset X: what" */
} mp_fetch_t;

/* "block N at offset X: what", the diagnostic of every damaged block;
 * returns code. */
int mp__block_diag(mp_diag_t *diag, int code, uint64_t index, uint64_t offset, const char *what);

/* Fetch the frame at `offset` of f, which must be positioned there, as
 * block number `index`. Fills *out (kind and what goes with it); f is left
 * after what was read. Never fails otherwise. */
void mp__fetch_block(FILE *f, uint64_t offset, uint64_t index, mp_fetch_t *out);

/* Free a fetch's buffers (the struct itself is the caller's). */
void mp__fetch_release(mp_fetch_t *fe);

/* The read-ahead thread: it owns f from start to stop. */
typedef struct mp_readahead mp_readahead_t;

/* Start fetching blocks from `offset` (index `index`) of f in a thread.
 * Returns NULL when a thread cannot be had: the reader fetches itself.
 * Caller owns the result; free with mp__readahead_stop(). */
mp_readahead_t *mp__readahead_start(FILE *f, uint64_t offset, uint64_t index);

/* The next fetch in file order, waiting for it; borrowed until
 * mp__readahead_done(). After one whose kind is not MP_FETCH_BLOCK the
 * thread has finished with f (it touches nothing more), and nothing
 * follows: that fetch stays valid until mp__readahead_stop(). */
mp_fetch_t *mp__readahead_next(mp_readahead_t *ra);

/* The fetch from mp__readahead_next() has been used: its slot is reusable. */
void mp__readahead_done(mp_readahead_t *ra);

/* Stop the thread and free everything; f's position is then undefined. */
void mp__readahead_stop(mp_readahead_t *ra);

#endif
