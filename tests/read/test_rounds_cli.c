/* test_rounds_cli.c - test_rounds.c's damaged ROUND and the timeline
 * chart from rounds against the full replay's (see there). */
#include "test_common.h"

#include "test_rounds.h"

#include <memprof/format.h>
#include <memprof/rounds.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *d;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	d = malloc(*size);
	assert_int_equal(fread(d, 1, *size, f), *size);
	fclose(f);
	return d;
}

static uint64_t getv(const uint8_t **p)
{
	uint64_t v = 0;
	int s = 0;

	do
		v |= (uint64_t)(**p & 0x7f) << s, s += 7;
	while (*(*p)++ & 0x80);
	return v;
}

/* The n-th block (0: the first) whose raw data starts HORIZON, SUMMARY,
 * ROUND with a memory id, its first memory's live bytes made one larger
 * (their low 7 bits not all set), written to out; *index and *offset:
 * that block's. */
static void damage(const char *in, const char *out, int nth, uint64_t *index, uint64_t *offset)
{
	size_t size, at;
	uint8_t *d = slurp(in, &size);
	uint32_t hlen;

	memcpy(&hlen, d + 12, 4);
	for (at = 16 + hlen + 4; at + 24 <= size && !memcmp(d + at, "MPBK", 4);) {
		uint32_t plen, rlen, idx, v;
		uint8_t *raw;
		const uint8_t *p;
		z_stream z;
		memcpy(&idx, d + at + 4, 4);
		memcpy(&plen, d + at + 8, 4);
		memcpy(&rlen, d + at + 12, 4);
		raw = malloc(rlen + 1);
		memset(&z, 0, sizeof(z));
		assert_int_equal(inflateInit2(&z, -15), Z_OK);
		z.next_in = d + at + 24;
		z.avail_in = plen;
		z.next_out = raw;
		z.avail_out = rlen;
		assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
		inflateEnd(&z);
		p = raw;
		if (rlen > 3 && *p++ == MP_SEC_HORIZON && (getv(&p), *p++ == MP_SEC_SUMMARY)) {
			p += getv(&p);
			if (*p++ == MP_SEC_ROUND) {
				getv(&p);                               /* body length */
				getv(&p), getv(&p), getv(&p), getv(&p), getv(&p); /* flags, horizon, start, step, events */
				if (getv(&p) && nth-- == 0) {
					uLong bound = compressBound(rlen) + 64;
					uint8_t *zb = malloc(bound), hdr[24], *lp;
					z_stream zs;
					FILE *f;
					getv(&p), getv(&p); /* id, field count */
					lp = raw + (p - raw);
					assert_true((*lp & 0x7f) != 0x7f);
					(*lp)++;
					memset(&zs, 0, sizeof(zs));
					assert_int_equal(deflateInit2(&zs, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
					zs.next_in = raw;
					zs.avail_in = rlen;
					zs.next_out = zb;
					zs.avail_out = (uInt)bound;
					assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
					deflateEnd(&zs);
					memcpy(hdr, d + at, 24);
					v = (uint32_t)(bound - zs.avail_out);
					memcpy(hdr + 8, &v, 4);
					v = (uint32_t)crc32(0, zb, (uInt)(bound - zs.avail_out));
					memcpy(hdr + 16, &v, 4);
					v = (uint32_t)crc32(0, hdr, 20);
					memcpy(hdr + 20, &v, 4);
					f = fopen(out, "wb");
					assert_non_null(f);
					fwrite(d, 1, at, f);
					fwrite(hdr, 1, 24, f);
					fwrite(zb, 1, bound - zs.avail_out, f);
					fwrite(d + at + 24 + plen, 1, size - (at + 24 + plen), f);
					fclose(f);
					*index = idx;
					*offset = at;
					free(zb);
					free(raw);
					free(d);
					return;
				}
			}
		}
		free(raw);
		at += 24 + plen;
	}
	fail_msg("%s: no round with a memory id", in);
}

void test_damaged(void **state)
{
	char dir[] = "/tmp/memprof-rounds-XXXXXX", file[256], bad[256], want[160];
	mp_capture_rounds_t ok, c;
	uint64_t index = 0, offset = 0;
	uint32_t dev, host;
	mp_diag_t diag;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/ok.memprof", dir);
	snprintf(bad, sizeof(bad), "%s/bad.memprof", dir);
	record_known(file, &dev, &host);
	damage(file, bad, 1, &index, &offset);
	assert_int_equal(mp_capture_rounds_read(file, &ok, &diag), 0);
	assert_int_equal(mp_capture_rounds_read(bad, &c, &diag), 0);
	/* said with its block and offset, and the round left out */
	assert_int_equal(c.bad, 1);
	snprintf(want, sizeof(want), "block %llu at offset %llu: bad round: live bytes of memory id %u disagree with the summary",
		 (unsigned long long)index, (unsigned long long)offset, dev);
	if (strcmp(c.bad_said[0], want))
		fail_msg("expected '%s', got '%s'", want, c.bad_said[0]);
	assert_int_equal(c.nrounds + 1, ok.nrounds);
	printf("damaged: %s\n", c.bad_said[0]);
	mp_capture_rounds_free(&ok);
	mp_capture_rounds_free(&c);
	unlink(file);
	unlink(bad);
	rmdir(dir);
}

/* The hover note of the peak's dot in an HTML page: "peak 7168 B (7.00 KiB)" */
static char *peak_note(const char *html)
{
	const char *p = strstr(html, "peak ");
	char *s;
	size_t n = 0;

	for (; p; p = strstr(p + 1, "peak "))
		if (p[5] >= '0' && p[5] <= '9')
			break;
	assert_non_null(p);
	while (p[n] && p[n] != '&' && p[n] != '"' && p[n] != '<')
		n++;
	s = strndup(p, n);
	assert_non_null(s);
	return s;
}

void test_chart(void **state)
{
	char dir[] = "/tmp/memprof-rounds-XXXXXX", cmd[1024], file[256], a[256], b[256];
	char *out, *err, *ha, *hb, *pa, *pb;
	uint32_t dev, host;
	size_t n;
	int st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/known.memprof", dir);
	snprintf(a, sizeof(a), "%s/rounds.html", dir);
	snprintf(b, sizeof(b), "%s/replay.html", dir);
	record_known(file, &dev, &host);
	snprintf(cmd, sizeof(cmd), "%s plot --chart timeline --device dev --rounds -o %s %s", MEMPROF_CLI, a, file);
	st = mp_test_capture(cmd, &out, &err);
	assert_int_equal(st, 0);
	assert_null(strstr(err, "replays every event"));
	free(out);
	free(err);
	snprintf(cmd, sizeof(cmd), "%s plot --chart timeline --device dev --replay -o %s %s", MEMPROF_CLI, b, file);
	assert_int_equal(mp_test_capture(cmd, &out, &err), 0);
	free(out);
	free(err);
	ha = (char *)slurp(a, &n);
	ha = realloc(ha, n + 1);
	ha[n] = '\0';
	hb = (char *)slurp(b, &n);
	hb = realloc(hb, n + 1);
	hb[n] = '\0';
	/* the same peak, in bytes, from the rounds (the SUMMARY's) and the replay */
	pa = peak_note(ha);
	pb = peak_note(hb);
	assert_string_equal(pa, "peak 7168 B (7.00 KiB)");
	assert_string_equal(pb, pa);
	/* and the same step: the peak's note's second line (its time is
	 * from each one's first point: the replay's is its first bucket's
	 * highest, not its first event) */
	assert_non_null(strstr(strstr(ha, "peak 7168 B (7.00 KiB)&#10;"), ", step 4\""));
	assert_non_null(strstr(strstr(hb, "peak 7168 B (7.00 KiB)&#10;"), ", step 4"));
	free(pa);
	free(pb);
	free(ha);
	free(hb);
	/* an old capture (2.0): the replay, said in one line */
	snprintf(cmd, sizeof(cmd), "%s plot --chart timeline -o %s %s/tests/read/fixtures/v20-gen.memprof", MEMPROF_CLI, a,
		 MEMPROF_SOURCE_DIR);
	assert_int_equal(mp_test_capture(cmd, &out, &err), 0);
	if (!strstr(err, "no round figures (a capture written before format 2.5): the timeline replays every event"))
		fail_msg("stderr: %s", err);
	free(out);
	free(err);
	unlink(a);
	unlink(b);
	unlink(file);
	rmdir(dir);
}
