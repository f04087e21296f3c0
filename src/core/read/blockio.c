/* blockio.c - fetching block frames, in the reader's thread or ahead of it
 * in another; see blockio.h and docs/format.md ("Blocks"). */
#include "blockio.h"

#include <memprof/format/crc32.h>
#include <memprof/format/inflate.h>
#include <memprof/format/varint.h>

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

int mp__fetch_read(FILE *f, uint64_t offset, uint64_t index, mp_fetch_t *fe)
{
	uint8_t hdr[MP_BLOCK_HEADER_LEN];
	uint32_t plen, rlen;
	size_t n;

	fe->offset = offset;
	fe->index = index;
	fe->kind = MP_FETCH_ABRUPT;
	n = fread(hdr, 1, sizeof(hdr), f);
	if (n == 0)
		return 0; /* no trailer */
	/* Whatever is there must start like a block or the trailer; a writer
	 * killed mid-write leaves a prefix of one of them, never other bytes. */
	if (memcmp(hdr, "MPTR", n < 4 ? n : 4) == 0) {
		if (n >= 8) {
			fe->kind = MP_FETCH_TRAILER;
			memcpy(fe->first, hdr, 8);
		}
		return 0;
	}
	if (memcmp(hdr, "MPBK", n < 4 ? n : 4) != 0) {
		fetch_error(fe, MP_ECORRUPT, index, "bad block magic (expected \"MPBK\" or the trailer's \"MPTR\")");
		return 0;
	}
	if (n < sizeof(hdr))
		return 0;
	if (CRC_BAD((uint32_t)crc32(0, hdr, 20), mp_get_u32le(hdr + 20))) {
		fetch_error(fe, MP_ECORRUPT, index, "block header checksum mismatch");
		return 0;
	}
	if (mp_get_u32le(hdr + 4) != (uint32_t)index) {
		fetch_error(fe, MP_ECORRUPT, index, "block index out of sequence");
		return 0;
	}
	plen = mp_get_u32le(hdr + 8);
	rlen = mp_get_u32le(hdr + 12);
	if (plen > MP_BLOCK_PAYLOAD_MAX || rlen > MP_BLOCK_RAW_MAX || plen == 0) {
		fetch_error(fe, MP_ECORRUPT, index, "block length out of range");
		return 0;
	}
	if (mp_mbuf_reserve(&fe->payload, plen) || mp_mbuf_reserve(&fe->raw, rlen ? rlen : 1)) {
		fetch_error(fe, -ENOMEM, index, NULL);
		return 0;
	}
	if (fread(fe->payload.data, 1, plen, f) < plen)
		return 0; /* the writer was killed while writing this block */
	fe->kind = MP_FETCH_BLOCK;
	fe->plen = plen;
	fe->rlen = rlen;
	fe->crc = mp_get_u32le(hdr + 16);
	fe->next = offset + sizeof(hdr) + plen;
	return 1;
}

void mp__fetch_decode(mp_fetch_t *fe)
{
	const char *why = "";

	if (fe->kind != MP_FETCH_BLOCK)
		return;
	if (CRC_BAD(mp__crc32(0, fe->payload.data, fe->plen), fe->crc)) {
		fetch_error(fe, MP_ECHECKSUM, fe->index, "payload checksum mismatch (corrupted data)");
		return;
	}
	if (mp__inflate(fe->payload.data, fe->plen, fe->raw.data, fe->rlen, &why)) {
		char what[160];
		snprintf(what, sizeof(what), "payload does not decompress to its announced size of %lu bytes (%s)",
			 (unsigned long)fe->rlen, why);
		fetch_error(fe, MP_ECORRUPT, fe->index, what);
	}
}

void mp__fetch_block(FILE *f, uint64_t offset, uint64_t index, mp_fetch_t *fe)
{
	if (mp__fetch_read(f, offset, index, fe))
		mp__fetch_decode(fe);
}

void mp__fetch_release(mp_fetch_t *fe)
{
	mp_mbuf_release(&fe->payload);
	mp_mbuf_release(&fe->raw);
}

/* ------------------------------------------------------------ read-ahead */

/* Up to SLOTS blocks fetched ahead of the reader. The reader copies a block
 * out as soon as it takes it (mp__readahead_done follows at once), so every
 * slot is either being fetched or ready. Memory is SLOTS blocks' buffers,
 * whatever the file size. */
#define SLOTS 4

struct mp_readahead {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int has_thread;
	FILE *f;
	uint64_t offset, index; /* the next frame to read */
	uint64_t claimed, used; /* fetches started (in file order); taken by the reader */
	int active;             /* between begin and end */
	int reading;            /* a fetcher is reading f: claims wait for it */
	int ended;              /* the last frame read was not a block: none follows */
	int busy;               /* fetches under way */
	int waiters;            /* threads asleep on cv */
	unsigned char ready[SLOTS];
	mp_fetch_t slot[SLOTS];
};

static int can_claim(const mp_readahead_t *ra)
{
	return ra->active && !ra->reading && !ra->ended && ra->claimed - ra->used < SLOTS;
}

static void wake(mp_readahead_t *ra)
{
	if (ra->waiters)
		pthread_cond_broadcast(&ra->cv);
}

/* Wait (mu held) for any change: a fetch done, a slot used, the end. */
static void sleep_on(mp_readahead_t *ra)
{
	ra->waiters++;
	pthread_cond_wait(&ra->cv, &ra->mu);
	ra->waiters--;
}

/* Fetch the next frame into the next slot; called and returns with mu held,
 * can_claim() true. Only the read of the file is serialised (frames are
 * found one after the other); the checksum and inflation, which are most of
 * the work, run unlocked, so two threads can inflate two blocks at once. */
static void fetch_one(mp_readahead_t *ra)
{
	uint64_t seq = ra->claimed++, offset = ra->offset, index = ra->index;
	mp_fetch_t *fe = &ra->slot[seq % SLOTS];
	int more;

	ra->ready[seq % SLOTS] = 0;
	ra->reading = 1;
	ra->busy++;
	pthread_mutex_unlock(&ra->mu);
	more = mp__fetch_read(ra->f, offset, index, fe);
	pthread_mutex_lock(&ra->mu);
	ra->reading = 0;
	if (more) {
		ra->offset = fe->next;
		ra->index++;
	} else {
		ra->ended = 1;
	}
	wake(ra);
	pthread_mutex_unlock(&ra->mu);
	mp__fetch_decode(fe);
	pthread_mutex_lock(&ra->mu);
	ra->ready[seq % SLOTS] = 1;
	ra->busy--;
	wake(ra);
}

/* The dedicated fetcher, on machines with cores to spare for it. */
static void *ra_main(void *arg)
{
	mp_readahead_t *ra = arg;

	pthread_mutex_lock(&ra->mu);
	while (ra->active) {
		if (can_claim(ra)) {
			fetch_one(ra);
			continue;
		}
		sleep_on(ra);
	}
	pthread_mutex_unlock(&ra->mu);
	return NULL;
}

mp_readahead_t *mp__readahead_new(void)
{
	mp_readahead_t *ra = calloc(1, sizeof(*ra));

	if (!ra)
		return NULL;
	if (pthread_mutex_init(&ra->mu, NULL)) {
		free(ra);
		return NULL;
	}
	if (pthread_cond_init(&ra->cv, NULL)) {
		pthread_mutex_destroy(&ra->mu);
		free(ra);
		return NULL;
	}
	return ra;
}

void mp__readahead_begin(mp_readahead_t *ra, FILE *f, uint64_t offset, uint64_t index, int thread)
{
	pthread_mutex_lock(&ra->mu);
	ra->f = f;
	ra->offset = offset;
	ra->index = index;
	ra->claimed = ra->used = 0;
	ra->reading = ra->ended = ra->busy = 0;
	ra->active = 1;
	pthread_mutex_unlock(&ra->mu);
	/* Without the thread the reader and the helpers do all the fetching. */
	ra->has_thread = thread && pthread_create(&ra->thread, NULL, ra_main, ra) == 0;
}

mp_fetch_t *mp__readahead_next(mp_readahead_t *ra)
{
	mp_fetch_t *fe;

	pthread_mutex_lock(&ra->mu);
	for (;;) {
		if (ra->claimed > ra->used && ra->ready[ra->used % SLOTS])
			break;
		/* The next block is not there: fetch it, or one after it while
		 * another thread finishes it, rather than wait. */
		if (can_claim(ra)) {
			fetch_one(ra);
			continue;
		}
		sleep_on(ra);
	}
	fe = &ra->slot[ra->used % SLOTS];
	pthread_mutex_unlock(&ra->mu);
	return fe;
}

void mp__readahead_done(mp_readahead_t *ra)
{
	pthread_mutex_lock(&ra->mu);
	ra->used++;
	wake(ra);
	pthread_mutex_unlock(&ra->mu);
}

int mp__readahead_help(mp_readahead_t *ra)
{
	int did = 0;

	pthread_mutex_lock(&ra->mu);
	if (can_claim(ra)) {
		fetch_one(ra);
		did = 1;
	}
	pthread_mutex_unlock(&ra->mu);
	return did;
}

void mp__readahead_end(mp_readahead_t *ra)
{
	if (!ra)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->active = 0;
	pthread_cond_broadcast(&ra->cv);
	while (ra->busy) /* a helper still inflating a block nobody will read */
		sleep_on(ra);
	pthread_mutex_unlock(&ra->mu);
	if (ra->has_thread)
		pthread_join(ra->thread, NULL);
	ra->has_thread = 0;
}

void mp__readahead_free(mp_readahead_t *ra)
{
	int i;

	if (!ra)
		return;
	mp__readahead_end(ra);
	for (i = 0; i < SLOTS; i++)
		mp__fetch_release(&ra->slot[i]);
	pthread_cond_destroy(&ra->cv);
	pthread_mutex_destroy(&ra->mu);
	free(ra);
}
