/* test_crc32.c - mp__crc32 (the reader's payload CRC, folded with
 * carry-less multiplication where the CPU has it) equals zlib's crc32 for
 * every length from 0 to 3000 bytes, at every alignment, from several
 * starting values, and on a 1 MiB buffer; plus the standard check value. */
#include "test_common.h"
#include "test_rand.h"

#include <memprof/format/crc32.h>

#include <zlib.h>

static void test_crc32_matches_zlib(void **state)
{
	static uint8_t buf[(1 << 20) + 64];
	static const uint32_t starts[] = {0, 1, 0xFFFFFFFFu, 0x12345678u};
	uint64_t r = 0x9E3779B97F4A7C15ull;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++) {
		buf[i] = (uint8_t)mp_test_xorshift(&r);
	}
	assert_int_equal(mp__crc32(0, (const uint8_t *)"123456789", 9), 0xCBF43926u);
	for (size_t s = 0; s < 4; s++)
		for (size_t len = 0; len <= 3000; len++) {
			size_t off = (len * 7 + s) % 16;
			assert_int_equal(mp__crc32(starts[s], buf + off, len),
					 (uint32_t)crc32(starts[s], buf + off, (uInt)len));
		}
	assert_int_equal(mp__crc32(0, buf + 3, 1 << 20), (uint32_t)crc32(0, buf + 3, 1 << 20));
	/* chained calls, as zlib allows */
	assert_int_equal(mp__crc32(mp__crc32(0, buf, 1000), buf + 1000, 5000), (uint32_t)crc32(0, buf, 6000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32_matches_zlib),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
