/* blockio.c - fetching block frames, in the reader's thread or ahead of it
 * in another; see blockio.h and docs/format.md ("Blocks"). */
#include "blockio.h"

#include "crc32.h"
#include "inflate.h"
#include "varint.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ------------------------------------------------------------ one block */

int mp__block_diag(mp_diag_t *diag, int code, uint64_t index, uint64_t offset, const char *what)
{
	return mp_diag_set(diag, code, (int64_t)offset, (int64_t)index, "block %llu at offset %llu: %s",
			   (unsigned long long)index, (unsigned long long)offset, what);
}

static void fetch_error(mp_fetch_t *fe, int code, uint64_t index, const char *what)
{
	fe->kind = MP_FETCH_ERROR;
	fe->code = code;
	mp_diag_clear(&fe->diag);
	if (code == -ENOMEM)
		mp_diag_set(&fe->diag, code, -1, -1, "out of memory");
	else
		mp__block_diag(&fe->diag, code, index, fe->offset, what);
}

void mp__fetch_block(FILE *f, uint64_t offset, uint64_t index, mp_fetch_t *fe)
{
	uint8_t hdr[MP_BLOCK_HEADER_LEN];
	uint32_t plen, rlen;
	const char *why = "";
	size_t n;

	fe->offset = offset;
	fe->kind = MP_FETCH_ABRUPT;
	n = fread(hdr, 1, sizeof(hdr), f);
	if (n == 0)
		return; /* no trailer */
	/* Whatever is there must start like a block or the trailer; a writer
	 * killed mid-write leaves a prefix of one of them, never other bytes. */
	if (memcmp(hdr, "MPTR", n < 4 ? n : 4) == 0) {
		if (n >= 8) {
			fe->kind = MP_FETCH_TRAILER;
			memcpy(fe->first, hdr, 8);
		}
		return;
	}
	if (memcmp(hdr, "MPBK", n < 4 ? n : 4) != 0) {
		fetch_error(fe, MP_ECORRUPT, index, "bad block magic (expected \"MPBK\" or the trailer's \"MPTR\")");
		return;
	}
	if (n < sizeof(hdr))
		return;
	if (CRC_BAD((uint32_t)crc32(0, hdr, 20), mp_get_u32le(hdr + 20))) {
		fetch_error(fe, MP_ECORRUPT, index, "block header checksum mismatch");
		return;
	}
	if (mp_get_u32le(hdr + 4) != (uint32_t)index) {
		fetch_error(fe, MP_ECORRUPT, index, "block index out of sequence");
		return;
	}
	plen = mp_get_u32le(hdr + 8);
	rlen = mp_get_u32le(hdr + 12);
	if (plen > MP_BLOCK_PAYLOAD_MAX || rlen > MP_BLOCK_RAW_MAX || plen == 0) {
		fetch_error(fe, MP_ECORRUPT, index, "block length out of range");
		return;
	}
	if (mp_mbuf_reserve(&fe->payload, plen) || mp_mbuf_reserve(&fe->raw, rlen ? rlen : 1)) {
		fetch_error(fe, -ENOMEM, index, NULL);
		return;
	}
	if (fread(fe->payload.data, 1, plen, f) < plen)
		return; /* the writer was killed while writing this block */
	if (CRC_BAD(mp__crc32(0, fe->payload.data, plen), mp_get_u32le(hdr + 16))) {
		fetch_error(fe, MP_ECHECKSUM, index, "payload checksum mismatch (corrupted data)");
		return;
	}
	if (mp__inflate(fe->payload.data, plen, fe->raw.data, rlen, &why)) {
		char what[160];
		snprintf(what, sizeof(what), "payload does not decompress to its announced size of %lu bytes (%s)",
			 (unsigned long)rlen, why);
		fetch_error(fe, MP_ECORRUPT, index, what);
		return;
	}
	fe->kind = MP_FETCH_BLOCK;
	fe->rlen = rlen;
	fe->next = offset + sizeof(hdr) + plen;
}

void mp__fetch_release(mp_fetch_t *fe)
{
	mp_mbuf_release(&fe->payload);
	mp_mbuf_release(&fe->raw);
}

/* ------------------------------------------------------------ read-ahead */

/* Three slots: one being decoded, one ready, one being fetched. Memory is
 * three blocks' buffers (a block is a few MB), whatever the file size. */
#define SLOTS 3

struct mp_readahead {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	FILE *f;
	uint64_t offset, index; /* the next frame to fetch (thread's own) */
	uint64_t filled, used;  /* slots filled by the thread, used by the reader */
	int stop;               /* the reader asks the thread to end */
	mp_fetch_t slot[SLOTS];
};

static void *ra_main(void *arg)
{
	mp_readahead_t *ra = arg;

	for (;;) {
		mp_fetch_t *fe;
		int last;

		pthread_mutex_lock(&ra->mu);
		while (!ra->stop && ra->filled - ra->used == SLOTS)
			pthread_cond_wait(&ra->cv, &ra->mu);
		if (ra->stop) {
			pthread_mutex_unlock(&ra->mu);
			return NULL;
		}
		fe = &ra->slot[ra->filled % SLOTS];
		pthread_mutex_unlock(&ra->mu);

		mp__fetch_block(ra->f, ra->offset, ra->index, fe);
		last = fe->kind != MP_FETCH_BLOCK;
		if (!last) {
			ra->offset = fe->next;
			ra->index++;
		}
		pthread_mutex_lock(&ra->mu);
		ra->filled++;
		pthread_cond_broadcast(&ra->cv);
		pthread_mutex_unlock(&ra->mu);
		if (last)
			return NULL;
	}
}

mp_readahead_t *mp__readahead_start(FILE *f, uint64_t offset, uint64_t index)
{
	mp_readahead_t *ra = calloc(1, sizeof(*ra));

	if (!ra)
		return NULL;
	ra->f = f;
	ra->offset = offset;
	ra->index = index;
	if (pthread_mutex_init(&ra->mu, NULL)) {
		free(ra);
		return NULL;
	}
	if (pthread_cond_init(&ra->cv, NULL)) {
		pthread_mutex_destroy(&ra->mu);
		free(ra);
		return NULL;
	}
	if (pthread_create(&ra->thread, NULL, ra_main, ra)) {
		pthread_cond_destroy(&ra->cv);
		pthread_mutex_destroy(&ra->mu);
		free(ra);
		return NULL;
	}
	return ra;
}

mp_fetch_t *mp__readahead_next(mp_readahead_t *ra)
{
	mp_fetch_t *fe;

	pthread_mutex_lock(&ra->mu);
	while (ra->filled == ra->used)
		pthread_cond_wait(&ra->cv, &ra->mu);
	fe = &ra->slot[ra->used % SLOTS];
	pthread_mutex_unlock(&ra->mu);
	return fe;
}

void mp__readahead_done(mp_readahead_t *ra)
{
	pthread_mutex_lock(&ra->mu);
	ra->used++;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
}

void mp__readahead_stop(mp_readahead_t *ra)
{
	int i;

	if (!ra)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->stop = 1;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
	pthread_join(ra->thread, NULL);
	for (i = 0; i < SLOTS; i++)
		mp__fetch_release(&ra->slot[i]);
	pthread_cond_destroy(&ra->cv);
	pthread_mutex_destroy(&ra->mu);
	free(ra);
}
