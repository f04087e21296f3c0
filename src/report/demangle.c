/* demangle.c - C++ and Rust names through libiberty's demangler
 * (demangle.h), the one binutils' c++filt uses. */
#include "demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

int mp_demangle(const char *name, char *buf, size_t size)
{
	char *out;
	size_t len;

	/* _Z: C++ and Rust's legacy scheme (its hash suffix dropped); _R:
	 * Rust's v0 scheme (crate disambiguators dropped) */
	if ((strncmp(name, "_Z", 2) != 0 && strncmp(name, "_R", 2) != 0) || !size)
		return 0;
	if (!(out = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO)))
		return 0;
	len = strlen(out);
	if (len >= size) {
		free(out);
		return 0;
	}
	memcpy(buf, out, len + 1);
	free(out);
	return 1;
}
