/* fuzz_runends.c - libFuzzer target for a run's MP_RUN_ENDS file
 * (src/core/read/run_ends.c): whatever the bytes, the parser stays inside
 * them, and every line it takes holds a pid and a status below 2^31; the
 * line it names as bad is one of the lines there. */
#include "run_ends.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(void *ctx, uint64_t pid, int status, uint64_t wall_ns)
{
	(void)wall_ns;
	if (pid == 0 || pid > INT32_MAX || status < 0)
		__builtin_trap();
	(*(size_t *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t taken = 0, lines = 0, i, bad;

	bad = mp__run_ends_parse((const char *)data, size, check, &taken);
	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (taken > lines || bad > lines || (bad && taken == lines))
		__builtin_trap();
	return 0;
}
