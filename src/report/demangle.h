/* demangle.h - C++ and Rust function names as people read them, for the
 * report's by-function tables (internal to memprof_report). */
#ifndef MP_DEMANGLE_H
#define MP_DEMANGLE_H

#include <stddef.h>

/* The readable form of the mangled name in name[0..len) (not necessarily
 * NUL-terminated: a symbol table's name without its version) into buf
 * (NUL-terminated); 1 then:
 * C++, "_ZN3foo3barEm" -> "foo::bar(unsigned long)"; Rust's legacy scheme,
 * "_ZN3std2rt10lang_start17h0123456789abcdefE" -> "std::rt::lang_start";
 * Rust's v0 scheme, "_RNvNtCs1234_3std2rt10lang_start" ->
 * "std::rt::lang_start". 0, buf untouched, when name is not a mangled
 * name, is 512 bytes or longer, the demangler rejects it, or the result
 * does not fit. */
int mp_demangle(const char *name, size_t len, char *buf, size_t size);

#endif
