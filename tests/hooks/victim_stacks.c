/* victim_stacks.c - allocations from known call sites, for --stacks.
 *
 * main() calls, in this order (nothing else allocates after main starts:
 * no stdio):
 *   alloc_a(): 3 x malloc(1000)                         -> 3 allocations, 3000 bytes
 *   alloc_b(): 2 x malloc(5000)                         -> 2 allocations, 10000 bytes
 *   grow_c():  malloc(100), then realloc to 200 (moved or not, a realloc)
 *   fail_d():  malloc(1 << 62), which fails            -> ALLOC_FAILED
 * all live at once (the peak of what main allocates: 13000 + 200 bytes),
 * then free_all() frees everything. Every function is noinline and the
 * victim is built with frame pointers, so both unwinders see main ->
 * alloc_a -> malloc. Each function allocates from one call site, so
 * alloc_a's 3 calls and alloc_b's 2 share one stack each.
 *
 * "victim_stacks PLUGIN": first dlopen PLUGIN (stacks_plugin.c) and call
 * its plugin_alloc() (2 x 777 bytes) and plugin_free(), then as above.
 *
 * "victim_stacks getattr": 8 threads, one after the other, each of which
 * first asks pthread_getattr_np() for its own attributes -- glibc
 * allocates in there while it holds the thread's lock, as the JVM's new
 * threads do -- then allocates and frees 321 bytes; exit 0.
 *
 * "victim_stacks mmap": map_e() maps 1 MiB of anonymous memory, commit_f()
 * reserves 8 MiB (PROT_NONE) and makes its first 2 MiB usable
 * (mprotect), as the JVM and V8 commit their heaps; then both are
 * unmapped: two allocations of "host_mmap", each from its function.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static void *a[3], *b[2], *c;
/* Opaque loop bounds: the compiler must not peel the loops into several
 * call sites (each would be a stack of its own). */
static volatile int three = 3, two = 2;

NOINLINE void alloc_a(void);
NOINLINE void alloc_b(void);
NOINLINE void grow_c(void);
NOINLINE void fail_d(void);
NOINLINE void free_all(void);

NOINLINE void alloc_a(void)
{
	for (int i = 0; i < three; i++)
		a[i] = malloc(1000);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void alloc_b(void)
{
	for (int i = 0; i < two; i++)
		b[i] = malloc(5000);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void grow_c(void)
{
	c = malloc(100);
	c = realloc(c, 200);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void fail_d(void)
{
	void *p = malloc((size_t)1 << 62);
	if (p)
		abort();
	__asm__ volatile("" ::: "memory");
}

NOINLINE void free_all(void)
{
	for (int i = 0; i < 3; i++)
		free(a[i]);
	for (int i = 0; i < 2; i++)
		free(b[i]);
	free(c);
}

NOINLINE void *map_e(void);
NOINLINE char *commit_f(void);

NOINLINE void *map_e(void)
{
	void *p = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	__asm__ volatile("" ::: "memory");
	return p;
}

NOINLINE char *commit_f(void)
{
	char *r = mmap(NULL, 8u << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (r == MAP_FAILED || mprotect(r, 2u << 20, PROT_READ | PROT_WRITE))
		return NULL;
	__asm__ volatile("" ::: "memory");
	return r;
}

static void *ask_attr(void *unused)
{
	pthread_attr_t at;
	void *volatile p;

	if (pthread_getattr_np(pthread_self(), &at))
		return unused;
	pthread_attr_destroy(&at);
	p = malloc(321);
	free(p);
	return p;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "mmap")) {
		void *p = map_e();
		char *r = commit_f();
		if (p == MAP_FAILED || !r)
			return 6;
		r[0] = 1;
		return munmap(p, 1u << 20) || munmap(r, 8u << 20) ? 7 : 0;
	}
	if (argc > 1 && !strcmp(argv[1], "getattr")) {
		for (int i = 0; i < 8; i++) {
			pthread_t t;
			void *r = NULL;
			if (pthread_create(&t, NULL, ask_attr, NULL) || pthread_join(t, &r) || !r)
				return 5;
		}
		return 0;
	}
	if (argc > 1) {
		void *h = dlopen(argv[1], RTLD_NOW);
		void (*pa)(void), (*pf)(void);
		if (!h)
			return 3;
		*(void **)&pa = dlsym(h, "plugin_alloc");
		*(void **)&pf = dlsym(h, "plugin_free");
		if (!pa || !pf)
			return 4;
		pa();
		pf();
	}
	alloc_a();
	alloc_b();
	grow_c();
	fail_d();
	free_all();
	return 0;
}
