/* userframe.c - the frame of a capture's stack an allocation is charged to
 * (stackframes.h, rp_user_frame): "the innermost frame of the user's
 * code", the rule PyTorch snapshots follow (docs/torch.md "Attribution"),
 * on the hybrid stacks of `memprof record --stacks` of a Python program
 * (return addresses and Python frames, format 2.2) as on a C program's.
 *
 * Each frame is one of: skipped (memprof's own preload, an allocator entry
 * point: how the memory was handed out, never whose); the interpreter's (a
 * native frame of the python binary, libpython*.so or an object the Python
 * file rule calls internal, lib/python3.X/lib-dynload; a Python frame of the
 * standard library, <frozen ...>, <string> or torch, memprof/pyfile.h; an
 * interpreter frame the capture does not define); a Python frame of a
 * package (site-packages/, dist-packages/) or of the user's code (any other
 * .py, or one --user-code names); another native frame (C code: the
 * program's, an extension's, libc's). The frame charged, first that
 * applies:
 *   1. the innermost Python frame of the user's code;
 *   2. the innermost Python frame of a package;
 *   3. the innermost native frame, called by the interpreter when the
 *      stack has the interpreter's frames (inner to the outermost: libc's
 *      __libc_start_main and a thread's start_thread call the interpreter,
 *      they are not what it ran), never a process's or a thread's start
 *      (libc's __libc_start_main and __libc_start_call_main, _start,
 *      start_thread, clone: the python binary's _start is the outermost
 *      frame of the interpreter's startup, so they were "inside" it, and
 *      every allocation of the startup was charged to
 *      __libc_start_call_main);
 *   4. the innermost frame not skipped; 5. the first.
 * A C program's stack has no interpreter frame: 3 is the innermost frame
 * not skipped, as before Python frames existed. --all-frames (all_frames)
 * takes 4 always.
 */
#include <memprof/pyfile.h>

#include "stackframes.h"

#include <string.h>

enum { UF_SKIP, UF_START, UF_INTERP, UF_NATIVE, UF_PACKAGE, UF_USER };

/* A process's or a thread's start: what runs a program, never what it
 * asked for (rule 3 passes over it; rule 4 may still name it). */
static int is_start(const char *function)
{
	static const char *const names[] = {"_start", "__libc_start_main", "__libc_start_call_main", "start_thread",
					    "clone", "clone3", "__clone", "__clone3"};

	/* (a name as the symbol table has it: __libc_start_main@@GLIBC_2.34) */
	size_t len = function ? strcspn(function, "@") : 0;

	for (size_t i = 0; function && i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !strncmp(function, names[i], len))
			return 1;
	return 0;
}

int rp_is_interpreter(const char *object)
{
	const char *base = object ? strrchr(object, '/') : NULL;

	base = base ? base + 1 : object;
	if (!base)
		return 0;
	if (!strncmp(base, "libpython", 9))
		return 1;
	/* python, python3, python3.11, python3.13t, python3.11-dbg */
	return !strncmp(base, "python", 6) && (!base[6] || (base[6] >= '0' && base[6] <= '9'));
}

static int frame_class(const mp_capture_t *cap, mp_symbolizer_t *sym, uint64_t pc, mp_symbol_t *s,
		       const char *user_code)
{
	memset(s, 0, sizeof(*s));
	if (pc & MP_STACK_FRAME_TAG) {
		const char *fn, *file;
		uint32_t line;
		int kind;
		if (mp_capture_frame(cap, pc, &fn, &file, &line, &kind))
			return UF_INTERP; /* undefined: nothing to show the user */
		if (kind != MP_FRAME_PYTHON)
			return UF_NATIVE;
		if (!file[0])
			return UF_INTERP;
		switch (mp_pyfile_kind(file, user_code)) {
		case MP_PYFILE_USER:
			return UF_USER;
		case MP_PYFILE_PACKAGE:
			return UF_PACKAGE;
		default:
			return UF_INTERP;
		}
	}
	mp_symbolize(sym, pc, s);
	if (rp_in_memprof(s->object) || rp_is_entry_point(s->function))
		return UF_SKIP;
	if (s->object && (rp_is_interpreter(s->object) || mp_pyfile_kind(s->object, NULL) == MP_PYFILE_INTERNAL))
		return UF_INTERP;
	return is_start(s->function) ? UF_START : UF_NATIVE;
}

uint32_t rp_user_frame(const mp_capture_t *cap, mp_symbolizer_t *sym, const uint64_t *pcs, uint32_t n,
		       int all_frames, const char *user_code, mp_symbol_t *syms)
{
	enum { NONE = UINT32_MAX };
	uint32_t i, user = NONE, pkg = NONE, kept = NONE, outer_interp = NONE, native = NONE;
	int c;

	for (i = 0; i < n; i++) {
		if ((c = frame_class(cap, sym, pcs[i], &syms[i], user_code)) == UF_SKIP)
			continue;
		if (kept == NONE)
			kept = i;
		if (all_frames)
			return i;
		if (c == UF_USER && user == NONE)
			user = i;
		else if (c == UF_PACKAGE && pkg == NONE)
			pkg = i;
		else if (c == UF_NATIVE && native == NONE)
			native = i;
		else if (c == UF_INTERP)
			outer_interp = i;
	}
	if (user != NONE)
		return user;
	if (pkg != NONE)
		return pkg;
	if (native != NONE && (outer_interp == NONE || native < outer_interp))
		return native;
	return kept != NONE ? kept : 0;
}
