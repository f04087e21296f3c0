/* flush.c - flush rounds: snapshot every thread's ring, compress, write
 * (when they run: flusher.c). The ordering protocol is described in
 * writer_internal.h. */
#include <memprof/format.h>
#include <memprof/format/crc32.h>
#include <memprof/format/deflate_huff.h>
#include <memprof/format/varint.h>

#include "clock.h"
#include "encoder.h"
#include "writer_internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Start a new block past this much raw data: a reader holds a block at a
 * time (`memprof report` on an alloc_bench -t 2 capture: 49 MB instead of
 * 70 MB with 8 MiB, and 3.4 s instead of 3.8 s, medians of four runs), and
 * the block frames cost 24 bytes a MiB. (The recording's CPU time is the
 * same: 2.28-2.44 s in the preload for either, perf, four runs each.) */
#define BLOCK_SPLIT (1u << 20)
#define STUCK_SPINS 200000     /* how long to wait for a thread inside a record */

typedef struct snap {
	mp_wthread_t *t;
	uint64_t head;
} snap_t;

/* Read thread t's head at a record boundary. Returns 0, or -EBUSY when the
 * thread stayed inside a record too long (preempted or stopped in a signal
 * handler): then its data waits for the next round. */
static int snapshot(mp_wthread_t *t, snap_t *s)
{
	unsigned spins = 0;

	for (;;) {
		uint64_t s1 = atomic_load_explicit(&t->seq, memory_order_acquire), s2;
		if (s1 & 1) {
			if (++spins > STUCK_SPINS)
				return -EBUSY;
			if ((spins & 1023) == 0)
				sched_yield();
			continue;
		}
		s->t = t;
		s->head = atomic_load_explicit(&t->head, memory_order_acquire);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&t->seq, memory_order_relaxed);
		if (s1 == s2)
			return 0;
	}
}

/* The capture's first error; a lack of room ends it with a trailer that
 * says so (writer.c). */
static void set_error(mp_writer_t *w, int err)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&w->error, &expected, err))
		mp__writer_stopped(w, err);
}

/* Mark where a new column starts in w->raw: each segment gets its own
 * Huffman table (a column's bytes are alike, its neighbours' are not).
 * The high half says which (1 + w->enc.stored_hint's index; 0 none). */
static int mark_segment(mp_writer_t *w, unsigned hint)
{
	uint64_t at = w->raw.len | (uint64_t)hint << 32;

	return mp_mbuf_append(&w->segs, &at, sizeof(at));
}

/* A part that looked like noise (coding would save under 3%: in
 * alloc_bench the address deltas' tails and the first bytes of sizes and
 * of IDX) is stored without a look this many times in a row, then
 * analysed again: its histogram and code table cost about a sixth of the
 * Huffman stage, for nothing. A part that stops being noise meanwhile is
 * stored for up to that many segments (it was within 3% of stored). */
#define HINT_RECHECK 16

/* Below this a segment's table would cost more than it saves: it joins
 * the next one. */
#define MIN_SEGMENT 2048

/* w->raw as one raw deflate stream in w->out: a Huffman-only block per
 * segment (deflate_huff.h). When the producers outrun the flusher the
 * blocks are stored instead, so the rings drain and nobody waits: the file
 * grows by the raw encoding's size for that while. */
static int compress_segments(mp_writer_t *w)
{
	const uint64_t *seg = (const uint64_t *)w->segs.data;
	size_t nseg = w->segs.len / sizeof(uint64_t), i;
	uint64_t start = 0;
	unsigned hint_id = 0; /* the part the segment from start is (of) */
	mp_dh_writer_t dh;

	w->out.len = 0;
	if (mp_mbuf_reserve(&w->out, mp_dh_bound(w->raw.len) + 21 * (nseg + 1)))
		return -ENOMEM;
	mp__dh_begin(&dh, w->out.data);
	for (i = 0; i <= nseg; i++) {
		uint64_t end = i < nseg ? (uint32_t)seg[i] : w->raw.len;
		if (end > w->raw.len || end < start)
			return MP_ECOMPRESS; /* a flusher bug */
		if (i < nseg && end - start < MIN_SEGMENT) {
			/* joins the next part: the segment is mostly that one */
			hint_id = (unsigned)(seg[i] >> 32);
			continue;
		}
		if (end > start) {
			uint8_t *hint = hint_id ? &w->enc.stored_hint[0][0] + hint_id - 1 : NULL;
			int store = w->behind == BEHIND_FAR, rc;
			if (!store && hint && *hint) {
				*hint = *hint + 1 < HINT_RECHECK ? (uint8_t)(*hint + 1) : 0;
				store = 1;
				hint = NULL;
			}
			rc = mp__dh_segment(&dh, w->raw.data + start, end - start, end == w->raw.len, store);
			if (hint && !store)
				*hint = rc == MP_DH_NOISE;
		}
		start = end;
		hint_id = i < nseg ? (unsigned)(seg[i] >> 32) : 0;
	}
	w->out.len = (size_t)(mp__dh_end(&dh) - w->out.data);
	return 0;
}

/* Levels 2-9: zlib with LZ77 matching, for files that must be small more
 * than the capture must be cheap. */
static int compress_zlib(mp_writer_t *w)
{
	uLong bound = deflateBound(&w->z, (uLong)w->raw.len);

	w->out.len = 0;
	if (mp_mbuf_reserve(&w->out, bound))
		return -ENOMEM;
	if (deflateReset(&w->z) != Z_OK)
		return MP_ECOMPRESS;
	w->z.next_in = w->raw.data;
	w->z.avail_in = (uInt)w->raw.len;
	w->z.next_out = w->out.data;
	w->z.avail_out = (uInt)w->out.cap;
	if (deflate(&w->z, Z_FINISH) != Z_STREAM_END)
		return MP_ECOMPRESS;
	w->out.len = w->out.cap - w->z.avail_out;
	return 0;
}

/* Compress w->raw into one block and append it to the file. */
static int emit_block(mp_writer_t *w)
{
	uint8_t hdr[MP_BLOCK_HEADER_LEN];
	struct iovec iov[2];
	int rc;

	if (w->raw.len == 0)
		return 0;
	rc = w->z_ok && w->behind != BEHIND_FAR ? compress_zlib(w) : compress_segments(w);
	w->segs.len = 0;
	if (rc)
		return rc;

	mp_put_u32le(hdr, MP_BLOCK_MAGIC);
	mp_put_u32le(hdr + 4, w->block_index);
	mp_put_u32le(hdr + 8, (uint32_t)w->out.len);
	mp_put_u32le(hdr + 12, (uint32_t)w->raw.len);
	mp_put_u32le(hdr + 16, mp__crc32(0, w->out.data, w->out.len));
	mp_put_u32le(hdr + 20, (uint32_t)crc32(0, hdr, 20));
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = w->out.data;
	iov[1].iov_len = w->out.len;
	rc = mp__wfile_write(w, iov, 2);
	if (rc)
		return rc;
	w->events_written = w->events_flushed; /* every event encoded is in raw or before */
	w->block_index++;
	w->raw.len = 0;
	w->segs.len = 0;
	return 0;
}

int mp__writer_emit_block(mp_writer_t *w)
{
	return emit_block(w);
}

static int put_section(mp_mbuf_t *b, const uint64_t *v, int n, uint8_t tag)
{
	uint8_t tmp[1 + 32 * MP_VARINT_MAX], *p = tmp;
	int i;

	*p++ = tag;
	for (i = 0; i < n; i++)
		p = mp_varint_put(p, v[i]);
	return mp_mbuf_append(b, tmp, (size_t)(p - tmp));
}

int mp__writer_put_section(mp_mbuf_t *b, const uint64_t *v, int n, uint8_t tag)
{
	return put_section(b, v, n, tag);
}

void mp__writer_give_back(mp_wthread_t *t)
{
	uint64_t tail = t->encoded < t->tallied ? t->encoded : t->tallied;

	if (tail == atomic_load_explicit(&t->tail, memory_order_relaxed))
		return;
	atomic_store_explicit(&t->tail, tail, memory_order_release);
	/* store tail, then read waiting; the thread stores waiting, then
	 * reads tail: a full fence on both sides, so one of us sees the
	 * other */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&t->waiting, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&t->space, 1, memory_order_release);
		mp__futex_wake(&t->space);
	}
}

/* A thread's records are encoded and their ring space given back this much
 * at a time, so that the thread can go on recording while the flusher works
 * through the rest of its ring. */
#define PIECE_BYTES (512u << 10)

/* Thread s->t's new records as CHUNK2 sections, a piece at a time: its
 * delta state at the piece's start, then the records as parts of columns
 * (memprof/format/columns.h). */
static int append_chunk(mp_writer_t *w, const snap_t *s)
{
	mp_wthread_t *t = s->t;
	uint64_t tail = t->encoded, size = t->ring_mask + 1;
	int i, rc;

	while (tail < s->head) {
		uint64_t n = s->head - tail, pos = tail & t->ring_mask, lens[MP_PARTS], total = 0, limit = n;
		uint8_t tmp[1 + (2 + MP_ST_COUNT + MP_PARTS) * MP_VARINT_MAX], *p = tmp;
		mp_chunk_state_t start = t->flushed;
		const uint8_t *rows;

		/* a piece ends at the first record boundary past PIECE_BYTES,
		 * at most one record (MP_REC_MAX) further */
		if (n > PIECE_BYTES + MP_REC_MAX) {
			n = PIECE_BYTES + MP_REC_MAX;
			limit = PIECE_BYTES;
		}
		if (w->raw.len && w->raw.len + n > BLOCK_SPLIT && (rc = emit_block(w)))
			return rc;
		/* Records that wrap around the ring's end are made contiguous first. */
		if (pos + n <= size) {
			rows = t->ring + pos;
		} else {
			w->rows.len = 0;
			if ((rc = mp_mbuf_reserve(&w->rows, n)))
				return rc;
			memcpy(w->rows.data, t->ring + pos, size - pos);
			memcpy(w->rows.data + (size - pos), t->ring, n - (size - pos));
			rows = w->rows.data;
		}
		/* Behind: skip the age table until it catches up. */
		w->enc.no_ages = w->behind != BEHIND_NOT;
		if (mp__chunk_encode(&w->enc, (const uint64_t *)(const void *)rows, n / 8, limit / 8, t->flushed.v,
				     mp__ring_clock(w, t), lens) ||
		    w->enc.consumed == 0)
			return -ENOMEM; /* (or records that do not parse: a writer bug) */
		w->events_flushed += w->enc.events;
		for (i = 0; i < MP_PARTS; i++)
			total += lens[i];
		*p++ = MP_SEC_CHUNK2;
		p = mp_varint_put(p, t->index);
		for (i = 0; i < MP_ST_COUNT; i++)
			p = mp_varint_put(p, start.v[i]);
		p = mp_varint_put(p, total);
		for (i = 0; i < MP_PARTS; i++)
			p = mp_varint_put(p, lens[i]);
		if ((rc = mp_mbuf_append(&w->raw, tmp, (size_t)(p - tmp))))
			return rc;
		/* each part its own segment: heads and tails of one column differ */
		for (i = 0; i < MP_PARTS; i++)
			if ((rc = mark_segment(w, 1 + (unsigned)(t->index % MP_HINT_THREADS) * MP_PARTS + (unsigned)i)) ||
			    (rc = mp_mbuf_append(&w->raw, w->enc.cols[i].data, lens[i])))
				return rc;

		/* The piece is encoded: give its ring space back now, not after
		 * compressing and writing, so that the thread can go on
		 * recording (the data is no safer in the ring than in the
		 * flusher's buffers: a kill loses both) -- up to what the
		 * tally has counted (the round's tally, after the chunks,
		 * hands the rest back as it goes). */
		tail += 8 * (uint64_t)w->enc.consumed;
		t->encoded = tail;
		mp__writer_note_piece(t, tail, w->block_index);
		mp__writer_give_back(t);
	}
	atomic_store_explicit(&t->wake_sent, 0, memory_order_relaxed);
	return 0;
}

int mp__writer_round(mp_writer_t *w, int final)
{
	int rc;

	pthread_mutex_lock(&w->flush_mu);
	rc = mp__writer_round_locked(w, final);
	pthread_mutex_unlock(&w->flush_mu);
	return rc;
}

/* The earliest time a record not yet tallied can have: the time of the
 * last one tallied, of the threads with records left (a lane's carry ns
 * already, and need no clock line). */
static uint64_t untallied_ns(mp_writer_t *w)
{
	uint64_t keep = UINT64_MAX;
	mp_wthread_t *t;

	pthread_mutex_lock(&w->reg_mu);
	for (t = atomic_load_explicit(&w->threads, memory_order_acquire); t; t = t->next)
		if (!t->lane && atomic_load_explicit(&t->exited, memory_order_acquire) != 2 &&
		    t->tallied != atomic_load_explicit(&t->head, memory_order_acquire) && t->tally_time < keep)
			keep = t->tally_time;
	pthread_mutex_unlock(&w->reg_mu);
	return keep;
}

/* A thread's small sections: announced once, and the drops since the
 * last round. */
static int thread_sections(mp_writer_t *w, mp_wthread_t *t, mp_mbuf_t *secbuf)
{
	int rc, slot;

	if (!t->announced) {
		uint64_t v[2] = {t->index, t->tid};
		size_t at = secbuf->len;
		if ((rc = put_section(secbuf, v, 2, MP_SEC_THREAD)) ||
		    (w->keep && (rc = mp__keep_log(w, secbuf->data + at, secbuf->len - at))))
			return rc;
		t->announced = 1;
	}
	for (slot = 0; slot < MP_DROP_SLOTS; slot++) {
		uint64_t cur = atomic_load_explicit(&t->dropped[slot], memory_order_relaxed);
		if (cur != t->dropped_reported[slot]) {
			uint64_t v[3] = {t->index, (uint64_t)slot, cur - t->dropped_reported[slot]};
			if ((rc = put_section(secbuf, v, 3, MP_SEC_DROPPED)))
				return rc;
			if (w->tally.mem)
				mp__tally_mem(&w->tally, (uint32_t)slot)->v[MP_SUMF_DROPPED] += v[2];
			t->dropped_reported[slot] = cur;
		}
	}
	return 0;
}

/* 1. Snapshot every ring (and the small per-thread sections) into
 * w->snaps, w->sections and w->tally_src; *horizon lowered to what the
 * threads still hold, *pending: the bytes the snapshots hold. */
static int snapshot_rings(mp_writer_t *w, uint64_t *horizon, uint64_t *pending)
{
	mp_mbuf_t *snapbuf = &w->snaps, *secbuf = &w->sections, *tsrc = &w->tally_src;
	uint64_t taken = 0;
	mp_wthread_t *t;
	int rc = 0;

	snapbuf->len = 0;
	secbuf->len = 0;
	tsrc->len = 0;
	pthread_mutex_lock(&w->reg_mu);
	for (t = atomic_load_explicit(&w->threads, memory_order_acquire); t; t = t->next) {
		snap_t s;

		if (atomic_load_explicit(&t->exited, memory_order_acquire) == 2)
			continue;
		if ((rc = thread_sections(w, t, secbuf)))
			break;
		/* A lane's promise, read before its ring: what it holds back
		 * keeps the horizon (writer_internal.h, wlane.c). */
		if (t->lane) {
			uint64_t hold = atomic_load_explicit(&t->hold, memory_order_acquire);
			if (hold < *horizon)
				*horizon = hold;
		}
		if (snapshot(t, &s) != 0) {
			if (t->flushed.v[MP_ST_TIME] < *horizon)
				*horizon = t->flushed.v[MP_ST_TIME];
			s.head = t->encoded; /* tallied up to what is in the file */
		} else if (s.head != t->encoded) {
			*pending += s.head - t->encoded;
			if ((rc = mp_mbuf_append(snapbuf, &s, sizeof(s))))
				break;
		}
		taken += s.head;
		if (t->tallied != s.head) {
			mp_tally_src_t ts = {t, s.head};
			if ((rc = mp_mbuf_append(tsrc, &ts, sizeof(ts))))
				break;
		}
	}
	pthread_mutex_unlock(&w->reg_mu);
	atomic_store_explicit(&w->round_heads, taken, memory_order_relaxed);
	return rc;
}

/* Behind, by how much: a thread wakes the flusher at half full, so a
 * flusher that keeps up finds the rings at about half. Past 5/8 on
 * average it sheds the age table (a few ns an event, a few tenths of a
 * byte); past 7/8, threads are about to wait: it stores blocks
 * uncompressed too, so that they do not. */
static void judge_behind(mp_writer_t *w, size_t nsnap, uint64_t pending)
{
	if (!nsnap || !w->shed)
		w->behind = BEHIND_NOT;
	else if (pending > (uint64_t)nsnap * (w->ring_bytes / 8 * 7))
		w->behind = BEHIND_FAR;
	else if (pending > (uint64_t)nsnap * (w->ring_bytes / 8 * 5))
		w->behind = BEHIND_SOME;
	else
		w->behind = BEHIND_NOT;
}

/* 2. Definitions, taken after the rings: they cover every id in them;
 * then the threads' sections. */
static int append_definitions(mp_writer_t *w)
{
	int rc;

	pthread_mutex_lock(&w->defs_mu);
	rc = mp_mbuf_append(&w->raw, w->defs.data, w->defs.len);
	if (!rc && w->keep) /* every segment re-emits them (wkeep.c) */
		rc = mp__keep_log(w, w->defs.data, w->defs.len);
	w->defs.len = 0;
	w->tally.stacks = w->stack_count; /* every stack interned so far is defined by now */
	pthread_mutex_unlock(&w->defs_mu);
	if (rc)
		return rc;
	return mp_mbuf_append(&w->raw, w->sections.data, w->sections.len);
}

/* 5. The horizon and the figures that end the round, in a block of
 * their own after its chunks: the figures `memprof record` prints at the
 * end are then a small block's inflate away (capsummary.c reads the last
 * block), not the whole last round's (up to BLOCK_SPLIT of raw data). */
static int end_round(mp_writer_t *w, uint64_t horizon)
{
	uint64_t v[1] = {horizon};
	size_t from = w->raw.len, round_from;
	int rc;

	atomic_store_explicit(&w->last_horizon, horizon, memory_order_relaxed);
	if ((rc = put_section(&w->raw, v, 1, MP_SEC_HORIZON)))
		return rc;
	pthread_mutex_lock(&w->defs_mu); /* the memory ids' names */
	rc = mp__tally_put_summary(&w->tally, &w->raw, horizon);
	pthread_mutex_unlock(&w->defs_mu);
	/* (2.5) the round's timeline figures, before a checkpoint (a reader
	 * of the rounds inflates the block's first bytes only) */
	round_from = w->raw.len;
	if (!rc)
		rc = mp__tally_put_round(&w->tally, &w->raw, horizon);
	/* --keep: what ends the round (its HORIZON and SUMMARY; the ROUND of
	 * the rounds since its last) also goes, every few rounds, to the
	 * whole-run file, which is never rotated (wkeep.c) */
	if (!rc && w->keep)
		rc = mp__keep_whole(w, w->raw.data + from, round_from - from, horizon);
	/* (2.4) at intervals, the live blocks at this horizon (a rotation
	 * writes one at the next segment's start instead) */
	if (!rc && !mp__keep_rotating(w))
		rc = mp__tally_put_checkpoint(&w->tally, &w->raw, horizon, w->file_offset, mp__writer_ckpt_back(w));
	if (rc || (rc = emit_block(w)))
		return rc;
	w->complete_ns = horizon;
	if (mp__keep_rotating(w))
		return mp__keep_rotate(w, horizon);
	if (w->keep)
		mp__keep_round_done(w, horizon);
	return 0;
}

/* One round, in its steps: snapshot the rings, the definitions, the
 * chunks and their block, the tally, the block that ends the round. */
int mp__writer_round_locked(mp_writer_t *w, int final)
{
	mp_mbuf_t *snapbuf = &w->snaps, *tsrc = &w->tally_src;
	uint64_t horizon;
	mp_wthread_t *t;
	size_t i, nsnap;
	uint64_t pending = 0;
	int rc = 0;

	atomic_store_explicit(&w->round_ns, mp_clock_ns(), memory_order_relaxed);
	/* a prompt waiting is answered by this round (one made while it runs
	 * sets it again, for the next) */
	atomic_store_explicit(&w->prompt_pending, 0, memory_order_relaxed);
	if (atomic_load_explicit(&w->error, memory_order_relaxed))
		return atomic_load_explicit(&w->error, memory_order_relaxed);
	horizon = mp__capclock_round(&w->clock, untallied_ns(w));
	/* the serial clock's floor (wthread_path.h): a reading at or after the
	 * horizon's, stored before the rings are looked at */
	atomic_store_explicit(&w->time_floor, mp_capclock_raw(&w->clock), memory_order_relaxed);
	if (w->use_membarrier)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	else
		atomic_thread_fence(memory_order_seq_cst);

	/* The tally's per-id figures, mapped where memory ids are declared */
	pthread_mutex_lock(&w->defs_mu);
	(void)mp__tally_ready(&w->tally); /* (failing, it sets tally.failed) */
	pthread_mutex_unlock(&w->defs_mu);

	if ((rc = snapshot_rings(w, &horizon, &pending)))
		goto fail;
	nsnap = snapbuf->len / sizeof(snap_t);
	judge_behind(w, nsnap, pending);
	if ((rc = append_definitions(w)))
		goto fail;

	/* The horizon this round writes; the reader returns every event
	 * before it once it has read the round. */
	if (final)
		horizon = UINT64_MAX;
	if (horizon < atomic_load_explicit(&w->last_horizon, memory_order_relaxed))
		horizon = atomic_load_explicit(&w->last_horizon, memory_order_relaxed);

	/* --keep, a segment full: this round ends it, and the next segment
	 * starts at its horizon with a checkpoint. The records at or past the
	 * horizon must then go to the next segment, so the tally runs first
	 * and the chunks stop where it stopped (wkeep.c). A record an earlier
	 * round encoded and the tally has not reached yet (a lane's hold kept
	 * the horizon back) would fall between the two segments: the rotation
	 * waits, round after round, each encoding no further than it counts,
	 * until the tally has caught up (mp__keep_seam_ready). */
	if (w->keep && !final && mp__keep_due(w)) {
		(void)mp__tally_round(w, (const mp_tally_src_t *)(const void *)tsrc->data,
				      tsrc->len / sizeof(mp_tally_src_t), horizon);
		tsrc->len = 0;
		for (i = 0; i < nsnap; i++) {
			snap_t *s = (snap_t *)snapbuf->data + i;
			uint64_t stop = s->t->tallied > s->t->encoded ? s->t->tallied : s->t->encoded;
			if (s->head > stop)
				s->head = stop;
		}
		mp__keep_set_rotate(w, mp__keep_seam_ready(w));
	} else if (w->keep) {
		mp__keep_set_rotate(w, 0);
	}

	/* 3. Chunks. */
	for (i = 0; i < nsnap; i++) {
		snap_t *s = (snap_t *)snapbuf->data + i;
		if ((rc = append_chunk(w, s)))
			goto fail;
	}

	/* The chunks go to the file before the tally runs: the tally can take
	 * long where memory is short (its table of live blocks grows by
	 * mapping one twice the size, and in a process at its memory limit
	 * each page of it waits on reclaim), and a process at its limit is the
	 * one the OOM killer takes next. Its events are on disk by then (a
	 * capture cut after this block is one cut inside its last round, read
	 * up to there). A Python process growing by 1000-byte objects in a 300
	 * MiB cgroup (docs/hooks.md): its last round wrote its chunks, then
	 * mapped a table of 32 MiB and waited on reclaim until the kill; with
	 * the chunks after the tally, that round's events went with it. */
	if (w->raw.len && (rc = emit_block(w)))
		goto fail;

	/* 4. The tally of the events before the horizon (tally_round.c),
	 * after the chunks: ring space goes back up to both what is encoded
	 * and what is counted, so the tally hands it back batch by batch as
	 * it counts (a thread that waits for room waits for part of a round,
	 * not for all of it, and sooner). Its failure leaves the figures
	 * unavailable, not the capture. */
	(void)mp__tally_round(w, (const mp_tally_src_t *)(const void *)tsrc->data, tsrc->len / sizeof(mp_tally_src_t),
			      horizon);
	for (i = 0; i < tsrc->len / sizeof(mp_tally_src_t); i++)
		mp__writer_give_back(((mp_tally_src_t *)(void *)tsrc->data)[i].t);

	if ((rc = end_round(w, horizon)))
		goto fail;
	/* With help on, a thread that passed half full while this round ran
	 * found it running and left its wake-up sent: each looks again at its
	 * next event (help.c). */
	if (atomic_load_explicit(&w->help.on, memory_order_relaxed))
		for (t = atomic_load_explicit(&w->threads, memory_order_acquire); t; t = t->next)
			atomic_store_explicit(&t->wake_sent, 0, memory_order_relaxed);
	return 0;
fail:
	set_error(w, rc);
	w->raw.len = 0;
	return rc;
}
