/* victim_fail.c - allocations that fail: each returns NULL / ENOMEM and is
 * recorded as a failed allocation with what was asked:
 *   malloc(2^50), calloc(2^40, 2^40) (overflow: UINT64_MAX),
 *   realloc(p, 2^50) (p stays live, then freed), posix_memalign 64/2^50.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int main(void)
{
	/* volatile: the compiler must not see (or warn about) the sizes */
	volatile size_t big = (size_t)1 << 50, huge = (size_t)1 << 40;
	void *volatile p, *volatile q;
	void *r = NULL;

	if (malloc(big) != NULL)
		return 3;
	if (errno != ENOMEM)
		return 4;
	if (calloc(huge, huge) != NULL)
		return 5;
	p = malloc(10);
	q = realloc(p, big);
	if (q != NULL)
		return 6;
	free(p);
	if (posix_memalign(&r, 64, big) != ENOMEM)
		return 7;
	return 0;
}
