/* rounds.c - mp_capture_rounds_read: every round's timeline figures
 * (ROUND sections, format 2.5; memprof/rounds.h), without decoding the
 * events.
 *
 * The blocks are walked by their frame headers (a read each, as
 * capsummary.c walks them). A round's figures are in the block that ends
 * it, which starts with its HORIZON section (flush.c, end_round: the
 * round's chunks went into blocks before it, and an event block starts
 * with definitions or a chunk, never a horizon). So each block's first
 * PEEK_IN bytes of payload are read and inflated by zlib as a stream, up
 * to its first raw byte: an event block stops there. A round block is
 * inflated on, up to PEEK_OUT raw bytes, which hold its HORIZON, SUMMARY
 * and ROUND (the writer puts the ROUND before any CHECKPOINT, whose live
 * blocks may take megabytes); only when they do not fit is the whole
 * payload read, its checksum checked and inflated. A payload read whole
 * (up to PEEK_IN bytes: most round blocks) has its checksum checked; the
 * prefix of a longer one cannot be, and a ROUND that parses but is
 * damaged is caught by its check against the SUMMARY.
 */
#include <memprof/format.h>
#include <memprof/format/crc32.h>
#include <memprof/format/inflate.h>
#include <memprof/format/varint.h>
#include <memprof/rounds.h>
#include <memprof/vec.h>

#include "blockio.h"
#include "summary_section.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define PEEK_IN 4096u
#define PEEK_OUT (64u << 10)

typedef struct {
	int fd;
	uint64_t size;
	z_stream z;
	int z_ready;
	uint8_t in[PEEK_IN];
	uint8_t *raw;     /* PEEK_OUT bytes, or a whole block's */
	size_t rawcap;
	uint8_t *pay;     /* a whole payload */
	size_t paycap;
	size_t mcap, rcap, ccap;
} walk_t;

static int64_t rd(const walk_t *w, uint64_t off, void *buf, size_t n)
{
	size_t got = 0;

	if (off >= w->size)
		return 0;
	if (n > w->size - off)
		n = (size_t)(w->size - off);
	while (got < n) {
		ssize_t r = pread(w->fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
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

static void say_bad(mp_capture_rounds_t *c, uint64_t block, uint64_t off, const char *fmt, ...)
{
	if (c->bad < MP_ROUNDS_SAID) {
		char *s = c->bad_said[c->bad];
		size_t sz = sizeof(c->bad_said[0]);
		int k = snprintf(s, sz, "block %llu at offset %llu: bad round: ", (unsigned long long)block,
				 (unsigned long long)off);
		va_list ap;
		va_start(ap, fmt);
		if (k > 0 && (size_t)k < sz)
			vsnprintf(s + k, sz - (size_t)k, fmt, ap);
		va_end(ap);
	}
	c->bad++;
}

/* The ROUND at *pp (after its tag) checked against sum (the SUMMARY
 * before it in the block; NULL: none) and appended to c. 0, 1 (bad: said,
 * nothing kept), or -ENOMEM. */
static int take_round(walk_t *w, mp_capture_rounds_t *c, const uint8_t **pp, const uint8_t *end,
		      const mp_capture_summary_t *sum, uint64_t block, uint64_t off)
{
	const uint8_t *p = *pp, *bend;
	uint64_t len, flags, horizon, start, zstep, events, n, i, prev = UINT64_MAX;
	mp_round_t r;
	size_t si = 0, first = c->nmemories;

	if (mp_varint_get(&p, end, &len) || len > (uint64_t)(end - p))
		return say_bad(c, block, off, "its length runs past the block"), 1;
	bend = p + len;
	*pp = bend;
	if (mp_varint_get(&p, bend, &flags) || mp_varint_get(&p, bend, &horizon) || mp_varint_get(&p, bend, &start) ||
	    mp_varint_get(&p, bend, &zstep) || mp_varint_get(&p, bend, &events) || mp_varint_get(&p, bend, &n) ||
	    n > MP_SUMMARY_MEMORIES_MAX)
		return say_bad(c, block, off, "its fields do not parse"), 1;
	if (!sum || !sum->available)
		return say_bad(c, block, off, "no summary before it in its block"), 1;
	if (horizon != sum->horizon_ns || events != sum->events)
		return say_bad(c, block, off, "its horizon or event count disagrees with the summary"), 1;
	if (MP_VEC_RESERVE(c->memories, w->mcap, c->nmemories + n) < 0)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint64_t id, k, x, v[MP_ROUNDF_COUNT] = {0}, j;
		mp_round_memory_t *m = &c->memories[c->nmemories + i];
		if (mp_varint_get(&p, bend, &id) || id > UINT32_MAX || (prev != UINT64_MAX && id <= prev) ||
		    mp_varint_get(&p, bend, &k) || k > (uint64_t)(bend - p)) {
			say_bad(c, block, off, "memory id %llu does not parse", (unsigned long long)i);
			return 1;
		}
		prev = id;
		for (j = 0; j < k; j++) {
			if (mp_varint_get(&p, bend, &x))
				return say_bad(c, block, off, "memory id %llu does not parse", (unsigned long long)id), 1;
			if (j < MP_ROUNDF_COUNT)
				v[j] = x;
		}
		while (si < sum->nmemories && sum->memories[si].id < id)
			si++;
		if (si == sum->nmemories || sum->memories[si].id != id)
			return say_bad(c, block, off, "memory id %llu is not in the summary", (unsigned long long)id), 1;
		if (k < MP_ROUNDF_COUNT || v[MP_ROUNDF_LIVE] != sum->memories[si].live_bytes)
			return say_bad(c, block, off, "live bytes of memory id %llu disagree with the summary",
				       (unsigned long long)id),
			       1;
		if (v[MP_ROUNDF_MIN] > v[MP_ROUNDF_LIVE] || v[MP_ROUNDF_LIVE] > v[MP_ROUNDF_MAX] ||
		    v[MP_ROUNDF_MAX] > sum->memories[si].peak_bytes || v[MP_ROUNDF_RESERVED] > v[MP_ROUNDF_RESERVED_MAX])
			return say_bad(c, block, off, "least, live, most and peak of memory id %llu are out of order",
				       (unsigned long long)id),
			       1;
		*m = (mp_round_memory_t){(uint32_t)id,
					 v[MP_ROUNDF_LIVE],
					 v[MP_ROUNDF_MIN],
					 v[MP_ROUNDF_MIN_NS],
					 v[MP_ROUNDF_MAX],
					 v[MP_ROUNDF_MAX_NS],
					 (int64_t)(v[MP_ROUNDF_MAX_STEP] >> 1) ^ -(int64_t)(v[MP_ROUNDF_MAX_STEP] & 1),
					 v[MP_ROUNDF_FIRST_NS],
					 v[MP_ROUNDF_LAST_NS],
					 v[MP_ROUNDF_RESERVED],
					 v[MP_ROUNDF_RESERVED_MAX],
					 v[MP_ROUNDF_RESERVED_MAX_NS],
					 v[MP_ROUNDF_FAILED],
					 v[MP_ROUNDF_FAILED_NS],
					 v[MP_ROUNDF_FAILED_REQ]};
	}
	if (MP_VEC_RESERVE(c->rounds, w->rcap, c->nrounds + 1) < 0)
		return -ENOMEM;
	r = (mp_round_t){start, horizon, (int64_t)(zstep >> 1) ^ -(int64_t)(zstep & 1), events, block, off, first,
			 (size_t)n, (flags & MP_ROUND_F_STEP_BACK) != 0};
	c->rounds[c->nrounds++] = r;
	c->nmemories += n;
	return 0;
}

/* The sections of a round block's raw[0..len) (complete: the block's
 * whole raw data), up to its ROUND. 0, 1 (they run past len: more raw
 * data is needed), or -ENOMEM. */
static int sections(walk_t *w, mp_capture_rounds_t *c, const uint8_t *raw, size_t len, int complete, uint64_t block,
		    uint64_t off)
{
	const uint8_t *p = raw, *end = raw + len;
	mp_capture_summary_t sum;
	int rc = 0, have = 0;

	memset(&sum, 0, sizeof(sum));
	while (p < end) {
		uint8_t tag = *p++;
		uint64_t v;
		const uint8_t *q;
		if (tag == MP_SEC_HORIZON) {
			if (mp_varint_get(&p, end, &v))
				goto cut;
		} else if (tag == MP_SEC_SUMMARY) {
			q = p;
			mp__summary_clear_figures(&sum);
			if ((rc = mp__summary_section_parse(&q, end, &sum)) == -ENOMEM)
				break;
			if (rc) {
				rc = 0;
				goto cut;
			}
			p = q;
			have = 1;
		} else if (tag == MP_SEC_ROUND) {
			q = p;
			if (mp_varint_get(&q, end, &v) || v > (uint64_t)(end - q))
				goto cut;
			rc = take_round(w, c, &p, end, have ? &sum : NULL, block, off);
			rc = rc == 1 ? 0 : rc;
			break;
		} else {
			break; /* a checkpoint, or a writer before 2.5: no round here */
		}
	}
	mp__summary_clear_figures(&sum);
	return rc;
cut:
	mp__summary_clear_figures(&sum);
	if (complete)
		say_bad(c, block, off, "its block's sections do not parse");
	return complete ? 0 : 1;
}

/* The whole block at off (its payload plen bytes, raw rlen), checked and
 * inflated into w->raw. 0, 1 (damaged: a bad round said), -ENOMEM. */
static int whole(walk_t *w, mp_capture_rounds_t *c, uint64_t off, uint32_t plen, uint32_t rlen, uint32_t crc,
		 uint64_t block)
{
	const char *why = "inflating failed";

	if (MP_VEC_RESERVE(w->pay, w->paycap, plen) < 0 || MP_VEC_RESERVE(w->raw, w->rawcap, rlen ? rlen : 1) < 0)
		return -ENOMEM;
	if (rd(w, off + MP_BLOCK_HEADER_LEN, w->pay, plen) != (int64_t)plen)
		return say_bad(c, block, off, "its payload cannot be read"), 1;
	if (CRC_BAD(mp__crc32(0, w->pay, plen), crc))
		return say_bad(c, block, off, "payload checksum mismatch"), 1;
	if (mp__inflate(w->pay, plen, w->raw, rlen, &why))
		return say_bad(c, block, off, "%s", why), 1;
	c->inflated++;
	return 0;
}

/* The definitions that start an event block, in raw[0..len) (its first
 * bytes): the capacities its MEMORY sections declare, into c, until a
 * section that is not a definition, or the end of what was inflated. */
static void definitions(walk_t *w, mp_capture_rounds_t *c, const uint8_t *raw, size_t len)
{
	const uint8_t *p = raw, *end = raw + len;
	uint64_t v[5], n, i;

	while (p < end) {
		uint8_t tag = *p++;
		int nv = tag == MP_SEC_MEMORY ? 4 : tag == MP_SEC_THREAD ? 2 : tag == MP_SEC_DROPPED ? 3
						  : tag == MP_SEC_FRAME ? 5 : -1;
		if (tag == MP_SEC_STRING) {
			if (mp_varint_get(&p, end, &v[0]) || mp_varint_get(&p, end, &n) || n > (uint64_t)(end - p))
				return;
			p += n;
			continue;
		}
		if (tag == MP_SEC_STACK) {
			if (mp_varint_get(&p, end, &v[0]) || mp_varint_get(&p, end, &n) || n > MP_STACK_MAX_FRAMES)
				return;
			for (i = 0; i < n; i++)
				if (mp_varint_get(&p, end, &v[1]))
					return;
			continue;
		}
		if (nv < 0)
			return; /* a chunk, a module: the definitions looked at end here */
		for (i = 0; i < (uint64_t)nv; i++)
			if (mp_varint_get(&p, end, &v[i]))
				return;
		if (tag == MP_SEC_MEMORY && v[0] < 65536 && v[3]) {
			if (MP_VEC_RESERVE(c->capacity, w->ccap, v[0] + 1) < 0)
				return;
			while (c->ncapacity <= v[0])
				c->capacity[c->ncapacity++] = 0;
			c->capacity[v[0]] = v[3];
		}
	}
}

/* Block at off: a round block's figures into c, an event block left. */
static int look(walk_t *w, mp_capture_rounds_t *c, uint64_t off, uint32_t plen, uint32_t rlen, uint32_t crc,
		uint64_t block)
{
	uint32_t in = plen < PEEK_IN ? plen : PEEK_IN, out = rlen < PEEK_OUT ? rlen : PEEK_OUT;
	int rc;

	if (rlen == 0 || rd(w, off + MP_BLOCK_HEADER_LEN, w->in, in) != (int64_t)in)
		return 0;
	if (inflateReset(&w->z) != Z_OK)
		return -ENOMEM;
	w->z.next_in = w->in;
	w->z.avail_in = in;
	w->z.next_out = w->raw;
	w->z.avail_out = 1;
	if (inflate(&w->z, Z_SYNC_FLUSH) < 0 || w->z.avail_out)
		return 0; /* (one zlib cannot start: the reader says what is wrong) */
	if (w->raw[0] != MP_SEC_HORIZON) { /* an event block: its definitions first, if any */
		if (w->raw[0] != MP_SEC_CHUNK2) {
			w->z.avail_out = (out < PEEK_IN ? out : PEEK_IN) - 1;
			(void)inflate(&w->z, Z_SYNC_FLUSH);
			definitions(w, c, w->raw, (size_t)w->z.total_out);
		}
		return 0;
	}
	if (in == plen && CRC_BAD(mp__crc32(0, w->in, in), crc))
		return say_bad(c, block, off, "payload checksum mismatch"), 0;
	w->z.avail_out = out - 1;
	(void)inflate(&w->z, Z_SYNC_FLUSH);
	if (in == plen && out == rlen && w->z.total_out == rlen) {
		c->inflated++;
		return sections(w, c, w->raw, rlen, 1, block, off);
	}
	rc = sections(w, c, w->raw, (size_t)w->z.total_out, 0, block, off);
	if (rc != 1)
		return rc;
	if ((rc = whole(w, c, off, plen, rlen, crc, block)))
		return rc == 1 ? 0 : rc;
	return sections(w, c, w->raw, rlen, 1, block, off);
}

static int walk(walk_t *w, mp_capture_rounds_t *c, uint64_t off, mp_diag_t *diag)
{
	uint8_t fr[MP_BLOCK_HEADER_LEN];
	uint64_t n = 0;
	int64_t got;
	int rc;

	for (;;) {
		uint32_t plen, rlen;
		got = rd(w, off, fr, sizeof(fr));
		if (got < 0)
			return mp_diag_set(diag, (int)got, (int64_t)off, -1, "cannot read the file");
		if (got < (int64_t)sizeof(fr) || mp_get_u32le(fr) == MP_TRAILER_MAGIC)
			break; /* the end, a frame cut off, or the trailer */
		plen = mp_get_u32le(fr + 8);
		rlen = mp_get_u32le(fr + 12);
		if (mp_get_u32le(fr) != MP_BLOCK_MAGIC || CRC_BAD((uint32_t)mp__crc32(0, fr, 20), mp_get_u32le(fr + 20)) ||
		    mp_get_u32le(fr + 4) != (uint32_t)n || plen == 0 || plen > MP_BLOCK_PAYLOAD_MAX ||
		    rlen > MP_BLOCK_RAW_MAX)
			return mp_diag_set(diag, MP_ECORRUPT, (int64_t)off, (int64_t)n,
					   "block %llu at offset %llu: bad frame header", (unsigned long long)n,
					   (unsigned long long)off);
		if (off + MP_BLOCK_HEADER_LEN + plen > w->size)
			break; /* its payload cut off */
		if ((rc = look(w, c, off, plen, rlen, mp_get_u32le(fr + 16), n)))
			return mp_diag_set(diag, rc, -1, -1, "out of memory");
		n++;
		off += MP_BLOCK_HEADER_LEN + plen;
	}
	c->blocks = n;
	return 0;
}

int mp_capture_rounds_read(const char *path, mp_capture_rounds_t *out, mp_diag_t *diag)
{
	walk_t w;
	struct stat st;
	uint8_t fr[MP_FILE_PREFIX_LEN];
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	if ((rc = mp_capture_summary_read(path, &out->summary, diag)))
		return rc;
	if (!mp_format_at_least(out->summary.version_major, out->summary.version_minor, 2, 5))
		return 0; /* written before ROUND sections */
	mp_diag_clear(diag);
	if ((w.fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(w.fd, &st) != 0) {
		rc = mp_diag_set(diag, -errno, -1, -1, "cannot read the capture");
		goto out;
	}
	w.size = (uint64_t)st.st_size;
	if (rd(&w, 0, fr, sizeof(fr)) != (int64_t)sizeof(fr)) {
		rc = mp_diag_set(diag, MP_ETRUNCATED, 0, -1, "the header is cut off");
		goto out;
	}
	if (inflateInit2(&w.z, -15) != Z_OK || MP_VEC_RESERVE(w.raw, w.rawcap, PEEK_OUT) < 0) {
		rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		goto out;
	}
	w.z_ready = 1;
	rc = walk(&w, out, MP_FILE_PREFIX_LEN + (uint64_t)mp_get_u32le(fr + 12) + 4, diag);
out:
	if (w.z_ready)
		inflateEnd(&w.z);
	if (w.fd >= 0)
		close(w.fd);
	free(w.raw);
	free(w.pay);
	if (rc && diag)
		mp_diag_set_file(diag, path);
	return rc;
}

const mp_round_memory_t *mp_round_memory(const mp_capture_rounds_t *c, const mp_round_t *r, uint32_t id)
{
	size_t i;

	for (i = r->first; i < r->first + r->n; i++)
		if (c->memories[i].id == id)
			return &c->memories[i];
	return NULL;
}

void mp_capture_rounds_free(mp_capture_rounds_t *c)
{
	if (!c)
		return;
	mp_capture_summary_free(&c->summary);
	free(c->rounds);
	free(c->memories);
	free(c->capacity);
	memset(c, 0, sizeof(*c));
}
