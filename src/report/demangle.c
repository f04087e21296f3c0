/* demangle.c - C++ names through libstdc++'s demangler (demangle.h). */
#include "demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

static cxa_demangle_fn demangler;
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;

static void load_demangler(void)
{
	/* RTLD_LOCAL: only this one function is wanted, nothing of it should
	 * join the global scope. The handle is kept for the process. */
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

	if (h)
		*(void **)&demangler = dlsym(h, "__cxa_demangle");
}

int mp_demangle(const char *name, char *buf, size_t size)
{
	char *out;
	size_t len;
	int status = -1;

	if (strncmp(name, "_Z", 2) != 0 || !size)
		return 0;
	pthread_once(&demangler_once, load_demangler);
	if (!demangler || !(out = demangler(name, NULL, NULL, &status)))
		return 0;
	len = strlen(out);
	if (status != 0 || len >= size) {
		free(out);
		return 0;
	}
	memcpy(buf, out, len + 1);
	free(out);
	return 1;
}
