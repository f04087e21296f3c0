/* capsummary.c - mp_capture_summary_read: the writer's own figures
 * (memprof/capsummary.h), found without decoding the events.
 *
 * The writer ends every flush round's last block with a SUMMARY section
 * (format 2.1), so the figures of the whole capture are in its last block,
 * and those of a capture killed mid-run in the last block of its last
 * complete round.
 *
 * A capture that was closed is read from its end: the trailer, and the
 * block just before it (the final round puts its figures in a small block
 * of their own, after its chunks: flush.c), both found in one read of the
 * file's last TAIL_WINDOW bytes. So the figures cost the same for a
 * capture of an hour as for one of a second, also when its pages are no
 * longer cached (a walk of every frame of a 1.4 GB capture took 257 ms
 * from the disk; the capture's block count is the trailer's).
 *
 * Any other capture is walked: the header's prefix, then from block to
 * block by their 24-byte frames (a read each; the payloads are skipped),
 * then the trailer or the abrupt end; then, from the last complete block
 * backwards, each block inflated and its sections stepped over until one
 * holds a SUMMARY (a round splits into blocks of about 1 MiB of raw data,
 * flush.c's BLOCK_SPLIT, so a capture killed inside a round has its
 * summary a few blocks back). So is a closed capture whose end does not
 * check, or whose last block holds no summary: the walk names what is
 * wrong, and where.
 */
#include <memprof/capsummary.h>
#include <memprof/format.h>
#include <memprof/format/columns.h>
#include <memprof/format/crc32.h>
#include <memprof/format/inflate.h>
#include <memprof/format/varint.h>
#include <memprof/vec.h>

#include "blockio.h"
#include "summary_section.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Blocks looked at backwards for a summary before giving up: a round's
 * blocks, with room (a capture killed inside a round that split). A
 * thread's half-full 16 MiB ring makes about 2 blocks, so 128 covers some
 * 60 such threads: the 128 MiB of raw data that 16 blocks of 8 MiB did.
 * Past that, `memprof record` reads the capture back instead. */
#define LOOK_BACK 128

/* The bytes at the end of a capture that are searched for its trailer and
 * its last block: the final round's figures take a few hundred bytes (a
 * few more with many memory ids); a last block that does not fit is found
 * by the walk. */
#define TAIL_WINDOW (64u << 10)

typedef struct {
	int fd;              /* -1: mem */
	const uint8_t *mem;
	uint64_t size;
} src_t;

typedef struct {
	uint64_t off;
	uint32_t plen, rlen, crc;
} blk_t;

/* n bytes at off into buf: how many there were (fewer at the end), or -errno. */
static int64_t rd(const src_t *s, uint64_t off, void *buf, size_t n)
{
	size_t got = 0;

	if (off >= s->size)
		return 0;
	if (n > s->size - off)
		n = (size_t)(s->size - off);
	if (s->fd < 0) {
		memcpy(buf, s->mem + off, n);
		return (int64_t)n;
	}
	while (got < n) {
		ssize_t r = pread(s->fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (int64_t)got;
}

/* Step over one section of a 2.x block (1.x blocks hold no summary; their
 * files are not walked), keeping a SUMMARY's figures in out. 0, -1 (does
 * not parse) or -ENOMEM. */
static int skip_section(const uint8_t **pp, const uint8_t *end, mp_capture_summary_t *out, int *found)
{
	uint64_t v[2 + 71 + 1 + MP_PARTS], len, n, i;
	uint8_t tag = *(*pp)++;
	int nv = 0, rc;

	switch (tag) {
	case MP_SEC_STRING:
		if (mp_varint_get(pp, end, &v[0]) || mp_varint_get(pp, end, &len) || len > (uint64_t)(end - *pp))
			return -1;
		*pp += len;
		return 0;
	case MP_SEC_MEMORY:
		nv = 4;
		break;
	case MP_SEC_THREAD:
		nv = 2;
		break;
	case MP_SEC_DROPPED:
		nv = 3;
		break;
	case MP_SEC_HORIZON:
		nv = 1;
		break;
	case MP_SEC_FRAME: /* (2.2) id, function, file, line, kind */
		nv = 5;
		break;
	case MP_SEC_STACK:
		if (mp_varint_get(pp, end, &v[0]) || mp_varint_get(pp, end, &n) || n > MP_STACK_MAX_FRAMES)
			return -1;
		nv = (int)n;
		break;
	case MP_SEC_MODULE:
		/* path, bias, build id, segments of 3 varints */
		if (mp_varint_get(pp, end, &len) || len > (uint64_t)(end - *pp))
			return -1;
		*pp += len;
		if (mp_varint_get(pp, end, &v[0]) || mp_varint_get(pp, end, &len) || len > (uint64_t)(end - *pp))
			return -1;
		*pp += len;
		if (mp_varint_get(pp, end, &n) || n > MP_MODULE_MAX_SEGMENTS)
			return -1;
		nv = 3 * (int)n;
		break;
	case MP_SEC_CHUNK2:
		/* thread, the 71 varints of state, the length, the part lengths */
		for (i = 0; i < 2 + 71 + MP_PARTS; i++)
			if (mp_varint_get(pp, end, &v[i]))
				return -1;
		len = v[72];
		if (len > (uint64_t)(end - *pp))
			return -1;
		*pp += len;
		return 0;
	case MP_SEC_SUMMARY:
		if ((rc = mp__summary_section_parse(pp, end, out)))
			return rc;
		*found = 1;
		return 0;
	case MP_SEC_CHECKPOINT: /* (2.4) body length, body */
	case MP_SEC_ROUND:      /* (2.5) body length, body */
		if (mp_varint_get(pp, end, &len) || len > (uint64_t)(end - *pp))
			return -1;
		*pp += len;
		return 0;
	default:
		return -1;
	}
	for (i = 0; i < (uint64_t)nv; i++)
		if (mp_varint_get(pp, end, &len))
			return -1;
	return 0;
}

/* Block b: its payload read, checked, inflated, and its sections stepped
 * over; *found when it held a summary (the last one kept in out). */
static int look_in_block(const src_t *s, const blk_t *b, uint64_t index, mp_capture_summary_t *out, int *found,
			 mp_diag_t *diag)
{
	uint8_t *pay = malloc(b->plen ? b->plen : 1), *raw = malloc(b->rlen ? b->rlen : 1);
	const uint8_t *p, *end;
	const char *why = "inflating failed";
	int rc = 0;

	if (!pay || !raw) {
		rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		goto out;
	}
	if (rd(s, b->off + MP_BLOCK_HEADER_LEN, pay, b->plen) != (int64_t)b->plen) {
		rc = mp_diag_set(diag, MP_ETRUNCATED, (int64_t)b->off, (int64_t)index,
				 "block %llu at offset %llu: cannot read its payload", (unsigned long long)index,
				 (unsigned long long)b->off);
		goto out;
	}
	if (CRC_BAD(mp__crc32(0, pay, b->plen), b->crc)) {
		rc = mp_diag_set(diag, MP_ECHECKSUM, (int64_t)b->off, (int64_t)index,
				 "block %llu at offset %llu: payload checksum mismatch", (unsigned long long)index,
				 (unsigned long long)b->off);
		goto out;
	}
	if ((rc = mp__inflate(pay, b->plen, raw, b->rlen, &why))) {
		rc = mp_diag_set(diag, rc, (int64_t)b->off, (int64_t)index, "block %llu at offset %llu: %s",
				 (unsigned long long)index, (unsigned long long)b->off, why);
		goto out;
	}
	for (p = raw, end = raw + b->rlen; p < end;) {
		if ((rc = skip_section(&p, end, out, found))) {
			rc = rc == -1 ? mp_diag_set(diag, MP_ECORRUPT, (int64_t)b->off, (int64_t)index,
						    "block %llu at offset %llu: a section does not parse",
						    (unsigned long long)index, (unsigned long long)b->off)
				      : mp_diag_set(diag, rc, -1, -1, "out of memory");
			goto out;
		}
	}
out:
	free(pay);
	free(raw);
	return rc;
}

/* The trailer at off: out->ended_cleanly and its end time, or an abrupt
 * end when it is cut off. nblocks: the blocks the walk counted before it,
 * which the trailer's count must equal (UINT64_MAX: none counted);
 * *nblocks_out: the trailer's count (NULL: not wanted). */
static int read_trailer(const src_t *s, uint64_t off, uint64_t nblocks, mp_capture_summary_t *out,
			uint64_t *events, uint64_t *nblocks_out, mp_diag_t *diag)
{
	uint8_t buf[MP_TRAILER_MAX];
	const uint8_t *p, *end;
	uint64_t dropped, blocks, strings;
	uint32_t blen;

	if (rd(s, off, buf, 12) < 12)
		return 0; /* cut off while writing it */
	if (CRC_BAD((uint32_t)mp__crc32(0, buf, 8), mp_get_u32le(buf + 8)))
		return mp_diag_set(diag, MP_ECHECKSUM, (int64_t)off, -1, "trailer at offset %llu: header checksum mismatch",
				   (unsigned long long)off);
	blen = mp_get_u32le(buf + 4);
	if (blen > MP_TRAILER_MAX - 16)
		return mp_diag_set(diag, MP_ECORRUPT, (int64_t)off, -1, "trailer at offset %llu: length %u is out of range",
				   (unsigned long long)off, blen);
	if (rd(s, off + 12, buf + 12, (size_t)blen + 4) < (int64_t)blen + 4)
		return 0;
	if (CRC_BAD((uint32_t)mp__crc32(0, buf + 12, blen), mp_get_u32le(buf + 12 + blen)))
		return mp_diag_set(diag, MP_ECHECKSUM, (int64_t)off, -1, "trailer at offset %llu: checksum mismatch",
				   (unsigned long long)off);
	p = buf + 12;
	end = p + blen;
	if (mp_varint_get(&p, end, events) || mp_varint_get(&p, end, &dropped) || mp_varint_get(&p, end, &blocks) ||
	    mp_varint_get(&p, end, &strings) || mp_varint_get(&p, end, &out->end_time_ns))
		return mp_diag_set(diag, MP_ECORRUPT, (int64_t)off, -1, "trailer at offset %llu: fields do not parse",
				   (unsigned long long)off);
	if (p < end) { /* (2.3) why the writer stopped */
		uint64_t e = 0;
		if (mp_varint_get(&p, end, &e) || mp_varint_get(&p, end, &out->write_offset) ||
		    mp_varint_get(&p, end, &out->complete_ns) || e == 0 || e > INT32_MAX)
			return mp_diag_set(diag, MP_ECORRUPT, (int64_t)off, -1, "trailer at offset %llu: fields do not parse",
					   (unsigned long long)off);
		out->write_errno = (int)e;
	}
	if (nblocks_out)
		*nblocks_out = blocks;
	if (nblocks != UINT64_MAX && blocks != nblocks)
		return mp_diag_set(diag, MP_ECORRUPT, (int64_t)off, -1,
				   "trailer at offset %llu: it counts %llu blocks, the file has %llu",
				   (unsigned long long)off, (unsigned long long)blocks, (unsigned long long)nblocks);
	if (off + 16 + blen != s->size)
		return mp_diag_set(diag, MP_ECORRUPT, (int64_t)(off + 16 + blen), -1,
				   "unexpected data after the trailer at offset %llu", (unsigned long long)(off + 16 + blen));
	out->ended_cleanly = !out->write_errno;
	return 0;
}

/* The header's prefix checked, the version into out, *data the offset of
 * the first block. 0 or a negative error code. */
static int read_prefix(const src_t *s, mp_capture_summary_t *out, uint64_t *data, mp_diag_t *diag)
{
	uint8_t fr[MP_FILE_PREFIX_LEN];
	int64_t got;

	got = rd(s, 0, fr, MP_FILE_PREFIX_LEN);
	if (got < 0)
		return mp_diag_set(diag, (int)got, 0, -1, "cannot read the file");
	if (got < MP_FILE_PREFIX_LEN || memcmp(fr, MP_FILE_MAGIC, MP_FILE_MAGIC_LEN) != 0)
		return mp_diag_set(diag, MP_EFORMAT, 0, -1, "not a memprof capture (no \"MEMPROF\" magic at offset 0)");
	out->version_major = mp_get_u16le(fr + 8);
	out->version_minor = mp_get_u16le(fr + 10);
	if (out->version_major < 1 || out->version_major > MP_FORMAT_VERSION_MAJOR)
		return mp_diag_set(diag, MP_EVERSION, 8, -1, "format version %u.%u; this reader reads 1.0 to %u.%u",
				   out->version_major, out->version_minor, MP_FORMAT_VERSION_MAJOR,
				   MP_FORMAT_VERSION_MINOR);
	if (mp_get_u32le(fr + 12) > MP_HEADER_MAX)
		return mp_diag_set(diag, MP_ECORRUPT, 12, -1, "header length %u is out of range", mp_get_u32le(fr + 12));
	*data = MP_FILE_PREFIX_LEN + (uint64_t)mp_get_u32le(fr + 12) + 4;
	if (*data > s->size)
		return mp_diag_set(diag, MP_ETRUNCATED, (int64_t)s->size, -1, "the header is cut off");
	return 0;
}

/* The figures of a summary that covers every event: the trailer's count. */
static int check_events(const mp_capture_summary_t *out, uint64_t events, mp_diag_t *diag)
{
	if (out->available && out->ended_cleanly && out->horizon_ns == UINT64_MAX && out->events != events)
		return mp_diag_set(diag, MP_ECORRUPT, -1, -1, "the summary counts %llu events but the trailer %llu",
				   (unsigned long long)out->events, (unsigned long long)events);
	return 0;
}

/* In w (the file's last bytes, w->size of them), the trailer: the magic
 * at the offset from which its length ends the file, its checksums right
 * (read_trailer). Its offset in w, or 0 when there is none. got: its
 * fields. */
static uint64_t find_trailer(const src_t *w, mp_capture_summary_t *got, uint64_t *events, uint64_t *nblocks)
{
	uint64_t t;

	for (t = w->size - 16; t > 0 && w->size - t <= MP_TRAILER_MAX; t--)
		if (mp_get_u32le(w->mem + t) == MP_TRAILER_MAGIC && t + 16 + mp_get_u32le(w->mem + t + 4) == w->size &&
		    read_trailer(w, t, UINT64_MAX, got, events, nblocks, NULL) == 0 && (got->ended_cleanly || got->write_errno))
			return t;
	return 0;
}

/* In w, the frame of block index whose payload ends at offset end (at
 * least a frame's length in): 1 (*b set, its offset in w) or 0. Searched
 * backwards from end, so that a lookalike inside the payload would have to
 * claim that very length too (and, but for a fuzzing build, match the
 * frame's checksum). */
static int find_last_block(const src_t *w, uint64_t end, uint64_t index, blk_t *b)
{
	uint64_t o;

	for (o = end - MP_BLOCK_HEADER_LEN + 1; o-- > 0;) { /* end - MP_BLOCK_HEADER_LEN down to 0 */
		const uint8_t *fr = w->mem + o;
		uint32_t plen = mp_get_u32le(fr + 8);
		if (mp_get_u32le(fr) == MP_BLOCK_MAGIC && mp_get_u32le(fr + 4) == index && plen != 0 &&
		    o + MP_BLOCK_HEADER_LEN + plen == end && mp_get_u32le(fr + 12) <= MP_BLOCK_RAW_MAX &&
		    !CRC_BAD((uint32_t)mp__crc32(0, fr, 20), mp_get_u32le(fr + 20))) {
			*b = (blk_t){o, plen, mp_get_u32le(fr + 12), mp_get_u32le(fr + 16)};
			return 1;
		}
	}
	return 0;
}

/* A closed capture from its end (see the top of this file); data: where
 * its blocks start. The last TAIL_WINDOW bytes (or all from data) are read
 * once and searched in memory, as a source of their own. 1: the figures
 * are in out; 0: they were not found there (no trailer that checks; a
 * last block not whole in the window, that does not check, or that holds
 * no summary), out and diag as they were, for the walk to look and name
 * what is wrong; or MP_ENOMEM. */
static int from_tail(const src_t *s, uint64_t data, mp_capture_summary_t *out, mp_diag_t *diag)
{
	uint64_t base = s->size - data > TAIL_WINDOW ? s->size - TAIL_WINDOW : data, t, events = 0, nblocks = 0;
	src_t w = {-1, NULL, s->size - base};
	mp_capture_summary_t got;
	uint8_t *buf;
	blk_t b;
	int rc = 0, found = 0;

	if (w.size < MP_BLOCK_HEADER_LEN + 16)
		return 0;
	if (!(buf = malloc((size_t)w.size)))
		return mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
	w.mem = buf;
	memset(&got, 0, sizeof(got));
	if (rd(s, base, buf, (size_t)w.size) == (int64_t)w.size && (t = find_trailer(&w, &got, &events, &nblocks)) &&
	    nblocks && t >= MP_BLOCK_HEADER_LEN && find_last_block(&w, t, nblocks - 1, &b)) {
		got.version_major = out->version_major;
		got.version_minor = out->version_minor;
		rc = look_in_block(&w, &b, nblocks - 1, &got, &found, NULL);
		if (rc == MP_ENOMEM) {
			rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		} else if (rc == 0 && found && check_events(&got, events, NULL) == 0) {
			got.blocks = nblocks;
			*out = got;
			memset(&got, 0, sizeof(got));
			rc = 1;
		} else {
			rc = 0;
		}
	}
	mp__summary_clear_figures(&got);
	free(buf);
	return rc;
}

static int walk(const src_t *s, uint64_t off, mp_capture_summary_t *out, mp_diag_t *diag)
{
	uint8_t fr[MP_BLOCK_HEADER_LEN];
	uint64_t events = 0, n = 0, i;
	size_t cap = 0;
	blk_t *blocks = NULL;
	int64_t got;
	int rc = 0, found = 0;

	for (;;) {
		blk_t b;
		got = rd(s, off, fr, sizeof(fr));
		if (got < 0) {
			rc = mp_diag_set(diag, (int)got, (int64_t)off, -1, "cannot read the file");
			goto out;
		}
		if (got >= 4 && mp_get_u32le(fr) == MP_TRAILER_MAGIC) {
			rc = read_trailer(s, off, n, out, &events, NULL, diag);
			break;
		}
		if (got < (int64_t)sizeof(fr))
			break; /* the end, or a frame cut off: an abrupt end */
		if (mp_get_u32le(fr) != MP_BLOCK_MAGIC) {
			rc = mp_diag_set(diag, MP_ECORRUPT, (int64_t)off, (int64_t)n,
					 "block %llu at offset %llu: bad magic", (unsigned long long)n, (unsigned long long)off);
			goto out;
		}
		if (CRC_BAD((uint32_t)mp__crc32(0, fr, 20), mp_get_u32le(fr + 20))) {
			rc = mp_diag_set(diag, MP_ECHECKSUM, (int64_t)off, (int64_t)n,
					 "block %llu at offset %llu: frame checksum mismatch", (unsigned long long)n,
					 (unsigned long long)off);
			goto out;
		}
		b.off = off;
		b.plen = mp_get_u32le(fr + 8);
		b.rlen = mp_get_u32le(fr + 12);
		b.crc = mp_get_u32le(fr + 16);
		if (mp_get_u32le(fr + 4) != n || b.plen == 0 || b.plen > MP_BLOCK_PAYLOAD_MAX || b.rlen > MP_BLOCK_RAW_MAX) {
			rc = mp_diag_set(diag, MP_ECORRUPT, (int64_t)off, (int64_t)n,
					 "block %llu at offset %llu: frame out of range (index %u, lengths %u and %u)",
					 (unsigned long long)n, (unsigned long long)off, mp_get_u32le(fr + 4), b.plen, b.rlen);
			goto out;
		}
		if (off + MP_BLOCK_HEADER_LEN + b.plen > s->size)
			break; /* its payload cut off */
		if (MP_VEC_RESERVE(blocks, cap, n + 1) < 0) {
			rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
			goto out;
		}
		blocks[n++] = b;
		off += MP_BLOCK_HEADER_LEN + b.plen;
	}
	if (rc)
		goto out;
	out->blocks = n;
	/* 1.x and 2.0 writers wrote no summary */
	if (mp_format_at_least(out->version_major, out->version_minor, 2, 1))
		for (i = n; i > 0 && n - i < LOOK_BACK && !found; i--)
			if ((rc = look_in_block(s, &blocks[i - 1], i - 1, out, &found, diag)))
				goto out;
	if (!found)
		mp__summary_clear_figures(out);
	/* without the trailer the horizon is the end, but for the final
	 * round's: it is no time (every event), and none is known */
	if (!out->ended_cleanly && !out->write_errno)
		out->end_time_ns = out->available && out->horizon_ns != UINT64_MAX ? out->horizon_ns : 0;
	/* the final round's summary covers every event: the trailer's count */
	rc = check_events(out, events, diag);
out:
	free(blocks);
	return rc;
}

/* The figures of capture s: from its end when it was closed, else (or
 * when its end does not give them) by the walk. */
static int summary_of(const src_t *s, mp_capture_summary_t *out, mp_diag_t *diag)
{
	uint64_t data = 0;
	int rc = read_prefix(s, out, &data, diag);

	/* 1.x and 2.0 writers wrote no summary */
	if (rc == 0 && mp_format_at_least(out->version_major, out->version_minor, 2, 1))
		rc = from_tail(s, data, out, diag);
	if (rc == 0)
		rc = walk(s, data, out, diag);
	return rc < 0 ? rc : 0;
}

static int finish(int rc, const char *name, mp_diag_t *diag)
{
	if (rc && diag)
		mp_diag_set_file(diag, name);
	return rc;
}

int mp_capture_summary_read_memory(const void *data, size_t size, const char *name, mp_capture_summary_t *out,
				   mp_diag_t *diag)
{
	src_t s = {-1, data, size};

	mp_diag_clear(diag);
	memset(out, 0, sizeof(*out));
	if (!data && size)
		return finish(mp_diag_set(diag, MP_EUSAGE, -1, -1, "no data"), name, diag);
	return finish(summary_of(&s, out, diag), name, diag);
}

int mp_capture_summary_read(const char *path, mp_capture_summary_t *out, mp_diag_t *diag)
{
	src_t s = {-1, NULL, 0};
	struct stat st;
	int rc;

	mp_diag_clear(diag);
	memset(out, 0, sizeof(*out));
	s.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s.fd < 0)
		return finish(mp_diag_set(diag, -errno, -1, -1, "cannot open the capture"), path, diag);
	if (fstat(s.fd, &st) != 0) {
		rc = mp_diag_set(diag, -errno, -1, -1, "cannot read the capture's size");
	} else {
		s.size = (uint64_t)st.st_size;
		rc = summary_of(&s, out, diag);
	}
	close(s.fd);
	return finish(rc, path, diag);
}

const mp_summary_memory_t *mp_capture_summary_find(const mp_capture_summary_t *s, const char *name)
{
	size_t i;

	for (i = 0; s && name && i < s->nmemories; i++)
		if (strcmp(s->memories[i].name, name) == 0)
			return &s->memories[i];
	return NULL;
}

void mp_capture_summary_free(mp_capture_summary_t *s)
{
	if (!s)
		return;
	mp__summary_clear_figures(s);
}
