/* victim_fds.c - a program that handles descriptors as daemons and shells
 * do, while it allocates: the capture's descriptor must never become a
 * way into the program's own files.
 *
 *   victim_fds close FILE   close every descriptor above stderr, then open
 *                           FILE (it gets the lowest number)
 *   victim_fds dup FILE     find the capture's descriptor (/proc/self/fd),
 *                           open FILE and dup2() it onto that number
 *
 * Then five rounds, 30 ms apart (several flush rounds with
 * MEMPROF_FLUSH_MS=10), write "USERDATA\n" into FILE and free everything.
 * FILE must hold exactly those 9 bytes.
 *
 * Host heap, requested bytes (hand-computed): 100 x malloc(1000), live
 * 100000; each round frees and reallocates the 100 blocks one by one at
 * 2000 bytes: live 200000 at the end of the first round (the peak) and
 * after every later one; then all 100 freed. 600 allocations, 600 frees,
 * peak 200000, nothing live. No stdio and no opendir: they allocate.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NBLOCKS 100

static void fail(const char *what)
{
	(void)!write(2, what, strlen(what));
	_exit(3);
}

static void close_all_above_stderr(void)
{
	long max = sysconf(_SC_OPEN_MAX), fd;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
		return;
#endif
	for (fd = 3; fd < max; fd++)
		close((int)fd);
}

/* The descriptor whose link ends in ".memprof", or -1. */
static int capture_fd(void)
{
	long max = sysconf(_SC_OPEN_MAX), fd;

	if (max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++) {
		char link[64], target[4096];
		ssize_t n;
		size_t k;
		int len = 0;
		long v = fd;
		char digits[24];

		/* "/proc/self/fd/<fd>" without snprintf (stdio) */
		do
			digits[len++] = (char)('0' + v % 10);
		while ((v /= 10) > 0);
		memcpy(link, "/proc/self/fd/", 14);
		for (k = 0; k < (size_t)len; k++)
			link[14 + k] = digits[len - 1 - (int)k];
		link[14 + len] = '\0';
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 8 && !memcmp(target + n - 8, ".memprof", 8))
			return (int)fd;
	}
	return -1;
}

int main(int argc, char **argv)
{
	void *volatile p[NBLOCKS];
	struct timespec ts = {0, 30 * 1000000L};
	int i, round, fd, cap;

	if (argc < 3)
		fail("usage: victim_fds close|dup FILE\n");
	for (i = 0; i < NBLOCKS; i++)
		if (!(p[i] = malloc(1000)))
			fail("allocation failed\n");
	if (!strcmp(argv[1], "close")) {
		close_all_above_stderr();
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	} else if (!strcmp(argv[1], "dup")) {
		if ((cap = capture_fd()) < 0)
			fail("no capture descriptor found\n");
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, cap) != cap)
			fail("dup2 failed\n");
	} else {
		fail("unknown mode\n");
	}
	if (fd < 0)
		fail("cannot open FILE\n");
	for (round = 0; round < 5; round++) {
		for (i = 0; i < NBLOCKS; i++) {
			free(p[i]);
			if (!(p[i] = malloc(2000)))
				fail("allocation failed\n");
		}
		nanosleep(&ts, NULL);
	}
	if (write(fd, "USERDATA\n", 9) != 9)
		fail("write failed\n");
	for (i = 0; i < NBLOCKS; i++)
		free(p[i]);
	return 0;
}
