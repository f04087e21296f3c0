/* test_flush.c - writer to reader through the flusher's rounds: addresses
 * freed in one chunk and allocated again in the next (ages never reach back
 * across chunks), and parts that look like noise -- stored, then stored
 * without a look and checked again every 16th segment (flush.c) -- next to
 * coded ones, until the part is compressible again. */
#include "test_common.h"

#include "capture_helpers.h"

#include <memprof/capture.h>

/* Writer to reader through the flusher: frees in one chunk, allocations at
 * the same addresses in the next (ages never reach back across chunks),
 * then both within one chunk. */
static void test_refreed_across_flushes(void **state)
{
	char *path = mp_test_tmpfile("rf.memprof");
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t *ev;
	size_t n, i, k = 0;
	int rc, round;

	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0, NULL, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "m", MP_MEMORY_HOST, 0), 0);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 300; i++)
			assert_int_equal(mp_writer_alloc(w, 0, 0x10000 + i * 0x30, 40, 40 + round), 0);
		if (round == 0)
			assert_int_equal(mp_writer_flush(w), 0);
		for (i = 0; i < 300; i++)
			assert_int_equal(mp_writer_free(w, 0, 0x10000 + ((i * 11) % 300) * 0x30), 0);
		if (round == 1)
			assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);
	n = read_all(path, &ev, &rc, &diag, NULL);
	assert_int_equal(rc, 0);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 300; i++, k++) {
			while (ev[k].kind == MP_EV_MEMORY)
				k++;
			assert_int_equal(ev[k].kind, MP_EV_ALLOC);
			assert_true(ev[k].address == 0x10000 + i * 0x30);
			assert_true(ev[k].allocated_bytes == 40u + (unsigned)round);
		}
		for (i = 0; i < 300; i++, k++) {
			assert_int_equal(ev[k].kind, MP_EV_FREE);
			assert_true(ev[k].address == 0x10000 + ((i * 11) % 300) * 0x30);
		}
	}
	assert_int_equal(k, n);
	free(ev);
	unlink(path);
	free(path);
}

/* Through the writer: 240,000 events in one thread over several flushes,
 * first with sizes whose varints' first bytes are uniformly random (that
 * part is stored, and after the first such segment flush.c stores it
 * without analysing it, re-checking every 16th, while the other parts are
 * coded, small ones joined), then with one size (the part becomes
 * compressible again). Every event must read back as written. */
static void test_noise_parts_round_trip(void **state)
{
	char *path = mp_test_tmpfile("noise.memprof");
	const size_t n = 240000;
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t *ev;
	uint64_t x = 0x9E3779B97F4A7C15ull, *addr = malloc(n * sizeof(uint64_t)), *req = malloc(n * sizeof(uint64_t));
	size_t got, i, k = 0;
	int rc;

	(void)state;
	assert_non_null(addr);
	assert_non_null(req);
	assert_int_equal(mp_writer_open(&w, path, 0, NULL, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "m", MP_MEMORY_HOST, 0), 0);
	for (i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		addr[i] = 0x10000000 + (x & 0xffffff0);
		req[i] = i < n / 2 ? (x >> 40) & 0xff : 64; /* uniform 0..255: its varints' first bytes are too */
		if (i % 2 == 0)
			assert_int_equal(mp_writer_alloc(w, 0, addr[i], req[i], req[i]), 0);
		else
			assert_int_equal(mp_writer_free(w, 0, addr[i - 1]), 0);
		if (i % 50000 == 49999)
			assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);
	got = read_all(path, &ev, &rc, &diag, NULL);
	assert_int_equal(rc, 0);
	for (i = 0; i < n; i++, k++) {
		while (k < got && ev[k].kind == MP_EV_MEMORY)
			k++;
		assert_true(k < got);
		if (i % 2 == 0) {
			assert_int_equal(ev[k].kind, MP_EV_ALLOC);
			assert_true(ev[k].address == addr[i]);
			assert_true(ev[k].requested_bytes == req[i]);
			assert_true(ev[k].allocated_bytes == req[i]);
		} else {
			assert_int_equal(ev[k].kind, MP_EV_FREE);
			assert_true(ev[k].address == addr[i - 1]);
		}
	}
	assert_int_equal(k, got);
	free(ev);
	free(addr);
	free(req);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refreed_across_flushes),
		cmocka_unit_test(test_noise_parts_round_trip),
	};
	return cmocka_run_group_tests_name("flush", tests, NULL, NULL);
}
