/* test_annotate.c - the <memprof/annotate.h> API through libmemprof.so:
 * each thread's allocations carry the scope it was in (nesting, inheritance
 * of NULL fields, pop restoring the outer scope, the 64-deep limit), and
 * without MEMPROF_OUTPUT nothing is written and errno is never touched.
 * The instrumented work runs in a child process: the capture is completed
 * by libmemprof's exit handler, as in a real program. */
#include "test_common.h"

#include "capture_helpers.h"

#include <memprof/annotate.h>

#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>

#define THREADS 4
#define PER_THREAD 2000

static int mem;

/* Address layout: thread << 32 | i << 8 | what (see check_events). */
static void *thread_work(void *arg)
{
	uint64_t th = (uint64_t)(uintptr_t)arg, i;
	char op[32];
	int d;

	snprintf(op, sizeof(op), "thread_%llu/op", (unsigned long long)th);
	for (i = 0; i < PER_THREAD; i++) {
		uint64_t base = th << 32 | i << 8;
		memprof_push(op, MEMPROF_REGION_OUTPUT, "float", "[8,8]");
		memprof_alloc(mem, base | 1, 100, 128);                     /* outer scope */
		memprof_push("inner", MEMPROF_REGION_INHERIT, NULL, "[4]");
		memprof_alloc(mem, base | 2, 10, 16);                       /* inner: op, shape changed */
		memprof_pop();
		memprof_alloc(mem, base | 3, 20, 32);                       /* back to outer */
		memprof_pop();
		memprof_alloc(mem, base | 4, 30, 32);                       /* no scope */
		memprof_free(mem, base | 1);
		memprof_free(mem, base | 2);
		memprof_free(mem, base | 3);
		memprof_free(mem, base | 4);
	}
	/* 70 nested pushes: the 64 first count, the rest are balanced no-ops. */
	for (d = 0; d < 70; d++) {
		char name[16];
		snprintf(name, sizeof(name), "depth_%d", d);
		memprof_push(name, MEMPROF_REGION_TEMP, NULL, NULL);
	}
	memprof_alloc(mem, th << 32 | 0xdee0, 1, 1);
	for (d = 0; d < 70; d++)
		memprof_pop();
	memprof_alloc(mem, th << 32 | 0xe0, 1, 1);
	return NULL;
}

static void child(void)
{
	pthread_t tid[THREADS];
	uintptr_t t;

	errno = 1234;
	mem = memprof_memory_declare("pool", MEMPROF_MEMORY_DEVICE, 1 << 30);
	if (errno != 1234)
		_exit(3);
	if (!memprof_enabled() || mem != 0)
		_exit(2);
	memprof_region_add(mem, 0, 1ull << 40);
	memprof_step(7);
	for (t = 0; t < THREADS; t++)
		pthread_create(&tid[t], NULL, thread_work, (void *)t);
	for (t = 0; t < THREADS; t++)
		pthread_join(tid[t], NULL);
	memprof_mark("done");
	exit(0); /* libmemprof closes the capture at exit */
}

/* The main thread ends with pthread_exit() while a worker records on: the
 * process must end when the worker does, as it would without libmemprof,
 * although the writer's flusher is still running (src/core/write/orphan.c). glibc
 * then calls exit(0) on the flusher's thread, whose exit handlers --
 * the program's and libmemprof's -- still record and close the capture. */
static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

static void *orphan_worker(void *arg)
{
	nap_ms(100); /* main has ended by now */
	memprof_alloc(mem, 0x2000, 2222, 2222);
	nap_ms(300); /* a few flush intervals of nothing */
	return arg;
}

static void orphan_at_end(void)
{
	memprof_alloc(mem, 0x3000, 3333, 3333);
}

/* LeakSanitizer (the sanitizer build) checks for leaks when the process
 * exits, and with the main thread's stack gone, what only it pointed to
 * (cmocka's state, this test's path) looks leaked. This documented hook
 * turns the check off, in the orphan child only. */
static int lsan_off;
int __lsan_is_turned_off(void) __attribute__((visibility("default"))); /* seen by the runtime */
int __lsan_is_turned_off(void)
{
	return lsan_off;
}

static void orphan_child(void)
{
	pthread_t th;

	lsan_off = 1;
	mem = memprof_memory_declare("pool", MEMPROF_MEMORY_DEVICE, 1 << 30);
	if (!memprof_enabled() || mem != 0)
		_exit(2);
	memprof_alloc(mem, 0x1000, 1111, 1111);
	if (atexit(orphan_at_end) || pthread_create(&th, NULL, orphan_worker, NULL))
		_exit(3);
	pthread_exit(NULL);
}

/* Run body in a child process recording to output (NULL: not recording);
 * its exit status, or -2 when it did not end within 30 s (then killed). */
static int run_in_child(void (*body)(void), const char *output)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (output)
			setenv("MEMPROF_OUTPUT", output, 1);
		else
			unsetenv("MEMPROF_OUTPUT");
		body();
	}
	return pid < 0 ? -1 : mp_test_wait_deadline(pid, pid, 30000);
}

static int run_child(const char *output)
{
	return run_in_child(child, output);
}

static void test_annotate_scopes_across_threads(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_source_t *src;
	mp_diag_t diag;
	mp_event_t ev;
	uint64_t allocs = 0, frees = 0, per_thread[THREADS] = {0};
	int rc, marks = 0;

	(void)state;
	assert_int_equal(run_child(path), 0);
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
		char want_op[32];
		uint64_t th = ev.address >> 32, what = ev.address & 0xff;
		if (ev.kind == MP_EV_MARK) {
			assert_string_equal(mp_source_string(src, ev.label), "done");
			marks++;
		}
		if (ev.kind == MP_EV_FREE)
			frees++;
		if (ev.kind != MP_EV_ALLOC)
			continue;
		allocs++;
		assert_int_equal(ev.step, 7);
		assert_true(th < THREADS);
		snprintf(want_op, sizeof(want_op), "thread_%llu/op", (unsigned long long)th);
		if ((ev.address & 0xffffffffu) == 0xdee0) {
			/* the 64th push is the innermost that counts */
			assert_string_equal(mp_source_string(src, ev.op), "depth_63");
			assert_int_equal(ev.region, MP_REGION_TEMP);
			continue;
		}
		if ((ev.address & 0xffffffffu) == 0xe0) {
			assert_int_equal(ev.op, 0);
			continue;
		}
		per_thread[th]++;
		switch (what) {
		case 1:
		case 3:
			assert_string_equal(mp_source_string(src, ev.op), want_op);
			assert_int_equal(ev.region, MP_REGION_OUTPUT);
			assert_string_equal(mp_source_string(src, ev.dtype), "float");
			assert_string_equal(mp_source_string(src, ev.shape), "[8,8]");
			break;
		case 2:
			assert_string_equal(mp_source_string(src, ev.op), "inner");
			assert_int_equal(ev.region, MP_REGION_OUTPUT);          /* inherited */
			assert_string_equal(mp_source_string(src, ev.dtype), "float"); /* inherited */
			assert_string_equal(mp_source_string(src, ev.shape), "[4]");
			assert_int_equal(ev.requested_bytes, 10);
			assert_int_equal(ev.allocated_bytes, 16);
			break;
		case 4:
			assert_int_equal(ev.op, 0);
			assert_int_equal(ev.region, MP_REGION_UNKNOWN);
			assert_int_equal(ev.dtype, 0);
			assert_int_equal(ev.shape, 0);
			break;
		default:
			fail_msg("unexpected address %#llx", (unsigned long long)ev.address);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(mp_source_end_status(src), MP_END_CLEAN);
	assert_int_equal(allocs, THREADS * (PER_THREAD * 4 + 2));
	assert_int_equal(frees, THREADS * PER_THREAD * 4);
	assert_int_equal(marks, 1);
	for (int t = 0; t < THREADS; t++)
		assert_int_equal(per_thread[t], PER_THREAD * 4);
	mp_source_close(src);
	unlink(path);
	free(path);
}

static void test_annotate_main_pthread_exit(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_source_t *src;
	mp_diag_t diag;
	mp_event_t ev;
	uint64_t sizes[4] = {0};
	int rc, n = 0;

	(void)state;
	assert_int_equal(run_in_child(orphan_child, path), 0); /* -2: it never ended */
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
		if (ev.kind != MP_EV_ALLOC)
			continue;
		assert_true(n < 4);
		sizes[n++] = ev.requested_bytes;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(mp_source_end_status(src), MP_END_CLEAN); /* closed by the exit handler */
	assert_int_equal(n, 3);
	assert_int_equal(sizes[0], 1111);
	assert_int_equal(sizes[1], 2222);
	assert_int_equal(sizes[2], 3333); /* recorded in exit(), on the flusher's thread */
	mp_source_close(src);
	unlink(path);
	free(path);
}

/* quick_exit() runs no atexit handler: libmemprof closes the capture from
 * its at_quick_exit handler. */
static void quick_child(void)
{
	mem = memprof_memory_declare("pool", MEMPROF_MEMORY_DEVICE, 1 << 30);
	if (!memprof_enabled() || mem != 0)
		_exit(2);
	memprof_alloc(mem, 0x1000, 4444, 4444);
	quick_exit(0);
}

static void test_annotate_quick_exit(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_source_t *src;
	mp_diag_t diag;
	mp_event_t ev;
	int rc, n = 0;

	(void)state;
	assert_int_equal(run_in_child(quick_child, path), 0);
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	while ((rc = mp_source_next(src, &ev, &diag)) == 1)
		if (ev.kind == MP_EV_ALLOC && ev.requested_bytes == 4444)
			n++;
	assert_int_equal(rc, 0);
	assert_int_equal(n, 1);
	assert_int_equal(mp_source_end_status(src), MP_END_CLEAN);
	mp_source_close(src);
	unlink(path);
	free(path);
}

static void test_annotate_disabled(void **state)
{
	(void)state;
	/* Without MEMPROF_OUTPUT the child sees memprof disabled: exit 2. */
	assert_int_equal(run_child(NULL), 2);
	errno = 42;
	unsetenv("MEMPROF_OUTPUT");
	assert_int_equal(memprof_memory_declare("x", MEMPROF_MEMORY_HOST, 0), -1);
	memprof_alloc(0, 1, 2, 3);
	memprof_push("a", MEMPROF_REGION_TEMP, "b", "c");
	memprof_pop();
	assert_int_equal(errno, 42);
	assert_int_equal(memprof_enabled(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_annotate_scopes_across_threads),
		cmocka_unit_test(test_annotate_main_pthread_exit),
		cmocka_unit_test(test_annotate_quick_exit),
		cmocka_unit_test(test_annotate_disabled),
	};
	return cmocka_run_group_tests_name("annotate", tests, NULL, NULL);
}
