/* test_chunk2.c - the 2.0 chunk layout (docs/format.md, "Columns"): heads
 * and tails, the IDX column, ALLOC_REFREED; and 1.x captures, built here
 * byte by byte, still read with the same figures.
 *
 * Captures are assembled by hand (header, one block, trailer) around chunk
 * sections that are either written out literally from the specification
 * or produced by the encoder from hand-made ring records, so the reader is
 * checked against figures worked out here, not against the writer. */
#include "test_common.h"

#include "capture_helpers.h"
#include "encoder.h"
#include "cpufeat_helpers.h"
#include "clock.h"
#include <memprof/format.h>
#include <memprof/format/varint.h>

#include <memprof/capture.h>

#include <string.h>
#include <zlib.h>

/* --- building a capture by hand ----------------------------------------- */

typedef struct {
	uint8_t b[1 << 20];
	size_t n;
} buf_t;

static void put_bytes(buf_t *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_byte(buf_t *b, uint8_t v)
{
	put_bytes(b, &v, 1);
}

static void put_v(buf_t *b, uint64_t v)
{
	uint8_t tmp[MP_VARINT_MAX];
	put_bytes(b, tmp, (size_t)(mp_varint_put(tmp, v) - tmp));
}

static void put_str(buf_t *b, const char *s)
{
	put_v(b, strlen(s));
	put_bytes(b, s, strlen(s));
}

static void put_u32(buf_t *b, uint32_t v)
{
	uint8_t t[4];
	mp_put_u32le(t, v);
	put_bytes(b, t, 4);
}

/* The sections every hand-made capture starts with: strings "host" (1)
 * and "op" (2), memory 0 named "host", thread 0. */
static void put_defs(buf_t *raw)
{
	put_byte(raw, MP_SEC_STRING);
	put_v(raw, 1);
	put_str(raw, "host");
	put_byte(raw, MP_SEC_STRING);
	put_v(raw, 2);
	put_str(raw, "op");
	put_byte(raw, MP_SEC_MEMORY);
	put_v(raw, 0);
	put_v(raw, 1);
	put_v(raw, 1);
	put_v(raw, 0);
	put_byte(raw, MP_SEC_THREAD);
	put_v(raw, 0);
	put_v(raw, 1234);
}

/* A chunk section of thread 0: tag (MP_SEC_CHUNK or MP_SEC_CHUNK2), start
 * time, a zero address/context/cache state, then nparts lengths and the
 * parts' bytes. */
static void put_chunk(buf_t *raw, uint8_t tag, uint64_t time, const uint8_t *const *parts, const uint64_t *lens,
		      int nparts)
{
	uint64_t total = 0;
	int i;

	put_byte(raw, tag);
	put_v(raw, 0); /* thread */
	put_v(raw, time);
	for (i = 1; i < MP_ST_COUNT; i++)
		put_v(raw, 0);
	for (i = 0; i < nparts; i++)
		total += lens[i];
	put_v(raw, total);
	for (i = 0; i < nparts; i++)
		put_v(raw, lens[i]);
	for (i = 0; i < nparts; i++)
		put_bytes(raw, parts[i], lens[i]);
}

/* Header (version major.0), one block holding raw, the trailer. */
static void write_capture(const char *path, int major, const buf_t *raw, uint64_t events)
{
	static buf_t f, body;
	uint8_t payload[1 << 16];
	z_stream z;
	uint32_t crc;
	size_t plen, at;
	FILE *fp;

	f.n = body.n = 0;
	put_bytes(&f, "MEMPROF", 8);
	put_byte(&f, (uint8_t)major);
	put_byte(&f, 0);
	put_byte(&f, 0);
	put_byte(&f, 0);
	put_str(&body, "CLOCK_MONOTONIC");
	put_v(&body, 5);
	put_v(&body, 6);
	put_v(&body, 7);
	put_str(&body, "host");
	put_str(&body, "cmd");
	put_u32(&f, (uint32_t)body.n);
	put_bytes(&f, body.b, body.n);
	put_u32(&f, (uint32_t)crc32(0, f.b, (uInt)f.n));

	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (Bytef *)(uintptr_t)raw->b;
	z.avail_in = (uInt)raw->n;
	z.next_out = payload;
	z.avail_out = sizeof(payload);
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	plen = sizeof(payload) - z.avail_out;
	deflateEnd(&z);
	at = f.n;
	put_u32(&f, MP_BLOCK_MAGIC);
	put_u32(&f, 0);
	put_u32(&f, (uint32_t)plen);
	put_u32(&f, (uint32_t)raw->n);
	put_u32(&f, (uint32_t)crc32(0, payload, (uInt)plen));
	put_u32(&f, (uint32_t)crc32(0, f.b + at, 20));
	put_bytes(&f, payload, plen);

	body.n = 0;
	put_v(&body, events);
	put_v(&body, 0); /* dropped */
	put_v(&body, 1); /* blocks */
	put_v(&body, 2); /* strings */
	put_v(&body, 0); /* end time */
	at = f.n;
	put_u32(&f, MP_TRAILER_MAGIC);
	put_u32(&f, (uint32_t)body.n);
	put_u32(&f, (uint32_t)crc32(0, f.b + at, 8));
	put_bytes(&f, body.b, body.n);
	crc = (uint32_t)crc32(0, body.b, (uInt)body.n);
	put_u32(&f, crc);

	fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(f.b, 1, f.n, fp), f.n);
	fclose(fp);
}

/* Reads path; returns the heap events (no MEMORY declarations) in out.
 * The batch path (the reader's fast decoder) must return the same. */
static size_t read_heap(const char *path, mp_event_t *out, size_t max, int *rc, mp_diag_t *diag)
{
	mp_event_t *ev, batch[7];
	size_t n = read_all(path, &ev, rc, diag, NULL), k = 0, i, got, at = 0;
	mp_source_t *src;
	mp_diag_t d2;
	int r;

	if (*rc == 0) {
		assert_int_equal(mp_capture_open_source(&src, path, &d2), 0);
		do {
			r = mp_source_next_batch(src, batch, 7, &got, &d2);
			for (i = 0; i < got; i++, at++) {
				assert_true(at < n);
				assert_int_equal(batch[i].kind, ev[at].kind);
				assert_true(batch[i].address == ev[at].address);
				assert_true(batch[i].time_ns == ev[at].time_ns);
				assert_true(batch[i].requested_bytes == ev[at].requested_bytes);
				assert_true(batch[i].allocated_bytes == ev[at].allocated_bytes);
				assert_int_equal(batch[i].op, ev[at].op);
				assert_int_equal(batch[i].flags, ev[at].flags);
			}
		} while (r == 1);
		assert_int_equal(r, 0);
		assert_int_equal(at, n);
		mp_source_close(src);
	}

	for (i = 0; i < n; i++)
		if (ev[i].kind != MP_EV_MEMORY && k < max)
			out[k++] = ev[i];
	free(ev);
	return k;
}

typedef struct {
	int kind;
	uint64_t time, addr, req, alloc;
	int realloc;
} want_t;

static void check_events(const mp_event_t *ev, size_t n, const want_t *want, size_t nwant)
{
	size_t i;

	assert_int_equal(n, nwant);
	for (i = 0; i < n; i++) {
		assert_int_equal(ev[i].kind, want[i].kind);
		assert_true(ev[i].time_ns == want[i].time);
		assert_true(ev[i].address == want[i].addr);
		assert_true(ev[i].requested_bytes == want[i].req);
		assert_true(ev[i].allocated_bytes == want[i].alloc);
		assert_int_equal((ev[i].flags & MP_EVENT_F_REALLOC) != 0, want[i].realloc);
	}
}

/* The cache slot of an address: docs/format.md's formula, written again. */
static unsigned slot_of(uint64_t a)
{
	return (unsigned)(((a >> 4) * 0x9E3779B97F4A7C15ull) >> 58);
}

/* --- 1.x: five columns of whole varints ----------------------------------- */

/* The records (time starts at 1000, address 0):
 *   ALLOC   EXACT ALIGN16  dt 10   zz(0x100) = 512 (2 bytes)   24
 *   CONTEXT op 2, region 2, dtype 0, shape 0
 *   ALLOC   USABLE16       dt 5    zz(0x40) = 128 (2 bytes)    20 -> 24
 *   FREE_AGED              dt 1    age 2 (0x1000)
 *   ALLOC_REUSED EXACT     dt 300 (2 bytes)  slot of 0x1000    48
 *   REALLOC                dt 2    zz(0x40), zz(1), 100, zz(4)
 *   FREE                   dt 0    zz(0)
 */
static void v1_columns(buf_t *raw, uint8_t bad_tag)
{
	uint8_t tags[] = {0xC1, 0x09, 0x21, 0x0C, 0x8A, 0x08, bad_tag ? bad_tag : 0x02};
	uint8_t time[] = {10, 5, 1, 0xAC, 0x02, 2, 0};
	uint8_t addr[] = {0x80, 0x04, 0x80, 0x01, 2, (uint8_t)slot_of(0x1000), 0x80, 0x01, 2, 0};
	uint8_t size[] = {24, 20, 48, 100, 8};
	uint8_t misc[] = {2, 2, 0, 0};
	const uint8_t *parts[5] = {tags, time, addr, size, misc};
	uint64_t lens[5] = {sizeof(tags), sizeof(time), sizeof(addr), sizeof(size), sizeof(misc)};

	put_defs(raw);
	put_chunk(raw, MP_SEC_CHUNK, 1000, parts, lens, 5);
	put_byte(raw, MP_SEC_HORIZON);
	put_v(raw, UINT64_MAX);
}

static void test_v1_capture_reads(void **state)
{
	static const want_t want[] = {
		{MP_EV_ALLOC, 1010, 0x1000, 24, 24, 0}, {MP_EV_ALLOC, 1015, 0x1040, 20, 24, 0},
		{MP_EV_FREE, 1016, 0x1000, 0, 0, 0},    {MP_EV_ALLOC, 1316, 0x1000, 48, 48, 0},
		{MP_EV_FREE, 1318, 0x1040, 0, 0, 1},    {MP_EV_ALLOC, 1318, 0x1041, 100, 104, 1},
		{MP_EV_FREE, 1318, 0x1041, 0, 0, 0},
	};
	char *path = mp_test_tmpfile("v1.memprof");
	static buf_t raw;
	mp_event_t ev[16];
	mp_capture_t *cap;
	mp_diag_t diag;
	size_t n;
	int rc;

	(void)state;
	raw.n = 0;
	v1_columns(&raw, 0);
	write_capture(path, 1, &raw, 7);
	n = read_heap(path, ev, 16, &rc, &diag);
	assert_int_equal(rc, 0);
	check_events(ev, n, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(ev[1].op, 2);
	assert_int_equal(ev[1].region, 2);
	assert_int_equal(ev[0].op, 0);
	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	assert_int_equal(mp_capture_header(cap)->version_major, 1);
	mp_capture_close(cap);

	/* kind 13 did not exist in 1.x: corruption, not an ALLOC_REFREED */
	raw.n = 0;
	v1_columns(&raw, 0x0D);
	write_capture(path, 1, &raw, 7);
	n = read_heap(path, ev, 16, &rc, &diag);
	assert_int_equal(rc, MP_ECORRUPT);
	assert_int_equal(n, 0);
	assert_non_null(strstr(diag.text, "chunk columns are inconsistent"));

	/* a 1.x chunk in a 2.0 file */
	raw.n = 0;
	v1_columns(&raw, 0);
	write_capture(path, 2, &raw, 7);
	n = read_heap(path, ev, 16, &rc, &diag);
	assert_int_equal(rc, MP_ECORRUPT);
	assert_non_null(strstr(diag.text, "a 1.x chunk section in a 2.x capture"));
	unlink(path);
	free(path);
}

/* --- 2.0 by hand: heads, tails, IDX, ALLOC_REFREED ------------------------ */

/* From time 0, address 0:
 *   ALLOC  EXACT ALIGN16 dt 200 (head 0xC8, tail 0x01)  zz(0x200) = 1024 (0x80, 0x08)  24
 *   ALLOC  EXACT ALIGN16 dt 1   zz(0x100) = 512 (0x80, 0x04)  1000 (0xE8, 0x07)
 *   FREE   ALIGN16       dt 1   zz(-0x100) = 511 (0xFF, 0x03)  -> 0x2000
 *   FREE_AGED            dt 1   age 1 (0x3000)
 *   ALLOC_REFREED EXACT  dt 1   age 2: the free before the last (0x2000)  16
 *   ALLOC_REFREED EXACT  dt 1   age `age`                                  16
 */
static int v2_capture(const char *path, uint8_t age, mp_event_t *ev, mp_diag_t *diag, int *rc)
{
	uint8_t tags[] = {0xC1, 0xC1, 0x42, 0x0C, 0x8D, 0x8D};
	uint8_t th[] = {0xC8, 1, 1, 1, 1, 1}, tt[] = {0x01};
	uint8_t ah[] = {0x80, 0x80, 0xFF}, at[] = {0x08, 0x04, 0x03};
	uint8_t ih[] = {1, 2, age}, it[] = {0};
	uint8_t sh[] = {24, 0xE8, 16, 16}, st[] = {0x07};
	const uint8_t *parts[MP_PARTS] = {tags, th, tt, ah, at, ih, it, sh, st, tt, tt};
	uint64_t lens[MP_PARTS] = {sizeof(tags), sizeof(th), sizeof(tt), sizeof(ah), sizeof(at), sizeof(ih), 0,
				   sizeof(sh), sizeof(st), 0, 0};
	static buf_t raw;

	raw.n = 0;
	put_defs(&raw);
	put_chunk(&raw, MP_SEC_CHUNK2, 0, parts, lens, MP_PARTS);
	put_byte(&raw, MP_SEC_HORIZON);
	put_v(&raw, UINT64_MAX);
	write_capture(path, 2, &raw, 6);
	return (int)read_heap(path, ev, 16, rc, diag);
}

static void test_v2_by_hand(void **state)
{
	static const want_t want[] = {
		{MP_EV_ALLOC, 200, 0x2000, 24, 24, 0},  {MP_EV_ALLOC, 201, 0x3000, 1000, 1000, 0},
		{MP_EV_FREE, 202, 0x2000, 0, 0, 0},     {MP_EV_FREE, 203, 0x3000, 0, 0, 0},
		{MP_EV_ALLOC, 204, 0x2000, 16, 16, 0},  {MP_EV_ALLOC, 205, 0x3000, 16, 16, 0},
	};
	char *path = mp_test_tmpfile("v2.memprof");
	mp_event_t ev[16];
	mp_diag_t diag;
	int rc, n;

	(void)state;
	n = v2_capture(path, 1, ev, &diag, &rc); /* age 1: the latest free, 0x3000 */
	assert_int_equal(rc, 0);
	check_events(ev, (size_t)n, want, sizeof(want) / sizeof(want[0]));
	/* age 3: only two frees so far */
	n = v2_capture(path, 3, ev, &diag, &rc);
	assert_int_equal(rc, MP_ECORRUPT);
	assert_true(n >= 4 && n <= 5); /* the records before it (the one-event path drops the last) */
	assert_non_null(strstr(diag.text, "freed-address age"));
	assert_non_null(strstr(diag.text, "record 5"));
	/* age 0 */
	n = v2_capture(path, 0, ev, &diag, &rc);
	assert_int_equal(rc, MP_ECORRUPT);
	assert_non_null(strstr(diag.text, "freed-address age"));
	unlink(path);
	free(path);
}

/* mp__chunk_check: each inconsistency of heads and tails is caught. */
static void test_check_parts(void **state)
{
	/* ALLOC EXACT: time, address, size -- one varint each */
	uint8_t d[32];
	uint64_t lens[MP_PARTS];

	(void)state;
#define SET(...)                                                             \
	do {                                                                 \
		uint64_t l_[MP_PARTS] = {__VA_ARGS__};                       \
		memcpy(lens, l_, sizeof(lens));                              \
	} while (0)
	/* tag | th | tt | ah | at | ih | it | sh | st | mh | mt */
	memcpy(d, "\x81\x05\x85\x01\x07\x09", 6);
	SET(1, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0); /* 0x81 | 5 | | 0x85 | | | | 0x01: the address head continues, no tail */
	assert_int_equal(mp__chunk_check(d, lens, 4), -1);
	SET(1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0); /* ... with its tail 0x01, size 7 */
	assert_int_equal(mp__chunk_check(d, lens, 5), 0);
	SET(1, 1, 0, 1, 1, 0, 0, 2, 0, 0, 0); /* two sizes for one ALLOC EXACT */
	assert_int_equal(mp__chunk_check(d, lens, 6), -1);
	SET(1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0);
	assert_int_equal(mp__chunk_check(d, lens, 6), -1); /* lengths do not sum to n */
	memcpy(d, "\x81\x05\x85\x81\x07", 5);               /* the tail run does not end */
	assert_int_equal(mp__chunk_check(d, lens, 5), -1);
	memcpy(d, "\x8E\x05\x85\x01\x07", 5); /* kind 14 does not exist */
	assert_int_equal(mp__chunk_check(d, lens, 5), -1);
	memcpy(d, "\x8D\x05\x85\x01\x07", 5); /* ALLOC_REFREED wants an index, not an address */
	assert_int_equal(mp__chunk_check(d, lens, 5), -1);
	SET(1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0);
	assert_int_equal(mp__chunk_check(d, lens, 5), 0);
#undef SET
}

/* --- the encoder: ring records to parts, read back ------------------------- */

#define W0(kind, mem, diff) ((uint64_t)(kind) | (uint64_t)(mem) << 16 | (uint64_t)(uint32_t)(int32_t)(diff) << 32)


/* A capture of what enc encoded: put_defs' sections, memories 1..extra
 * (named "host" too), the parts as one CHUNK2 section of thread 0, a
 * final horizon. Releases enc. */
static void write_encoded(const char *path, mp_chunk_encoder_t *enc, const uint64_t lens[MP_PARTS], unsigned extra)
{
	static buf_t raw;
	const uint8_t *parts[MP_PARTS];
	unsigned i;
	int c;

	for (c = 0; c < MP_PARTS; c++)
		parts[c] = enc->cols[c].data;
	raw.n = 0;
	put_defs(&raw);
	for (i = 1; i <= extra; i++) {
		put_byte(&raw, MP_SEC_MEMORY);
		put_v(&raw, i);
		put_v(&raw, 1);
		put_v(&raw, 1);
		put_v(&raw, 0);
	}
	put_chunk(&raw, MP_SEC_CHUNK2, 0, parts, lens, MP_PARTS);
	put_byte(&raw, MP_SEC_HORIZON);
	put_v(&raw, UINT64_MAX);
	write_capture(path, 2, &raw, enc->events);
	mp__chunk_encoder_release(enc);
}

/* Two encoders wrote the same bytes: events, every part's length and
 * contents. */
static void assert_same_encoding(const mp_chunk_encoder_t enc[2], uint64_t lens[2][MP_PARTS])
{
	int c;

	assert_int_equal(enc[0].events, enc[1].events);
	for (c = 0; c < MP_PARTS; c++) {
		assert_int_equal(lens[0][c], lens[1][c]);
		assert_memory_equal(enc[0].cols[c].data, enc[1].cols[c].data, lens[0][c]);
	}
}

/* Ring records that exercise every part: 200 blocks allocated and freed
 * (more than the 64-slot cache holds), then allocated again in another
 * order (ALLOC_REUSED for those the cache still holds, ALLOC_REFREED for
 * the others), time deltas and sizes of every varint length 1..10, a WIDE
 * record, a realloc, and a context change. */
static size_t ring_records(uint64_t *r, uint64_t *t_out)
{
	size_t n = 0;
	uint64_t t = 1;
	int i;

	for (i = 0; i < 200; i++) {
		r[n++] = W0(MP_REC_ALLOC, 0, 8), r[n++] = t++, r[n++] = 0x100000 + (uint64_t)i * 0x40, r[n++] = 40;
	}
	for (i = 0; i < 200; i++) {
		r[n++] = W0(MP_REC_FREE, 0, 0), r[n++] = t++, r[n++] = 0x100000 + (uint64_t)((i * 7) % 200) * 0x40;
	}
	for (i = 0; i < 200; i++) {
		r[n++] = W0(MP_REC_ALLOC, 0, 0), r[n++] = t++, r[n++] = 0x100000 + (uint64_t)((i * 13) % 200) * 0x40;
		r[n++] = 24;
	}
	r[n++] = W0(MP_REC_CONTEXT, 0, 0), r[n++] = 2, r[n++] = 1, r[n++] = 0, r[n++] = 0;
	for (i = 0; i < 10; i++) { /* varints of 1 .. 10 bytes: dt and requested 2^(7i) */
		uint64_t v = i == 9 ? UINT64_MAX : 1ull << (7 * i);
		t += i == 9 ? (1ull << 63) : v; /* a 10-byte dt last */
		r[n++] = W0(MP_REC_ALLOC, 0, 0), r[n++] = t, r[n++] = 0x900000 + (uint64_t)i * 16, r[n++] = v;
	}
	r[n++] = W0(MP_REC_ALLOC, 0, 0) | MP_RING_WIDE, r[n++] = ++t, r[n++] = 0xa00000, r[n++] = 5,
	r[n++] = 5 + (1ull << 40);
	r[n++] = W0(MP_REC_REALLOC, 0, 4), r[n++] = ++t, r[n++] = 0xa00000, r[n++] = 0xb00008, r[n++] = 100;
	r[n++] = W0(MP_REC_FREE, 0, 0), r[n++] = ++t, r[n++] = 0xb00008;
	*t_out = t;
	return n;
}

static void test_encoder_roundtrip(void **state)
{
	static uint64_t ring[4096];
	uint64_t st[MP_ST_COUNT] = {0}, lens[MP_PARTS], t_end, kinds[16] = {0}, total = 0;
	mp_chunk_encoder_t enc;
	mp_capclock_t clock;
	char *path = mp_test_tmpfile("enc.memprof");
	const uint8_t *parts[MP_PARTS];
	static mp_event_t ev[1024];
	mp_diag_t diag;
	size_t nw, n, i, j;
	int rc, c;

	(void)state;
	memset(&enc, 0, sizeof(enc));
	memset(&clock, 0, sizeof(clock)); /* no TSC: times are taken as they are */
	nw = ring_records(ring, &t_end);
	assert_int_equal(mp__chunk_encode(&enc, ring, nw, nw, st, &clock, lens), 0);
	assert_int_equal(enc.consumed, nw);
	assert_int_equal(enc.events, 200 + 200 + 200 + 10 + 1 + 2 + 1);
	for (i = 0; i < lens[0]; i++)
		kinds[enc.cols[0].data[i] & MP_REC_KIND_MASK]++;
	/* frees of blocks of the chunk are aged where the age is not longer
	 * than the delta; of the 200 re-allocations, those whose cache slot
	 * still holds their address are REUSED, others REFREED where the
	 * number of frees since is not longer than the delta (both take
	 * place: 200 frees, 64 slots, ages of 1 and 2 bytes) */
	assert_true(kinds[MP_REC_FREE_AGED] > 0);
	assert_int_equal(kinds[MP_REC_FREE_AGED] + kinds[MP_REC_FREE], 201);
	assert_true(kinds[MP_REC_ALLOC_REUSED] > 0 && kinds[MP_REC_ALLOC_REFREED] > 0);
	assert_int_equal(kinds[MP_REC_ALLOC_REUSED] + kinds[MP_REC_ALLOC_REFREED] + kinds[MP_REC_ALLOC], 200 + 200 + 11);
	/* heads: one per varint; the 1..10-byte varints' tail bytes are there */
	assert_int_equal(lens[MP_HEAD(MP_COL_IDX)],
			 kinds[MP_REC_FREE_AGED] + kinds[MP_REC_ALLOC_REUSED] + kinds[MP_REC_ALLOC_REFREED]);
	assert_true(lens[MP_TAIL(MP_COL_SIZE)] >= 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9);
	assert_true(lens[MP_TAIL(MP_COL_TIME)] >= 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9);
	for (c = 0; c < MP_PARTS; c++) {
		parts[c] = enc.cols[c].data;
		total += lens[c];
	}
	{ /* the parts, back to back, pass the reader's check */
		static uint8_t flat[1 << 16];
		size_t at = 0;
		assert_true(total <= sizeof(flat));
		for (c = 0; c < MP_PARTS; c++) {
			memcpy(flat + at, parts[c], lens[c]);
			at += lens[c];
		}
		assert_int_equal(mp__chunk_check(flat, lens, total), 0);
		assert_int_equal(mp__chunk_check(flat, lens, total + 1), -1);
	}

	write_encoded(path, &enc, lens, 0);
	n = read_heap(path, ev, 1024, &rc, &diag);
	assert_int_equal(rc, 0);
	assert_int_equal(n, enc.events);

	/* every event as the ring records say */
	for (i = 0, j = 0; i < nw; j++) {
		unsigned kind = (unsigned)ring[i] & 0xff;
		uint64_t diff = (uint64_t)(int64_t)(int32_t)(ring[i] >> 32);
		if (kind == MP_REC_CONTEXT) {
			i += 5;
			j--;
			continue;
		}
		assert_true(ev[j].time_ns == ring[i + 1]);
		if (kind == MP_REC_ALLOC) {
			assert_int_equal(ev[j].kind, MP_EV_ALLOC);
			assert_true(ev[j].address == ring[i + 2]);
			assert_true(ev[j].requested_bytes == ring[i + 3]);
			if (ring[i] & MP_RING_WIDE) {
				assert_true(ev[j].allocated_bytes == ring[i + 4]);
				i += 5;
			} else {
				assert_true(ev[j].allocated_bytes == ring[i + 3] + diff);
				i += 4;
			}
		} else if (kind == MP_REC_FREE) {
			assert_int_equal(ev[j].kind, MP_EV_FREE);
			assert_true(ev[j].address == ring[i + 2]);
			i += 3;
		} else {
			assert_int_equal(kind, MP_REC_REALLOC);
			assert_int_equal(ev[j].kind, MP_EV_FREE);
			assert_true(ev[j].address == ring[i + 2]);
			j++;
			assert_int_equal(ev[j].kind, MP_EV_ALLOC);
			assert_true(ev[j].flags & MP_EVENT_F_REALLOC);
			assert_true(ev[j].address == ring[i + 3]);
			assert_true(ev[j].requested_bytes == 100 && ev[j].allocated_bytes == 104);
			i += 5;
		}
	}
	assert_int_equal(j, n);
	/* the context change holds for the allocations after it */
	assert_int_equal(ev[599].op, 0);
	assert_int_equal(ev[600].op, 2);
	assert_int_equal(ev[600].region, 1);
	assert_true(ev[n - 1].time_ns == t_end);
	unlink(path);
	free(path);
}

/* The encoder's two variants (chunkenc.c: BMI2 where the CPU has it, and
 * the portable one) write the same bytes, with and without ages; the
 * portable one's output is what the round trip above checks when the
 * machine lacks BMI2, the BMI2 one's otherwise. */
static void test_encoder_variants(void **state)
{
	static uint64_t ring[4096];
	mp_chunk_encoder_t enc[2];
	mp_capclock_t clock;
	uint64_t t_end, lens[2][MP_PARTS];
	size_t nw;
	int v, ages;

	(void)state;
	memset(&clock, 0, sizeof(clock));
	nw = ring_records(ring, &t_end);
	for (ages = 0; ages < 2; ages++) {
		for (v = 0; v < 2; v++) {
			uint64_t st[MP_ST_COUNT] = {0};
			memset(&enc[v], 0, sizeof(enc[v]));
			enc[v].no_ages = !ages;
			mp__cpu_features_limit(v ? 0 : ~0u); /* v = 1: the portable variant */
			assert_int_equal(mp__chunk_encode(&enc[v], ring, nw, nw, st, &clock, lens[v]), 0);
			assert_int_equal(enc[v].consumed, nw);
		}
		mp__cpu_features_limit(~0u);
		assert_same_encoding(enc, lens);
		/* the time deltas of 1..10 bytes and sizes of every length are
		 * there: every length of the put() short path and the long one */
		assert_true(lens[0][MP_TAIL(MP_COL_TIME)] >= 45 && lens[0][MP_TAIL(MP_COL_SIZE)] >= 45);
		for (v = 0; v < 2; v++)
			mp__chunk_encoder_release(&enc[v]);
	}
}

/* The batched loop for ALLOC, FREE and REALLOC records (chunkenc.c,
 * run_x) writes what the general loop writes for them, record by record:
 * random records of a small address pool (so that cache hits, aged frees
 * and refreed allocations happen), sizes exact, glibc-usable and other,
 * values of 2^28 and more now and then (which the batch leaves to the
 * general loop), WIDE records, memory ids and contexts that change; in
 * chunks that end at a limit and carry their state into the next; each
 * variant, with and without ages. */
static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void test_encoder_run_matches_general(void **state)
{
	static uint64_t ring[1 << 16];
	static const int64_t diffs[4] = {0, 8, -3, 1 << 20};
	mp_chunk_encoder_t enc[2];
	mp_capclock_t clock;
	uint64_t t = 1000, pool[300];
	size_t nw = 0, i;
	unsigned mem = 0;
	int v, ages, k;

	(void)state;
	memset(&clock, 0, sizeof(clock));
	for (i = 0; i < 300; i++)
		pool[i] = 0x7f0000100000ull + (rnd() % 4096) * (i % 7 ? 16 : 8);
	while (nw < sizeof(ring) / 8 - 16 - 5 * 400) {
		uint64_t x = rnd(), a = pool[x % 300], req = 16 + (x >> 20) % 5000, w0;
		unsigned kind;
		int64_t d = diffs[(x >> 40) & 3];

		if (d == 8) /* glibc's usable size */
			d = (int64_t)mp_usable16(req) - (int64_t)req;
		t += (x >> 50) & 0xff;
		if ((x >> 33) % 97 == 0)
			t += 1ull << 30; /* a time delta of 2^28 or more */
		if ((x >> 34) % 89 == 0)
			a ^= 1ull << 44; /* an address delta of 2^28 or more */
		if ((x >> 35) % 83 == 0)
			req += 1ull << 29; /* a size of 2^28 or more */
		if ((x >> 36) % 251 == 0)
			mem = (mem + 1) % 3; /* another memory id */
		if ((x >> 37) % 211 == 0) {
			ring[nw++] = W0(MP_REC_CONTEXT, 0, 0), ring[nw++] = x & 7, ring[nw++] = 1, ring[nw++] = 0,
			ring[nw++] = 0;
			continue;
		}
		kind = (x >> 8) % 16 < 7 ? MP_REC_ALLOC : (x >> 8) % 16 < 14 ? MP_REC_FREE : MP_REC_REALLOC;
		w0 = W0(kind, mem, d);
		if ((x >> 38) % 101 == 0 && kind != MP_REC_FREE)
			w0 = W0(kind, mem, 0) | MP_RING_WIDE;
		ring[nw++] = w0, ring[nw++] = t;
		if (kind == MP_REC_REALLOC)
			ring[nw++] = pool[(x >> 24) % 300];
		ring[nw++] = a;
		if (kind != MP_REC_FREE) {
			ring[nw++] = req;
			if (w0 & MP_RING_WIDE)
				ring[nw++] = req + 40;
		}
	}
	/* REALLOCs in a row, more than a batch of the batched loop holds */
	for (i = 0; i < 400; i++) {
		t += 3;
		ring[nw++] = W0(MP_REC_REALLOC, 0, 8), ring[nw++] = t, ring[nw++] = pool[i % 300];
		ring[nw++] = pool[(i + 1) % 300], ring[nw++] = 100;
	}
	for (ages = 0; ages < 2; ages++)
		for (k = 0; k < 2; k++) {
			uint64_t st[2][MP_ST_COUNT] = {{0}};
			size_t pos[2] = {0, 0};
			for (v = 0; v < 2; v++) {
				memset(&enc[v], 0, sizeof(enc[v]));
				enc[v].no_run = v;
				enc[v].no_ages = !ages;
			}
			mp__cpu_features_limit(k ? 0 : ~0u); /* k = 1: the portable variant */
			while (pos[0] < nw) {
				uint64_t lens[2][MP_PARTS];
				size_t n = nw - pos[0], limit = n > 3000 ? 2000 + rnd() % 1000 : n;
				for (v = 0; v < 2; v++)
					assert_int_equal(
						mp__chunk_encode(&enc[v], ring + pos[v], n, limit, st[v], &clock, lens[v]),
						0);
				assert_int_equal(enc[0].consumed, enc[1].consumed);
				assert_same_encoding(enc, lens);
				assert_memory_equal(st[0], st[1], sizeof(st[0]));
				for (v = 0; v < 2; v++)
					pos[v] += enc[v].consumed;
			}
			for (v = 0; v < 2; v++)
				mp__chunk_encoder_release(&enc[v]);
			mp__cpu_features_limit(~0u);
		}
}

/* The encoder converts TSC readings through the clock's lines, keeping the
 * line it found between records (chunkenc.c, clock_cache_t): readings
 * that move between lines, before the oldest one, back in time (clamped),
 * on a ring of lines whose newest is not at index 0, with a stale line past
 * count; and ALLOC and FREE records that change the memory id. Times worked
 * out by hand from the lines: ns = ns0 + (tsc - tsc0) * mult / 2^32. */
static void test_encoder_clock_lines(void **state)
{
	static const struct {
		unsigned kind, mem;
		uint64_t raw, addr, ns;
	} rec[] = {
		{MP_REC_FREE, 0, 900, 0x1000, 300},    /* before A: A, extended back */
		{MP_REC_FREE, 0, 1000, 0x2000, 500},   /* A */
		{MP_REC_ALLOC, 1, 1500, 0x3000, 1500}, /* A */
		{MP_REC_FREE, 1, 1999, 0x4000, 2498},  /* A */
		{MP_REC_FREE, 2, 2000, 0x5000, 2600},  /* B */
		{MP_REC_ALLOC, 2, 2100, 0x6000, 2650}, /* B: half a ns a tick */
		{MP_REC_FREE, 0, 3000, 0x7000, 3200},  /* C */
		{MP_REC_FREE, 0, 3100, 0x8000, 3300},  /* C */
		{MP_REC_ALLOC, 1, 2500, 0x9000, 3300}, /* B (2725), time never goes back */
		{MP_REC_FREE, 1, 5000, 0xa000, 5200},  /* C */
		{MP_REC_FREE, 0, 1200, 0xb000, 5200},  /* A (900), clamped */
		{MP_REC_ALLOC, 0, 5001, 0xc000, 5201}, /* C again */
	};
	const size_t nrec = sizeof(rec) / sizeof(rec[0]);
	uint64_t ring[64], st[MP_ST_COUNT] = {0}, lens[MP_PARTS];
	mp_chunk_encoder_t enc;
	mp_capclock_t clock;
	char *path = mp_test_tmpfile("clk.memprof");
	mp_event_t ev[32];
	mp_diag_t diag;
	size_t nw = 0, n, i;
	int rc;

	(void)state;
	for (i = 0; i < nrec; i++) {
		ring[nw++] = W0(rec[i].kind, rec[i].mem, 0);
		ring[nw++] = rec[i].raw;
		ring[nw++] = rec[i].addr;
		if (rec[i].kind == MP_REC_ALLOC)
			ring[nw++] = 32;
	}
	memset(&clock, 0, sizeof(clock));
	clock.use_tsc = 1;
	clock.count = 3;
	clock.newest = 1;
	clock.line[7] = (mp_tsc_line_t){.tsc0 = 1000, .ns0 = 500, .mult = 2ull << 32}; /* A, the oldest */
	clock.line[0] = (mp_tsc_line_t){.tsc0 = 2000, .ns0 = 2600, .mult = 1ull << 31}; /* B */
	clock.line[1] = (mp_tsc_line_t){.tsc0 = 3000, .ns0 = 3200, .mult = 1ull << 32}; /* C, the newest */
	clock.line[6] = (mp_tsc_line_t){.tsc0 = 0, .ns0 = 77777, .mult = 0};           /* past count: unused */
	memset(&enc, 0, sizeof(enc));
	assert_int_equal(mp__chunk_encode(&enc, ring, nw, nw, st, &clock, lens), 0);
	assert_int_equal(enc.consumed, nw);
	assert_int_equal(enc.events, nrec);
	assert_true(st[MP_ST_TIME] == 5201);
	assert_int_equal(st[MP_ST_MEMORY], 0);

	write_encoded(path, &enc, lens, 2); /* memories 1 and 2 */
	n = read_heap(path, ev, 32, &rc, &diag);
	assert_int_equal(rc, 0);
	assert_int_equal(n, nrec);
	for (i = 0; i < nrec; i++) {
		assert_int_equal(ev[i].kind, rec[i].kind == MP_REC_ALLOC ? MP_EV_ALLOC : MP_EV_FREE);
		assert_int_equal(ev[i].memory, rec[i].mem);
		assert_true(ev[i].time_ns == rec[i].ns);
		assert_true(ev[i].address == rec[i].addr);
	}
	unlink(path);
	free(path);
}

/* Writer to reader through the flusher: frees in one chunk, allocations at
 * the same addresses in the next (ages never reach back across chunks),
 * then both within one chunk. */
static void test_refreed_across_flushes(void **state)
{
	char *path = mp_test_tmpfile("rf.memprof");
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t *ev;
	size_t n, i, k = 0;
	int rc, round;

	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0, NULL, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "m", MP_MEMORY_HOST, 0), 0);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 300; i++)
			assert_int_equal(mp_writer_alloc(w, 0, 0x10000 + i * 0x30, 40, 40 + round), 0);
		if (round == 0)
			assert_int_equal(mp_writer_flush(w), 0);
		for (i = 0; i < 300; i++)
			assert_int_equal(mp_writer_free(w, 0, 0x10000 + ((i * 11) % 300) * 0x30), 0);
		if (round == 1)
			assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);
	n = read_all(path, &ev, &rc, &diag, NULL);
	assert_int_equal(rc, 0);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 300; i++, k++) {
			while (ev[k].kind == MP_EV_MEMORY)
				k++;
			assert_int_equal(ev[k].kind, MP_EV_ALLOC);
			assert_true(ev[k].address == 0x10000 + i * 0x30);
			assert_true(ev[k].allocated_bytes == 40u + (unsigned)round);
		}
		for (i = 0; i < 300; i++, k++) {
			assert_int_equal(ev[k].kind, MP_EV_FREE);
			assert_true(ev[k].address == 0x10000 + ((i * 11) % 300) * 0x30);
		}
	}
	assert_int_equal(k, n);
	free(ev);
	unlink(path);
	free(path);
}

/* Through the writer: 240,000 events in one thread over several flushes,
 * first with sizes whose varints' first bytes are uniformly random (that
 * part is stored, and after the first such segment flush.c stores it
 * without analysing it, re-checking every 16th, while the other parts are
 * coded, small ones joined), then with one size (the part becomes
 * compressible again). Every event must read back as written. */
static void test_noise_parts_round_trip(void **state)
{
	char *path = mp_test_tmpfile("noise.memprof");
	const size_t n = 240000;
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t *ev;
	uint64_t x = 0x9E3779B97F4A7C15ull, *addr = malloc(n * sizeof(uint64_t)), *req = malloc(n * sizeof(uint64_t));
	size_t got, i, k = 0;
	int rc;

	(void)state;
	assert_non_null(addr);
	assert_non_null(req);
	assert_int_equal(mp_writer_open(&w, path, 0, NULL, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "m", MP_MEMORY_HOST, 0), 0);
	for (i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		addr[i] = 0x10000000 + (x & 0xffffff0);
		req[i] = i < n / 2 ? (x >> 40) & 0xff : 64; /* uniform 0..255: its varints' first bytes are too */
		if (i % 2 == 0)
			assert_int_equal(mp_writer_alloc(w, 0, addr[i], req[i], req[i]), 0);
		else
			assert_int_equal(mp_writer_free(w, 0, addr[i - 1]), 0);
		if (i % 50000 == 49999)
			assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);
	got = read_all(path, &ev, &rc, &diag, NULL);
	assert_int_equal(rc, 0);
	for (i = 0; i < n; i++, k++) {
		while (k < got && ev[k].kind == MP_EV_MEMORY)
			k++;
		assert_true(k < got);
		if (i % 2 == 0) {
			assert_int_equal(ev[k].kind, MP_EV_ALLOC);
			assert_true(ev[k].address == addr[i]);
			assert_true(ev[k].requested_bytes == req[i]);
			assert_true(ev[k].allocated_bytes == req[i]);
		} else {
			assert_int_equal(ev[k].kind, MP_EV_FREE);
			assert_true(ev[k].address == addr[i - 1]);
		}
	}
	assert_int_equal(k, got);
	free(ev);
	free(addr);
	free(req);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1_capture_reads),   cmocka_unit_test(test_v2_by_hand),
		cmocka_unit_test(test_check_parts),        cmocka_unit_test(test_encoder_roundtrip),
		cmocka_unit_test(test_refreed_across_flushes), cmocka_unit_test(test_encoder_clock_lines),
		cmocka_unit_test_teardown(test_encoder_variants, mp_test_all_features),    cmocka_unit_test(test_noise_parts_round_trip),
		cmocka_unit_test_teardown(test_encoder_run_matches_general, mp_test_all_features),
	};
	return cmocka_run_group_tests_name("chunk2", tests, NULL, NULL);
}
