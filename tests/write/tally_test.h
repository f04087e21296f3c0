/* tally_test.h - what the tally's tests share: a writer on a file, its
 * SUMMARY read back. */
#ifndef MP_TALLY_TEST_H
#define MP_TALLY_TEST_H

#include "test_common.h"

#include <memprof/capsummary.h>
#include <memprof/writer.h>

static inline mp_writer_t *open_writer(const char *path, uint32_t flush_ms)
{
	mp_writer_options_t o = {0};
	mp_writer_t *w;
	mp_diag_t diag;

	o.flush_interval_ms = flush_ms;
	assert_int_equal(mp_writer_open(&w, path, 0, &o, &diag), 0);
	return w;
}

static inline void read_summary(const char *path, mp_capture_summary_t *s)
{
	mp_diag_t diag;
	int rc = mp_capture_summary_read(path, s, &diag);

	if (rc)
		fprintf(stderr, "%s\n", diag.text);
	assert_int_equal(rc, 0);
}

#endif
