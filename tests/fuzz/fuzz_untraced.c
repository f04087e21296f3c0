/* fuzz_untraced.c - libFuzzer target for src/cli/record_why.c: the input
 * is a program file (an ELF image or a #! script), handed over as
 * /proc/self/fd/N of a memfd. mp_cli_untraced_reason must not crash or read
 * out of bounds whatever its headers say (program header count and offset,
 * class, a #! line without an end, a loader path without its NUL), and
 * what it writes must be a NUL-terminated sentence when it names a
 * reason. Interpreter paths come from
 * the input and are opened read-only like any other, so the corpus only
 * names harmless ones. */
#include "cli.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], why[4400];
	int fd = memfd_create("fuzz_untraced", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(why, 0x55, sizeof(why));
	if (mp_cli_untraced_reason(path, why, sizeof(why)) != 0 && !memchr(why, '\0', sizeof(why)))
		__builtin_trap();
	close(fd);
	return 0;
}
