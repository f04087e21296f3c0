/* test_roundtrip.c - writer -> file -> reader: every event comes back, in
 * global timestamp order, per-thread order kept. */
#include "test_common.h"

#include "capture_helpers.h"

#include <memprof/capture.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

/* Events carry their identity in the address: thread in the top bits,
 * sequence number below, so the reader's output can be checked exactly. */
#define ADDR(th, seq) (((uint64_t)(th) << 40) | ((uint64_t)(seq) << 4))

struct worker {
	mp_writer_t *w;
	uint32_t mem;
	int th;
	uint64_t n;
};

static void *worker_main(void *arg)
{
	struct worker *k = arg;
	uint64_t i;

	for (i = 0; i < k->n; i++) {
		uint64_t a = ADDR(k->th, i);
		switch (i % 4) {
		case 0:
			assert_int_equal(mp_writer_alloc(k->w, k->mem, a, 16 + i % 200, 24 + i % 200), 0);
			break;
		case 1:
			assert_int_equal(mp_writer_alloc(k->w, k->mem, a, 48, 48), 0);
			break;
		case 2:
			assert_int_equal(mp_writer_free(k->w, k->mem, a), 0);
			break;
		default:
			assert_int_equal(mp_writer_realloc(k->w, k->mem, a, a + 16, 100 + i % 7, 112), 0);
			break;
		}
	}
	return NULL;
}

/* level: the writer's compression_level (0: its own Huffman coding; 2-9:
 * zlib's deflate, whose matches the reader's inflate must decode too). */
static void run_roundtrip(int nthreads, uint64_t per_thread, int level)
{
	mp_writer_options_t o = {0};
	char *path = mp_test_tmpfile(".memprof");
	struct worker k[8];
	pthread_t tid[8];
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t *evs;
	mp_end_status_t end;
	uint64_t next[8] = {0}, last_time = 0;
	uint64_t expect_events = 0;
	size_t n, i;
	int rc, t, mem;

	o.compression_level = level;
	assert_int_equal(mp_writer_open(&w, path, 0, &o, &diag), 0);
	mem = mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	assert_int_equal(mem, 0);
	for (t = 0; t < nthreads; t++) {
		k[t] = (struct worker){w, (uint32_t)mem, t, per_thread};
		pthread_create(&tid[t], NULL, worker_main, &k[t]);
	}
	for (t = 0; t < nthreads; t++)
		pthread_join(tid[t], NULL);
	assert_int_equal(mp_writer_dropped_count(w), 0);
	assert_int_equal(mp_writer_close(w), 0);

	n = read_all(path, &evs, &rc, &diag, &end);
	assert_int_equal(rc, 0);
	assert_int_equal(end, MP_END_CLEAN);
	/* Per thread: 4 records per 4 events, realloc counts twice. */
	for (t = 0; t < nthreads; t++)
		expect_events += per_thread + per_thread / 4 + (per_thread % 4 > 3);
	assert_int_equal(n, expect_events + 1 /* the memory declaration */);
	assert_int_equal(evs[0].kind, MP_EV_MEMORY);

	/* Every event exactly once, in per-thread sequence, time never going back. */
	for (i = 1; i < n; i++) {
		const mp_event_t *e = &evs[i];
		uint64_t th = e->address >> 40, seq = (e->address & ((1ull << 40) - 1)) >> 4, want;
		assert_true(e->time_ns >= last_time);
		last_time = e->time_ns;
		assert_int_equal(e->index, i);
		assert_true(th < (uint64_t)nthreads);
		want = next[th];
		assert_int_equal(seq, want);
		switch (want % 4) {
		case 0:
			assert_int_equal(e->kind, MP_EV_ALLOC);
			assert_int_equal(e->requested_bytes, 16 + want % 200);
			assert_int_equal(e->allocated_bytes, 24 + want % 200);
			next[th]++;
			break;
		case 1:
			assert_int_equal(e->kind, MP_EV_ALLOC);
			assert_int_equal(e->allocated_bytes, 48);
			next[th]++;
			break;
		case 2:
			assert_int_equal(e->kind, MP_EV_FREE);
			next[th]++;
			break;
		default:
			/* realloc: FREE of the old address, then ALLOC at +16 */
			assert_int_equal(e->kind, MP_EV_FREE);
			assert_true(e->flags & MP_EVENT_F_REALLOC);
			assert_true(i + 1 < n);
			assert_int_equal(evs[i + 1].kind, MP_EV_ALLOC);
			assert_int_equal(evs[i + 1].address, e->address + 16);
			assert_int_equal(evs[i + 1].requested_bytes, 100 + want % 7);
			assert_int_equal(evs[i + 1].allocated_bytes, 112);
			assert_int_equal(evs[i + 1].thread, e->thread);
			i++;
			next[th]++;
			break;
		}
	}
	for (t = 0; t < nthreads; t++)
		assert_int_equal(next[t], per_thread);
	free(evs);
	unlink(path);
	free(path);
}

static void test_roundtrip_one_thread(void **state)
{
	(void)state;
	run_roundtrip(1, 100000, 0);
}

/* The figure: 10 million events from 4 threads. */
static void test_roundtrip_10m_4_threads(void **state)
{
	(void)state;
	run_roundtrip(4, 2500000, 0);
}

static void test_roundtrip_zlib_levels(void **state)
{
	(void)state;
	run_roundtrip(2, 100000, 6);
	run_roundtrip(1, 50000, 9);
}

/* A capture written into a pipe (a FIFO some other process reads): no
 * offsets there, the blocks go in order (wfile.c). A thread copies the
 * FIFO into a file, which must read back whole. */
struct pipe_copy {
	const char *fifo, *file;
	int ok;
};

static void *copy_pipe(void *arg)
{
	struct pipe_copy *c = arg;
	FILE *in = fopen(c->fifo, "rb"), *out = fopen(c->file, "wb");
	char buf[65536];
	size_t n;

	if (in && out) {
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			if (fwrite(buf, 1, n, out) != n)
				break;
		c->ok = !ferror(in);
	}
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return NULL;
}

static void test_roundtrip_pipe(void **state)
{
	char *fifo = mp_test_tmpfile(".fifo"), *file = mp_test_tmpfile(".memprof");
	struct pipe_copy c = {fifo, file, 0};
	pthread_t reader;
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t *evs;
	mp_end_status_t end;
	int rc, mem;
	size_t i, n;

	(void)state;
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(pthread_create(&reader, NULL, copy_pipe, &c), 0);
	assert_int_equal(mp_writer_open(&w, fifo, 1, NULL, &diag), 0); /* waits for the reader */
	assert_true((mem = mp_writer_memory(w, "host", MP_MEMORY_HOST, 0)) >= 0);
	for (i = 0; i < 1000; i++)
		assert_int_equal(mp_writer_alloc(w, (uint32_t)mem, ADDR(1, i), 32, 32), 0);
	assert_int_equal(mp_writer_flush(w), 0); /* a block now, another at close */
	for (i = 0; i < 1000; i++)
		assert_int_equal(mp_writer_free(w, (uint32_t)mem, ADDR(1, i)), 0);
	assert_int_equal(mp_writer_close(w), 0);
	assert_int_equal(pthread_join(reader, NULL), 0);
	assert_true(c.ok);
	n = read_all(file, &evs, &rc, &diag, &end);
	assert_int_equal(rc, 0);
	assert_int_equal(end, MP_END_CLEAN);
	assert_int_equal(n, 2001); /* the memory id's declaration, then ours */
	assert_int_equal(evs[0].kind, MP_EV_MEMORY);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(evs[1 + i].kind, MP_EV_ALLOC);
		assert_int_equal(evs[1 + i].address, ADDR(1, i));
		assert_int_equal(evs[1001 + i].kind, MP_EV_FREE);
		assert_int_equal(evs[1001 + i].address, ADDR(1, i));
	}
	free(evs);
	unlink(fifo);
	unlink(file);
	free(fifo);
	free(file);
}

static void test_roundtrip_empty(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t *evs;
	mp_end_status_t end;
	int rc;

	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0, NULL, &diag), 0);
	assert_int_equal(mp_writer_close(w), 0);
	assert_int_equal(read_all(path, &evs, &rc, &diag, &end), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(end, MP_END_CLEAN);
	free(evs);
	unlink(path);
	free(path);
}

/* Bounded memory: with a 4 KiB ring and a flusher that runs once a second,
 * the WAIT policy loses nothing (threads wait for room) and the DROP policy
 * loses events but counts every one of them, in the file too. */
static void run_small_ring(int policy)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_options_t o = {0};
	mp_writer_t *w;
	mp_diag_t diag;
	mp_capture_t *cap;
	mp_source_t *src;
	mp_event_t ev;
	uint64_t i, n = 200000, allocs = 0, dropped_events = 0, written, dropped;
	int rc;

	o.ring_bytes = 4096;
	o.flush_interval_ms = 1000;
	o.full_policy = policy;
	assert_int_equal(mp_writer_open(&w, path, 0, &o, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "pool", MP_MEMORY_DEVICE, 0), 0);
	for (i = 0; i < n; i++) {
		rc = mp_writer_alloc(w, 0, 0x1000 + i * 16, 32, 32);
		assert_true(rc == 0 || (policy == MP_WRITER_DROP && rc == -ENOBUFS));
	}
	written = mp_writer_event_count(w);
	dropped = mp_writer_dropped_count(w);
	assert_int_equal(written + dropped, n);
	if (policy == MP_WRITER_WAIT)
		assert_int_equal(dropped, 0);
	else
		assert_true(dropped > 0);
	assert_int_equal(mp_writer_close(w), 0);

	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	src = mp_capture_source(cap);
	while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
		if (ev.kind == MP_EV_ALLOC)
			allocs++;
		if (ev.kind == MP_EV_DROPPED) {
			assert_int_equal(ev.memory, 0);
			dropped_events += ev.requested_bytes;
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(allocs, written);
	assert_int_equal(dropped_events, dropped);
	assert_int_equal(mp_capture_trailer(cap)->dropped, dropped);
	assert_int_equal(mp_capture_trailer(cap)->events, written);
	mp_capture_close(cap);
	unlink(path);
	free(path);
}

static void test_small_ring_wait(void **state)
{
	(void)state;
	run_small_ring(MP_WRITER_WAIT);
}

static void test_small_ring_drop(void **state)
{
	(void)state;
	run_small_ring(MP_WRITER_DROP);
}

/* The reader's memory follows the flush rounds, not the file: 40 rounds of
 * 50,000 events are read holding at most about two rounds of records. */
static void test_reader_memory_bounded(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_options_t o = {0};
	mp_writer_t *w;
	mp_diag_t diag;
	mp_capture_t *cap;
	mp_source_t *src;
	mp_event_t ev;
	struct stat st;
	uint64_t i, r, n = 0, peak;
	int rc;

	(void)state;
	o.flush_interval_ms = 3600 * 1000; /* only the explicit flushes below */
	assert_int_equal(mp_writer_open(&w, path, 0, &o, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	for (r = 0; r < 40; r++) {
		for (i = 0; i < 50000; i++)
			assert_int_equal(mp_writer_alloc(w, 0, ((r * 50000 + i) * 7919 % 1000003) * 48, 40, 48), 0);
		assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);
	assert_int_equal(stat(path, &st), 0);

	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	src = mp_capture_source(cap);
	while ((rc = mp_source_next(src, &ev, &diag)) == 1)
		n += ev.kind == MP_EV_ALLOC;
	assert_int_equal(rc, 0);
	assert_int_equal(n, 2000000);
	peak = mp_capture_peak_buffered_bytes(cap);
	printf("file %lld bytes, reader held at most %llu bytes of records\n", (long long)st.st_size,
	       (unsigned long long)peak);
	/* one round is ~50,000 records of 4-5 bytes; the file is 40 of them */
	assert_true(peak > 0);
	assert_true(peak <= 2 * 50000 * 8);
	assert_true(peak * 10 < (uint64_t)st.st_size * 2);
	mp_capture_close(cap);
	unlink(path);
	free(path);
}

/* Every encoding path of an address: aligned and odd deltas, realloc with
 * one delta aligned and the other not, in place, address 0, the top of the
 * address space, a freed address allocated again (the freed-address cache)
 * and sizes whose allocated size is equal, glibc's usable size, or neither,
 * far from the requested size, or too big for an 8-byte varint. */
static void test_roundtrip_address_edge_cases(void **state)
{
	static const struct {
		int kind; /* 0 alloc, 1 free, 2 realloc */
		uint64_t a, b, req, alloc;
	} seq[] = {
		{0, 0x1000, 0, 24, 24},                 /* exact */
		{0, 0x1010, 0, 20, 24},                 /* glibc usable size */
		{0, 0x1023, 0, 5, 9},                   /* odd address, other size */
		{1, 0x1010, 0, 0, 0},                   /* aligned delta back */
		{0, 0x1010, 0, 17, 24},                 /* reused from the cache */
		{2, 0x1023, 0x1023, 50, 56},            /* in place, odd */
		{2, 0x1000, 0x2001, 100, 104},          /* old aligned, new odd */
		{2, 0x2001, 0x3000, 200, 200},          /* old odd, new aligned */
		{0, 0, 0, 0, 0},                        /* address 0, size 0 */
		{0, UINT64_MAX - 15, 0, 1, 24},         /* top of the address space */
		{1, UINT64_MAX - 15, 0, 0, 0},
		{0, UINT64_MAX - 15, 0, 3, 24},         /* reused again */
		{1, 0, 0, 0, 0},
		{2, 0x3000, 0x10, 1ull << 40, 1ull << 40}, /* big size, big negative delta */
		{1, 0x10, 0, 0, 0},
		/* allocated - requested beyond 32 bits, either sign (the ring's
		 * WIDE records), and sizes whose varints take 9 and 10 bytes */
		{0, 0x4000, 0, 1, 1ull << 40},
		{2, 0x4000, 0x5000, 5, (1ull << 35) + 7},
		{0, 0x6000, 0, 1ull << 40, 16},
		{0, 0x7000, 0, 100, 100 + 0x7fffffffull},
		{0, 0x8000, 0, 100 + 0x80000000ull, 100},
		{0, 0x9000, 0, UINT64_MAX, UINT64_MAX},
		{0, 0xa000, 0, 1ull << 60, 3},
	};
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t *evs;
	mp_end_status_t end;
	size_t n, i, j = 1;
	int rc;

	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0, NULL, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "m", MP_MEMORY_OTHER, 0), 0);
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		if (seq[i].kind == 0)
			rc = mp_writer_alloc(w, 0, seq[i].a, seq[i].req, seq[i].alloc);
		else if (seq[i].kind == 1)
			rc = mp_writer_free(w, 0, seq[i].a);
		else
			rc = mp_writer_realloc(w, 0, seq[i].a, seq[i].b, seq[i].req, seq[i].alloc);
		assert_int_equal(rc, 0);
	}
	assert_int_equal(mp_writer_close(w), 0);
	n = read_all(path, &evs, &rc, &diag, &end);
	assert_int_equal(rc, 0);
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		const mp_event_t *e = &evs[j++];
		assert_true(j <= n);
		if (seq[i].kind == 0) {
			assert_int_equal(e->kind, MP_EV_ALLOC);
			assert_true(e->address == seq[i].a);
			assert_true(e->requested_bytes == seq[i].req);
			assert_true(e->allocated_bytes == seq[i].alloc);
		} else if (seq[i].kind == 1) {
			assert_int_equal(e->kind, MP_EV_FREE);
			assert_true(e->address == seq[i].a);
		} else {
			assert_int_equal(e->kind, MP_EV_FREE);
			assert_true(e->address == seq[i].a);
			e = &evs[j++];
			assert_int_equal(e->kind, MP_EV_ALLOC);
			assert_true(e->flags & MP_EVENT_F_REALLOC);
			assert_true(e->address == seq[i].b);
			assert_true(e->requested_bytes == seq[i].req);
			assert_true(e->allocated_bytes == seq[i].alloc);
		}
	}
	assert_int_equal(j, n);
	free(evs);
	unlink(path);
	free(path);
}

/* stop_after_ms: the flusher calls on_stop once, on its own thread, about
 * that long after the open, then writes a round (the only one here: the
 * interval is an hour), so what was recorded before is in the file while
 * the writer is still open. */
static struct {
	_Atomic int calls;
	_Atomic uint64_t at_ns;
	pthread_t thread;
} stop_seen;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_stop(void *arg)
{
	assert_ptr_equal(arg, &stop_seen);
	stop_seen.thread = pthread_self();
	atomic_store(&stop_seen.at_ns, mono_ns());
	atomic_fetch_add(&stop_seen.calls, 1);
}

static void test_writer_stop_after(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_options_t o = {0};
	struct timespec ms10 = {0, 10 * 1000000L};
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t *evs = NULL;
	uint64_t t0;
	size_t n = 0;
	int i, rc;

	(void)state;
	o.flush_interval_ms = 3600 * 1000;
	o.stop_after_ms = 200;
	o.on_stop = on_stop;
	o.stop_arg = &stop_seen;
	t0 = mono_ns();
	assert_int_equal(mp_writer_open(&w, path, 0, &o, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "m", MP_MEMORY_OTHER, 0), 0);
	assert_int_equal(mp_writer_alloc(w, 0, 0x1230, 100, 112), 0);
	/* up to 5 s for the window's end (a round may write the allocation
	 * before it: the flusher writes what a program that stopped making
	 * events left, flush.c) */
	for (i = 0; i < 500 && (n < 2 || !atomic_load(&stop_seen.calls)); i++) {
		nanosleep(&ms10, NULL);
		free(evs);
		n = read_all(path, &evs, &rc, &diag, NULL);
	}
	/* the memory id's declaration, then the allocation */
	assert_int_equal(n, 2);
	assert_int_equal(evs[0].kind, MP_EV_MEMORY);
	assert_int_equal(evs[1].kind, MP_EV_ALLOC);
	assert_true(evs[1].address == 0x1230 && evs[1].requested_bytes == 100 && evs[1].allocated_bytes == 112);
	assert_int_equal(atomic_load(&stop_seen.calls), 1);
	assert_true(atomic_load(&stop_seen.at_ns) - t0 >= 200 * 1000000u);
	assert_false(pthread_equal(stop_seen.thread, pthread_self()));
	nanosleep(&ms10, NULL);
	assert_int_equal(mp_writer_close(w), 0);
	assert_int_equal(atomic_load(&stop_seen.calls), 1);
	free(evs);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_empty),
		cmocka_unit_test(test_roundtrip_pipe),
		cmocka_unit_test(test_roundtrip_address_edge_cases),
		cmocka_unit_test(test_writer_stop_after),
		cmocka_unit_test(test_small_ring_wait),
		cmocka_unit_test(test_small_ring_drop),
		cmocka_unit_test(test_reader_memory_bounded),
		cmocka_unit_test(test_roundtrip_one_thread),
		cmocka_unit_test(test_roundtrip_zlib_levels),
		cmocka_unit_test(test_roundtrip_10m_4_threads),
	};
	return cmocka_run_group_tests_name("roundtrip", tests, NULL, NULL);
}
