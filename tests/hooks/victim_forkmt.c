/* victim_forkmt.c - fork while other threads allocate.
 *
 * One thread loops on malloc(64)/free and four on malloc(200000)/free, all
 * in the main arena, from the break and trimmed back (each malloc and
 * free of those moves the break: the preload redeclares the heap under
 * its lock), while the main thread forks 100 children one after the
 * other. Each child allocates and frees 2222 bytes and leaves with
 * _exit(0). Whatever a thread of the parent held at the moment of fork --
 * a lock of the preload's included -- stays held in the child, which has
 * only the forking thread: a child that waits on such a lock never ends.
 * So each child gets 10 s; one that is not done by then is killed and the
 * program exits 4. 101 captures: each child's holds its one allocation
 * and free. (Before the preload released its locks in the child, 6 runs
 * of 6 hung a child.)
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILDREN 100

static atomic_int stop;

static void *spin(void *arg)
{
	size_t size = (size_t)(uintptr_t)arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		void *volatile p = malloc(size);
		free(p);
	}
	return NULL;
}

/* 0 when pid ended with status 0 within 10 s; it is killed otherwise. */
static int reap(pid_t pid)
{
	struct timespec ms = {0, 1000000L};
	int status, i;

	for (i = 0; i < 10000; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
		if (r < 0)
			return -1;
		nanosleep(&ms, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

int main(void)
{
	static const size_t sizes[] = {64, 200000, 200000, 200000, 200000};
	pthread_t t[5];
	int i, bad = 0;

	/* Every thread in the main arena, 200000-byte blocks from the break
	 * and trimmed back on free: each malloc and free of one moves the
	 * break, and the preload declares the heap's new size under its lock
	 * (regions.c, main_check) -- which the threads hold often. */
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	mallopt(M_TRIM_THRESHOLD, 65536);
	for (i = 0; i < 5; i++)
		if (pthread_create(&t[i], NULL, spin, (void *)(uintptr_t)sizes[i]))
			return 3;
	for (i = 0; i < CHILDREN && !bad; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return 3;
		if (pid == 0) {
			void *volatile q = malloc(2222);
			free(q);
			_exit(0);
		}
		bad = reap(pid);
	}
	atomic_store(&stop, 1);
	for (i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	return bad ? 4 : 0;
}
