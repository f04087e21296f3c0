/* victim_seq.c - a known allocation sequence, then a chosen way to end.
 *
 *   victim_seq [exit|_exit|abort|kill|signal|window|exec]
 *
 * Host heap, requested bytes (hand-computed; test_hooks.c asserts them):
 *   a = malloc(1000)          live 1000
 *   b = calloc(10, 100)       live 2000
 *   c = malloc(5000)          live 7000
 *   free(a)                   live 6000
 *   d = malloc(3000)          live 9000
 *   free(b)                   live 8000
 *   e = malloc(200000)        live 208000   <- peak (an mmapped chunk)
 *   free(c)                   live 203000
 *   free(d)                   live 200000
 *   f = malloc(7)             live 200007   (e and f leak)
 * 6 allocations, 4 frees, peak 208000, 2 blocks / 200007 bytes live.
 * "secure" returns 40 + getauxval(AT_SECURE) right away (a setgid copy of
 * this program must not be traced).
 * "window" then allocates 1001 bytes, sleeps 500 ms, allocates 1002, sleeps
 * 500 ms, allocates 1003 (for --delay / --duration).
 * "signal" adds 200000 malloc(33)/free pairs while a 1 ms timer's handler
 * does malloc(77)/free: both balanced, none lost. No stdio: its buffers
 * would allocate.
 * "exec" then execs this program as "hop", which frees malloc(50) and
 * execs it again as "last", which allocates 123 bytes and exits: three
 * captures of one process, the last with 1 allocation, 0 frees, peak 123
 * bytes, 1 block / 123 bytes live (a wrapper that execs the real program,
 * as shells and version managers' shims do).
 * "quick_exit" ends with quick_exit(0) after registering an at_quick_exit
 * handler that allocates and frees 3333 bytes (7 allocations, 5 frees,
 * the rest as above).
 * "spawn PATH" forks a child that execs PATH in mode "last", waits for it
 * and returns its status (a statically linked parent, untraced, whose
 * dynamically linked child is traced).
 * "pspawn PATH" does the same with posix_spawn, "system PATH" with
 * system() (a shell, which execs PATH).
 * "threads" exits 0 when one of its threads is named "memprof-flush" (the
 * capture's flusher, as top -H shows it), 6 when none is.
 * "usable" makes the allocations of the sequence and prints what the
 * allocator's malloc_usable_size says of b, c, d, e and f, one a line (run
 * untraced on top of another allocator, for the figures the capture must
 * hold).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void fail(const char *what)
{
	(void)!write(2, what, strlen(what));
	_exit(3);
}

/* n and a newline on standard output, without stdio (which allocates) */
static void put_line(size_t n)
{
	char buf[24], *p = buf + sizeof(buf);

	*--p = '\n';
	do
		*--p = (char)('0' + n % 10);
	while (n /= 10);
	(void)!write(1, p, (size_t)(buf + sizeof(buf) - p));
}

/* Whether a thread of this process is named "memprof-flush". */
static int flusher_named(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	char path[300], comm[32];
	int found = 0, fd;

	while (d && !found && (de = readdir(d))) {
		ssize_t n;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		if ((fd = open(path, O_RDONLY)) < 0)
			continue;
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		found = n > 0 && !strncmp(comm, "memprof-flush\n", 14);
	}
	if (d)
		closedir(d);
	return found;
}

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
	void *volatile p = malloc(77);

	(void)sig;
	free(p);
	ticks++;
}

/* quick_exit mode: the program's own handler, which the capture records */
static void at_quick(void)
{
	void *volatile q = malloc(3333);

	free(q);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit";
	void *volatile a, *volatile b, *volatile c, *volatile d, *volatile e, *volatile f;
	const int usable = !strcmp(mode, "usable");
	size_t u[5] = {0};

	if (!strcmp(mode, "secure"))
		return 40 + (int)getauxval(AT_SECURE);
	if (!strcmp(mode, "hop")) {
		void *volatile h = malloc(50);
		free(h);
		execl("/proc/self/exe", "victim_seq", "last", (char *)NULL);
		fail("exec failed\n");
	}
	if (!strcmp(mode, "last"))
		return malloc(123) ? 0 : 3;
	if (!strcmp(mode, "pspawn") && argc > 2) {
		char *cargv[] = {(char *)(uintptr_t)"victim_seq", (char *)(uintptr_t)"last", NULL};
		int st;
		pid_t pid;
		if (posix_spawn(&pid, argv[2], NULL, NULL, cargv, environ) != 0)
			return 97;
		return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 98;
	}
	if (!strcmp(mode, "system") && argc > 2) {
		int st = system(argv[2]);
		return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : 98;
	}
	if (!strcmp(mode, "threads"))
		return flusher_named() ? 0 : 6;
	if (!strcmp(mode, "spawn") && argc > 2) {
		int st;
		pid_t pid = fork();
		if (pid == 0) {
			execl(argv[2], "victim_seq", "last", (char *)NULL);
			_exit(99);
		}
		return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 98;
	}
	/* usable mode: what the allocator says of each block, while it lives */
#define USABLE(i, p) (usable ? (void)(u[i] = malloc_usable_size(p)) : (void)0)
	errno = 4242;
	a = malloc(1000);
	if (errno != 4242)
		fail("malloc changed errno\n");
	b = calloc(10, 100);
	USABLE(0, b);
	c = malloc(5000);
	USABLE(1, c);
	free(a);
	d = malloc(3000);
	USABLE(2, d);
	free(b);
	e = malloc(200000);
	USABLE(3, e);
	free(c);
	free(d);
	f = malloc(7);
	USABLE(4, f);
#undef USABLE
	if (!a || !b || !c || !d || !e || !f)
		fail("allocation failed\n");
	if (errno != 4242)
		fail("the hooks changed errno\n");
	memset(e, 1, 200000);

	if (usable) {
		/* a and b both have 1000 bytes: the capture's watch sees b last */
		for (int i = 0; i < 5; i++)
			put_line(u[i]);
		return 0;
	}

	if (!strcmp(mode, "exec")) {
		execl("/proc/self/exe", "victim_seq", "hop", (char *)NULL);
		fail("exec failed\n");
	}
	if (!strcmp(mode, "_exit"))
		_exit(0);
	if (!strcmp(mode, "quick_exit")) {
		if (at_quick_exit(at_quick))
			fail("at_quick_exit failed\n");
		quick_exit(0);
	}
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "kill")) {
		/* Wait past a few flush intervals (MEMPROF_FLUSH_MS=20 in the test),
		 * then die the hard way, as the OOM killer would: the system call,
		 * not kill(), which the preload sees (a signal of one's own). */
		struct timespec ts = {0, 300 * 1000000L};
		nanosleep(&ts, NULL);
		syscall(SYS_kill, getpid(), SIGKILL);
	}
	/* A signal of one's own whose default action ends the process, as
	 * CPython's exit on Ctrl-C and crash handlers that re-raise send it. */
	if (!strcmp(mode, "selfkill"))
		kill(getpid(), SIGINT);
	if (!strcmp(mode, "raise")) {
		signal(SIGTERM, SIG_DFL);
		raise(SIGTERM);
	}
	/* ... and one that does not end it: blocked, it stays pending, and the
	 * program goes on (allocating 1234 bytes) to exit 0. */
	if (!strcmp(mode, "selfkill_blocked")) {
		sigset_t set;
		void *volatile p;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		kill(getpid(), SIGUSR1);
		p = malloc(1234);
		return p ? 0 : 1;
	}
	if (!strcmp(mode, "window")) {
		struct timespec ts = {0, 500 * 1000000L};
		void *volatile w1 = malloc(1001), *volatile w2, *volatile w3;
		nanosleep(&ts, NULL);
		w2 = malloc(1002);
		nanosleep(&ts, NULL);
		w3 = malloc(1003);
		if (!w1 || !w2 || !w3)
			fail("allocation failed\n");
	}
	if (!strcmp(mode, "signal")) {
		struct itimerval it = {{0, 1000}, {0, 1000}};
		int i;
		signal(SIGALRM, on_alarm);
		setitimer(ITIMER_REAL, &it, NULL);
		for (i = 0; i < 200000 || ticks < 20; i++) {
			void *volatile p = malloc(33);
			free(p);
			if (i > 50000000)
				break;
		}
		it.it_value.tv_usec = it.it_interval.tv_usec = 0;
		setitimer(ITIMER_REAL, &it, NULL);
		if (ticks < 20)
			fail("too few timer ticks\n");
	}
	return 0;
}
