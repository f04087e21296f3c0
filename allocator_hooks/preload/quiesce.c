/* quiesce.c - knowing when no thread is inside a hook, so the capture can
 * be closed (exit, exec) while other threads still allocate.
 *
 * exit() does not stop the program's other threads. A thread that checked
 * "recording" just before the capture started closing would append to a
 * writer whose final flush round has already run (its event counted in
 * the trailer but missing from the file), or worse, to freed memory. So
 * every hook marks its thread busy *before* it checks the state, and the
 * closer, after switching the state off, waits until no thread is busy.
 *
 * The mark is one plain store to the thread's own slot (a cache line of a
 * static table, claimed on the thread's first hook and released by a
 * pthread key destructor). The ordering between that store and the state
 * load is made cheap with the asymmetric-fence pattern the writer also
 * uses: the hook side has only a compiler barrier, and the closer runs
 * membarrier(PRIVATE_EXPEDITED), which puts a full barrier on every running
 * thread. Without membarrier the hook side uses a full fence. Threads
 * beyond the table's size share one counter.
 */
#include "preload.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 1024

typedef struct {
	_Alignas(64) _Atomic int busy;
	_Atomic int owned;
} slot_t;

static slot_t slots[SLOTS];
_Alignas(64) _Atomic int mp__busy_overflow; /* counts the threads inside */
__thread _Atomic int *mp__busy __attribute__((tls_model("initial-exec")));
int mp__busy_fence = 1;                 /* 0 once membarrier is registered */
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;

static void release(void *arg)
{
	slot_t *s = arg;

	atomic_store(&s->busy, 0);
	atomic_store(&s->owned, 0);
	mp__busy = NULL; /* a later hook on this thread claims again */
}

static void make_key(void)
{
	key_ok = pthread_key_create(&key, release) == 0;
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
		mp__busy_fence = 0;
}

_Atomic int *mp__busy_claim(void)
{
	int i, expect;

	pthread_once(&key_once, make_key);
	for (i = 0; key_ok && i < SLOTS; i++) {
		expect = 0;
		if (atomic_load_explicit(&slots[i].owned, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&slots[i].owned, &expect, 1)) {
			pthread_setspecific(key, &slots[i]);
			mp__busy = &slots[i].busy;
			return mp__busy;
		}
	}
	mp__busy = &mp__busy_overflow;
	return mp__busy;
}

int mp__quiesce(unsigned max_ms)
{
	struct timespec pause = {0, 100000};
	unsigned waited_us = 0;
	int i;

	if (!mp__busy_fence)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	else
		atomic_thread_fence(memory_order_seq_cst);
	for (i = 0; i < SLOTS; i++) {
		while (atomic_load_explicit(&slots[i].busy, memory_order_acquire)) {
			if (waited_us >= max_ms * 1000u)
				return -1;
			nanosleep(&pause, NULL);
			waited_us += 100;
		}
	}
	while (atomic_load_explicit(&mp__busy_overflow, memory_order_acquire)) {
		if (waited_us >= max_ms * 1000u)
			return -1;
		nanosleep(&pause, NULL);
		waited_us += 100;
	}
	return 0;
}

void mp__quiesce_reset_child(void)
{
	/* After fork only the calling thread exists: nobody else is busy. */
	memset(slots, 0, sizeof(slots));
	atomic_store(&mp__busy_overflow, 0);
	mp__busy = NULL;
}
