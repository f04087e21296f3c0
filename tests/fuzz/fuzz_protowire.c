/* fuzz_protowire.c - libFuzzer target for the protobuf wire library
 * (memprof/protowire.h): the memory face and the file face must read the
 * same fields from the same bytes, or fail with the same error at the same
 * offset, at every depth (tests/protowire/pw_agree.c); and the encoder must
 * write back fields that decode to the same values. The first byte sizes
 * the file face's window, so refills fall everywhere inside fields; the
 * rest is the message. A disagreement traps; so do crashes, leaks and
 * sanitizer reports. */
#include <memprof/protowire.h>

#include "pw_agree.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pw_agree_stats_t st = {0, 0};
	char why[512];
	size_t cap, max_cap;

	if (size < 1)
		return 0;
	/* cap: the head's 20 bytes to 83; max_cap: 1 to 4 windows */
	cap = MP_PW_HEAD_MAX + (data[0] & 63);
	max_cap = cap * (1 + (data[0] >> 6));
	if (pw_agree(data + 1, size - 1, cap, max_cap, &st, why, sizeof(why)) < 0 ||
	    pw_roundtrip(data + 1, size - 1, why, sizeof(why)) < 0) {
		fprintf(stderr, "fuzz_protowire: %s\n", why);
		__builtin_trap();
	}
	return 0;
}
