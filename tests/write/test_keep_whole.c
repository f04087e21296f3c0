/* test_keep_whole.c - a kept run's whole-run file stays small for days of
 * recording (issue 43: "a job can be recorded for days in bounded disk"):
 * it gets a ROUND only every `stride` rounds, of the span of rounds since
 * its last, and the stride doubles each time MEMPROF_KEEP_WHOLE_LEVEL_BYTES
 * more were written to it (wkeep.c, tally_rounds.c).
 *
 * A run of ROUNDS rounds (each ended by hand): round r allocates 10 blocks
 * of 100 B, frees round r - 1's, and fails one request of 777 B when r is
 * a multiple of 7; round SPIKE also allocates and frees one block of
 * SPIKE_BYTES. By hand: after every round 1000 B are live; the peak is
 * 2000 + SPIKE_BYTES, in round SPIKE; 43 failed allocations. The
 * whole-run file's rounds must then be far fewer than ROUNDS, each
 * starting where the one before ended, the last one final, the spans
 * growing; and, folded, exactly the run's figures: the most live bytes
 * (the peak, at the summary's peak time), the failures summed, 1000 B
 * live at every span's end. */
#include "test_common.h"

#include <memprof/capsummary.h>
#include <memprof/rounds.h>
#include <memprof/writer.h>

#include <stdlib.h>
#include <unistd.h>

#define ROUNDS 300
#define SPIKE 150
#define SPIKE_BYTES 5000000ull

static uint64_t addr(uint64_t r, uint64_t i)
{
	return (r + 1) << 20 | i << 8;
}

static void test_keep_whole_spans(void **state)
{
	char dir[] = "/tmp/memprof-keep-whole-XXXXXX", path[128], cmd[256];
	mp_writer_options_t o;
	mp_writer_t *w;
	mp_diag_t diag;
	mp_capture_rounds_t c;
	uint64_t max = 0, max_ns = 0, failed = 0, first_span, last_span;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/1.memprof", dir);
	memset(&o, 0, sizeof(o));
	o.flush_interval_ms = 60000; /* rounds by hand only */
	setenv("MEMPROF_KEEP_BYTES", "1048576", 1);
	setenv("MEMPROF_KEEP_SEGMENT_BYTES", "65536", 1);
	setenv("MEMPROF_KEEP_WHOLE_LEVEL_BYTES", "1000", 1);
	assert_int_equal(mp_writer_open(&w, path, 0, &o, &diag), 0);
	unsetenv("MEMPROF_KEEP_BYTES");
	unsetenv("MEMPROF_KEEP_SEGMENT_BYTES");
	unsetenv("MEMPROF_KEEP_WHOLE_LEVEL_BYTES");
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	for (uint64_t r = 0; r < ROUNDS; r++) {
		for (uint64_t i = 0; i < 10; i++)
			assert_int_equal(mp_writer_alloc(w, 0, addr(r, i), 100, 100), 0);
		if (r == SPIKE) {
			assert_int_equal(mp_writer_alloc(w, 0, 0x7f0000000000ull, SPIKE_BYTES, SPIKE_BYTES), 0);
			assert_int_equal(mp_writer_free(w, 0, 0x7f0000000000ull), 0);
		}
		if (r % 7 == 0)
			assert_int_equal(mp_writer_alloc_failed(w, 0, 777), 0);
		for (uint64_t i = 0; r && i < 10; i++)
			assert_int_equal(mp_writer_free(w, 0, addr(r - 1, i)), 0);
		assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);

	assert_int_equal(mp_capture_rounds_read(path, &c, &diag), 0);
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.summary.memories[0].peak_bytes, 2000 + SPIKE_BYTES);
	assert_int_equal(c.summary.memories[0].failed, 43);
	fprintf(stderr, "whole-run file: %zu rounds for %d\n", c.nrounds, ROUNDS);
	assert_true(c.nrounds >= 8 && c.nrounds <= ROUNDS / 4);
	for (size_t i = 0; i < c.nrounds; i++) {
		const mp_round_t *r = &c.rounds[i];
		const mp_round_memory_t *m = mp_round_memory(&c, r, 0);
		assert_int_equal(r->start_ns, i ? c.rounds[i - 1].horizon_ns : 0);
		assert_non_null(m);
		assert_int_equal(m->live, 1000);
		assert_true(m->min <= m->live && m->live <= m->max);
		if (m->max > max)
			max = m->max, max_ns = m->max_ns;
		failed += m->failed;
	}
	assert_true(c.rounds[c.nrounds - 1].horizon_ns == UINT64_MAX);
	assert_int_equal(max, 2000 + SPIKE_BYTES);
	assert_int_equal(max_ns, c.summary.memories[0].peak_time_ns);
	assert_int_equal(failed, 43);
	/* the spans grow: the first covers one round (21 or 22 events), a
	 * late one many */
	first_span = c.rounds[0].events;
	last_span = c.rounds[c.nrounds - 2].events - c.rounds[c.nrounds - 3].events;
	fprintf(stderr, "events in the first span %llu, in a late one %llu\n", (unsigned long long)first_span,
		(unsigned long long)last_span);
	assert_true(first_span <= 22);
	assert_true(last_span >= 8 * 21);
	mp_capture_rounds_free(&c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep_whole_spans),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
