/* victim_align.c - the aligned allocation family; each block freed.
 *   posix_memalign 64/100, 256/1000, 4096/5000; aligned_alloc 128/256;
 *   memalign 32/50; valloc 100; pvalloc 101; posix_memalign with a bad
 *   alignment (EINVAL, nothing allocated, not a failed allocation).
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

int main(void)
{
	void *p[7];
	void *bad = NULL;
	int i;

	if (posix_memalign(&p[0], 64, 100) || posix_memalign(&p[1], 256, 1000) ||
	    posix_memalign(&p[2], 4096, 5000))
		return 3;
	p[3] = aligned_alloc(128, 256);
	p[4] = memalign(32, 50);
	p[5] = valloc(100);
	p[6] = pvalloc(101);
	if (posix_memalign(&bad, 3, 10) != EINVAL || bad)
		return 4;
	for (i = 0; i < 7; i++) {
		if (!p[i])
			return 5;
		free(p[i]);
	}
	return 0;
}
