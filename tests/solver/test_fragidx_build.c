/* test_fragidx_build.c - fx_build (the bulk load the solver uses when most
 * of the index changes between two figures): for sizes from empty to a
 * tree of three levels, the built index passes every invariant check and
 * gives the brute force's largest and total gap; it then keeps working
 * under random insertions and removals (splits and merges of built nodes),
 * and can be rebuilt in place. */
#include "test_common.h"

#include "fragidx.h"

#include <memprof/error.h>

#include "bruteforce.h"

static uint64_t rng = 0x853C49E6748FEA9Bull;

static uint64_t rnd(uint64_t n)
{
	return bf_rand(&rng, n);
}

/* One region of SLOTS slots of 64 bytes; slot i holds sz[i] bytes or not. */
#define BASE 0x40000000ull
#define SLOTS 65536

static uint8_t sz[SLOTS];
static fx_item_t items[SLOTS + 2];

static void brute(uint64_t *largest, uint64_t *total)
{
	uint64_t cur = BASE, end = BASE + 64ull * SLOTS;

	*largest = *total = 0;
	for (size_t i = 0; i < SLOTS; i++) {
		if (!sz[i])
			continue;
		uint64_t a = BASE + 64 * i, g = a - cur;
		*total += g;
		*largest = g > *largest ? g : *largest;
		cur = a + sz[i];
	}
	*total += end - cur;
	*largest = end - cur > *largest ? end - cur : *largest;
}

static size_t fill_items(void)
{
	size_t n = 0;

	items[n++] = (fx_item_t){BASE, BASE, FX_START};
	for (size_t i = 0; i < SLOTS; i++)
		if (sz[i])
			items[n++] = (fx_item_t){BASE + 64 * i, BASE + 64 * i + sz[i], FX_BLOCK};
	items[n++] = (fx_item_t){BASE + 64ull * SLOTS, BASE + 64ull * SLOTS, FX_END};
	return n;
}

static void check(const fx_index_t *fx)
{
	uint64_t bl, bt;

	brute(&bl, &bt);
	assert_int_equal(fx_check(fx), 0);
	assert_int_equal(fx_largest(fx), bl);
	assert_int_equal(fx->total, bt);
}

static void test_build_sizes(void **state)
{
	static const size_t counts[] = {0, 1, 7, 23, 24, 25, 300, 577, 5000, 40000};
	fx_index_t fx;

	(void)state;
	fx_init(&fx);
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		memset(sz, 0, sizeof(sz));
		for (size_t k = 0; k < counts[c]; k++)
			sz[rnd(SLOTS)] = (uint8_t)(1 + rnd(64));
		assert_int_equal(fx_build(&fx, items, fill_items()), 0); /* rebuilt in place */
		check(&fx);
		/* the built tree under ordinary updates */
		for (int r = 0; r < 20000; r++) {
			size_t i = rnd(SLOTS);
			if (sz[i]) {
				assert_int_equal(fx_remove(&fx, BASE + 64 * i, FX_BLOCK, NULL), 0);
				sz[i] = 0;
			} else {
				sz[i] = (uint8_t)(1 + rnd(64));
				assert_int_equal(fx_insert(&fx, BASE + 64 * i, BASE + 64 * i + sz[i], FX_BLOCK, NULL), 0);
			}
			if (r % 5000 == 0)
				check(&fx);
		}
		check(&fx);
	}
	assert_int_equal(fx_build(&fx, items, 0), 0); /* empty */
	assert_int_equal(fx_largest(&fx), 0);
	assert_int_equal(fx.total, 0);
	assert_int_equal(fx.count, 0);
	fx_destroy(&fx);
}

/* Gaps across regions: the gap in front of a START is 0, blocks that touch
 * or overlap their predecessor have none. */
static void test_build_regions(void **state)
{
	fx_index_t fx;
	const fx_item_t it[] = {
		{1000, 1000, FX_START}, {1000, 1100, FX_BLOCK}, {1100, 1200, FX_BLOCK}, {1500, 1600, FX_BLOCK},
		{2000, 2000, FX_END},   {3000, 3000, FX_START}, {3900, 4000, FX_BLOCK}, {4000, 4000, FX_END},
	};

	(void)state;
	fx_init(&fx);
	assert_int_equal(fx_build(&fx, it, sizeof(it) / sizeof(it[0])), 0);
	assert_int_equal(fx_check(&fx), 0);
	/* gaps: 300 (1200..1500), 400 (1600..2000), 900 (3000..3900) */
	assert_int_equal(fx.total, 1600);
	assert_int_equal(fx_largest(&fx), 900);
	assert_int_equal(fx_remove(&fx, 3900, FX_BLOCK, NULL), 0);
	assert_int_equal(fx_largest(&fx), 1000);
	assert_int_equal(fx.total, 1700);
	assert_int_equal(fx_check(&fx), 0);
	fx_destroy(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_sizes),
		cmocka_unit_test(test_build_regions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
