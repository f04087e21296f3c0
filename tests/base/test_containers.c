/* test_containers.c - core/base's containers: <memprof/i64map.h> (insert,
 * replace, insert-unless-present, delete with backward shift, growth),
 * <memprof/vec.h> and <memprof/strtab.h>. Figures by hand. */
#include "test_common.h"

#include <memprof/i64map.h>
#include <memprof/strtab.h>
#include <memprof/vec.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_i64map(void **state)
{
	mp_i64map_t m = MP_I64MAP_INIT;
	uint32_t v = 7;

	(void)state;
	assert_int_equal(mp_i64map_get(&m, 1, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(mp_i64map_del(&m, 1), 0);
	assert_int_equal(mp_i64map_reserve(&m, 2), 0);
	/* sparse signed ids, as HloProtos have them */
	for (int64_t i = 0; i < 10000; i++)
		assert_int_equal(mp_i64map_add(&m, (uint64_t)(i * 7919 - 5000), (uint32_t)i), 1);
	assert_int_equal(mp_i64map_add(&m, (uint64_t)-5000, 99), 0);
	assert_int_equal(mp_i64map_get(&m, (uint64_t)-5000, &v), 1);
	assert_int_equal(v, 0);
	assert_int_equal(mp_i64map_get(&m, 9999 * 7919 - 5000, &v), 1);
	assert_int_equal(v, 9999);
	assert_int_equal(mp_i64map_get(&m, 1, &v), 0);
	assert_int_equal(mp_i64map_put(&m, (uint64_t)-5000, 5), 0);
	assert_int_equal(mp_i64map_get(&m, (uint64_t)-5000, &v), 1);
	assert_int_equal(v, 5);
	/* every value is storable, UINT32_MAX and 0 included */
	assert_int_equal(mp_i64map_put(&m, UINT64_MAX, UINT32_MAX), 0);
	assert_int_equal(mp_i64map_get(&m, UINT64_MAX, &v), 1);
	assert_int_equal(v, UINT32_MAX);
	assert_int_equal(m.n, 10001);
	/* delete the even ones: the odd ones stay reachable past the holes */
	for (int64_t i = 0; i < 10000; i += 2)
		assert_int_equal(mp_i64map_del(&m, (uint64_t)(i * 7919 - 5000)), 1);
	assert_int_equal(mp_i64map_del(&m, (uint64_t)-5000), 0);
	assert_int_equal(m.n, 5001);
	for (int64_t i = 0; i < 10000; i++) {
		int found = mp_i64map_get(&m, (uint64_t)(i * 7919 - 5000), &v);

		assert_int_equal(found, (int)(i & 1));
		if (found)
			assert_int_equal(v, (uint32_t)i);
	}
	mp_i64map_free(&m);
	assert_null(m.s);
	assert_int_equal(m.n, 0);
}

/* Colliding homes: keys that differ only above the mask probe into each
 * other's runs; deleting from the middle of a run keeps the rest. */
static void test_i64map_runs(void **state)
{
	mp_i64map_t m = MP_I64MAP_INIT;
	uint32_t v;

	(void)state;
	for (uint32_t i = 0; i < 24; i++)
		assert_int_equal(mp_i64map_put(&m, (uint64_t)i << 40, i), 0);
	for (uint32_t i = 0; i < 24; i += 3)
		assert_int_equal(mp_i64map_del(&m, (uint64_t)i << 40), 1);
	for (uint32_t i = 0; i < 24; i++) {
		assert_int_equal(mp_i64map_get(&m, (uint64_t)i << 40, &v), i % 3 != 0);
		if (i % 3)
			assert_int_equal(v, i);
	}
	assert_int_equal(m.n, 16);
	mp_i64map_free(&m);
}

static void test_vec(void **state)
{
	uint64_t *a = NULL;
	size_t n = 0, cap = 0;
	void *raw = NULL;
	size_t rcap = 0;

	(void)state;
	for (uint64_t i = 0; i < 1000; i++) {
		assert_int_equal(MP_VEC_RESERVE(a, cap, n + 1), 0);
		a[n++] = i * 3;
	}
	assert_true(cap >= 1000 && cap < 2000);
	for (size_t i = 0; i < n; i++)
		assert_true(a[i] == i * 3);
	/* room already: nothing moves */
	{
		uint64_t *before = a;
		size_t c = cap;

		assert_int_equal(MP_VEC_RESERVE(a, cap, 10), 0);
		assert_ptr_equal(a, before);
		assert_int_equal(cap, c);
	}
	/* a size that overflows fails and keeps the array */
	{
		uint64_t *before = a;
		size_t c = cap;

		assert_int_equal(MP_VEC_RESERVE(a, cap, SIZE_MAX / 4), MP_ENOMEM);
		assert_ptr_equal(a, before);
		assert_int_equal(cap, c);
	}
	free(a);
	assert_int_equal(mp_vec_reserve(&raw, &rcap, 3, 5), 0);
	assert_int_equal(rcap, 8); /* the smallest array holds 8 */
	assert_int_equal(mp_vec_reserve(&raw, &rcap, 9, 5), 0);
	assert_int_equal(rcap, 16);
	free(raw);
}

static void test_strtab(void **state)
{
	mp_strtab_t t;
	char buf[32];
	uint32_t ids[500];

	(void)state;
	mp_strtab_init(&t);
	assert_int_equal(mp_strtab_intern(&t, "", 0), 0);
	assert_int_equal(mp_strtab_find(&t, "a", 1), 0);
	assert_int_equal(mp_strtab_intern(&t, "alpha", 5), 1);
	assert_int_equal(mp_strtab_intern(&t, "beta", 4), 2);
	assert_int_equal(mp_strtab_intern(&t, "alphabet", 5), 1); /* "alpha" */
	assert_int_equal(mp_strtab_intern(&t, "be\0ta", 5), 3);   /* "be" */
	assert_string_equal(mp_strtab_get(&t, 3), "be");
	for (int i = 0; i < 500; i++) {
		snprintf(buf, sizeof(buf), "name-%d", i);
		ids[i] = mp_strtab_intern(&t, buf, strlen(buf));
		assert_int_equal(ids[i], 4 + i);
	}
	for (int i = 0; i < 500; i++) {
		snprintf(buf, sizeof(buf), "name-%d", i);
		assert_int_equal(mp_strtab_find(&t, buf, strlen(buf)), ids[i]);
		assert_string_equal(mp_strtab_get(&t, ids[i]), buf);
	}
	assert_string_equal(mp_strtab_get(&t, 0), "");
	assert_string_equal(mp_strtab_get(&t, 100000), "");
	mp_strtab_free(&t);
	assert_int_equal(t.count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_i64map),
		cmocka_unit_test(test_i64map_runs),
		cmocka_unit_test(test_vec),
		cmocka_unit_test(test_strtab),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
