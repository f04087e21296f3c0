/* test_rand.h - the one pseudo-random generator of tests and benchmarks
 * (xorshift64, Marsaglia's 13/7/17): fast, reproducible from its seed, no
 * libc state. Plain C, no cmocka: generators and benchmarks use it too. */
#ifndef MP_TEST_RAND_H
#define MP_TEST_RAND_H

#include <stdint.h>

/* Advance *state (never 0) one step and return the new state. */
static inline uint64_t mp_test_xorshift(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

#endif
