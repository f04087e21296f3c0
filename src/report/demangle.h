/* demangle.h - C++ function names as people read them, for the report's
 * by-function tables (internal to memprof_report). */
#ifndef MP_DEMANGLE_H
#define MP_DEMANGLE_H

#include <stddef.h>

/* The readable form of a mangled C++ name, "_ZN3foo3barEm" ->
 * "foo::bar(unsigned long)", into buf (NUL-terminated); 1 then. 0, buf
 * untouched, when name is not a mangled name, the demangler rejects it,
 * the result does not fit, or there is no demangler: it is libstdc++'s
 * __cxa_demangle, loaded with dlopen at first use, so that memprof itself
 * needs no C++ runtime. */
int mp_demangle(const char *name, char *buf, size_t size);

#endif
