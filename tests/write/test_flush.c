/* test_flush.c - writer to reader through the flusher's rounds: addresses
 * freed in one chunk and allocated again in the next (ages never reach back
 * across chunks), and parts that look like noise -- stored, then stored
 * without a look and checked again every 16th segment (flush.c) -- next to
 * coded ones, until the part is compressible again; and the final round's
 * figures in a block of their own. */
#include "test_common.h"

#include "capture_helpers.h"

#include <memprof/capsummary.h>
#include <memprof/capture.h>
#include <memprof/format.h>
#include <memprof/format/varint.h>

#include <stdio.h>

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

/* The final round ends with its horizon and figures in a block of their
 * own, so that reading the capture's summary inflates a few dozen bytes,
 * not the round's chunks: 50 times 1000 blocks of 100 B allocated, then
 * freed (100,000 events, no flush asked and the flusher's timer at a
 * minute: the last round holds them all; with the default 90 ms, a loaded
 * machine's ASan pass once took a round in the middle). The last block's
 * raw data is the horizon and the summary alone; the one before it holds
 * the chunks; the summary read from the file says 50000 allocations and
 * frees, a peak of 100000 B, nothing live. */
static void test_final_summary_block(void **state)
{
	char *path = mp_test_tmpfile("fin.memprof");
	mp_writer_options_t o = {0};
	mp_capture_summary_t s;
	mp_writer_t *w;
	mp_diag_t diag;
	uint8_t *buf;
	uint32_t rlen[2] = {0, 0};
	uint64_t off, nblocks = 0;
	long size;
	FILE *f;
	int i, j;

	(void)state;
	o.flush_interval_ms = 60000;
	assert_int_equal(mp_writer_open(&w, path, 0, &o, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "m", MP_MEMORY_HOST, 0), 0);
	for (i = 0; i < 50; i++) {
		for (j = 0; j < 1000; j++)
			assert_int_equal(mp_writer_alloc(w, 0, 0x100000 + 0x80 * (uint64_t)j, 100, 100), 0);
		for (j = 0; j < 1000; j++)
			assert_int_equal(mp_writer_free(w, 0, 0x100000 + 0x80 * (uint64_t)j), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);

	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size > MP_FILE_PREFIX_LEN);
	buf = malloc((size_t)size);
	assert_non_null(buf);
	rewind(f);
	assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	off = MP_FILE_PREFIX_LEN + (uint64_t)mp_get_u32le(buf + 12) + 4; /* past the header and its CRC */
	while (off + MP_BLOCK_HEADER_LEN <= (uint64_t)size && mp_get_u32le(buf + off) == MP_BLOCK_MAGIC) {
		rlen[0] = rlen[1];
		rlen[1] = mp_get_u32le(buf + off + 12);
		off += MP_BLOCK_HEADER_LEN + mp_get_u32le(buf + off + 8);
		nblocks++;
	}
	assert_true(off + 4 <= (uint64_t)size);
	assert_int_equal(mp_get_u32le(buf + off), MP_TRAILER_MAGIC); /* every block walked */
	assert_true(nblocks >= 2);
	assert_true(rlen[1] < 256);     /* HORIZON and SUMMARY (one memory id) */
	assert_true(rlen[0] > 100000); /* the chunks: 100,000 events of a byte or more */
	free(buf);

	assert_int_equal(mp_capture_summary_read(path, &s, &diag), 0);
	assert_true(s.available && s.ended_cleanly);
	assert_int_equal(s.blocks, nblocks);
	assert_true(s.memories[0].allocations == 50000 && s.memories[0].frees == 50000);
	assert_true(s.memories[0].peak_bytes == 100000 && s.memories[0].live_blocks == 0);
	mp_capture_summary_free(&s);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refreed_across_flushes),
		cmocka_unit_test(test_noise_parts_round_trip),
		cmocka_unit_test(test_final_summary_block),
	};
	return cmocka_run_group_tests_name("flush", tests, NULL, NULL);
}
