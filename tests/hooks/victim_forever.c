/* victim_forever.c - allocates until it is killed: a flight recorder's
 * workload for test_hooks_keep_kill.c.
 *
 *   victim_forever PIDFILE
 *
 * Writes its pid to PIDFILE (once its loop starts, so that a kill lands in
 * the loop), then frees and allocates, round robin, 4096 slots of 16 to
 * 4111 bytes (about 8 MiB live) for ever: a few million events a second,
 * a kept segment every fraction of a second. No stdio: its buffers would
 * allocate.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define SLOTS 4096

static void write_pid(const char *path)
{
	char buf[24], *p = buf + sizeof(buf);
	unsigned long pid = (unsigned long)getpid();
	int fd;

	do
		*--p = (char)('0' + pid % 10);
	while ((pid /= 10) != 0);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
		_exit(3);
	if (write(fd, p, (size_t)(buf + sizeof(buf) - p)) < 0)
		_exit(3);
	close(fd);
}

int main(int argc, char **argv)
{
	static void *slot[SLOTS];
	unsigned x = 12345;

	if (argc != 2)
		return 2;
	for (unsigned i = 0;; i++) {
		unsigned k = i % SLOTS;
		x = x * 1103515245u + 12345u;
		free(slot[k]);
		slot[k] = malloc(16 + (x >> 16) % 4096);
		if (i == SLOTS)
			write_pid(argv[1]);
	}
}
