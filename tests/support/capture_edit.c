/* capture_edit.c - see memprof/capture_edit.h. The frame of a block
 * (docs/format.md "Blocks"): "MPBK", index, payload length, raw length,
 * flags, the payload's CRC-32, the CRC-32 of the 20 bytes before it; then
 * the payload, raw deflate. */
#include <setjmp.h> /* (cmocka 1.1 needs these first) */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <memprof/capture_edit.h>
#include <memprof/format.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

uint8_t *mp_test_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *d;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	d = malloc(*size ? *size : 1);
	assert_non_null(d);
	assert_int_equal(fread(d, 1, *size, f), *size);
	fclose(f);
	return d;
}

uint64_t mp_test_getv(const uint8_t **p)
{
	uint64_t v = 0;
	int s = 0;

	do
		v |= (uint64_t)(**p & 0x7f) << s, s += 7;
	while (*(*p)++ & 0x80);
	return v;
}

uint8_t *mp_test_round_section(uint8_t *raw, size_t len, int tag)
{
	const uint8_t *p = raw;

	if (len <= 3 || *p++ != MP_SEC_HORIZON)
		return NULL;
	mp_test_getv(&p);
	if (*p++ != MP_SEC_SUMMARY)
		return NULL;
	p += mp_test_getv(&p);
	if (*p == MP_SEC_ROUND && tag != MP_SEC_ROUND) { /* (2.5) the round's timeline figures */
		p++;
		p += mp_test_getv(&p);
	}
	return *p == tag ? raw + (p + 1 - raw) : NULL;
}

/* Block at `at` written back from raw: deflated, its frame made right. */
static void write_back(const char *out, const uint8_t *d, size_t size, size_t at, uint32_t plen, const uint8_t *raw,
		       uint32_t rlen)
{
	uLong bound = compressBound(rlen) + 64;
	uint8_t *z = malloc(bound), hdr[24];
	z_stream zs;
	uint32_t v;
	FILE *f;

	assert_non_null(z);
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)raw;
	zs.avail_in = rlen;
	zs.next_out = z;
	zs.avail_out = (uInt)bound;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	deflateEnd(&zs);
	memcpy(hdr, d + at, 24);
	v = (uint32_t)(bound - zs.avail_out);
	memcpy(hdr + 8, &v, 4);
	v = (uint32_t)crc32(0, z, (uInt)(bound - zs.avail_out));
	memcpy(hdr + 16, &v, 4);
	v = (uint32_t)crc32(0, hdr, 20);
	memcpy(hdr + 20, &v, 4);
	f = fopen(out, "wb");
	assert_non_null(f);
	fwrite(d, 1, at, f);
	fwrite(hdr, 1, 24, f);
	fwrite(z, 1, bound - zs.avail_out, f);
	fwrite(d + at + 24 + plen, 1, size - (at + 24 + plen), f);
	fclose(f);
	free(z);
}

void mp_test_edit_block(const char *in, const char *out, mp_test_edit_fn fn, void *ctx, const char *what,
			uint64_t *index, uint64_t *offset)
{
	size_t size, at;
	uint8_t *d = mp_test_read_file(in, &size);
	uint32_t hlen;

	memcpy(&hlen, d + 12, 4);
	for (at = 16 + hlen + 4; at + 24 <= size && !memcmp(d + at, "MPBK", 4);) {
		uint32_t plen, rlen, idx;
		uint8_t *raw;
		z_stream z;
		memcpy(&idx, d + at + 4, 4);
		memcpy(&plen, d + at + 8, 4);
		memcpy(&rlen, d + at + 12, 4);
		raw = malloc(rlen + 1);
		assert_non_null(raw);
		memset(&z, 0, sizeof(z));
		assert_int_equal(inflateInit2(&z, -15), Z_OK);
		z.next_in = d + at + 24;
		z.avail_in = plen;
		z.next_out = raw;
		z.avail_out = rlen;
		assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
		inflateEnd(&z);
		if (fn(ctx, raw, rlen, idx)) {
			write_back(out, d, size, at, plen, raw, rlen);
			*index = idx;
			*offset = at;
			free(raw);
			free(d);
			return;
		}
		free(raw);
		at += 24 + plen;
	}
	free(d);
	fail_msg("%s: %s", in, what);
}

static int bump_checkpoint(void *ctx, uint8_t *raw, size_t len, uint64_t index)
{
	const uint64_t *block = ctx;
	uint8_t *body = mp_test_round_section(raw, len, MP_SEC_CHECKPOINT), *size;
	const uint8_t *p = body;

	if (!body || (*block != UINT64_MAX && index != *block))
		return 0;
	mp_test_getv(&p);                                         /* body length */
	mp_test_getv(&p), mp_test_getv(&p), mp_test_getv(&p);     /* flags, horizon, events */
	if (!mp_test_getv(&p))                                    /* memory ids with blocks */
		return 0;
	mp_test_getv(&p), mp_test_getv(&p), mp_test_getv(&p), mp_test_getv(&p); /* m, id, count, address */
	size = raw + (p - raw);
	assert_true((*size & 0x7f) != 0x7f);
	(*size)++;
	return 1;
}

void mp_test_damage_checkpoint(const char *in, const char *out, uint64_t block, uint64_t *index, uint64_t *offset)
{
	mp_test_edit_block(in, out, bump_checkpoint, &block, "no checkpoint with live blocks", index, offset);
}
