/* test_varint.c - LEB128 varints, zigzag deltas and the little-endian
 * framing helpers (memprof/format/varint.h). */
#include "test_common.h"

#include <memprof/format/varint.h>

static void roundtrip(uint64_t v, size_t want_len)
{
	uint8_t buf[MP_VARINT_MAX + 1];
	const uint8_t *p = buf;
	uint8_t *end = mp_varint_put(buf, v);
	uint64_t out = 0;

	assert_int_equal((size_t)(end - buf), want_len);
	assert_int_equal(mp_varint_get(&p, end, &out), 0);
	assert_true(p == end);
	assert_true(out == v);
}

static void test_varint_boundaries(void **state)
{
	(void)state;
	roundtrip(0, 1);
	roundtrip(1, 1);
	roundtrip(127, 1);
	roundtrip(128, 2);
	roundtrip(16383, 2);
	roundtrip(16384, 3);
	roundtrip(UINT32_MAX, 5);
	roundtrip(1ull << 63, 10);
	roundtrip(UINT64_MAX, 10);
}

static void test_varint_known_bytes(void **state)
{
	uint8_t buf[16];

	(void)state;
	/* 300 = 0b1_0010_1100 -> 0xac 0x02 */
	assert_int_equal(mp_varint_put(buf, 300) - buf, 2);
	assert_int_equal(buf[0], 0xac);
	assert_int_equal(buf[1], 0x02);
}

static void test_varint_truncated_and_overlong(void **state)
{
	const uint8_t cut[] = {0x80, 0x80};
	const uint8_t overlong[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	const uint8_t too_big[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
	const uint8_t *p;
	uint64_t v;

	(void)state;
	p = cut;
	assert_int_equal(mp_varint_get(&p, cut + sizeof(cut), &v), -1);
	assert_true(p == cut); /* not advanced on failure */
	p = overlong;
	assert_int_equal(mp_varint_get(&p, overlong + sizeof(overlong), &v), -1);
	p = too_big;
	assert_int_equal(mp_varint_get(&p, too_big + sizeof(too_big), &v), -1);
	p = cut;
	assert_int_equal(mp_varint_get(&p, cut, &v), -1); /* empty input */
}

static void test_zigzag(void **state)
{
	(void)state;
	assert_int_equal(mp_zigzag(0), 0);
	assert_int_equal(mp_zigzag(-1), 1);
	assert_int_equal(mp_zigzag(1), 2);
	assert_int_equal(mp_zigzag(-2), 3);
	assert_true(mp_zigzag(INT64_MAX) == UINT64_MAX - 1);
	assert_true(mp_zigzag(INT64_MIN) == UINT64_MAX);
	assert_true(mp_unzigzag(UINT64_MAX) == INT64_MIN);
	assert_true(mp_unzigzag(mp_zigzag(-123456789)) == -123456789);
	/* Address deltas: a block 48 bytes below the previous one costs one byte
	 * in 16-byte units (zigzag(-3) = 5). */
	assert_int_equal(mp_zigzag(-48 / 16), 5);
}

static void test_fixed_le(void **state)
{
	uint8_t b[4];

	(void)state;
	mp_put_u32le(b, 0x4b42504du);
	assert_memory_equal(b, "MPBK", 4);
	assert_int_equal(mp_get_u32le(b), 0x4b42504du);
	mp_put_u16le(b, 0x0102);
	assert_int_equal(b[0], 2);
	assert_int_equal(mp_get_u16le(b), 0x0102);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint_boundaries),
		cmocka_unit_test(test_varint_known_bytes),
		cmocka_unit_test(test_varint_truncated_and_overlong),
		cmocka_unit_test(test_zigzag),
		cmocka_unit_test(test_fixed_le),
	};
	return cmocka_run_group_tests_name("varint", tests, NULL, NULL);
}
