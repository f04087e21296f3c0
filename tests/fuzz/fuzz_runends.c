/* fuzz_runends.c - libFuzzer target for a run's MP_RUN_ENDS file
 * (src/core/format/run_ends.c): whatever the bytes, the parser stays inside
 * them, and every line it takes holds a pid and a status below 2^31; the
 * line it names as bad is one of the lines there; and a line written from
 * the input's first bytes reads back as written. */
#include <memprof/format/run_ends.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(void *ctx, uint64_t pid, int status, uint64_t wall_ns)
{
	(void)wall_ns;
	if (pid == 0 || pid > INT32_MAX || status < 0)
		__builtin_trap();
	(*(size_t *)ctx)++;
}

typedef struct {
	uint64_t pid, ns;
	int status, n;
} one_t;

static void keep(void *ctx, uint64_t pid, int status, uint64_t wall_ns)
{
	one_t *o = ctx;

	o->pid = pid;
	o->status = status;
	o->ns = wall_ns;
	o->n++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t taken = 0, lines = 0, i, bad;

	bad = mp_run_ends_parse((const char *)data, size, check, &taken);
	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (taken > lines || bad > lines || (bad && taken == lines))
		__builtin_trap();
	/* a line written from the first 20 bytes reads back the same */
	if (size >= 20) {
		char line[MP_RUN_ENDS_LINE_MAX];
		uint64_t pid, ns;
		uint32_t st;
		one_t o = {0, 0, 0, 0};
		memcpy(&pid, data, 8);
		memcpy(&st, data + 8, 4);
		memcpy(&ns, data + 12, 8);
		pid = pid % INT32_MAX + 1;
		st &= INT32_MAX;
		if (mp_run_ends_parse(line, mp_run_ends_line(line, pid, (int)st, ns), keep, &o) != 0 || o.n != 1 ||
		    o.pid != pid || o.status != (int)st || o.ns != ns)
			__builtin_trap();
	}
	return 0;
}
