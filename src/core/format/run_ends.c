/* run_ends.c - the lines of a run's MP_RUN_ENDS file, written and read
 * (memprof/format/run_ends.h). */
#include <memprof/format/run_ends.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* v in decimal at p; returns the end */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = tmp[--n];
	return p;
}

size_t mp_run_ends_line(char buf[MP_RUN_ENDS_LINE_MAX], uint64_t pid, int status, uint64_t wall_ns)
{
	char *p = put_u64(buf, pid);

	*p++ = ' ';
	p = put_u64(p, (uint32_t)status);
	*p++ = ' ';
	p = put_u64(p, wall_ns);
	*p++ = '\n';
	return (size_t)(p - buf);
}

int mp_run_ends_append(const char *path, uint64_t pid, int status)
{
	char line[MP_RUN_ENDS_LINE_MAX];
	struct timespec ts;
	size_t n;
	long fd, w = -1;
	int e = errno;

	if (!(WIFEXITED(status) || WIFSIGNALED(status)))
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	n = mp_run_ends_line(line, pid, status, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		w = syscall(SYS_write, (int)fd, line, n);
		(void)syscall(SYS_close, (int)fd);
	}
	errno = e;
	return w == (long)n ? 0 : -1;
}

/* A decimal number below 2^64 at *p (before end), followed by stop; *p
 * past stop. 0, or -1. */
static int number(const char **p, const char *end, char stop, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	while (s < end && *s >= '0' && *s <= '9') {
		unsigned d = (unsigned)(*s++ - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	if (s == *p || s >= end || *s != stop)
		return -1;
	*p = s + 1;
	*v = x;
	return 0;
}

size_t mp_run_ends_parse(const char *text, size_t len, mp_run_end_fn each, void *ctx)
{
	const char *p = text, *end = text + len;
	size_t line = 0, bad = 0;

	while (p < end) {
		const char *eol = p;
		uint64_t pid, status, ns;

		while (eol < end && *eol != '\n')
			eol++;
		line++;
		if (eol == end) /* cut off: a line is one write, and this one is not whole */
			break;
		if (number(&p, eol + 1, ' ', &pid) || number(&p, eol + 1, ' ', &status) ||
		    number(&p, eol + 1, '\n', &ns) || pid == 0 || pid > INT32_MAX || status > INT32_MAX) {
			if (!bad)
				bad = line;
		} else {
			each(ctx, pid, (int)status, ns);
		}
		p = eol + 1;
	}
	return bad;
}
