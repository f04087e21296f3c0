/* cpufeat_helpers.h - for the format and write tests that run the portable
 * variants of the encoder and the Huffman coder on any CPU
 * (mp__cpu_features_limit, memprof/format/cpufeat.h). */
#ifndef MP_TEST_CPUFEAT_HELPERS_H
#define MP_TEST_CPUFEAT_HELPERS_H

#include <memprof/format/cpufeat.h>

/* cmocka teardown of the tests that limit the CPU features: all of them
 * again, also after a failed assertion. */
static inline int mp_test_all_features(void **state)
{
	(void)state;
	mp__cpu_features_limit(~0u);
	return 0;
}

#endif
