/* keep.c - a kept run (memprof/keep.h): its segments listed, the window
 * chosen, and read as one capture through a FILE that joins the
 * segments' blocks (fopencookie): one header (the first segment's), every
 * complete block with its index renumbered (the frame's index and header
 * CRC rewritten, the payload read from the segment as it is), and a
 * trailer summing the segments' when the newest was closed. The reader
 * then needs nothing of its own for segments. */
#include <memprof/format.h>
#include <memprof/format/varint.h>
#include <memprof/keep.h>

#include "reader_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static int is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int mp_keep_is_run(const char *path)
{
	struct stat sb;
	char *dir, *real;
	int yes;

	if (stat(path, &sb))
		return 0;
	if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode) && (real = realpath(path, NULL))) {
		yes = mp_keep_is_run(real); /* P.d is beside the file, not the link */
		free(real);
		return yes;
	}
	if (S_ISDIR(sb.st_mode))
		return ends_with(path, ".memprof.d");
	if (!S_ISREG(sb.st_mode) || !(dir = malloc(strlen(path) + 3)))
		return 0;
	sprintf(dir, "%s.d", path);
	yes = is_dir(dir);
	free(dir);
	return yes;
}

/* "seg-000012.memprof" -> 12; -1 when not a segment's name. */
static int64_t seg_number(const char *name)
{
	char *end;
	unsigned long long v;

	if (strncmp(name, "seg-", 4) || name[4] < '0' || name[4] > '9')
		return -1;
	v = strtoull(name + 4, &end, 10);
	return strcmp(end, ".memprof") ? -1 : (int64_t)v;
}

/* Walk segment s's frames: its header, complete blocks, a trailer. */
static void scan_segment(mp_keep_segment_t *s)
{
	uint8_t h[MP_BLOCK_HEADER_LEN];
	uint64_t off;
	struct stat sb;
	int fd = open(s->path, O_RDONLY | O_CLOEXEC);

	s->blocks = s->data_end = s->header_len = 0;
	s->closed = 0;
	if (fd < 0)
		return;
	if (fstat(fd, &sb) || pread(fd, h, MP_FILE_PREFIX_LEN, 0) != MP_FILE_PREFIX_LEN ||
	    memcmp(h, MP_FILE_MAGIC, MP_FILE_MAGIC_LEN)) {
		close(fd);
		return;
	}
	s->bytes = (uint64_t)sb.st_size;
	off = MP_FILE_PREFIX_LEN + (uint64_t)mp_get_u32le(h + 12) + 4;
	if (off > s->bytes) {
		close(fd);
		return;
	}
	s->header_len = s->data_end = off;
	for (;;) {
		ssize_t n = pread(fd, h, sizeof(h), (off_t)off);
		if (n >= 12 && mp_get_u32le(h) == MP_TRAILER_MAGIC) {
			uint64_t len = 16 + (uint64_t)mp_get_u32le(h + 4);
			if (off + len == s->bytes) {
				s->closed = 1;
				s->trailer_off = off;
			}
			break;
		}
		if (n != (ssize_t)sizeof(h) || mp_get_u32le(h) != MP_BLOCK_MAGIC ||
		    off + sizeof(h) + mp_get_u32le(h + 8) > s->bytes)
			break;
		off += sizeof(h) + mp_get_u32le(h + 8);
		s->blocks++;
		s->data_end = off;
	}
	close(fd);
}

static int by_number(const void *a, const void *b)
{
	const mp_keep_segment_t *x = a, *y = b;

	return x->number < y->number ? -1 : x->number > y->number;
}

/* Read the directory's segments, sorted, into k (all of them). */
static int list_segments(mp_keep_run_t *k, mp_diag_t *diag)
{
	DIR *d = opendir(k->dir);
	struct dirent *de;
	size_t cap = 0;

	if (!d)
		return mp_diag_set(diag, -errno, -1, -1, "cannot open %s: %s", k->dir, strerror(errno));
	while ((de = readdir(d))) {
		int64_t num = seg_number(de->d_name);
		mp_keep_segment_t *s;
		if (num < 0)
			continue;
		if (MP_VEC_RESERVE(k->segments, cap, k->nsegments + 1) < 0 ||
		    !(k->segments[k->nsegments].path = malloc(strlen(k->dir) + strlen(de->d_name) + 2))) {
			closedir(d);
			return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
		}
		s = &k->segments[k->nsegments++];
		s->number = (uint64_t)num;
		sprintf(s->path, "%s/%s", k->dir, de->d_name);
	}
	closedir(d);
	if (k->nsegments)
		qsort(k->segments, k->nsegments, sizeof(*k->segments), by_number);
	return 0;
}

/* A segment the window can start at or go through: its header, and from
 * the second on, the first block (definitions and checkpoint). */
static int usable(const mp_keep_segment_t *s)
{
	return s->header_len && (s->number == 0 || s->blocks >= 1);
}

/* Keep the window's segments only: the newest usable one and the
 * consecutive closed ones before it. */
static void choose_window(mp_keep_run_t *k)
{
	size_t n = k->nsegments, last, first, i;

	k->present = n;
	for (i = 0; i < n; i++)
		scan_segment(&k->segments[i]);
	last = n;
	while (last > 0 && !usable(&k->segments[last - 1]))
		last--;
	first = last;
	while (first > 1 && usable(&k->segments[first - 2]) && k->segments[first - 2].closed &&
	       k->segments[first - 2].number + 1 == k->segments[first - 1].number)
		first--;
	if (last == 0)
		first = 0;
	else
		first--;
	for (i = 0; i < n; i++)
		if (i < first || i >= last)
			free(k->segments[i].path);
	if (first)
		memmove(k->segments, k->segments + first, (last - first) * sizeof(*k->segments));
	k->nsegments = last > first ? last - first : 0;
	k->skipped = n - k->nsegments;
}

int mp_keep_open(mp_keep_run_t **out, const char *path, mp_diag_t *diag)
{
	mp_keep_run_t *k;
	struct stat sb;
	size_t n;
	int rc;

	if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		char *real = realpath(path, NULL);
		if (real) {
			rc = mp_keep_open(out, real, diag);
			free(real);
			return rc;
		}
	}
	k = calloc(1, sizeof(*k));
	n = strlen(path);
	*out = NULL;
	mp_diag_clear(diag);
	mp_diag_set_file(diag, path);
	if (!k)
		return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (is_dir(path)) {
		k->dir = strndup(path, n);
		k->whole_path = k->dir && n > 2 ? strndup(path, n - 2) : NULL;
	} else {
		k->whole_path = strdup(path);
		k->dir = malloc(n + 3);
		if (k->dir)
			sprintf(k->dir, "%s.d", path);
	}
	if (!k->dir || !k->whole_path) {
		mp_keep_close(k);
		return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
	}
	if ((rc = list_segments(k, diag))) {
		mp_keep_close(k);
		return rc;
	}
	choose_window(k);
	if (!k->nsegments) {
		mp_keep_close(k);
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "a kept run with no readable segment");
	}
	{
		mp_diag_t d2;
		k->whole_ok = mp_capture_summary_read(k->whole_path, &k->whole, &d2) == 0 && k->whole.available;
	}
	*out = k;
	return 0;
}

void mp_keep_close(mp_keep_run_t *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->nsegments; i++)
		free(k->segments[i].path);
	free(k->segments);
	if (k->whole_ok)
		mp_capture_summary_free(&k->whole);
	free(k->dir);
	free(k->whole_path);
	free(k);
}

/* ------------------------------------------------------- the joined file */

typedef struct piece {
	uint64_t at, len; /* in the joined file */
	int fd;           /* -1: mem */
	uint64_t off;     /* in the segment */
	const uint8_t *mem;
} piece_t;

typedef struct joined {
	piece_t *p;
	size_t n, cap;
	uint64_t size, pos;
	uint8_t *heads;   /* the renumbered frame headers, 24 bytes each, and the trailer */
	int *fds;
	size_t nfds;
} joined_t;

static int add_piece(joined_t *j, int fd, uint64_t off, const uint8_t *mem, uint64_t len)
{
	if (!len)
		return 0;
	if (MP_VEC_RESERVE(j->p, j->cap, j->n + 1) < 0)
		return -ENOMEM;
	j->p[j->n++] = (piece_t){j->size, len, fd, off, mem};
	j->size += len;
	return 0;
}

static ssize_t j_read(void *c, char *buf, size_t size)
{
	joined_t *j = c;
	size_t got = 0, lo = 0, hi = j->n;

	if (j->pos >= j->size)
		return 0;
	while (lo + 1 < hi) { /* the piece holding pos */
		size_t mid = (lo + hi) / 2;
		if (j->p[mid].at <= j->pos)
			lo = mid;
		else
			hi = mid;
	}
	while (got < size && lo < j->n) {
		const piece_t *p = &j->p[lo];
		uint64_t in = j->pos - p->at, k = p->len - in;
		if (k > size - got)
			k = size - got;
		if (p->fd < 0) {
			memcpy(buf + got, p->mem + in, (size_t)k);
		} else {
			ssize_t r = pread(p->fd, buf + got, (size_t)k, (off_t)(p->off + in));
			if (r <= 0)
				return got ? (ssize_t)got : -1;
			k = (uint64_t)r;
		}
		got += (size_t)k;
		j->pos += k;
		if (j->pos >= p->at + p->len)
			lo++;
	}
	return (ssize_t)got;
}

static int j_seek(void *c, off64_t *off, int whence)
{
	joined_t *j = c;
	int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)j->pos : (int64_t)j->size;

	if (base + *off < 0)
		return -1;
	j->pos = (uint64_t)(base + *off);
	*off = (off64_t)j->pos;
	return 0;
}

static int j_close(void *c)
{
	joined_t *j = c;
	size_t i;

	for (i = 0; i < j->nfds; i++)
		close(j->fds[i]);
	free(j->fds);
	free(j->heads);
	free(j->p);
	free(j);
	return 0;
}

/* The trailer of the joined file: the newest segment's, with the events,
 * drops and blocks of all, into out (room MP_TRAILER_MAX); its length, or
 * 0 when a segment's trailer does not parse (then none: an abrupt end). */
static size_t join_trailer(const mp_keep_run_t *k, const int *fds, uint64_t blocks, uint8_t *out)
{
	uint64_t f[8] = {0}, events = 0, dropped = 0;
	uint8_t buf[MP_TRAILER_MAX], *p;
	size_t i, nf = 0;

	for (i = 0; i < k->nsegments; i++) {
		const mp_keep_segment_t *s = &k->segments[i];
		uint64_t len = s->bytes - s->trailer_off;
		const uint8_t *q = buf + 12, *end;
		if (len < 16 || len > sizeof(buf) || pread(fds[i], buf, (size_t)len, (off_t)s->trailer_off) != (ssize_t)len)
			return 0;
		end = buf + len - 4;
		for (nf = 0; nf < 8 && q < end; nf++)
			if (mp_varint_get(&q, end, &f[nf]))
				return 0;
		if (nf < 5)
			return 0;
		events += f[0];
		dropped += f[1];
	}
	f[0] = events;
	f[1] = dropped;
	f[2] = blocks;
	p = out + 12;
	for (i = 0; i < nf; i++)
		p = mp_varint_put(p, f[i]);
	mp_put_u32le(out, MP_TRAILER_MAGIC);
	mp_put_u32le(out + 4, (uint32_t)(p - (out + 12)));
	mp_put_u32le(out + 8, (uint32_t)crc32(0, out, 8));
	mp_put_u32le(p, (uint32_t)crc32(0, out + 12, (uInt)(p - (out + 12))));
	return (size_t)(p + 4 - out);
}

static int build(const mp_keep_run_t *k, joined_t *j)
{
	uint64_t total = 0, b = 0, i;
	size_t s;
	uint8_t *h;
	int rc;

	for (s = 0; s < k->nsegments; s++)
		total += k->segments[s].blocks;
	if (!(j->fds = calloc(k->nsegments, sizeof(int))) ||
	    !(j->heads = malloc(total * MP_BLOCK_HEADER_LEN + MP_TRAILER_MAX)))
		return -ENOMEM;
	for (s = 0; s < k->nsegments; s++) {
		const mp_keep_segment_t *g = &k->segments[s];
		uint64_t off = g->header_len;
		int fd = open(g->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno; /* deleted since the listing: open again */
		j->fds[j->nfds++] = fd;
		if (s == 0 && (rc = add_piece(j, fd, 0, NULL, g->header_len)))
			return rc;
		for (i = 0; i < g->blocks; i++, b++) {
			h = j->heads + b * MP_BLOCK_HEADER_LEN;
			if (pread(fd, h, MP_BLOCK_HEADER_LEN, (off_t)off) != MP_BLOCK_HEADER_LEN)
				return -EIO;
			mp_put_u32le(h + 4, (uint32_t)b);
			mp_put_u32le(h + 20, (uint32_t)crc32(0, h, 20));
			if ((rc = add_piece(j, -1, 0, h, MP_BLOCK_HEADER_LEN)) ||
			    (rc = add_piece(j, fd, off + MP_BLOCK_HEADER_LEN, NULL, mp_get_u32le(h + 8))))
				return rc;
			off += MP_BLOCK_HEADER_LEN + mp_get_u32le(h + 8);
		}
	}
	/* the newest closed: so are all (the window's rule), a trailer */
	if (k->segments[k->nsegments - 1].closed) {
		h = j->heads + total * MP_BLOCK_HEADER_LEN;
		if ((rc = add_piece(j, -1, 0, h, join_trailer(k, j->fds, total, h))))
			return rc;
	}
	return 0;
}

int mp_keep_window_open(const mp_keep_run_t *k, mp_capture_t **out, mp_diag_t *diag)
{
	cookie_io_functions_t io = {j_read, NULL, j_seek, j_close};
	joined_t *j = calloc(1, sizeof(*j));
	FILE *f;
	int rc;

	*out = NULL;
	mp_diag_clear(diag);
	mp_diag_set_file(diag, k->dir);
	if (!j)
		return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
	if ((rc = build(k, j))) {
		j_close(j);
		return mp_diag_set(diag, rc, -1, -1, "cannot read the kept segments: %s", strerror(-rc));
	}
	if (!(f = fopencookie(j, "rb", io))) {
		j_close(j);
		return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
	}
	return mp__capture_open_stream(out, f, k->dir, diag);
}

typedef struct first_ck {
	mp_checkpoint_t *out;
	int got;
} first_ck_t;

static int take_first(void *ctx, const mp_checkpoint_t *ck)
{
	first_ck_t *c = ctx;

	if (c->got)
		return 0;
	c->got = 1;
	return mp_checkpoint_copy(c->out, ck);
}

int mp_keep_window_checkpoint(const mp_keep_run_t *k, mp_checkpoint_t *out, mp_diag_t *diag)
{
	first_ck_t c = {out, 0};
	mp_capture_t *cap;
	mp_event_t ev;
	int rc;

	if (k->segments[0].number == 0)
		return 1;
	if ((rc = mp_capture_open(&cap, k->segments[0].path, diag)))
		return rc;
	mp_capture_on_checkpoint(cap, take_first, &c);
	/* the first block holds it: its events come after it */
	rc = mp_source_next(mp_capture_source(cap), &ev, diag);
	mp_capture_close(cap);
	if (rc < 0)
		return rc;
	return c.got ? 0 : 1;
}
