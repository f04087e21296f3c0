/* victim_realloc.c - realloc moved and in place, realloc(NULL), realloc(p, 0).
 *
 *   a = malloc(100)              live 100
 *   g = malloc(100)              live 200   (g sits after a: a cannot grow)
 *   a = realloc(a, 1000)  moved  live 1100
 *   b = malloc(200)              live 1300  (b is last before the top chunk)
 *   b = realloc(b, 4000)  in place live 5100
 *   c = realloc(NULL, 64)        live 5164  <- peak
 *   realloc(c, 0)  (frees)       live 5100
 *   free(g)                      live 5000
 *   free(a)                      live 4000  (b leaks)
 * 4 allocations, 2 reallocs, 3 frees, peak 5164. Exits 3 if glibc did not
 * place the blocks as planned (then the test's premise is wrong, not the
 * hooks).
 *
 * `victim_realloc grow`: 100 times, a buffer grown by 1000 reallocs of 16
 * bytes more each (16 k bytes at the k-th), then freed: 100
 * allocations (the first realloc, from NULL), 99,900 reallocs, 100 frees,
 * peak 16,000 bytes. Long runs of REALLOC records with nothing between
 * them (the writer's encoder once overflowed an array on those).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int grow(void)
{
	int round, k;

	for (round = 0; round < 100; round++) {
		char *volatile p = NULL;
		for (k = 1; k <= 1000; k++) {
			char *q = realloc(p, 16 * (size_t)k);
			if (!q)
				return 7;
			q[16 * k - 1] = 1;
			p = q;
		}
		free(p);
	}
	return 0;
}

int main(int argc, char **argv)
{
	void *volatile a, *volatile g, *volatile b, *volatile c, *volatile old;

	if (argc > 1 && strcmp(argv[1], "grow") == 0)
		return grow();

	a = malloc(100);
	g = malloc(100);
	old = a;
	a = realloc(a, 1000);
	if (a == old)
		return 3;
	b = malloc(200);
	old = b;
	b = realloc(b, 4000);
	if (b != old)
		return 4;
	c = realloc(NULL, 64);
	if (!c)
		return 5;
	c = realloc(c, 0);
	free(g);
	free(a);
	return c == NULL ? 0 : 6;
}
