/* demangle.c - C++ and Rust names through libiberty's demangler
 * (demangle.h), the one binutils' c++filt uses. */
#include "demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

int mp_demangle(const char *name, size_t len, char *buf, size_t size)
{
	char mangled[512], *out;

	/* _Z: C++ and Rust's legacy scheme (its hash suffix dropped); _R:
	 * Rust's v0 scheme (crate disambiguators dropped) */
	if (len < 2 || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') || len >= sizeof(mangled) || !size)
		return 0;
	memcpy(mangled, name, len);
	mangled[len] = '\0';
	if (!(out = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO)))
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
