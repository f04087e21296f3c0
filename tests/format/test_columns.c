/* test_columns.c - mp__chunk_check (src/core/format/columns.c): each
 * inconsistency of a 2.0 chunk's heads and tails is caught before the
 * reader decodes it in place: heads without tails, a tail run that does
 * not end, extra heads, lengths that do not sum, unknown kinds, a field
 * in the wrong column. */
#include "test_common.h"

#include <memprof/format/columns.h>

#include <string.h>

/* mp__chunk_check: each inconsistency of heads and tails is caught. */
static void test_check_parts(void **state)
{
	/* ALLOC EXACT: time, address, size -- one varint each */
	uint8_t d[32];
	uint64_t lens[MP_PARTS];

	(void)state;
#define SET(...)                                                             \
	do {                                                                 \
		uint64_t l_[MP_PARTS] = {__VA_ARGS__};                       \
		memcpy(lens, l_, sizeof(lens));                              \
	} while (0)
	/* tag | th | tt | ah | at | ih | it | sh | st | mh | mt */
	memcpy(d, "\x81\x05\x85\x01\x07\x09", 6);
	SET(1, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0); /* 0x81 | 5 | | 0x85 | | | | 0x01: the address head continues, no tail */
	assert_int_equal(mp__chunk_check(d, lens, 4), -1);
	SET(1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0); /* ... with its tail 0x01, size 7 */
	assert_int_equal(mp__chunk_check(d, lens, 5), 0);
	SET(1, 1, 0, 1, 1, 0, 0, 2, 0, 0, 0); /* two sizes for one ALLOC EXACT */
	assert_int_equal(mp__chunk_check(d, lens, 6), -1);
	SET(1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0);
	assert_int_equal(mp__chunk_check(d, lens, 6), -1); /* lengths do not sum to n */
	memcpy(d, "\x81\x05\x85\x81\x07", 5);               /* the tail run does not end */
	assert_int_equal(mp__chunk_check(d, lens, 5), -1);
	memcpy(d, "\x8E\x05\x85\x01\x07", 5); /* kind 14 does not exist */
	assert_int_equal(mp__chunk_check(d, lens, 5), -1);
	memcpy(d, "\x8D\x05\x85\x01\x07", 5); /* ALLOC_REFREED wants an index, not an address */
	assert_int_equal(mp__chunk_check(d, lens, 5), -1);
	SET(1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0);
	assert_int_equal(mp__chunk_check(d, lens, 5), 0);
#undef SET
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_parts),
	};
	return cmocka_run_group_tests_name("columns", tests, NULL, NULL);
}
