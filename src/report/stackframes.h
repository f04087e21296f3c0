/* stackframes.h - what the report's readers of call stacks share
 * (functions.c, calltree.c): which frames are memprof's own or an
 * allocator's entry point, and the name a symbolized frame is shown
 * under. Internal to memprof_report. */
#ifndef MP_STACKFRAMES_H
#define MP_STACKFRAMES_H

#include "symbolize.h"

#include <stddef.h>
#include <stdint.h>

/* A symbol's length without its version ("malloc@@GLIBC_2.2.5"). */
size_t rp_sym_len(const char *fn);
/* fn (a symbol as the object names it, mangled) is an allocator entry
 * point: malloc, calloc, realloc, ..., strdup, every operator new/new[]. */
int rp_is_entry_point(const char *fn);
/* object is memprof's preload library. */
int rp_in_memprof(const char *object);
/* The name a frame is shown under: its symbol (a C++ or Rust one
 * demangled, as far as it fits), else object+offset, else the address. */
void rp_frame_name(const mp_symbol_t *s, uint64_t pc, char *buf, size_t size);

#endif
