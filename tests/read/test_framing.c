/* test_framing.c - the file's framing under damage: every single-byte flip
 * inside a block is caught and named (block index, offset) with all events
 * of the earlier blocks returned; every truncation reads back the complete
 * blocks and says the capture ended abruptly; bad magic, versions and
 * headers give clear errors. Offsets are computed here from the format
 * specification (docs/format.md), not by the reader under test. */
#include "test_common.h"

#include "capture_helpers.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <zlib.h>

#define BLOCKS 4
#define PER_BLOCK 1000

typedef struct {
	uint8_t *data;
	size_t size;
	size_t data_offset;          /* first block */
	size_t block_off[2 * BLOCKS + 2]; /* offsets of the blocks, then the trailer */
	int nblocks;
} capfile_t;

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* BLOCKS rounds of PER_BLOCK events each (one flush each), then the close.
 * A round writes two blocks: its chunks, then its horizon and figures
 * (docs/format.md, "Blocks"). */
static void make_capture(capfile_t *c)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_options_t o = {0};
	mp_writer_t *w;
	mp_diag_t diag;
	FILE *f;
	size_t off;
	int b, i;

	o.flush_interval_ms = 3600 * 1000; /* only explicit flushes */
	assert_int_equal(mp_writer_open(&w, path, 0, &o, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "pool", MP_MEMORY_DEVICE, 1 << 20), 0);
	for (b = 0; b < BLOCKS; b++) {
		for (i = 0; i < PER_BLOCK; i++) {
			uint64_t a = 0x1000 + (uint64_t)(b * PER_BLOCK + i) * 64;
			assert_int_equal(mp_writer_alloc(w, 0, a, 40, 48), 0);
		}
		assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);

	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	c->size = (size_t)ftell(f);
	rewind(f);
	c->data = malloc(c->size);
	assert_int_equal(fread(c->data, 1, c->size, f), c->size);
	fclose(f);
	unlink(path);
	free(path);

	/* Walk the frames as docs/format.md describes them. */
	assert_memory_equal(c->data, "MEMPROF", 8);
	c->data_offset = 16 + le32(c->data + 12) + 4;
	off = c->data_offset;
	c->nblocks = 0;
	while (off + 24 <= c->size && le32(c->data + off) == 0x4b42504du) {
		assert_true(c->nblocks < 2 * BLOCKS + 1);
		c->block_off[c->nblocks++] = off;
		off += 24 + le32(c->data + off + 8);
	}
	/* two blocks a flushed round, then the closing round's block (it has
	 * no chunks) */
	assert_int_equal(c->nblocks, 2 * BLOCKS + 1);
	c->block_off[c->nblocks] = off; /* the trailer */
	assert_int_equal(le32(c->data + off), 0x5254504du);
}

/* The events in the blocks before block k: those of the rounds whose
 * chunks (block 2r) come before it. */
static size_t events_before(int k)
{
	size_t rounds = (size_t)(k + 1) / 2;

	return (rounds < BLOCKS ? rounds : BLOCKS) * PER_BLOCK;
}

/* How count_events reads: readahead is an MP_READAHEAD_* mode, and with
 * `helper` a second thread calls mp_source_help() all along, as the solver's
 * pipeline does from a thread that would otherwise wait (blockio.h). The
 * damage tests run every way and must see the same events and errors. */
static int readahead, helper;

typedef struct {
	mp_source_t *src;
	atomic_int stop;
	unsigned long helped;
} help_arg_t;

static void *help_loop(void *arg)
{
	help_arg_t *h = arg;

	while (!atomic_load(&h->stop)) {
		if (mp_source_help(h->src))
			h->helped++;
		else
			sched_yield();
	}
	return NULL;
}

/* Blocks fetched by the helper thread over the whole test: the helper cases
 * check that it did take part. */
static unsigned long helped_total;

/* Events (after the memory declaration) readable from a prefix/variant. */
static size_t count_events(const void *data, size_t size, int *rc, mp_diag_t *diag, mp_end_status_t *end)
{
	mp_capture_t *cap;
	mp_source_t *src;
	mp_event_t ev;
	help_arg_t h = {0};
	pthread_t th;
	size_t n = 0;

	*rc = mp_capture_open_memory(&cap, data, size, "test.memprof", diag);
	if (*rc)
		return 0;
	assert_int_equal(mp_capture_set_readahead(cap, readahead), 0);
	src = mp_capture_source(cap);
	h.src = src;
	if (helper)
		assert_int_equal(pthread_create(&th, NULL, help_loop, &h), 0);
	while ((*rc = mp_source_next(src, &ev, diag)) == 1)
		if (ev.kind == MP_EV_ALLOC)
			n++;
	if (helper) {
		atomic_store(&h.stop, 1);
		pthread_join(th, NULL);
		helped_total += h.helped;
	}
	*end = mp_source_end_status(src);
	mp_capture_close(cap);
	return n;
}

static void test_framing_clean(void **state)
{
	capfile_t c;
	mp_diag_t diag;
	mp_end_status_t end;
	int rc;

	(void)state;
	make_capture(&c);
	assert_int_equal(count_events(c.data, c.size, &rc, &diag, &end), BLOCKS * PER_BLOCK);
	assert_int_equal(rc, 0);
	assert_int_equal(end, MP_END_CLEAN);
	free(c.data);
}

static void test_framing_every_byte_flip(void **state)
{
	capfile_t c;
	mp_diag_t diag;
	mp_end_status_t end;
	size_t x;
	int rc, k = 0;

	(void)state;
	make_capture(&c);
	for (x = c.data_offset; x < c.size; x++) {
		size_t n;
		while (k < c.nblocks && x >= c.block_off[k + 1])
			k++;
		c.data[x] ^= 0x5a;
		n = count_events(c.data, c.size, &rc, &diag, &end);
		c.data[x] ^= 0x5a;
		if (rc >= 0)
			fail_msg("flipping byte %zu (block %d) was not detected", x, k);
		assert_true(rc == MP_ECORRUPT || rc == MP_ECHECKSUM);
		if (k < c.nblocks) {
			/* Named block and offset; every event of the blocks before it. */
			assert_int_equal(diag.index, k);
			assert_int_equal(diag.offset, (int64_t)c.block_off[k]);
			assert_int_equal(n, events_before(k));
			assert_non_null(strstr(diag.text, "block"));
		} else {
			/* In the trailer: every event, then the error at its offset. */
			assert_int_equal(n, BLOCKS * PER_BLOCK);
			assert_int_equal(diag.offset, (int64_t)c.block_off[c.nblocks]);
		}
		assert_string_equal(diag.file, "test.memprof");
	}
	free(c.data);
}

static void test_framing_every_truncation(void **state)
{
	capfile_t c;
	mp_diag_t diag;
	mp_end_status_t end;
	size_t len;
	int rc, k;

	(void)state;
	make_capture(&c);
	for (len = 0; len < c.size; len++) {
		size_t n = count_events(c.data, len, &rc, &diag, &end);
		if (len < c.data_offset) {
			assert_true(rc == MP_EFORMAT || rc == MP_ETRUNCATED);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(end, MP_END_ABRUPT);
		/* complete blocks before len */
		for (k = 0; k < c.nblocks && c.block_off[k + 1] <= len; k++)
			;
		assert_int_equal(n, events_before(k));
	}
	free(c.data);
}

/* A damage test again with blocks fetched ahead: by a thread of their own,
 * then by a helping thread (which must have fetched some). */
static void with_readahead(void (*test)(void **), void **state)
{
	readahead = MP_READAHEAD_THREAD;
	test(state);
	readahead = MP_READAHEAD_AUTO, helper = 1, helped_total = 0;
	test(state);
	assert_true(helped_total > 0);
	readahead = MP_READAHEAD_OFF, helper = 0;
}

static void test_framing_every_byte_flip_readahead(void **state)
{
	with_readahead(test_framing_every_byte_flip, state);
}

static void test_framing_every_truncation_readahead(void **state)
{
	with_readahead(test_framing_every_truncation, state);
}

static void test_framing_bad_headers(void **state)
{
	capfile_t c;
	mp_diag_t diag;
	mp_end_status_t end;
	int rc;
	uint8_t saved;
	static const char not_a_capture[] = "PK\003\004 this is a zip file, not a capture";

	(void)state;
	make_capture(&c);
	count_events(not_a_capture, sizeof(not_a_capture), &rc, &diag, &end);
	assert_int_equal(rc, MP_EFORMAT);
	assert_non_null(strstr(diag.text, "not a memprof capture"));
	assert_int_equal(diag.offset, 0);

	saved = c.data[8]; /* major version */
	c.data[8] = 9;
	count_events(c.data, c.size, &rc, &diag, &end);
	assert_int_equal(rc, MP_EVERSION);
	assert_non_null(strstr(diag.text, "version 9.")); /* 9.<the minor version written> */
	c.data[8] = saved;

	c.data[c.data_offset - 5] ^= 1; /* last header body byte */
	count_events(c.data, c.size, &rc, &diag, &end);
	assert_int_equal(rc, MP_ECHECKSUM);
	c.data[c.data_offset - 5] ^= 1;

	c.data[15] = 0x7f; /* header length 2 GiB */
	count_events(c.data, c.size, &rc, &diag, &end);
	assert_int_equal(rc, MP_ECORRUPT);
	assert_int_equal(diag.offset, 12);
	free(c.data);
}

static void test_framing_missing_file(void **state)
{
	mp_capture_t *cap;
	mp_diag_t diag;

	(void)state;
	assert_int_equal(mp_capture_open(&cap, "/nonexistent/x.memprof", &diag), -ENOENT);
	assert_null(cap);
	assert_string_equal(diag.file, "/nonexistent/x.memprof");
	assert_non_null(strstr(diag.text, "cannot open"));
}

/* A capture whose block 0 is ours: the header of a real capture, then one
 * block holding raw (deflated, framed with correct checksums, announcing
 * rlen raw bytes), no trailer. */
static char *craft_rlen(const uint8_t *raw, size_t n, size_t rlen)
{
	capfile_t c;
	char *path = mp_test_tmpfile(".memprof");
	uint8_t out[256], hdr[24];
	uLongf plen = sizeof(out);
	uint32_t v;
	FILE *f;

	make_capture(&c);
	assert_int_equal(compress2(out, &plen, raw, n, 1), Z_OK); /* zlib-wrapped: strip it */
	plen -= 6;
	v = 0x4b42504du; /* "MPBK" */
	memcpy(hdr, &v, 4);
	v = 0;
	memcpy(hdr + 4, &v, 4);
	v = (uint32_t)plen;
	memcpy(hdr + 8, &v, 4);
	v = (uint32_t)rlen;
	memcpy(hdr + 12, &v, 4);
	v = (uint32_t)crc32(0, out + 2, (uInt)plen);
	memcpy(hdr + 16, &v, 4);
	v = (uint32_t)crc32(0, hdr, 20);
	memcpy(hdr + 20, &v, 4);
	f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(c.data, 1, c.data_offset, f);
	fwrite(hdr, 1, 24, f);
	fwrite(out + 2, 1, plen, f);
	fclose(f);
	free(c.data);
	return path;
}

static char *craft(const uint8_t *raw, size_t n)
{
	return craft_rlen(raw, n, n);
}

/* A payload that inflates to more or fewer bytes than its frame announces
 * is corruption, with the block, the size and the decoder's reason. */
static void test_framing_raw_length_mismatch(void **state)
{
	static const uint8_t raw[] = {6, 0, 6, 0}; /* HORIZON 0, twice */
	static const char *reason[2] = {"output shorter than announced", "output longer than announced"};
	static const size_t rlen[2] = {5, 3};
	mp_event_t *ev;
	mp_diag_t diag;
	mp_end_status_t end;

	(void)state;
	for (int i = 0; i < 2; i++) {
		char *path = craft_rlen(raw, sizeof(raw), rlen[i]), want[96];
		int rc;

		read_all(path, &ev, &rc, &diag, &end);
		free(ev);
		assert_int_equal(rc, MP_ECORRUPT);
		snprintf(want, sizeof(want), "announced size of %zu bytes (%s)", rlen[i], reason[i]);
		if (!strstr(diag.text, want) || !strstr(diag.text, "block 0 at offset"))
			fail_msg("unexpected diagnostic: %s", diag.text);
		unlink(path);
		free(path);
	}
}

/* A THREAD section announcing thread 10,000,000 first: corrupt, reported
 * as such, and the reader does not allocate a slot for every index below
 * it (the fuzzer found a 7-byte section asking for 5 GB). Thread 3 of a
 * capture that announced none is still fine: a round announces its new
 * threads newest first. */
static void test_framing_thread_index_bound(void **state)
{
	static const uint8_t far[] = {3, 0x80, 0xad, 0xe2, 0x04, 1, 6, 0};   /* THREAD 10000000, tid 1; HORIZON 0 */
	static const uint8_t near[] = {3, 3, 1, 6, 0};                        /* THREAD 3, tid 1; HORIZON 0 */
	mp_event_t *ev;
	mp_diag_t diag;
	mp_end_status_t end;
	char *path;
	int rc;

	(void)state;
	path = craft(far, sizeof(far));
	read_all(path, &ev, &rc, &diag, &end);
	free(ev);
	assert_int_equal(rc, MP_ECORRUPT);
	if (!strstr(diag.text, "thread index out of sequence") || !strstr(diag.text, "block 0"))
		fail_msg("unexpected diagnostic: %s", diag.text);
	unlink(path);
	free(path);

	path = craft(near, sizeof(near));
	read_all(path, &ev, &rc, &diag, &end);
	free(ev);
	assert_int_equal(rc, 0);
	assert_int_equal(end, MP_END_ABRUPT);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framing_clean),
		cmocka_unit_test(test_framing_every_byte_flip),
		cmocka_unit_test(test_framing_every_truncation),
		cmocka_unit_test(test_framing_every_byte_flip_readahead),
		cmocka_unit_test(test_framing_every_truncation_readahead),
		cmocka_unit_test(test_framing_bad_headers),
		cmocka_unit_test(test_framing_raw_length_mismatch),
		cmocka_unit_test(test_framing_missing_file),
		cmocka_unit_test(test_framing_thread_index_bound),
	};
	return cmocka_run_group_tests_name("framing", tests, NULL, NULL);
}
