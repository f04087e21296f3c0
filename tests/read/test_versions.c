/* test_versions.c - what a reader says of a capture newer than itself
 * (issue 43: "old readers fail on the new capture with a clear version
 * message"). A section tag the reader does not know is corruption in a
 * file of its own version or older, and a section of a later version in
 * a newer one: the message says the capture's version and the reader's,
 * with the block and offset, instead of "corrupt". A later major version
 * is refused at the header. The capture is test_rounds.c's known one;
 * its first ROUND section's tag is made 14, which no version has. */
#include "test_common.h"

#include "test_rounds.h"

#include <memprof/capture_edit.h>
#include <memprof/error.h>
#include <memprof/format.h>
#include <memprof/format/varint.h>
#include <memprof/reader.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static int retag_round(void *ctx, uint8_t *raw, size_t len, uint64_t index)
{
	uint8_t *body = mp_test_round_section(raw, len, MP_SEC_ROUND);

	(void)ctx, (void)index;
	if (!body)
		return 0;
	assert_int_equal(body[-1], MP_SEC_ROUND);
	body[-1] = 14;
	return 1;
}

/* path with its header's version set to major.minor, the header's CRC
 * made right again (it covers the 16-byte prefix). */
static void set_version(const char *path, unsigned major, unsigned minor)
{
	size_t size;
	uint8_t *d = mp_test_read_file(path, &size);
	uint32_t hlen = mp_get_u32le(d + 12), crc;
	FILE *f;

	mp_put_u16le(d + 8, (uint16_t)major);
	mp_put_u16le(d + 10, (uint16_t)minor);
	crc = (uint32_t)crc32(0, d, MP_FILE_PREFIX_LEN + hlen);
	mp_put_u32le(d + MP_FILE_PREFIX_LEN + hlen, crc);
	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite(d, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
	free(d);
}

/* Every event of path: the reader's last result, *diag its message. */
static int read_all(const char *path, mp_diag_t *diag)
{
	mp_capture_t *cap = NULL;
	mp_event_t ev;
	int rc;

	mp_diag_clear(diag);
	if ((rc = mp_capture_open(&cap, path, diag)) < 0)
		return rc;
	while ((rc = mp_source_next(mp_capture_source(cap), &ev, diag)) == 1)
		;
	mp_capture_close(cap);
	return rc;
}

void test_versions(void **state)
{
	char dir[] = "/tmp/memprof-versions-XXXXXX", file[256], bad[256], want[256];
	uint64_t index = 0, offset = 0;
	uint32_t dev, host;
	mp_diag_t diag;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/ok.memprof", dir);
	snprintf(bad, sizeof(bad), "%s/bad.memprof", dir);
	record_known(file, &dev, &host);
	assert_int_equal(read_all(file, &diag), 0);
	mp_test_edit_block(file, bad, retag_round, NULL, "no ROUND section", &index, &offset);

	/* this version's own file: an unknown tag is corruption */
	assert_int_equal(read_all(bad, &diag), MP_ECORRUPT);
	snprintf(want, sizeof(want), "block %llu at offset %llu: unknown section (tag 14)", (unsigned long long)index,
		 (unsigned long long)offset);
	if (strcmp(diag.text, want))
		fail_msg("expected '%s', got '%s'", want, diag.text);

	/* a later minor version: a section it added */
	set_version(bad, MP_FORMAT_VERSION_MAJOR, MP_FORMAT_VERSION_MINOR + 7);
	assert_int_equal(read_all(bad, &diag), MP_EVERSION);
	snprintf(want, sizeof(want),
		 "block %llu at offset %llu: section tag 14 is newer than this memprof (the capture is format "
		 "%u.%u, this memprof reads 1.0 to %u.%u)",
		 (unsigned long long)index, (unsigned long long)offset, MP_FORMAT_VERSION_MAJOR,
		 MP_FORMAT_VERSION_MINOR + 7, MP_FORMAT_VERSION_MAJOR, MP_FORMAT_VERSION_MINOR);
	if (strcmp(diag.text, want))
		fail_msg("expected '%s', got '%s'", want, diag.text);
	printf("later minor: %s\n", diag.text);

	/* a later major version: refused at the header, at its offset */
	set_version(file, MP_FORMAT_VERSION_MAJOR + 1, 0);
	assert_int_equal(read_all(file, &diag), MP_EVERSION);
	assert_int_equal(diag.offset, 8);
	snprintf(want, sizeof(want),
		 "format version %u.0 is not supported (this memprof reads 1.0 to %u.%u: the capture was "
		 "written by a newer memprof)",
		 MP_FORMAT_VERSION_MAJOR + 1, MP_FORMAT_VERSION_MAJOR, MP_FORMAT_VERSION_MINOR);
	if (strcmp(diag.text, want))
		fail_msg("expected '%s', got '%s'", want, diag.text);

	/* the versions before: a 2.5 file (this layout) still reads */
	set_version(file, 2, 5);
	assert_int_equal(read_all(file, &diag), 0);
	unlink(file);
	unlink(bad);
	rmdir(dir);
}
