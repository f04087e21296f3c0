/* seek.c - reading a capture from a checkpoint on (memprof/checkpoint.h,
 * docs/format.md "Checkpoint"): the rounds' ends found by their frames and
 * the first bytes of their payload (no block inflated whole), the
 * checkpoint of one of them read, and the reader started there.
 *
 * A seek still reads every block before the checkpoint for its
 * definitions (strings, memory ids, threads, call stacks: an id is defined
 * in the block of its first use or an earlier one), but decodes none of
 * their chunks; it decodes the chunks from a few blocks before the
 * checkpoint's (a round's events may sit in the blocks of the rounds
 * before its horizon, waiting for it), and returns only the events the
 * checkpoint does not cover (those from the horizon on, and those behind
 * it that reached the file after its block: a lane's, at the caller's
 * times), numbered as the full read numbers them: the first has
 * index `events` plus the synthetic events (memory declarations, dropped
 * counts) before it, which the seek returns first (they are not in the
 * checkpoint's count). */
#include <memprof/checkpoint.h>
#include <memprof/format/varint.h>

#include "reader_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* How many blocks before the checkpoint's the chunks are decoded from:
 * a round is a block of chunks and one that ends it (two or three when a
 * round's chunks pass the writer's block size), and the events a round
 * holds back are in the round before it. */
#define SEEK_BACK 6

static int is_synth(const mp_event_t *e)
{
	return e->kind == MP_EV_MEMORY || e->kind == MP_EV_DROPPED;
}

void mp__seek_filter(mp_capture_t *cap, mp_event_t *ev, size_t *n)
{
	size_t k = 0;

	for (size_t i = 0; i < *n; i++) {
		if (cap->stop_set && (cap->stopped || ev[i].time_ns > cap->stop_ns)) {
			cap->stopped = 1; /* nothing after what the caller needs */
			break;
		}
		if (!cap->seeked) { /* a stop alone: the events keep their indices */
			k++;
			continue;
		}
		/* what the checkpoint covers: earlier than its horizon, and
		 * returned before a block after its own was read -- not an
		 * event of a lane whose caller's time is behind the horizon
		 * but which reached the file after it (the writer counts it in
		 * the round it arrives; ev[i].index: the stamp's, not yet the
		 * seek's) */
		if (cap->seeking && ev[i].time_ns < cap->seek_ns && !is_synth(&ev[i]) && ev[i].index < cap->seek_cover_end)
			continue;
		/* the synthetic events (memory declarations) are not in the
		 * checkpoint's count: they stay, numbered before the first
		 * event kept, which then has its index in the full read */
		cap->seeking &= is_synth(&ev[i]);
		ev[k] = ev[i];
		ev[k++].index = cap->seek_index++;
	}
	*n = k;
}

/* The first bytes of a block's payload inflated into out (at most 16):
 * how many, 0 when they do not inflate (the reader finds out), <0 on a
 * read error. */
static int first_bytes(FILE *f, uint64_t off, uint32_t plen, uint8_t *out)
{
	uint8_t in[256];
	size_t want = plen < sizeof(in) ? plen : sizeof(in);
	z_stream z;
	int rc;

	if (fseeko(f, (off_t)off, SEEK_SET) || fread(in, 1, want, f) != want)
		return -EIO;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, -15) != Z_OK)
		return -ENOMEM;
	z.next_in = in;
	z.avail_in = (uInt)want;
	z.next_out = out;
	z.avail_out = 16;
	rc = inflate(&z, Z_SYNC_FLUSH);
	inflateEnd(&z);
	return rc != Z_OK && rc != Z_STREAM_END ? 0 : (int)z.total_out;
}

/* The kernel's read-ahead is for reading on: a walk reads a few hundred
 * bytes a block, megabytes apart (a 1 G event capture's 17,000 blocks
 * read 2 GB with it, as wall time). */
static void random_access(FILE *f, int on)
{
#ifdef POSIX_FADV_RANDOM
	(void)posix_fadvise(fileno(f), 0, 0, on ? POSIX_FADV_RANDOM : POSIX_FADV_NORMAL);
#else
	(void)f, (void)on;
#endif
}

int mp_capture_round_ends(mp_capture_t *cap, mp_capture_round_end_t **out, size_t *n, mp_diag_t *diag)
{
	uint64_t off = cap->data_offset, index = 0, h;
	size_t cap_out = 0;
	uint8_t fh[24], first[16];
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (cap->next_index || cap->blocks_read)
		return mp_diag_set(diag, MP_EUSAGE, -1, -1, "round ends: the capture has been read from already");
	cap->nwalk = 0;
	random_access(cap->f, 1);
	for (;; index++) {
		uint32_t plen;
		const uint8_t *p = first + 1;
		int got;
		if (fseeko(cap->f, (off_t)off, SEEK_SET) || fread(fh, 1, sizeof(fh), cap->f) != sizeof(fh) ||
		    memcmp(fh, "MPBK", 4) || mp_get_u32le(fh + 4) != (uint32_t)index ||
		    CRC_BAD((uint32_t)crc32(0, fh, 20), mp_get_u32le(fh + 20)))
			break; /* the trailer, the end, or damage: the reader says which */
		plen = mp_get_u32le(fh + 8);
		if ((got = first_bytes(cap->f, off + sizeof(fh), plen, first)) < 0)
			break;
		/* (kept for the seek's pass over the blocks before it) */
		if (MP_VEC_RESERVE(cap->walk, cap->cap_walk, cap->nwalk + 1) == 0)
			cap->walk[cap->nwalk++] = (struct mp_walked){off, plen, got > 0 ? first[0] : 0};
		rc = got >= 2 && first[0] == MP_SEC_HORIZON && !mp_varint_get(&p, first + got, &h);
		if (rc == 1) {
			if (MP_VEC_RESERVE(*out, cap_out, *n + 1) < 0) {
				rc = mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
				break;
			}
			(*out)[(*n)++] = (mp_capture_round_end_t){index, off, h};
		}
		rc = 0;
		off += sizeof(fh) + plen;
	}
	random_access(cap->f, 0);
	if (fseeko(cap->f, (off_t)cap->offset, SEEK_SET) && !rc)
		rc = mp_diag_set(diag, -errno, -1, -1, "cannot seek");
	return rc < 0 ? rc : 0;
}

typedef struct {
	mp_checkpoint_t *ck;
	int got, rc;
} take_t;

static int take(void *ctx, const mp_checkpoint_t *ck)
{
	take_t *t = ctx;

	t->rc = mp_checkpoint_copy(t->ck, ck);
	t->got = t->rc == 0;
	return t->rc;
}

int mp_capture_checkpoint_at(mp_capture_t *cap, const mp_capture_round_end_t *re, mp_checkpoint_t *ck,
			     mp_diag_t *diag)
{
	mp_checkpoint_fn fn = cap->ckpt_fn;
	void *ctx = cap->ckpt_ctx;
	uint64_t horizon = cap->horizon, seen = cap->ncheckpoints, bindex = cap->block_index;
	take_t t = {ck, 0, 0};
	mp_fetch_t fe;
	int rc = 0;

	memset(ck, 0, sizeof(*ck));
	memset(&fe, 0, sizeof(fe));
	if (fseeko(cap->f, (off_t)re->offset, SEEK_SET))
		return mp_diag_set(diag, -errno, -1, -1, "cannot seek");
	mp__fetch_block(cap->f, re->offset, re->block_index, &fe);
	if (fe.kind == MP_FETCH_BLOCK) {
		/* its sections checked and applied as the read would, but
		 * the checkpoint to us and nothing else kept: a round's end
		 * holds its horizon, summary and checkpoint only */
		cap->ckpt_fn = take;
		cap->ckpt_ctx = &t;
		cap->block_index = re->block_index;
		rc = mp__capture_sections(cap, fe.raw.data, fe.rlen, fe.offset, 0, diag);
		if (!rc)
			rc = mp__capture_sections(cap, fe.raw.data, fe.rlen, fe.offset, 1, diag);
		cap->ckpt_fn = fn;
		cap->ckpt_ctx = ctx;
		cap->horizon = horizon;
		cap->ncheckpoints = seen;
		cap->block_index = bindex;
	} else if (fe.kind == MP_FETCH_ERROR) {
		*diag = fe.diag;
		rc = fe.code;
	}
	mp__fetch_release(&fe);
	if (fseeko(cap->f, (off_t)cap->offset, SEEK_SET) && !rc)
		rc = mp_diag_set(diag, -errno, -1, -1, "cannot seek");
	if (rc && t.got)
		mp_checkpoint_free(ck);
	if (!rc && !t.got && t.rc)
		rc = mp_diag_set(diag, t.rc, -1, -1, "out of memory");
	return rc < 0 ? rc : t.got;
}

/* The blocks before the seek's first: those that start with a chunk or a
 * horizon hold no definition (a round's block puts its definitions
 * first, flush.c) and are passed by their frame, uninflated; the others
 * are read and their definitions applied (their chunks are not kept:
 * reader_sections.c). The rest is the reader's, from there. */
static int skip_blocks(mp_capture_t *cap, mp_diag_t *diag)
{
	uint8_t fh[24], first[16];
	int rc = 0;

	random_access(cap->f, 1);
	while (cap->block_index < cap->seek_block) {
		uint32_t plen;
		if (cap->block_index < cap->nwalk && cap->walk[cap->block_index].off == cap->offset) {
			/* the round ends' walk has seen it */
			plen = cap->walk[cap->block_index].plen;
			first[0] = cap->walk[cap->block_index].first;
			rc = first[0] != 0;
		} else {
			if (fseeko(cap->f, (off_t)cap->offset, SEEK_SET) ||
			    fread(fh, 1, sizeof(fh), cap->f) != sizeof(fh) || memcmp(fh, "MPBK", 4) ||
			    mp_get_u32le(fh + 4) != (uint32_t)cap->block_index ||
			    CRC_BAD((uint32_t)crc32(0, fh, 20), mp_get_u32le(fh + 20)))
				break; /* the reader says what follows */
			plen = mp_get_u32le(fh + 8);
			if ((rc = first_bytes(cap->f, cap->offset + sizeof(fh), plen, first)) < 0)
				break;
		}
		if (rc > 0 && (first[0] == MP_SEC_CHUNK2 || first[0] == MP_SEC_HORIZON)) {
			cap->offset += sizeof(fh) + plen;
			cap->block_index++;
			cap->blocks_read++;
			rc = 0;
			continue;
		}
		if (fseeko(cap->f, (off_t)cap->offset, SEEK_SET))
			break;
		mp__fetch_block(cap->f, cap->offset, cap->block_index, &cap->fetch);
		if (cap->fetch.kind != MP_FETCH_BLOCK)
			break;
		if ((rc = mp__capture_apply_block(cap, &cap->fetch, diag)) < 0) {
			random_access(cap->f, 0);
			return rc;
		}
	}
	random_access(cap->f, 0);
	if (fseeko(cap->f, (off_t)cap->offset, SEEK_SET))
		return mp_diag_set(diag, -errno, -1, -1, "cannot seek");
	return 0;
}

int mp_capture_seek_stop(mp_capture_t *cap, uint64_t after_ns, mp_end_status_t end)
{
	if (!cap->seeked && (cap->next_index || cap->blocks_read))
		return MP_EUSAGE;
	cap->stop_set = 1;
	cap->stop_ns = after_ns;
	cap->stop_end = end;
	return 0;
}

int mp_capture_seek(mp_capture_t *cap, const mp_checkpoint_t *ck, mp_diag_t *diag)
{
	if (cap->next_index || cap->blocks_read || cap->seeked)
		return mp_diag_set(diag, MP_EUSAGE, -1, -1, "seek: the capture has been read from already");
	/* (2.5) the checkpoint says where the events it does not cover
	 * start; before it, a round's held back events were in the round
	 * before (as a lane's hold keeping the horizon back breaks) */
	if (ck->flags & MP_CKPT_F_BACK)
		cap->seek_block = ck->back < ck->block_index ? ck->block_index - ck->back : 0;
	else
		cap->seek_block = ck->block_index > SEEK_BACK ? ck->block_index - SEEK_BACK : 0;
	cap->seek_ns = ck->horizon_ns;
	cap->seek_ck_block = ck->block_index;
	cap->seek_cover_end = UINT64_MAX;
	cap->seek_index = cap->seek_events = ck->events;
	cap->seeking = cap->seeked = 1;
	cap->step = cap->seek_step = ck->step;
	return skip_blocks(cap, diag);
}
