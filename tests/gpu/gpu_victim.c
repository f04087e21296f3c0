/* gpu_victim.c - a host program for `record --gpu` on machines without a
 * GPU. With an argument it plays the CUDA driver: it dlopens that injection
 * library and calls InitializeInjection(), as the driver does with
 * CUDA_INJECTION64_PATH. Allocates 123457 bytes before and 654321 after,
 * and exits 3. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char *a = malloc(123457), *b;

	if (!a)
		return 1;
	memset(a, 1, 123457);
	if (argc > 1) {
		void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*init)(void);
		if (!lib) {
			fprintf(stderr, "gpu_victim: %s\n", dlerror());
			return 2;
		}
		*(void **)(void *)&init = dlsym(lib, "InitializeInjection");
		if (!init || init() != 1)
			return 2;
	}
	b = malloc(654321);
	if (!b)
		return 1;
	memset(b, 2, 654321);
	free(a);
	free(b);
	return 3;
}
