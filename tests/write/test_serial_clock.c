/* test_serial_clock.c - the serial clock (wthread_path.h,
 * mp__rec_clock_serial): records of a kind one lock orders across threads
 * (pymalloc's objects, under the GIL) take the time of the thread's
 * previous record, at most serial_reuse in a row, and read the clock after
 * another thread's record of the kind and after a flush round. Written
 * through the inline event path, read back from the capture: which events
 * share a time, and that nothing comes out of order. */
#include "test_common.h"

#include "writer_internal.h"
#include "wthread_path.h"

#include <memprof/capture.h>

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define MAXEV 256

typedef struct {
	int n;
	uint64_t time[MAXEV], address[MAXEV];
	uint32_t thread[MAXEV];
	int kind[MAXEV];
} events_t;

/* Every ALLOC and FREE of the capture at path, in the reader's order. */
static void read_events(const char *path, events_t *e)
{
	mp_capture_t *cap;
	mp_source_t *src;
	mp_diag_t diag;
	mp_event_t ev;

	e->n = 0;
	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	src = mp_capture_source(cap);
	while (mp_source_next(src, &ev, &diag) == 1) {
		if (ev.kind != MP_EV_ALLOC && ev.kind != MP_EV_FREE)
			continue;
		assert_true(e->n < MAXEV);
		e->time[e->n] = ev.time_ns;
		e->address[e->n] = ev.address;
		e->thread[e->n] = ev.thread;
		e->kind[e->n++] = ev.kind;
	}
	mp_capture_close(cap);
}

/* The index of the event of this kind at address a (each is unique here). */
static int find(const events_t *e, int kind, uint64_t a)
{
	int i;

	for (i = 0; i < e->n; i++)
		if (e->kind[i] == kind && e->address[i] == a)
			return i;
	fail_msg("no %s of 0x%llx", kind == MP_EV_ALLOC ? "ALLOC" : "FREE", (unsigned long long)a);
	return -1;
}

/* A writer whose rounds come only when asked (a long interval), owned by
 * the caller (mp_writer_close); *t the calling thread's ring (borrowed),
 * its serial count reset, so that its next serial record reads the clock
 * whatever the tests before left. */
static mp_writer_t *open_writer(const char *path, mp_wthread_t **t)
{
	mp_writer_options_t o = {0};
	mp_writer_t *w;
	mp_diag_t diag;

	o.flush_interval_ms = 60000;
	assert_int_equal(mp_writer_open(&w, path, 1, &o, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	*t = mp__wthread_get(w);
	assert_non_null(*t);
	(*t)->serial_left = 0;
	return w;
}

/* One thread: the first serial record reads the clock, the next 16 take
 * its time, the 17th reads it again; a record of another kind in between
 * moves the time they take (the thread's times never go back). A quiet
 * round (the flusher's, after 5 ms without events) would also read it:
 * an attempt that met one is made again. */
static void test_serial_reuse(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	int attempt, i, ok = 0;

	(void)state;
	unsetenv("MEMPROF_SERIAL_REUSE");
	for (attempt = 0; attempt < 20 && !ok; attempt++) {
		mp_wthread_t *t;
		mp_writer_t *w = open_writer(path, &t);
		uint64_t floor0 = atomic_load(&w->time_floor);
		events_t e;

		assert_int_equal(w->serial_reuse, MP_SERIAL_REUSE);
		assert_int_equal(MP_SERIAL_REUSE, 16);
		/* 0x1000: the clock; 0x1010 .. 0x1100: 16 records taking its time */
		assert_int_equal(mp__rec_alloc_serial(w, t, 0, 0x1000, 16, 16, NULL), 0);
		for (i = 1; i <= 16; i++)
			assert_int_equal(mp__rec_alloc_serial(w, t, 0, 0x1000 + 16u * (unsigned)i, 16, 16, NULL), 0);
		/* the 17th: the clock again; then a host record (the clock), and
		 * a FREE that takes the host record's time */
		assert_int_equal(mp__rec_free_serial(w, t, 0, 0x1000), 0);
		assert_int_equal(mp__rec_alloc(w, t, 0, 0x9000, 16, 16), 0);
		assert_int_equal(mp__rec_free_serial(w, t, 0, 0x1010), 0);
		ok = atomic_load(&w->time_floor) == floor0;
		assert_int_equal(mp_writer_close(w), 0);
		if (!ok)
			continue;
		read_events(path, &e);
		assert_int_equal(e.n, 20);
		for (i = 1; i <= 16; i++)
			assert_true(e.time[find(&e, MP_EV_ALLOC, 0x1000 + 16u * (unsigned)i)] ==
				    e.time[find(&e, MP_EV_ALLOC, 0x1000)]);
		assert_true(e.time[find(&e, MP_EV_FREE, 0x1000)] > e.time[find(&e, MP_EV_ALLOC, 0x1100)]);
		assert_true(e.time[find(&e, MP_EV_ALLOC, 0x9000)] > e.time[find(&e, MP_EV_FREE, 0x1000)]);
		assert_true(e.time[find(&e, MP_EV_FREE, 0x1010)] == e.time[find(&e, MP_EV_ALLOC, 0x9000)]);
		for (i = 1; i < e.n; i++) /* in order, as recorded */
			assert_true(e.time[i] >= e.time[i - 1]);
	}
	assert_true(ok);
	unlink(path);
	free(path);
}

typedef struct {
	mp_writer_t *w;
	uint64_t address;
} other_t;

static void *other_thread(void *arg)
{
	other_t *o = arg;
	mp_wthread_t *t = mp__wthread_get(o->w);

	assert_non_null(t);
	assert_int_equal(mp__rec_alloc_serial(o->w, t, 0, o->address, 32, 32, NULL), 0);
	return NULL;
}

/* Two threads, the join standing for the GIL's hand-over: an object the
 * other thread made is freed here after it was made -- the free reads the
 * clock, since another thread's record of the kind came last -- and the
 * next record takes that reading. */
static void test_serial_other_thread(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_wthread_t *t;
	mp_writer_t *w = open_writer(path, &t);
	other_t o = {w, 0x5000};
	pthread_t th;
	events_t e;
	uint64_t floor0;
	int a, f, quiet;

	(void)state;
	assert_int_equal(mp__rec_alloc_serial(w, t, 0, 0x4000, 16, 16, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, other_thread, &o), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(mp__rec_free_serial(w, t, 0, 0x5000), 0);
	floor0 = atomic_load(&w->time_floor);
	assert_int_equal(mp__rec_free_serial(w, t, 0, 0x4000), 0);
	quiet = atomic_load(&w->time_floor) == floor0; /* no round came between the two */
	assert_int_equal(mp_writer_close(w), 0);

	read_events(path, &e);
	assert_int_equal(e.n, 4);
	a = find(&e, MP_EV_ALLOC, 0x5000);
	f = find(&e, MP_EV_FREE, 0x5000);
	assert_true(e.thread[a] != e.thread[f]);
	assert_true(a < f && e.time[f] > e.time[a]);
	assert_true(e.time[a] > e.time[find(&e, MP_EV_ALLOC, 0x4000)]);
	assert_true(e.time[find(&e, MP_EV_FREE, 0x4000)] >= e.time[f]);
	if (quiet)
		assert_true(e.time[find(&e, MP_EV_FREE, 0x4000)] == e.time[f]);
	unlink(path);
	free(path);
}

/* A flush round raises the floor past the thread's last time: the next
 * serial record reads the clock, at or after the round's horizon. */
static void test_serial_after_round(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_wthread_t *t;
	mp_writer_t *w = open_writer(path, &t);
	uint64_t before;
	events_t e;

	(void)state;
	assert_int_equal(mp__rec_alloc_serial(w, t, 0, 0x6000, 16, 16, NULL), 0);
	before = t->last_time;
	assert_int_equal(mp_writer_flush(w), 0);
	assert_true(atomic_load(&w->time_floor) > before);
	assert_true(t->serial_left > 0); /* only the floor makes it read the clock */
	assert_int_equal(mp__rec_free_serial(w, t, 0, 0x6000), 0);
	assert_true(t->last_time >= atomic_load(&w->time_floor));
	assert_int_equal(mp_writer_close(w), 0);

	read_events(path, &e);
	assert_int_equal(e.n, 2);
	assert_true(e.time[1] > e.time[0]);
	unlink(path);
	free(path);
}

/* MEMPROF_SERIAL_REUSE=0: every serial record reads the clock. */
static void test_serial_reuse_zero(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_wthread_t *t;
	mp_writer_t *w;
	events_t e;
	int i;

	(void)state;
	setenv("MEMPROF_SERIAL_REUSE", "0", 1);
	w = open_writer(path, &t);
	unsetenv("MEMPROF_SERIAL_REUSE");
	assert_int_equal(w->serial_reuse, 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(mp__rec_alloc_serial(w, t, 0, 0x7000 + 16u * (unsigned)i, 16, 16, NULL), 0);
	assert_int_equal(mp_writer_close(w), 0);

	read_events(path, &e);
	assert_int_equal(e.n, 8);
	for (i = 1; i < 8; i++)
		assert_true(e.time[i] > e.time[i - 1]);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_serial_reuse),
		cmocka_unit_test(test_serial_other_thread),
		cmocka_unit_test(test_serial_after_round),
		cmocka_unit_test(test_serial_reuse_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
