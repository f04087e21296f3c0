/* cupti_dump.c - the dump file's header and its parser
 * (memprof/cupti_dump.h). Pure: the file is given in memory. */
#include <memprof/cupti_dump.h>

#include "cupti_layout.h"

#include <string.h>

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

void mp_cupti_dump_header(uint8_t *out, uint32_t cupti_version, uint64_t origin_ns)
{
	memset(out, 0, MP_CUPTI_DUMP_HEADER);
	memcpy(out, MP_CUPTI_DUMP_MAGIC, 8); /* with its NUL */
	put32(out + 8, MP_CUPTI_DUMP_VERSION);
	put32(out + 12, cupti_version);
	put32(out + 16, MP_CUPTI_MEM1_SIZE);
	put32(out + 20, MP_CUPTI_MEM4_SIZE);
	put32(out + 24, MP_CUPTI_POOL3_SIZE);
	memcpy(out + 32, &origin_ns, 8);
}

int mp_cupti_dump_parse(const uint8_t *data, size_t size, const char *path, mp_cupti_dump_header_t *h,
			int (*on_buffer)(void *arg, const uint8_t *buf, size_t valid), void *arg, mp_diag_t *diag)
{
	static const uint32_t known[3] = {MP_CUPTI_MEM1_SIZE, MP_CUPTI_MEM4_SIZE, MP_CUPTI_POOL3_SIZE};
	size_t at = MP_CUPTI_DUMP_HEADER;
	int i, rc;

	mp_diag_clear(diag);
	mp_diag_set_file(diag, path);
	if (size < MP_CUPTI_DUMP_HEADER || memcmp(data, MP_CUPTI_DUMP_MAGIC, 8))
		return mp_diag_set(diag, MP_EFORMAT, 0, -1, "not a CUPTI buffer dump: expected the magic \"MPCUPTI\" and "
				   "a %d-byte header", MP_CUPTI_DUMP_HEADER);
	h->version = mp__cupti_u32(data, 8);
	h->cupti_version = mp__cupti_u32(data, 12);
	for (i = 0; i < 3; i++)
		h->sizes[i] = mp__cupti_u32(data, 16 + 4 * (unsigned)i);
	h->origin_ns = mp__cupti_u64(data, 32);
	if (h->version != MP_CUPTI_DUMP_VERSION)
		return mp_diag_set(diag, MP_EVERSION, 8, -1, "dump format version %u, expected %d", h->version,
				   MP_CUPTI_DUMP_VERSION);
	for (i = 0; i < 3; i++)
		if (h->sizes[i] != known[i])
			return mp_diag_set(diag, MP_EVERSION, 16 + 4 * i, -1,
					   "record size %u in the header, memprof reads %u-byte records (CUPTI %u "
					   "wrote this dump)", h->sizes[i], known[i], h->cupti_version);
	for (i = 0; at < size; i++) {
		uint64_t n;
		if (size - at < 8)
			return mp_diag_set(diag, MP_ETRUNCATED, (int64_t)at, i,
					   "buffer %d: expected an 8-byte length, %zu bytes left", i, size - at);
		memcpy(&n, data + at, 8);
		if (n > MP_CUPTI_DUMP_MAX_BUFFER)
			return mp_diag_set(diag, MP_ELIMIT, (int64_t)at, i,
					   "buffer %d: length %llu is more than %u bytes", i, (unsigned long long)n,
					   MP_CUPTI_DUMP_MAX_BUFFER);
		at += 8;
		if (n > size - at)
			return mp_diag_set(diag, MP_ETRUNCATED, (int64_t)at, i,
					   "buffer %d: %llu bytes announced, %zu left in the file", i,
					   (unsigned long long)n, size - at);
		if (on_buffer && (rc = on_buffer(arg, data + at, (size_t)n)))
			return rc;
		at += (size_t)n;
		at += (8 - (n & 7)) & 7;
		if (at > size)
			at = size; /* the last buffer's padding may be missing */
	}
	return 0;
}
