/* victim_threads.c - 8 threads x 100000 allocations, every block freed by
 * another thread.
 *
 * Phase 1: thread t allocates blocks[t][i] = malloc(16 + i % 64).
 * Barrier. Phase 2: thread t frees every block of thread (t + 1) % 8.
 * Worker-thread figures: 800000 allocations, 800000 frees, nothing live,
 * peak = 8 * sum(16 + i % 64) = 8 * (1600000 + 1562 * 2016 + 496)
 *      = 37995904 bytes (every allocation precedes every free).
 *
 * "exit": 4 threads allocate and free in a loop while main calls exit()
 * after 50 ms: the capture is closed under their feet and must still end
 * cleanly, and the process must exit 0.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 8
#define PER 100000

static void *blocks[THREADS][PER];
static pthread_barrier_t barrier;

static void *work(void *arg)
{
	long t = (long)arg;
	int i;

	for (i = 0; i < PER; i++) {
		blocks[t][i] = malloc(16 + (size_t)(i % 64));
		if (!blocks[t][i])
			_exit(3);
	}
	pthread_barrier_wait(&barrier);
	for (i = 0; i < PER; i++)
		free(blocks[(t + 1) % THREADS][i]);
	return NULL;
}

static void *spin(void *arg)
{
	(void)arg;
	for (;;) {
		void *volatile p = malloc(40);
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];
	long t;

	if (argc > 1 && !strcmp(argv[1], "exit")) {
		struct timespec ts = {0, 50 * 1000000L};
		for (t = 0; t < 4; t++)
			if (pthread_create(&th[t], NULL, spin, NULL))
				return 3;
		nanosleep(&ts, NULL);
		exit(0);
	}
	pthread_barrier_init(&barrier, NULL, THREADS);
	for (t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, work, (void *)t))
			return 3;
	for (t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	return 0;
}
