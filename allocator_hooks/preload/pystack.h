/* pystack.h - what pystack.c (the frame walk, detection) shares with
 * pystack_cache.c (the thread's stack cache); internal to the preload. */
#ifndef MP_PYSTACK_H
#define MP_PYSTACK_H

#include "pyoffsets.h"

#include <stdint.h>

extern mp_pyoffsets_t mp__py_O;      /* the running Python's layout (pystack.c's configure) */
extern uintptr_t mp__py_code_type;   /* &PyCode_Type */
extern _Atomic uint32_t mp__py_gen;  /* the capture's generation of frame values */
/* Code objects deallocated so far (counted by a wrapper of PyCode_Type's
 * tp_dealloc), when mp__py_code_watched; pystack.c's watch_code_frees. */
extern _Atomic uint64_t mp__py_code_frees;
extern int mp__py_code_watched;
/* The calling thread's innermost _PyInterpreterFrame, or 0 (no thread
 * state, finalizing). */
uintptr_t mp__py_top_frame(void);

#endif
