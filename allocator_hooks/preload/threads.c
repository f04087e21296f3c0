/* threads.c - the capture core's own threads are never traced.
 *
 * The preload is linked with -Wl,--wrap=pthread_create, which redirects
 * only the calls made from inside this library (the writer starting its
 * flusher) to __wrap_pthread_create; the program's threads are created by
 * libc as usual. The wrapper starts the thread with its recursion guard
 * set for good, so nothing the flusher does -- today it allocates nothing,
 * but libc or zlib might -- can record an event into the writer it is
 * draining (which could wait on itself when a ring is full). No change to
 * the core was needed for this.
 */
#include "preload.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

int __real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

/* One writer opens at a time (session.c holds the state BUSY or runs in the
 * constructor), so one pending start is enough. */
static void *(*pending_fn)(void *);
static void *pending_arg;
static _Atomic int started;

static void *guarded_start(void *unused)
{
	void *(*fn)(void *) = pending_fn;
	void *arg = pending_arg;

	(void)unused;
	mp__guard = 1; /* never cleared on this thread */
	atomic_store_explicit(&started, 1, memory_order_release);
	return fn(arg);
}

int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int rc;

	pending_fn = fn;
	pending_arg = arg;
	atomic_store_explicit(&started, 0, memory_order_relaxed);
	rc = __real_pthread_create(th, attr, guarded_start, NULL);
	if (rc == 0)
		while (!atomic_load_explicit(&started, memory_order_acquire))
			sched_yield();
	return rc;
}

/* The thread that ends an orphaned process (preload.h). Started with the
 * real pthread_create, so without the guard: what exit() runs on it -- the
 * program's atexit handlers, its destructors, our own session_fini last --
 * is recorded as it would be on the program's last thread. */
static void *exit_main(void *unused)
{
	sigset_t none;

	(void)unused;
	/* It inherits the flusher's mask, every signal blocked: exit handlers
	 * run with none blocked, as on a thread of the program's own. */
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	exit(0);
}

int mp__end_orphaned_process(void *unused)
{
	pthread_attr_t attr;
	pthread_t th;
	int rc;

	(void)unused;
	if (pthread_attr_init(&attr))
		return -1;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = __real_pthread_create(&th, &attr, exit_main, NULL);
	pthread_attr_destroy(&attr);
	return rc ? -1 : 0;
}
