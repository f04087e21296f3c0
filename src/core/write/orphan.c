/* orphan.c - whether the flushers are all that keeps the process alive.
 *
 * A process whose main thread calls pthread_exit() lives on until its last
 * thread ends; glibc then calls exit(0) on that thread. A writer's flusher
 * is a thread like any other, and it only ends when the writer is closed --
 * which, for the preload's capture, happens in exit(). So a program that
 * ends its main thread with pthread_exit() and then lets its other threads
 * finish would wait forever for the flusher, and the flusher for exit().
 *
 * The flusher asks this module when it has been idle for a flush interval.
 * The answer comes from /proc: the thread-group leader (the main thread) is
 * a zombie, and the process's live threads are that zombie plus the
 * flushers. Reading two small files every idle interval costs a few
 * microseconds; the files are read with plain syscalls into the stack
 * (procfs.h: the flusher allocates nothing). Without /proc the answer is "no", and such a
 * program keeps the old behaviour.
 */
#include "procfs.h"
#include "writer_internal.h"

#include <stdlib.h>
#include <string.h>

/* Flusher threads running now, of all writers in the process. */
static _Atomic int flushers_live;

void mp__flusher_enter(void)
{
	atomic_fetch_add_explicit(&flushers_live, 1, memory_order_relaxed);
}

void mp__flusher_leave(void)
{
	atomic_fetch_sub_explicit(&flushers_live, 1, memory_order_relaxed);
}

int mp__process_orphaned(void)
{
	char buf[4096];
	const char *p;
	long threads;

	if (mp__read_head("/proc/self/stat", buf, sizeof(buf)) < 0 || !(p = mp__stat_state(buf)) || *p != 'Z')
		return 0;
	if (mp__read_head("/proc/self/status", buf, sizeof(buf)) < 0 || !(p = strstr(buf, "\nThreads:")))
		return 0;
	threads = strtol(p + 9, NULL, 10);
	return threads > 0 && threads == 1 + atomic_load_explicit(&flushers_live, memory_order_relaxed);
}
