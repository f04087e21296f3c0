/* test_fragidx.c - the fragmentation index alone, big enough for a tree of
 * several levels: random inserts and removes of blocks in a few regions,
 * every invariant checked periodically, largest/total gap compared with a
 * brute force over a plain sorted array. */
#include "test_common.h"

#include "fragidx.h"

#include <memprof/error.h>

#include "bruteforce.h"

#define NBLK 40000

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(uint64_t n)
{
	return bf_rand(&rng, n);
}

/* Slots of 64 bytes in one 4 MiB region: slot i holds a block of size
 * sz[i] (<= 64) at base + 64 i, or nothing. */
#define BASE 0x40000000ull
#define SLOTS 65536

static uint8_t sz[SLOTS];
static void *hint[SLOTS]; /* from fx_insert; often stale after splits and merges */

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

static void test_random_tree(void **state)
{
	fx_index_t fx;
	size_t live = 0;
	uint64_t bl, bt;

	(void)state;
	fx_init(&fx);
	assert_int_equal(fx_insert(&fx, BASE, BASE, FX_START, NULL), 0);
	assert_int_equal(fx_insert(&fx, BASE + 64ull * SLOTS, BASE + 64ull * SLOTS, FX_END, NULL), 0);
	assert_int_equal(fx_largest(&fx), 64ull * SLOTS);
	for (int round = 0; round < 200000; round++) {
		size_t i = rnd(SLOTS);
		/* Grow towards NBLK, then shrink to nearly empty, then grow again:
		 * splits, merges, redistributions and root collapses all happen. */
		int phase = (round / 50000) % 2, want_insert = phase == 0 ? rnd(10) < 8 : rnd(10) < 2;
		if (want_insert && !sz[i]) {
			sz[i] = (uint8_t)(1 + rnd(64));
			assert_int_equal(fx_insert(&fx, BASE + 64 * i, BASE + 64 * i + sz[i], FX_BLOCK, &hint[i]), 0);
			live++;
		} else if (!want_insert && sz[i]) {
			/* every third removal without its hint, the rest with it */
			assert_int_equal(fx_remove(&fx, BASE + 64 * i, FX_BLOCK, round % 3 ? hint[i] : NULL), 0);
			sz[i] = 0;
			live--;
		}
		if (round % 5000 == 0) {
			assert_int_equal(fx_check(&fx), 0);
			brute(&bl, &bt);
			assert_int_equal(fx_largest(&fx), bl);
			assert_int_equal(fx.total, bt);
			assert_int_equal(fx.count, live + 2);
		}
	}
	brute(&bl, &bt);
	assert_int_equal(fx_check(&fx), 0);
	assert_int_equal(fx_largest(&fx), bl);
	assert_int_equal(fx.total, bt);
	assert_int_equal(fx_remove(&fx, 1, FX_BLOCK, NULL), MP_ENOTFOUND);
	assert_int_equal(fx_remove(&fx, 1, FX_BLOCK, hint[0]), MP_ENOTFOUND); /* wrong hint, absent key */
	/* Remove everything: back to one free region. */
	for (size_t i = 0; i < SLOTS; i++)
		if (sz[i]) {
			assert_int_equal(fx_remove(&fx, BASE + 64 * i, FX_BLOCK, hint[i]), 0);
			sz[i] = 0;
		}
	assert_int_equal(fx_check(&fx), 0);
	assert_int_equal(fx_largest(&fx), 64ull * SLOTS);
	assert_int_equal(fx.count, 2);
	fx_destroy(&fx);
}

/* Order at equal addresses: END < START < BLOCK, so adjacent regions and a
 * block at a region's base get the right gaps; fx_next walks in order. */
static void test_equal_addresses(void **state)
{
	fx_index_t fx;
	uint64_t k, e;
	int kind;

	(void)state;
	fx_init(&fx);
	assert_int_equal(fx_insert(&fx, 100, 100, FX_START, NULL), 0);
	assert_int_equal(fx_insert(&fx, 200, 200, FX_END, NULL), 0);
	assert_int_equal(fx_insert(&fx, 200, 200, FX_START, NULL), 0);
	assert_int_equal(fx_insert(&fx, 250, 250, FX_END, NULL), 0);
	assert_int_equal(fx_insert(&fx, 200, 210, FX_BLOCK, NULL), 0);
	assert_int_equal(fx_insert(&fx, 150, 200, FX_BLOCK, NULL), 0);
	/* gaps: [100,150) = 50, [210,250) = 40 */
	assert_int_equal(fx.total, 90);
	assert_int_equal(fx_largest(&fx), 50);
	assert_int_equal(fx_check(&fx), 0);
	assert_int_equal(fx_next(&fx, 200, FX_END, &k, &e, &kind), 1);
	assert_int_equal(k, 200);
	assert_int_equal(kind, FX_START);
	assert_int_equal(fx_next(&fx, 200, FX_START, &k, &e, &kind), 1);
	assert_int_equal(kind, FX_BLOCK);
	assert_int_equal(e, 210);
	assert_int_equal(fx_next(&fx, 250, FX_END, &k, &e, &kind), 0);
	assert_int_equal(fx_remove(&fx, 150, FX_BLOCK, NULL), 0);
	assert_int_equal(fx.total, 140);
	assert_int_equal(fx_largest(&fx), 100);
	/* Removing the first item: its successor (the END at 200) has no
	 * predecessor left, so its gap drops from 100 to 0. */
	assert_int_equal(fx_remove(&fx, 100, FX_START, NULL), 0);
	assert_int_equal(fx.total, 40);
	assert_int_equal(fx_largest(&fx), 40);
	assert_int_equal(fx_check(&fx), 0);
	assert_int_equal(fx_insert(&fx, 1ull << 62, 1ull << 62, FX_START, NULL), MP_ELIMIT);
	fx_destroy(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal_addresses),
		cmocka_unit_test(test_random_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
