/* victim_churn.c - threads created and exiting at a high rate, each freeing
 * memory from a pthread key destructor that runs during thread exit (after
 * the writer's own per-thread cleanup may have run).
 *
 * 4000 threads, at most 8 alive at once; each allocates 48 bytes (kept in a
 * key, freed by the key's destructor at exit) and 100 x malloc(24)/free.
 * Worker figures: 4000 * 101 allocations, as many frees, nothing live.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define TOTAL 4000
#define WIDTH 8

static pthread_key_t key;

static void release(void *p)
{
	free(p);
}

static void *work(void *arg)
{
	int i;

	(void)arg;
	pthread_setspecific(key, malloc(48));
	for (i = 0; i < 100; i++) {
		void *volatile p = malloc(24);
		free(p);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[WIDTH];
	int i, k;

	if (pthread_key_create(&key, release))
		return 3;
	for (i = 0; i < TOTAL; i += WIDTH) {
		for (k = 0; k < WIDTH; k++)
			if (pthread_create(&th[k], NULL, work, NULL))
				return 3;
		for (k = 0; k < WIDTH; k++)
			pthread_join(th[k], NULL);
	}
	return 0;
}
