/* capture_damage.h - a capture's first block inflated, changed by a test
 * and written back with its framing made right (the damage is in the
 * sections, not the checksums), and reading a damaged copy. */
#ifndef MP_TEST_CAPTURE_DAMAGE_H
#define MP_TEST_CAPTURE_DAMAGE_H

#include "test_common.h"

#include "capture_helpers.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct {
	uint8_t *data;
	size_t size, body;   /* file, offset of block 0 */
	uint8_t *raw;        /* block 0 inflated */
	uint32_t raw_len;
} file_t;

static inline void load(const char *path, file_t *f)
{
	FILE *fp = fopen(path, "rb");
	z_stream z;
	uint32_t hlen, plen;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	f->size = (size_t)ftell(fp);
	fseek(fp, 0, SEEK_SET);
	f->data = malloc(f->size);
	assert_int_equal(fread(f->data, 1, f->size, fp), f->size);
	fclose(fp);
	memcpy(&hlen, f->data + 12, 4);
	f->body = 16 + hlen + 4;
	memcpy(&plen, f->data + f->body + 8, 4);
	memcpy(&f->raw_len, f->data + f->body + 12, 4);
	f->raw = malloc(f->raw_len);
	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, -15), Z_OK);
	z.next_in = f->data + f->body + 24;
	z.avail_in = plen;
	z.next_out = f->raw;
	z.avail_out = f->raw_len;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	inflateEnd(&z);
}

/* Write f with block 0 replaced by f->raw (deflated again, lengths and
 * checksums made right: the damage is in the section, not the framing). */
static inline void store(const file_t *f, const char *path)
{
	uint32_t plen, v;
	uLong bound = compressBound(f->raw_len) + 64;
	uint8_t *out = malloc(bound), hdr[24];
	FILE *fp = fopen(path, "wb");
	z_stream z;

	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = f->raw;
	z.avail_in = f->raw_len;
	z.next_out = out;
	z.avail_out = (uInt)bound;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	plen = (uint32_t)(bound - z.avail_out);
	deflateEnd(&z);
	memcpy(&v, f->data + f->body + 8, 4);
	memcpy(hdr, f->data + f->body, 24);
	memcpy(hdr + 8, &plen, 4);
	memcpy(hdr + 12, &f->raw_len, 4);
	v = (uint32_t)crc32(0, out, plen);
	memcpy(hdr + 16, &v, 4);
	v = (uint32_t)crc32(0, hdr, 20);
	memcpy(hdr + 20, &v, 4);
	assert_non_null(fp);
	fwrite(f->data, 1, f->body, fp);
	fwrite(hdr, 1, 24, fp);
	fwrite(out, 1, plen, fp);
	{
		uint32_t old;
		memcpy(&old, f->data + f->body + 8, 4);
		fwrite(f->data + f->body + 24 + old, 1, f->size - (f->body + 24 + old), fp);
	}
	fclose(fp);
	free(out);
}

static uint8_t *find(const file_t *f, const uint8_t *pat, size_t n)
{
	size_t i;

	for (i = 0; i + n <= f->raw_len; i++)
		if (!memcmp(f->raw + i, pat, n))
			return f->raw + i;
	return NULL;
}

/* Read path; expect an error whose text contains what. */
static inline void expect_error(const char *path, const char *what)
{
	mp_event_t *ev;
	mp_diag_t diag;
	int rc;
	size_t n = read_all(path, &ev, &rc, &diag, NULL);

	free(ev);
	(void)n;
	assert_int_equal(rc, MP_ECORRUPT);
	if (!strstr(diag.text, what))
		fail_msg("expected '%s' in: %s", what, diag.text);
	assert_non_null(strstr(diag.text, "block 0 at offset"));
}


#endif
