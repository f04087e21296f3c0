/* backend_env.c - libmemprof.so's backend: record to MEMPROF_OUTPUT, or
 * forward to a preload library that is already recording this process.
 *
 * Decided once, on the first call (pthread_once): afterwards each call costs
 * one atomic load. At exit, and at quick_exit, the capture is closed cleanly
 * (flush + trailer).
 * A forked child stops recording: it must not write into its parent's file
 * (the preload library can give children their own captures instead).
 */
#include "backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { OFF, WRITER, FORWARD };

static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic int mode = -1; /* -1: not decided yet */
static mp_writer_t *writer;
static const memprof_api_table_t *forward;

static void in_child(void)
{
	atomic_store(&mode, OFF); /* the writer's threads did not survive fork */
}

static void close_at_exit(void)
{
	if (atomic_exchange(&mode, OFF) == WRITER) {
		int rc = mp_writer_close(writer);
		if (rc)
			fprintf(stderr, "memprof: error: the capture could not be completed: %s\n",
				mp_strerror(rc));
	}
}

static void decide(void)
{
	const char *path = getenv("MEMPROF_OUTPUT");
	const memprof_api_table_t *table = dlsym(RTLD_DEFAULT, MEMPROF_API_TABLE_SYMBOL);
	mp_writer_options_t opts = {0};
	const char *flush_ms = getenv("MEMPROF_FLUSH_MS");
	mp_diag_t diag;

	if (table && table->version >= 1) {
		forward = table;
		atomic_store(&mode, FORWARD);
		return;
	}
	if (!path || !*path) {
		atomic_store(&mode, OFF);
		return;
	}
	if (flush_ms)
		opts.flush_interval_ms = (uint32_t)strtoul(flush_ms, NULL, 10);
	if (mp_writer_open(&writer, path, getenv("MEMPROF_OVERWRITE") != NULL, &opts, &diag)) {
		fprintf(stderr, "memprof: error: %s: %s\n", path, diag.text);
		atomic_store(&mode, OFF);
		return;
	}
	pthread_atfork(NULL, NULL, in_child);
	atexit(close_at_exit);
	/* quick_exit() runs no atexit handler: the capture closes there too
	 * (before the program's own at_quick_exit handlers registered earlier,
	 * whose annotations are then not recorded, but complete) */
	at_quick_exit(close_at_exit);
	atomic_store(&mode, WRITER);
}

mp_annotate_target_t mp__annotate_target(void)
{
	mp_annotate_target_t t = {NULL, NULL};
	int m = atomic_load_explicit(&mode, memory_order_acquire);

	if (__builtin_expect(m < 0, 0)) {
		int saved = errno;
		pthread_once(&once, decide);
		errno = saved;
		m = atomic_load_explicit(&mode, memory_order_acquire);
	}
	if (m == WRITER)
		t.writer = writer;
	else if (m == FORWARD)
		t.forward = forward;
	return t;
}
