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

#if defined(__x86_64__)
/* Where this thread's attached thread state lives (pystack.c's
 * attached_state: CPython's _Py_tss_tstate, read in place); NULL until its
 * first read, and where it cannot be read so. */
extern __thread uintptr_t *mp__py_tss_at __attribute__((tls_model("initial-exec")));
#endif

/* The innermost frame of thread state ts (not 0): 3.13's current_frame,
 * or 3.11-3.12's cframe->current_frame; 0 when it runs none. */
static inline uintptr_t mp__py_frame_of(uintptr_t ts)
{
	uintptr_t cf;

	if (mp__py_O.ts_current_frame >= 0)
		return *(const uintptr_t *)(ts + (uintptr_t)mp__py_O.ts_current_frame);
	cf = *(const uintptr_t *)(ts + (uintptr_t)mp__py_O.ts_cframe);
	return cf ? *(const uintptr_t *)(cf + (uintptr_t)mp__py_O.cframe_current_frame) : 0;
}

/* mp__py_top_frame with its common case inline -- a thread holding the GIL
 * (every pymalloc call), whose attached state is read in place -- and the
 * rest in the call: a dozen instructions an object fewer. */
static inline uintptr_t mp__py_top_frame_fast(void)
{
#if defined(__x86_64__)
	const uintptr_t *at = mp__py_tss_at;
	uintptr_t ts;

	if (__builtin_expect(at != NULL, 1) && (ts = *at) != 0)
		return mp__py_frame_of(ts);
#endif
	return mp__py_top_frame();
}

#endif
