/* victim_noring.c - a thread that cannot get a ring: the capture must say
 * that its events are missing instead of silently leaving them out.
 *
 * The main thread allocates once (its ring is mapped then), then limits the
 * address space (RLIMIT_AS) to what it uses plus 2 MiB: room for a worker's
 * 256 KiB stack, none for a ring (16 MiB by default). The worker does 1000
 * malloc(48)/free pairs, which the program sees succeed (glibc, unable to
 * reserve a 64 MiB thread arena, maps each block on its own: with host
 * regions on, each pair is also a region added and removed).
 * Expected, with MEMPROF_REGIONS=0: the worker's 2000 events counted as
 * dropped, none recorded; the main thread's malloc(5555) and its free
 * recorded. Exit 0; 3 when an allocation failed or the thread could not
 * start (the test then cannot say anything).
 *
 * "victim_noring api": the worker reports 1000 sub-allocations of a pool
 * "pool" through <memprof/annotate.h> instead (memprof_alloc, then
 * memprof_free, 64 B each): 2000 events of "pool" dropped, none recorded.
 */
#include <memprof/annotate.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int pool = -1; /* api mode: the pool's memory id */

static void *worker(void *arg)
{
	int i;

	if (pool >= 0) {
		for (i = 0; i < 1000; i++) {
			memprof_alloc(pool, 0x100000 + (uint64_t)i * 64, 64, 64);
			memprof_free(pool, 0x100000 + (uint64_t)i * 64);
		}
		return arg;
	}
	for (i = 0; i < 1000; i++) {
		void *volatile p = malloc(48);
		if (!p)
			return (void *)1;
		free(p);
	}
	return arg;
}

int main(int argc, char **argv)
{
	void *volatile first = malloc(5555);
	unsigned long pages = 0;
	struct rlimit lim;
	pthread_attr_t attr;
	pthread_t th;
	void *ret = (void *)1;
	FILE *f;

	if (argc > 1 && !strcmp(argv[1], "api") &&
	    (pool = memprof_memory_declare("pool", MEMPROF_MEMORY_DEVICE, 1 << 30)) < 0)
		return 3;
	if (!first || !(f = fopen("/proc/self/statm", "r")))
		return 3;
	if (fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	fclose(f);
	lim.rlim_cur = lim.rlim_max = pages * 4096 + (2u << 20);
	if (!pages || setrlimit(RLIMIT_AS, &lim))
		return 3;
	if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 256u << 10) ||
	    pthread_create(&th, &attr, worker, NULL) || pthread_join(th, &ret) || ret)
		return 3;
	free(first);
	return 0;
}
