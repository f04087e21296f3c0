/* victim_orphan.c - the main thread ends with pthread_exit() while a worker
 * runs on; the process ends when the worker does (glibc then calls exit(0)),
 * traced or not.
 *
 * Host heap, requested bytes (hand-computed; test_hooks_proc.c asserts them):
 *   main:    a = malloc(1111), atexit(at_end), start the worker, pthread_exit
 *   worker:  sleeps 100 ms (main is gone by then), free(a), b = malloc(2222)
 *            (leaks), sleeps 300 ms (a few flush intervals of nothing), ends
 *   at_end:  c = malloc(3333), free(c), on whichever thread ends the process
 * (No alarm() to end it if it hangs: the thread left alive then is the
 * capture's flusher, which blocks every signal. The test driver's deadline
 * kills it.)
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *volatile a, *volatile b;

static void nap(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

static void at_end(void)
{
	void *volatile c = malloc(3333);

	free(c);
}

static void *worker(void *unused)
{
	nap(100);
	free(a);
	b = malloc(2222);
	nap(300);
	return unused;
}

int main(void)
{
	pthread_t th;

	a = malloc(1111);
	if (!a || atexit(at_end) || pthread_create(&th, NULL, worker, NULL))
		return 3;
	pthread_exit(NULL);
}
