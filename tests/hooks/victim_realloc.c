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
 */
#include <stdint.h>
#include <stdlib.h>

int main(void)
{
	void *volatile a, *volatile g, *volatile b, *volatile c, *volatile old;

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
