/* victim_launch.c - a launcher and its workers, for runs (test_hooks_run.c).
 *
 *   victim_launch work K      a worker: in its own memory id "pool"
 *                             (annotated, so its figures are exact and
 *                             independent of malloc), K blocks of 1 MiB
 *                             live at once, then all freed but the last:
 *                             peak K MiB, leaked 1 MiB (1048576 B);
 *   victim_launch work K FD   the same, then, its figures flushed, says so
 *                             on descriptor FD, allocates one more 1 MiB
 *                             block and waits to be SIGKILLed by the
 *                             launcher: the capture holds the peak and
 *                             ends abruptly (a kill from outside: the
 *                             preload closes a capture before a signal the
 *                             program sends itself);
 *   victim_launch idle K      the same as "work K", then idle (pause) until
 *                             killed: a pool's worker waiting for its next
 *                             task when the pool terminates it;
 *   victim_launch big FD      a worker whose last large block matters:
 *                             mallocs 8 MiB, frees it, then makes small
 *                             events (so that the flusher never sees it
 *                             idle) for 200 ms, says so on descriptor FD
 *                             and waits to be SIGKILLed: its capture
 *                             holds the block only if a round wrote it
 *                             meanwhile, which neither the interval (run
 *                             it with a long --flush) nor a quiet round
 *                             would have done;
 *   victim_launch grow FD     the same with 16 MiB made of small blocks:
 *                             mallocs 16384 blocks of 1 KiB and keeps them
 *                             (as a process the OOM killer takes grows);
 *   victim_launch shrink FD   the same after 32 MiB of such blocks, then
 *                             all freed but the last (a pool's worker
 *                             freeing its task's objects before it is
 *                             terminated);
 *   victim_launch poolbig FD  the same with a framework's pool: in the
 *                             annotated memory id "pool", an 8 MiB block
 *                             allocated and a 16 MiB allocation failed,
 *                             then small host events for 200 ms (the pool
 *                             reports no free size, so the block stays);
 *   victim_launch poolfail FD the same with the failed allocation only;
 *   victim_launch killbig [M] forks and execs "M FD" (M: big, the
 *                             default, grow, shrink, poolbig or poolfail),
 *                             SIGKILLs it once it says so, waits for it
 *                             and exits 0;
 *   victim_launch launch N [V] N workers, the i-th (1-based) exec'd as
 *                             "work 4*i" (worker V with a descriptor, then
 *                             killed), forked and exec'd as torchrun does;
 *                             waits for them all and exits 0.
 */
#include <memprof/annotate.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1u << 20)

static int work(int k, int fd)
{
	int pool = memprof_memory_declare("pool", MEMPROF_MEMORY_OTHER, 0);
	uint64_t base = 0x10000000u;
	int i;

	if (pool < 0 || !memprof_enabled())
		return 3;
	for (i = 0; i < k; i++)
		memprof_alloc(pool, base + (uint64_t)i * MIB, MIB, MIB);
	for (i = 0; i < k - 1; i++)
		memprof_free(pool, base + (uint64_t)i * MIB);
	if (fd >= 0) {
		memprof_flush(); /* on disk: what the killed worker's capture holds */
		if (write(fd, "k", 1) != 1)
			return 4;
		memprof_alloc(pool, base + (uint64_t)k * MIB, MIB, MIB);
		for (;;)
			pause();
	}
	return 0;
}

/* Small host events for ms milliseconds, so that the flusher never sees
 * the process idle. */
static void busy(long ms)
{
	struct timespec tick = {0, 100000}, t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		void *volatile p = malloc(64);
		free(p);
		nanosleep(&tick, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) < ms * 1000000L);
}

/* busy for 200 ms; then says so on fd and waits to be killed. */
static int busy_then_wait(int fd)
{
	busy(200);
	if (write(fd, "k", 1) != 1)
		return 4;
	for (;;)
		pause();
}

static int big(int fd)
{
	char *volatile b = malloc(8 * MIB);

	if (!b)
		return 3;
	b[0] = 1;
	free(b);
	return busy_then_wait(fd);
}

/* n blocks of 1 KiB, kept; then, with drop, all freed but the last (which
 * keeps glibc from giving the heap's top back: that would be a change of
 * the heap's region, a large one, asking for a round of its own) */
static int grow(int fd, int n, int drop)
{
	static char *volatile blocks[32768];
	int i;

	for (i = 0; i < n; i++)
		if (!(blocks[i] = malloc(1024)))
			return 3;
	if (drop)
		busy(50); /* the growth's rounds over before the drop begins */
	for (i = 0; drop && i < n - 1; i++)
		free(blocks[i]);
	return busy_then_wait(fd);
}

static int poolbig(int fd, int block)
{
	int pool = memprof_memory_declare("pool", MEMPROF_MEMORY_OTHER, 0);

	if (pool < 0 || !memprof_enabled())
		return 3;
	if (block)
		memprof_alloc(pool, 0x10000000u, 8 * MIB, 8 * MIB);
	memprof_alloc_failed(pool, 16 * MIB);
	return busy_then_wait(fd);
}

static int killbig(const char *self, const char *mode)
{
	int ready[2], status;
	char fd[16], c;
	pid_t pid;

	if (pipe(ready))
		return 4;
	snprintf(fd, sizeof(fd), "%d", ready[1]);
	if ((pid = fork()) < 0)
		return 4;
	if (pid == 0) {
		execl(self, self, mode, fd, (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1 || kill(pid, SIGKILL) || waitpid(pid, &status, 0) != pid)
		return 6;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : 5;
}

static int launch(const char *self, int n, int victim)
{
	int i, status, bad = 0;

	for (i = 1; i <= n; i++) {
		char k[16], fd[16];
		int ready[2] = {-1, -1};
		pid_t pid;
		char c;

		snprintf(k, sizeof(k), "%d", 4 * i);
		if (i == victim && pipe(ready))
			return 4;
		snprintf(fd, sizeof(fd), "%d", ready[1]);
		if ((pid = fork()) < 0)
			return 4;
		if (pid == 0) {
			execl(self, self, "work", k, i == victim ? fd : (char *)NULL, (char *)NULL);
			_exit(127);
		}
		if (i == victim) {
			close(ready[1]);
			if (read(ready[0], &c, 1) != 1 || kill(pid, SIGKILL))
				return 6;
			close(ready[0]);
		}
	}
	for (i = 0; i < n; i++)
		if (wait(&status) < 0 || (!WIFEXITED(status) && !WIFSIGNALED(status)))
			bad = 1;
	return bad ? 5 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "work"))
		return work(atoi(argv[2]), argc >= 4 ? atoi(argv[3]) : -1);
	if (argc >= 3 && !strcmp(argv[1], "idle")) {
		int rc = work(atoi(argv[2]), -1);
		for (;;)
			pause();
		return rc;
	}
	if (argc >= 3 && !strcmp(argv[1], "big"))
		return big(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "grow"))
		return grow(atoi(argv[2]), 16384, 0);
	if (argc >= 3 && !strcmp(argv[1], "shrink"))
		return grow(atoi(argv[2]), 32768, 1);
	if (argc >= 3 && (!strcmp(argv[1], "poolbig") || !strcmp(argv[1], "poolfail")))
		return poolbig(atoi(argv[2]), !strcmp(argv[1], "poolbig"));
	if (argc >= 2 && !strcmp(argv[1], "killbig"))
		return killbig(argv[0], argc >= 3 ? argv[2] : "big");
	if (argc >= 3 && !strcmp(argv[1], "launch"))
		return launch(argv[0], atoi(argv[2]), argc >= 4 ? atoi(argv[3]) : 0);
	fprintf(stderr, "usage: victim_launch work K [FD] | idle K | big FD | grow FD | shrink FD | poolbig FD | poolfail FD | killbig [M] | launch N [V]\n");
	return 2;
}
