/* test_rounds.h - what test_rounds.c and test_rounds_cli.c share. */
#ifndef MP_TEST_ROUNDS_H
#define MP_TEST_ROUNDS_H

#include <stdint.h>

/* The capture of test_rounds.c's known pattern: five rounds of memory
 * "dev" (*dev), its peak 7 KiB in the last; 100 B of "host" (*host). */
void record_known(const char *path, uint32_t *dev, uint32_t *host);

void test_damaged(void **state);
void test_chart(void **state);
void test_versions(void **state);

#endif
