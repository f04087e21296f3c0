/* fuzz_procfs.c - libFuzzer target for the writer's readers of /proc text
 * (src/core/write: help.c's schedstat, /proc/stat and /proc/loadavg
 * lines, procfs.c's "PID (COMM) STATE" of /proc/<pid>/stat). The kernel
 * writes these, but a reader that trusts a format must still stop at the
 * end of what it was given: the bytes are NUL-terminated, as
 * mp__read_head leaves them, and each parser runs on them. What it answers
 * must hold together: a state points inside the text, a loadavg answer is
 * 0 or 1, the other two say 0 or -1. */
#include "procfs.h"
#include "writer_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	const char *state;
	uint64_t a, b;
	int spare, rc;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	state = mp__stat_state(text);
	if (state && (state < text || state >= text + strlen(text)))
		__builtin_trap();
	spare = mp__help_spare_in(text, 4);
	if (spare != 0 && spare != 1)
		__builtin_trap();
	rc = mp__help_schedstat_in(text, &a, &b);
	if (rc != 0 && rc != -1)
		__builtin_trap();
	rc = mp__help_stat_in(text, &a, &b);
	if (rc != 0 && rc != -1)
		__builtin_trap();
	free(text);
	return 0;
}
