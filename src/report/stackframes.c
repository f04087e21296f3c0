/* stackframes.c - which frames of a stack are memprof's own or an
 * allocator's, and how a symbolized frame is named (stackframes.h). */
#include "stackframes.h"

#include "demangle.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const entry_points[] = {
	"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc", "memalign",
	"valloc", "pvalloc", "__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_memalign",
	"__libc_valloc", "__libc_pvalloc", "__posix_memalign", "strdup", "strndup", "__strdup", "__strndup",
	"wcsdup", "__GI___libc_malloc", "__GI___libc_realloc", "__GI___strdup",
	/* CPython's allocator API: an object's allocating function is its
	 * caller (PyUnicode_New, list_resize), not _PyObject_Malloc, which
	 * hands every block above 512 bytes to malloc (docs/hooks.md, "Python's
	 * allocator") */
	"PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc", "_PyObject_Malloc", "_PyObject_Calloc",
	"_PyObject_Realloc", "PyMem_Malloc", "PyMem_Calloc", "PyMem_Realloc", "PyMem_RawMalloc", "PyMem_RawCalloc",
	"PyMem_RawRealloc", "_PyMem_RawMalloc", "_PyMem_RawCalloc", "_PyMem_RawRealloc",
};

/* A symbol's length without its version ("malloc@@GLIBC_2.2.5"). */
size_t rp_sym_len(const char *fn)
{
	const char *at = strchr(fn, '@');

	return at && at != fn ? (size_t)(at - fn) : strlen(fn);
}

int rp_is_entry_point(const char *fn)
{
	size_t i, n;

	if (!fn)
		return 0;
	if (!strncmp(fn, "_Znw", 4) || !strncmp(fn, "_Zna", 4)) /* operator new, new[] (all overloads) */
		return 1;
	n = rp_sym_len(fn);
	for (i = 0; i < sizeof(entry_points) / sizeof(entry_points[0]); i++)
		if (strlen(entry_points[i]) == n && !strncmp(fn, entry_points[i], n))
			return 1;
	return 0;
}

int rp_in_memprof(const char *object)
{
	const char *base = object ? strrchr(object, '/') : NULL;

	base = base ? base + 1 : object;
	return base && !strncmp(base, "libmemprof_preload", 18);
}

/* The name a frame is shown under: its symbol (a C++ or Rust one
 * demangled, as far as it fits), else object+offset, else the address. */
void rp_frame_name(const mp_symbol_t *s, uint64_t pc, char *buf, size_t size)
{
	const char *base = s->object ? strrchr(s->object, '/') : NULL;

	if (s->function && mp_demangle(s->function, rp_sym_len(s->function), buf, size))
		return;
	if (s->function)
		snprintf(buf, size, "%.*s", (int)rp_sym_len(s->function), s->function);
	else if (s->object)
		snprintf(buf, size, "%s+%#" PRIx64, base ? base + 1 : s->object, s->offset);
	else
		snprintf(buf, size, "%#" PRIx64, pc);
}

