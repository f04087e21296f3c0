/* test_tally_round.c - the writer's SUMMARY figures through its flush
 * rounds (src/core/write/tally_round.c, tally_decode.c): the ways the
 * round's loops leave their fast path (addresses of 2^53 and up, a block
 * in the stash), and random events of one, two and five threads against
 * the reader's replay.
 */
#include "test_common.h"

#include "tally.h"
#include "tally_test.h"

#include <memprof/capture.h>

#include <pthread.h>

/* Addresses of 2^53 and up (keys not one to one: tally.h): two memory ids
 * at one such address, and a second address with the same key, kept
 * apart from each other and from a low address with the same low bits. */
static void test_tally_high(void **state)
{
	const uint64_t a = 0x00ff000000001000ull, b = 0x01ff000000001000ull;
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_t *w = open_writer(path, 0);
	mp_capture_summary_t s;
	const mp_summary_memory_t *h, *d;

	(void)state;
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	assert_int_equal(mp_writer_memory(w, "gpu0", MP_MEMORY_DEVICE, 0), 1);
	assert_int_equal(mp__tally_key(a, 0), mp__tally_key(b, 0));
	/* host live after each:                                       */
	mp_writer_alloc(w, 0, a, 100, 112);    /* 112                  */
	mp_writer_alloc(w, 1, a, 200, 200);    /* (gpu0: 200)          */
	mp_writer_alloc(w, 0, b, 300, 304);    /* 416                  */
	mp_writer_alloc(w, 0, 0x1000, 400, 0); /* 816: the peak        */
	mp_writer_free(w, 0, a);               /* 704                  */
	mp_writer_free(w, 0, a);               /* not live: 704        */
	mp_writer_free(w, 1, a);               /* (gpu0: 0)            */
	mp_writer_free(w, 0, b);               /* 400                  */
	assert_int_equal(mp_writer_close(w), 0);

	read_summary(path, &s);
	assert_true(s.available);
	assert_non_null(h = mp_capture_summary_find(&s, "host"));
	assert_non_null(d = mp_capture_summary_find(&s, "gpu0"));
	assert_int_equal(h->allocations, 3);
	assert_int_equal(h->frees, 3);
	assert_int_equal(h->peak_bytes, 816);
	assert_int_equal(h->peak_requested, 800);
	assert_int_equal(h->live_blocks, 1);
	assert_int_equal(h->live_bytes, 400);
	assert_int_equal(d->allocations, 1);
	assert_int_equal(d->frees, 1);
	assert_int_equal(d->peak_bytes, 200);
	assert_int_equal(d->live_blocks, 0);
	assert_int_equal(d->live_bytes, 0);
	mp_capture_summary_free(&s);
	unlink(path);
	free(path);
}

/* The stash through a flush round (tally_round.c's loops, not
 * mp__tally_apply alone): five blocks whose buckets are the same two of
 * the first table (2048 buckets), the fifth in the stash; the first freed,
 * which makes room in the buckets; the fifth allocated again. While the
 * stash holds a block no event may take the fast way: this one would put
 * a second block in the buckets and count the stash's too. */
static void test_tally_stash_round(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_t *w = open_writer(path, 0);
	mp_capture_summary_t s;
	const mp_summary_memory_t *h;
	uint64_t addr[5], a;
	int k = 0;

	(void)state;
	for (a = 0x1000; k < 5; a += 16) {
		uint64_t x = mp__tally_hash(mp__tally_key(a, 0));
		if ((x >> 53) + (x & 2047) == 1) /* buckets 0 and 1 */
			addr[k++] = a;
	}
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	for (k = 0; k < 5; k++)
		mp_writer_alloc(w, 0, addr[k], 100, 100); /* 500 */
	mp_writer_free(w, 0, addr[0]);                    /* 400 */
	mp_writer_alloc(w, 0, addr[4], 7, 7);             /* 100 dropped: 307 */
	assert_int_equal(mp_writer_close(w), 0);
	read_summary(path, &s);
	assert_non_null(h = mp_capture_summary_find(&s, "host"));
	assert_int_equal(h->peak_bytes, 500);
	assert_int_equal(h->live_blocks, 4);
	assert_int_equal(h->live_bytes, 307);
	mp_capture_summary_free(&s);
	unlink(path);
	free(path);
}

/* --- random events against the reader's replay ---------------------------- */

/* 1, 2 and 5 threads (the tally's three ways of merging), their writer's
 * figures against mp_capture_summary_replay's (the reader's events by the
 * solver's rules: code the tally shares nothing with). */
static void test_tally_random(void **state)
{
	static const int threads[] = {1, 2, 5};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(threads) / sizeof(threads[0]); k++) {
		char *path = mp_test_tmpfile(".memprof");
		mp_writer_t *w = open_writer(path, 1);
		mp_capture_summary_t s;

		rnd_run(w, threads[k], 0x9E3779B97F4A7C15ull, 1);
		assert_int_equal(mp_writer_close(w), 0);
		check_against_replay(path, &s);
		/* (something to compare: every kind of event happened) */
		assert_true(s.memories[0].allocations > 1000 && s.memories[0].frees > 1000);
		assert_true(s.memories[0].reallocs > 500 && s.memories[0].failed > 500);
		assert_true(s.memories[0].live_blocks > 0);
		mp_capture_summary_free(&s);
		unlink(path);
		free(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tally_high),
		cmocka_unit_test(test_tally_stash_round),
		cmocka_unit_test(test_tally_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
