/* handmade.c - captures built byte by byte for the reader's tests
 * (handmade.h). */
#include "test_common.h"

#include "capture_helpers.h"
#include "handmade.h"

#include <memprof/format.h>
#include <memprof/format/columns.h>
#include <memprof/format/varint.h>

#include <string.h>
#include <zlib.h>

static void put_bytes(buf_t *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

void put_byte(buf_t *b, uint8_t v)
{
	put_bytes(b, &v, 1);
}

void put_v(buf_t *b, uint64_t v)
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
void put_defs(buf_t *raw)
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
void put_chunk(buf_t *raw, uint8_t tag, uint64_t time, const uint8_t *const *parts, const uint64_t *lens,
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
void write_capture(const char *path, int major, const buf_t *raw, uint64_t events)
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
size_t read_heap(const char *path, mp_event_t *out, size_t max, int *rc, mp_diag_t *diag)
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
