/* test_rounds_cli.c - test_rounds.c's damaged ROUND and the timeline
 * chart from rounds against the full replay's (see there). */
#include "test_common.h"

#include "test_rounds.h"

#include <memprof/capture_edit.h>
#include <memprof/format.h>
#include <memprof/rounds.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The nth round (0: the first) with a memory id in its ROUND: the first
 * memory's live bytes made one larger (their low 7 bits not all set). */
static int bump_round(void *ctx, uint8_t *raw, size_t len, uint64_t index)
{
	int *nth = ctx;
	uint8_t *body = mp_test_round_section(raw, len, MP_SEC_ROUND), *live;
	const uint8_t *p = body;

	(void)index;
	if (!body)
		return 0;
	mp_test_getv(&p); /* body length */
	mp_test_getv(&p), mp_test_getv(&p), mp_test_getv(&p), mp_test_getv(&p), mp_test_getv(&p); /* flags, horizon, start, step, events */
	if (!mp_test_getv(&p) || (*nth)-- != 0)
		return 0;
	mp_test_getv(&p), mp_test_getv(&p); /* id, field count */
	live = raw + (p - raw);
	assert_true((*live & 0x7f) != 0x7f);
	(*live)++;
	return 1;
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
	{
		int nth = 1;
		mp_test_edit_block(file, bad, bump_round, &nth, "no round with a memory id", &index, &offset);
	}
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
	ha = (char *)mp_test_read_file(a, &n);
	ha = realloc(ha, n + 1);
	ha[n] = '\0';
	hb = (char *)mp_test_read_file(b, &n);
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
