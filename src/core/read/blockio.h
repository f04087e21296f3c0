/* blockio.h - fetching one block frame of a capture, and reading ahead.
 *
 * A block is fetched in steps that need nothing from the reader's state but
 * the block's offset and expected index: read its 24-byte header and
 * payload, then check the payload's checksum and inflate it. That is most
 * of the reader's work (inflation alone was 60% of it), so it can be done
 * for the next blocks while the reader decodes this one (mp__readahead_*):
 * by a thread of its own when the machine has cores to spare, and by
 * whichever thread of the report would otherwise wait (mp__readahead_help):
 * on two cores, three busy threads cost more in hand-offs than they gain,
 * while two that share the fetching keep both cores busy.
 *
 * Frames are read one after the other (the next one's offset is in this
 * one's header), the rest runs in parallel; the reader takes the fetches in
 * file order, and nothing is read past the first frame that is not a good
 * block (the end, the trailer, an error reading a header): whatever the
 * reader does with it, it does the same as when it fetches the block itself,
 * diagnostics included.
 */
#ifndef MP_BLOCKIO_H
#define MP_BLOCKIO_H

#include <memprof/error.h>
#include <memprof/format.h>
#include <memprof/format/mbuf.h>

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
	uint64_t index;                   /* the block number it was read as */
	uint32_t plen, rlen;              /* MP_FETCH_BLOCK: bytes in payload, in raw */
	uint32_t crc;                     /* MP_FETCH_BLOCK: the payload's checksum as stored */
	mp_mbuf_t payload, raw;           /* owned buffers, reused from fetch to fetch */
	int code;                         /* MP_FETCH_ERROR */
	mp_diag_t diag;                   /* MP_FETCH_ERROR: "block N at offset X: what" */
} mp_fetch_t;

/* "block N at offset X: what", the diagnostic of every damaged block;
 * returns code. */
int mp__block_diag(mp_diag_t *diag, int code, uint64_t index, uint64_t offset, const char *what);

/* Fetch the frame at `offset` of f, which must be positioned there, as
 * block number `index`. Fills *out (kind and what goes with it); f is left
 * after what was read. Never fails otherwise. The same as mp__fetch_read()
 * then mp__fetch_decode(). */
void mp__fetch_block(FILE *f, uint64_t offset, uint64_t index, mp_fetch_t *out);

/* The part of a fetch that reads f: the header, its checks and the raw
 * payload. Returns 1 when a block followed (kind MP_FETCH_BLOCK, still to be
 * decoded; f is at out->next), else 0 (out says what ends the blocks). */
int mp__fetch_read(FILE *f, uint64_t offset, uint64_t index, mp_fetch_t *out);

/* The rest, touching no file: the payload's checksum and inflation. May
 * turn an MP_FETCH_BLOCK into MP_FETCH_ERROR; other kinds are left alone. */
void mp__fetch_decode(mp_fetch_t *fe);

/* Free a fetch's buffers (the struct itself is the caller's). */
void mp__fetch_release(mp_fetch_t *fe);

/* Blocks fetched ahead of the reader, by whoever has time. */
typedef struct mp_readahead mp_readahead_t;

/* An idle read-ahead; NULL when out of memory or threads' resources. Caller
 * owns the result; free with mp__readahead_free(). Its address stays valid
 * until then, so other threads may call mp__readahead_help() on it at any
 * time, fetching or not. */
mp_readahead_t *mp__readahead_new(void);

/* Start fetching from `offset` (block number `index`) of f, which belongs
 * to the read-ahead from now until mp__readahead_end(). `thread`: also start
 * a thread that does nothing else (when it cannot start, the others fetch
 * all). ra must be idle (new, or ended). */
void mp__readahead_begin(mp_readahead_t *ra, FILE *f, uint64_t offset, uint64_t index, int thread);

/* For the reader only: the next fetch in file order, fetching it (or a later
 * one) itself rather than waiting when nobody else is; borrowed until
 * mp__readahead_done(). After one whose kind is not MP_FETCH_BLOCK nothing
 * is read from f any more, nothing follows, and that fetch stays valid until
 * mp__readahead_end(). */
mp_fetch_t *mp__readahead_next(mp_readahead_t *ra);

/* The fetch from mp__readahead_next() has been used: its slot is reusable. */
void mp__readahead_done(mp_readahead_t *ra);

/* From any thread: fetch one block ahead when there is room and the file is
 * free. Returns 1 when it did (it may have taken a while), 0 when there was
 * nothing to do (idle, ended, all slots ahead full, or the file busy). */
int mp__readahead_help(mp_readahead_t *ra);

/* Stop fetching and wait for fetches under way; ra is idle again, its
 * thread joined, and f's position undefined. Safe with NULL or when idle. */
void mp__readahead_end(mp_readahead_t *ra);

/* End and free everything; safe with NULL. */
void mp__readahead_free(mp_readahead_t *ra);

#endif
