/* stackframes.h - what the report's readers of call stacks share
 * (functions.c, calltree.c): which frames are memprof's own or an
 * allocator's entry point, the name a symbolized frame is shown under,
 * and the frame of the user's code a stack is charged to (userframe.c).
 * Internal to memprof_report. */
#ifndef MP_STACKFRAMES_H
#define MP_STACKFRAMES_H

#include "symbolize.h"

#include <stddef.h>
#include <stdint.h>

/* The name of a stack value that names an interpreter frame the capture
 * does not define (docs/format.md "Interpreter frames"). */
#define RP_UNKNOWN_FRAME "[unknown frame]"

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

/* object is the Python interpreter: the python binary or libpython*.so. */
int rp_is_interpreter(const char *object);

/* The frame of stack pcs[0..n) (innermost first; n >= 1) an allocation is
 * charged to: the innermost of the user's code (userframe.c has the rule;
 * docs/report.md "Allocations by function"). all_frames: the innermost
 * that is neither memprof's nor an allocator entry point. user_code:
 * --user-code's list, or NULL. syms[0..n) (scratch) gets each native
 * frame looked at symbolized (zeroed for interpreter frames). */
uint32_t rp_user_frame(const mp_capture_t *cap, mp_symbolizer_t *sym, const uint64_t *pcs, uint32_t n,
		       int all_frames, const char *user_code, mp_symbol_t *syms);

#endif
