/* wkeep.c - the flight recorder (`memprof record --keep`, docs/format.md
 * "Segments and the ring"): a capture kept as a ring of segments in
 * bounded disk, plus a whole-run file of every round's figures.
 *
 * With MEMPROF_KEEP_BYTES or MEMPROF_KEEP_NS the capture's path P becomes
 * the whole-run file (a capture of its own: the header, then one block
 * every `stride` rounds holding what ends the round -- HORIZON, SUMMARY,
 * and the ROUND of the span of rounds since the block before (tally
 * span) -- and a trailer at close; never rotated; the stride doubles with
 * each level of bytes written, so P grows with the logarithm of the run's
 * length, not with it), and the events go to the segments
 * P.d/seg-NNNNNN.memprof. Each segment is a capture on its own: the same
 * header, then (from the second on) a first block that re-emits every
 * definition written so far (strings, memory ids, threads, stacks, frames,
 * modules: the defs log below) with the round's HORIZON, SUMMARY and a
 * forced CHECKPOINT of the live set at the segment's start, then the
 * rounds' blocks, then a trailer when it is closed.
 *
 * Why definitions are re-emitted rather than kept in a file that only
 * grows: a segment then reads alone with every existing reader (report,
 * dump, the checkpoint reader), and deleting segments never leaves a
 * segment that needs a file the reader may not have; the cost is the
 * definitions' bytes once per segment (kilobytes for most programs, well
 * under the segment's size).
 *
 * Order of file operations, so that a kill at any point leaves a window
 * the reader reads (keep.c there): the old segment's last round and its
 * trailer; then the new segment, created, its header and its first block
 * (through its checkpoint) written; only then the oldest segments
 * unlinked, oldest first. A kill before the new segment's first block is
 * complete leaves a segment the reader skips; one between the unlinks
 * leaves a run one segment over its bound, read whole. No fsync: a process
 * kill loses nothing the kernel has.
 *
 * The bound holds at every moment, not only at a round's end: before every
 * write to the run (a segment's or the whole-run file's) the oldest
 * segments go while the run's bytes after the write would pass SIZE plus
 * one segment (mp__keep_room). A round larger than usual (a loaded machine, a
 * program that allocates millions of blocks between flushes) is then paid
 * for by the oldest events, not by the bound. Never unlinked there: the
 * newest listed segment -- the one being written once its first block is
 * complete, or, while the next one's first block is being written, the one
 * just closed: each of those is the window a kill at that moment leaves.
 * So the run's bytes are at most max(SIZE + one segment, the whole-run
 * file + that segment + the unlisted new one's bytes); the second passes
 * the first only when the newest segment alone nears SIZE (it holds the
 * round that filled it and the round that found it full), or the
 * whole-run file does (its stride keeps it small: docs/format.md
 * "Segments and the ring").
 *
 * Everything here runs on the flusher (a round), or at open and close;
 * never on the event path, and without malloc (mapped buffers).
 */
#include <memprof/format.h>
#include <memprof/format/crc32.h>
#include <memprof/format/deflate_huff.h>
#include <memprof/format/varint.h>

#include "writer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEEP_SEGS_MAX 1024
/* The whole-run file's bytes at each resolution, at least: its stride
 * doubles after each such level (a bound's 64th part above that). */
#define KEEP_WHOLE_LEVEL_MIN (256u << 10)
#define KEEP_DIR_SUFFIX ".d"

typedef struct keep_seg {
	uint64_t number, bytes, start_ns;
} keep_seg_t;

/* A file's fields of mp_writer (wfile.c writes through them), for the
 * whole-run file: swapped in to write it. */
typedef struct keep_file {
	int fd, no_reserve, stream;
	uint64_t offset, dev, ino;
	char path[PATH_MAX];
} keep_file_t;

struct mp_keep {
	uint64_t bound_bytes, bound_ns; /* 0: that bound is not set */
	uint64_t seg_bytes, seg_ns;     /* a segment rotates past either */
	keep_file_t whole;
	uint32_t whole_blocks;
	uint64_t events_total;          /* events of the closed segments */
	mp_mbuf_t defs;                 /* every definition section written so far */
	mp_mbuf_t raw, out;             /* a whole-run block */
	uint8_t hdr[MP_FILE_PREFIX_LEN + 12288 + 4];
	size_t hdr_len;
	char dir[PATH_MAX - 64]; /* room for a segment's name after it */
	keep_seg_t segs[KEEP_SEGS_MAX]; /* the live segments, oldest at first */
	uint32_t first, count;
	uint64_t next_number;
	uint64_t seg_base;              /* the segment's bytes through its first block */
	int rotate;                     /* this round ends the segment */
	int unlisted;                   /* w's file is a segment not yet in segs: its first
					   block is not complete */
	int whole_now;                  /* w's file is the whole-run file (swapped in) */
	/* the whole-run file's resolution: a block every `stride` rounds,
	 * the stride doubled each time `level_bytes` more were written */
	uint64_t stride, since, level_bytes, level_written;
	mp_diag_t diag;
};

uint64_t mp__keep_segment_bytes(uint64_t bound_bytes)
{
	uint64_t seg = bound_bytes / 8;

	return seg < MP_KEEP_SEGMENT_MIN ? MP_KEEP_SEGMENT_MIN : seg;
}

static keep_seg_t *seg_at(struct mp_keep *k, uint32_t i)
{
	return &k->segs[(k->first + i) % KEEP_SEGS_MAX];
}

static void seg_path(const struct mp_keep *k, uint64_t number, char *buf, size_t size)
{
	if (snprintf(buf, size, "%s/seg-%06llu.memprof", k->dir, (unsigned long long)number) >= (int)size)
		buf[0] = '\0';
}

static void swap_file(mp_writer_t *w, keep_file_t *f)
{
	int i;
	uint64_t u;
	size_t n, j;

	i = w->fd, w->fd = f->fd, f->fd = i;
	i = w->no_reserve, w->no_reserve = f->no_reserve, f->no_reserve = i;
	i = w->file_stream, w->file_stream = f->stream, f->stream = i;
	u = w->file_offset, w->file_offset = f->offset, f->offset = u;
	u = w->file_dev, w->file_dev = f->dev, f->dev = u;
	u = w->file_ino, w->file_ino = f->ino, f->ino = u;
	n = strlen(w->path);
	if (strlen(f->path) > n)
		n = strlen(f->path);
	for (j = 0; j <= n; j++) {
		char c = w->path[j];
		w->path[j] = f->path[j];
		f->path[j] = c;
	}
}

/* Remove what an earlier run left in the directory (overwrite). */
static void clear_dir(const char *dir)
{
	char buf[4096], path[PATH_MAX];
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (fd < 0)
		return;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		long off = 0;
		while (off < n) {
			const char *name = buf + off + 19; /* struct linux_dirent64's d_name */
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			if (strncmp(name, "seg-", 4) == 0 &&
			    snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path))
				unlink(path);
			off += reclen;
		}
	}
	close(fd);
}

/* Open segment number (w's file fields become it), its header written. */
static int open_segment(mp_writer_t *w, uint64_t number)
{
	struct mp_keep *k = w->keep;
	char path[PATH_MAX];
	struct iovec iov = {k->hdr, k->hdr_len};
	int rc;

	seg_path(k, number, path, sizeof(path));
	if ((rc = mp__wfile_open(w, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, &k->diag)))
		return rc;
	k->unlisted = 1; /* (listed once its first block is complete) */
	w->file_offset = 0;
	w->no_reserve = 0;
	w->block_index = 0;
	w->events_flushed = w->events_written = 0;
	return mp__wfile_write(w, &iov, 1);
}

int mp__keep_open(mp_writer_t *w, const char *path, int overwrite, mp_diag_t *diag)
{
	uint64_t bytes = mp__env_u64("MEMPROF_KEEP_BYTES", 0), ns = mp__env_u64("MEMPROF_KEEP_NS", 0);
	uint64_t seg = mp__env_u64("MEMPROF_KEEP_SEGMENT_BYTES", 0);
	struct mp_keep *k;
	ssize_t got;
	int rc;

	if (!bytes && !ns)
		return 0;
	if (w->file_offset > sizeof(k->hdr))
		return mp_diag_set(diag, MP_ELIMIT, -1, -1, "the capture header is too long for --keep");
	if (!(k = mp_map_pages(sizeof(*k))))
		return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
	k->bound_bytes = bytes;
	k->bound_ns = ns;
	/* (MEMPROF_KEEP_SEGMENT_BYTES: tests; `record` checks the bound) */
	k->seg_bytes = seg ? seg : bytes ? mp__keep_segment_bytes(bytes) : MP_KEEP_SEGMENT_MAX;
	k->seg_ns = ns / 8;
	/* (MEMPROF_KEEP_WHOLE_LEVEL_BYTES: tests) */
	k->stride = 1;
	k->level_bytes = mp__env_u64("MEMPROF_KEEP_WHOLE_LEVEL_BYTES", 0);
	if (!k->level_bytes)
		k->level_bytes = bytes / 64 > KEEP_WHOLE_LEVEL_MIN ? bytes / 64 : KEEP_WHOLE_LEVEL_MIN;
	w->tally.span_on = 1;
	/* the header, as written: every segment starts with the same */
	{
		int fd = open(w->path[0] ? w->path : path, O_RDONLY | O_CLOEXEC); /* (w->fd writes only) */
		got = fd < 0 ? -1 : pread(fd, k->hdr, (size_t)w->file_offset, 0);
		if (fd >= 0)
			close(fd);
	}
	k->hdr_len = got > 0 ? (size_t)got : 0;
	if (k->hdr_len != w->file_offset) {
		mp_unmap_pages(k, sizeof(*k));
		return mp_diag_set(diag, -EIO, -1, -1, "cannot read the capture header back");
	}
	if (snprintf(k->dir, sizeof(k->dir), "%s" KEEP_DIR_SUFFIX, w->path[0] ? w->path : path) >= (int)sizeof(k->dir)) {
		mp_unmap_pages(k, sizeof(*k));
		return mp_diag_set(diag, MP_ELIMIT, -1, -1, "the capture path is too long for --keep");
	}
	if (mkdir(k->dir, 0755) && (errno != EEXIST || !overwrite)) {
		rc = -errno;
		mp_unmap_pages(k, sizeof(*k));
		return mp_diag_set(diag, rc, -1, -1, "cannot create the segments' directory %s: %s", k->dir,
				   strerror(-rc));
	}
	if (overwrite)
		clear_dir(k->dir);
	w->keep = k;
	swap_file(w, &k->whole); /* the whole-run file is kept aside */
	w->fd = -1;
	if ((rc = open_segment(w, 0))) {
		mp_diag_set(diag, rc, -1, -1, "%s", k->diag.text[0] ? k->diag.text : "cannot write a segment");
		return rc;
	}
	k->segs[0] = (keep_seg_t){0, w->file_offset, 0};
	k->count = 1;
	k->unlisted = 0; /* (the process's start: nothing before it to read) */
	k->next_number = 1;
	return 0;
}

int mp__keep_log(mp_writer_t *w, const void *data, size_t len)
{
	return len ? mp_mbuf_append(&w->keep->defs, data, len) : 0;
}

int mp__keep_due(mp_writer_t *w)
{
	struct mp_keep *k = w->keep;
	uint64_t h = atomic_load_explicit(&w->last_horizon, memory_order_relaxed);

	/* (counted past the segment's first block: definitions larger than a
	 * segment must not rotate every round) */
	return w->file_offset - k->seg_base >= k->seg_bytes ||
	       (k->seg_ns && h != UINT64_MAX && h - seg_at(k, k->count - 1)->start_ns >= k->seg_ns);
}

/* Whether a rotation may cut here: every record encoded so far is also
 * counted (after the round's tally). The next segment starts with a
 * checkpoint of what the tally counted, and its chunks with the records
 * not encoded yet; a record already in the old segment but not counted
 * would be in neither -- lost to a window that starts at the new segment.
 * Records at or past a round's horizon are encoded that round and counted
 * in a later one: the next round's, as a rule, but a lane whose hold lags
 * (the CUDA lane: CUPTI hands its records over late) keeps every thread's
 * horizon back for as long. The rotation then waits: rounds that want it
 * tally first and encode no further than they count (flush.c), until the
 * tally has caught up. Flusher only (encoded and tallied are its). */
int mp__keep_seam_ready(mp_writer_t *w)
{
	for (mp_wthread_t *t = atomic_load_explicit(&w->threads, memory_order_acquire); t; t = t->next)
		if (atomic_load_explicit(&t->exited, memory_order_acquire) != 2 && t->encoded > t->tallied)
			return 0;
	return 1;
}

/* The block frame (docs/format.md "Blocks") around raw, into k->out. */
static int frame_block(struct mp_keep *k, const uint8_t *raw, size_t len, uint32_t index)
{
	mp_dh_writer_t dh;
	uint8_t *h;
	size_t clen;
	int rc;

	k->out.len = 0;
	if ((rc = mp_mbuf_reserve(&k->out, MP_BLOCK_HEADER_LEN + mp_dh_bound(len))))
		return rc;
	h = k->out.data;
	mp__dh_begin(&dh, h + MP_BLOCK_HEADER_LEN);
	mp__dh_segment(&dh, raw, len, 1, 0);
	clen = (size_t)(mp__dh_end(&dh) - (h + MP_BLOCK_HEADER_LEN));
	mp_put_u32le(h, MP_BLOCK_MAGIC);
	mp_put_u32le(h + 4, index);
	mp_put_u32le(h + 8, (uint32_t)clen);
	mp_put_u32le(h + 12, (uint32_t)len);
	mp_put_u32le(h + 16, mp__crc32(0, h + MP_BLOCK_HEADER_LEN, clen));
	mp_put_u32le(h + 20, (uint32_t)crc32(0, h, 20));
	k->out.len = MP_BLOCK_HEADER_LEN + clen;
	return 0;
}

int mp__keep_whole(mp_writer_t *w, const uint8_t *sections, size_t len, uint64_t horizon)
{
	struct mp_keep *k = w->keep;
	struct iovec iov;
	int rc;

	/* every stride rounds, and the last */
	if (!len || (++k->since < k->stride && horizon != UINT64_MAX))
		return 0;
	k->since = 0;
	k->raw.len = 0;
	if ((rc = mp_mbuf_append(&k->raw, sections, len)) ||
	    (rc = mp__tally_put_span(&w->tally, &k->raw, horizon)))
		return rc;
	len = k->raw.len;
	/* (slack: the coder may read whole words past the end) */
	if ((rc = mp_mbuf_reserve(&k->raw, 16)))
		return rc;
	memset(k->raw.data + len, 0, 16);
	if ((rc = frame_block(k, k->raw.data, len, k->whole_blocks)))
		return rc;
	if ((k->level_written += k->out.len) >= k->level_bytes) {
		k->level_written = 0;
		k->stride *= 2;
	}
	iov.iov_base = k->out.data;
	iov.iov_len = k->out.len;
	swap_file(w, &k->whole);
	k->whole_now = 1;
	rc = mp__wfile_write(w, &iov, 1);
	k->whole_now = 0;
	swap_file(w, &k->whole);
	if (!rc)
		k->whole_blocks++;
	return rc;
}

/* Unlink the oldest segments while the run's bytes -- the segments and
 * the whole-run file -- pass limit, or while a segment's events all
 * precede the duration kept (its successor starts before horizon -
 * bound_ns). At a rotation the limit is the bound (the closed segments and
 * the new one's first block); after every other round it is the bound plus
 * a segment, which a round larger than usual (a loaded machine's) would
 * pass otherwise. The newest segment is never unlinked. */
static void drop_oldest(struct mp_keep *k)
{
	char path[PATH_MAX];

	seg_path(k, seg_at(k, 0)->number, path, sizeof(path));
	unlink(path);
	k->first = (k->first + 1) % KEEP_SEGS_MAX;
	k->count--;
}

static void trim(mp_writer_t *w, uint64_t horizon, uint64_t limit)
{
	struct mp_keep *k = w->keep;

	seg_at(k, k->count - 1)->bytes = w->file_offset;
	while (k->count > 1) {
		uint64_t total = k->whole.offset;
		uint32_t i;
		int drop;

		for (i = 0; i < k->count; i++)
			total += seg_at(k, i)->bytes;
		drop = (k->bound_bytes && total > limit) ||
		       (k->bound_ns && horizon != UINT64_MAX && seg_at(k, 1)->start_ns + k->bound_ns < horizon);
		if (!drop)
			break;
		drop_oldest(k);
	}
}

void (*mp__keep_test_hook)(void *arg, int rotating);
void *mp__keep_test_arg;

/* Before len bytes go to w's file: the oldest segments unlinked while the
 * run would pass the bound plus a segment after them (see the top). */
void mp__keep_room(mp_writer_t *w, size_t len)
{
	struct mp_keep *k = w->keep;
	uint64_t seg_off = k->whole_now ? k->whole.offset : w->file_offset;
	uint64_t whole_off = k->whole_now ? w->file_offset : k->whole.offset;
	uint64_t limit = k->bound_bytes + k->seg_bytes;

	if (!k->bound_bytes)
		return;
	/* (w's segment is the newest listed one, or the unlisted one after it) */
	if (!k->unlisted)
		seg_at(k, k->count - 1)->bytes = seg_off;
	while (k->count > 1) {
		uint64_t total = whole_off + len + (k->unlisted ? seg_off : 0);
		uint32_t i;

		for (i = 0; i < k->count; i++)
			total += seg_at(k, i)->bytes;
		if (total <= limit)
			break;
		drop_oldest(k);
	}
}

void mp__keep_wrote(mp_writer_t *w)
{
	if (mp__keep_test_hook)
		mp__keep_test_hook(mp__keep_test_arg, w->keep->unlisted && w->keep->count > 0);
}

void mp__keep_round_done(mp_writer_t *w, uint64_t horizon)
{
	trim(w, horizon, w->keep->bound_bytes + w->keep->seg_bytes);
}

int mp__keep_rotate(mp_writer_t *w, uint64_t horizon)
{
	struct mp_keep *k = w->keep;
	keep_seg_t *cur = seg_at(k, k->count - 1);
	uint64_t number = k->next_number;
	int rc;

	k->rotate = 0;
	/* 1. the old segment ends: its trailer, closed */
	if ((rc = mp__writer_put_trailer(w)))
		return rc;
	cur->bytes = w->file_offset;
	k->events_total += w->events_flushed;
	if ((rc = mp__wfile_close(w)))
		return rc;
	/* 2. the new one, through its first block: the definitions, then the
	 * round's end again with a checkpoint of the live set at its horizon */
	if ((rc = open_segment(w, number)))
		return rc;
	w->raw.len = 0;
	if ((rc = mp_mbuf_append(&w->raw, k->defs.data, k->defs.len)) ||
	    (rc = mp__writer_put_section(&w->raw, &horizon, 1, MP_SEC_HORIZON)))
		return rc;
	pthread_mutex_lock(&w->defs_mu);
	rc = mp__tally_put_summary(&w->tally, &w->raw, horizon);
	pthread_mutex_unlock(&w->defs_mu);
	if (!rc) {
		/* forced: the checkpoint's own intervals are passed over */
		mp_tally_t *t = &w->tally;
		uint32_t every = t->ckpt_rounds_every;
		uint64_t per = t->ckpt_per_block;
		t->ckpt_rounds_every = 1;
		t->ckpt_per_block = 0;
		rc = mp__tally_put_checkpoint(t, &w->raw, horizon, w->file_offset, mp__writer_ckpt_back(w));
		t->ckpt_rounds_every = every;
		t->ckpt_per_block = per;
	}
	if (rc || (rc = mp__writer_emit_block(w)))
		return rc;
	k->next_number++;
	k->seg_base = w->file_offset;
	if (k->count == KEEP_SEGS_MAX) /* (no room to list it: the oldest goes) */
		drop_oldest(k);
	*seg_at(k, k->count) = (keep_seg_t){number, w->file_offset, horizon};
	k->count++;
	k->unlisted = 0;
	/* 3. only now the oldest go */
	trim(w, horizon, k->bound_bytes);
	return 0;
}

void mp__keep_set_rotate(mp_writer_t *w, int rotate)
{
	w->keep->rotate = rotate;
}

int mp__keep_rotating(const mp_writer_t *w)
{
	return w->keep && w->keep->rotate;
}

int mp__keep_close(mp_writer_t *w, int rc)
{
	struct mp_keep *k = w->keep;
	int crc;

	if (!k)
		return rc;
	k->events_total += w->events_flushed;
	/* the whole-run file's trailer: every event of the run, its blocks */
	swap_file(w, &k->whole);
	k->whole_now = 1;
	if (!rc) {
		w->events_flushed = k->events_total;
		w->block_index = k->whole_blocks;
		rc = mp__writer_put_trailer(w);
	}
	crc = mp__wfile_close(w);
	swap_file(w, &k->whole);
	mp_mbuf_release(&k->defs);
	mp_mbuf_release(&k->raw);
	mp_mbuf_release(&k->out);
	w->keep = NULL;
	mp_unmap_pages(k, sizeof(*k));
	return rc ? rc : crc;
}
