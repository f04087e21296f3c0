/* run_ends.c - the lines of a run's MP_RUN_ENDS file (run_ends.h), written
 * by allocator_hooks/preload/reap.c. */
#include "run_ends.h"

/* A decimal number of at most 19 digits at *p (before end), followed by
 * stop; *p past stop. 0, or -1. */
static int number(const char **p, const char *end, char stop, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;

	while (s < end && *s >= '0' && *s <= '9' && n < 19) {
		x = x * 10 + (uint64_t)(*s++ - '0');
		n++;
	}
	if (!n || s >= end || *s != stop)
		return -1;
	*p = s + 1;
	*v = x;
	return 0;
}

size_t mp__run_ends_parse(const char *text, size_t len, mp_run_end_fn each, void *ctx)
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
