/* victim_musl.c - built with musl-gcc: a dynamically linked program whose
 * loader is musl's. Allocates, frees and exits 42, so that a test can tell
 * that it ran (under the glibc preload, musl's loader refused to start it:
 * exit 127). */
#include <stdlib.h>

int main(void)
{
	void *volatile p = malloc(100);

	free(p);
	return p ? 42 : 3;
}
