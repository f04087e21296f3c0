/* procfs.c - small reads of /proc (procfs.h). */
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

ssize_t mp__read_head(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

const char *mp__stat_state(const char *stat)
{
	const char *p = strrchr(stat, ')');

	return p && p[1] == ' ' && p[2] ? p + 2 : NULL;
}
