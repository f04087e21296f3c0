/* pyoffsets.h - where CPython 3.11-3.13 keep what memprof reads to put
 * Python frames in a call stack (pystack.c; docs/hooks.md, "Python
 * frames"). 64-bit Linux, default (GIL) builds. The figures are checked
 * against each installed Python's own headers by test_hooks_pystack, which
 * compiles offsetof() of the same fields. No dependencies: the test links
 * this file too. */
#ifndef MP_PYOFFSETS_H
#define MP_PYOFFSETS_H

#include <stdint.h>

/* Byte offsets (-1: the version has no such field). */
typedef struct {
	int minor;                /* 3.<minor> */
	int ts_cframe;            /* PyThreadState.cframe (3.11, 3.12) */
	int cframe_current_frame; /* _PyCFrame.current_frame (3.11, 3.12) */
	int ts_current_frame;     /* PyThreadState.current_frame (3.13) */
	int fr_code;              /* _PyInterpreterFrame.f_code / f_executable (3.13) */
	int fr_previous;          /* _PyInterpreterFrame.previous */
	int fr_instr;             /* .prev_instr (3.11, 3.12) / .instr_ptr (3.13) */
	int fr_owner;             /* .owner (a char) */
	int fr_is_entry;          /* .is_entry (3.11; a bool) */
	int owner_cstack;         /* FRAME_OWNED_BY_CSTACK (3.12+; -1 before) */
	int owner_generator;      /* FRAME_OWNED_BY_GENERATOR */
	int co_filename, co_name, co_qualname; /* PyCodeObject: str objects */
	int co_firstlineno;       /* int */
	int co_firsttraceable;    /* _co_firsttraceable: int, in code units */
	int co_code_adaptive;     /* the first instruction */
	int ob_type;              /* PyObject.ob_type */
	int u_length, u_state;    /* PyASCIIObject.length (Py_ssize_t), .state (bit field) */
	int u_ascii_size;         /* sizeof(PyASCIIObject): compact ASCII data follows */
	int u_compact_size;       /* sizeof(PyCompactUnicodeObject): other compact data */
	int u_kind_shift, u_compact_shift, u_ascii_shift; /* state bits: kind (3 bits), compact, ascii */
} mp_pyoffsets_t;

/* 3.13: _PyRuntime starts with _Py_DebugOffsets: the cookie "xdebugpy",
 * then uint64_t fields; these are their indices after the cookie (3.13.0's
 * internal/pycore_runtime.h; the test checks them against offsetof). */
enum {
	MP_DBG_VERSION = 0,
	MP_DBG_FREE_THREADED = 1,
	MP_DBG_TS_CURRENT_FRAME = 22,
	MP_DBG_FR_PREVIOUS = 28,
	MP_DBG_FR_EXECUTABLE = 29,
	MP_DBG_FR_INSTR_PTR = 30,
	MP_DBG_FR_OWNER = 32,
	MP_DBG_CO_FILENAME = 34,
	MP_DBG_CO_NAME = 35,
	MP_DBG_CO_QUALNAME = 36,
	MP_DBG_CO_FIRSTLINENO = 38,
	MP_DBG_CO_CODE_ADAPTIVE = 42,
	MP_DBG_OB_TYPE = 44,
	MP_DBG_U_STATE = 67,
	MP_DBG_U_LENGTH = 68,
	MP_DBG_U_ASCII_SIZE = 69,
	MP_DBG_COUNT = 70
};

/* The table's entry for Python 3.<minor>, or NULL when memprof cannot read
 * that version's frames. Static storage. */
const mp_pyoffsets_t *mp__pyoffsets(int minor);

#endif
