/* pyoffsets_dump.c - compiled by test_hooks_pystack against an installed
 * CPython's own headers (internal ones included): prints, one "name value"
 * a line, the layout memprof's table (allocator_hooks/preload/pyoffsets.c)
 * must hold for that version, so that the table is checked against the
 * structures themselves rather than against itself. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#if PY_MINOR_VERSION >= 13
#include "internal/pycore_runtime.h"
#endif
#define P(name, v) printf("%s %ld\n", name, (long)(v))
static int shift_of(PyASCIIObject *o) { unsigned w; memcpy(&w, (char *)o + offsetof(PyASCIIObject, state), 4); return w ? __builtin_ctz(w) : -1; }
int main(void)
{
	PyASCIIObject a;
	P("minor", PY_MINOR_VERSION);
#if PY_MINOR_VERSION < 13
	P("ts_cframe", offsetof(PyThreadState, cframe));
	P("cframe_current_frame", offsetof(_PyCFrame, current_frame));
	P("fr_code", offsetof(_PyInterpreterFrame, f_code));
	P("fr_instr", offsetof(_PyInterpreterFrame, prev_instr));
#else
	P("ts_current_frame", offsetof(PyThreadState, current_frame));
	P("fr_code", offsetof(_PyInterpreterFrame, f_executable));
	P("fr_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#endif
	P("fr_previous", offsetof(_PyInterpreterFrame, previous));
	P("fr_owner", offsetof(_PyInterpreterFrame, owner));
#if PY_MINOR_VERSION == 11
	P("fr_is_entry", offsetof(_PyInterpreterFrame, is_entry));
#else
	P("owner_cstack", FRAME_OWNED_BY_CSTACK);
#endif
	P("owner_generator", FRAME_OWNED_BY_GENERATOR);
	P("co_filename", offsetof(PyCodeObject, co_filename));
	P("co_name", offsetof(PyCodeObject, co_name));
	P("co_qualname", offsetof(PyCodeObject, co_qualname));
	P("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("co_firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
	P("co_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
	P("ob_type", offsetof(PyObject, ob_type));
	P("u_length", offsetof(PyASCIIObject, length));
	P("u_state", offsetof(PyASCIIObject, state));
	P("u_ascii_size", sizeof(PyASCIIObject));
	P("u_compact_size", sizeof(PyCompactUnicodeObject));
	memset(&a, 0, sizeof(a)); a.state.kind = 1; P("u_kind_shift", shift_of(&a));
	memset(&a, 0, sizeof(a)); a.state.compact = 1; P("u_compact_shift", shift_of(&a));
	memset(&a, 0, sizeof(a)); a.state.ascii = 1; P("u_ascii_shift", shift_of(&a));
#if PY_MINOR_VERSION >= 13
#define DBG(n, f) P(n, offsetof(_Py_DebugOffsets, f) / 8 - 1)
	DBG("dbg_version", version);
	DBG("dbg_free_threaded", free_threaded);
	DBG("dbg_ts_current_frame", thread_state.current_frame);
	DBG("dbg_fr_previous", interpreter_frame.previous);
	DBG("dbg_fr_executable", interpreter_frame.executable);
	DBG("dbg_fr_instr_ptr", interpreter_frame.instr_ptr);
	DBG("dbg_fr_owner", interpreter_frame.owner);
	DBG("dbg_co_filename", code_object.filename);
	DBG("dbg_co_name", code_object.name);
	DBG("dbg_co_qualname", code_object.qualname);
	DBG("dbg_co_firstlineno", code_object.firstlineno);
	DBG("dbg_co_code_adaptive", code_object.co_code_adaptive);
	DBG("dbg_ob_type", pyobject.ob_type);
	DBG("dbg_u_state", unicode_object.state);
	DBG("dbg_u_length", unicode_object.length);
	DBG("dbg_u_ascii_size", unicode_object.asciiobject_size);
#endif
	return 0;
}
