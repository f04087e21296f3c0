/* memprof/functions.h - allocations grouped by the function that made them,
 * for captures recorded with call stacks (`memprof record --stacks`).
 *
 * The "allocating function" of an allocation is the innermost frame of its
 * stack in the user's code: a Python frame of the user's (not the standard
 * library's, not an installed package's) when the stack holds Python
 * frames (format 2.2), else the innermost frame that is neither inside
 * memprof's preload library, nor an allocator entry point (malloc, calloc,
 * realloc, operator new, strdup, ...), nor the interpreter's: the code that
 * asked for the memory (the rule: src/report/userframe.c). Native frames
 * are symbolized offline, now, from the objects on disk; Python frames
 * are named by the capture (see docs/report.md, "Allocations by
 * function").
 *
 * PyTorch snapshots name the allocating frame themselves (the event's op):
 * mp_functions_compute_ops() groups by it.
 *
 * Rows are per (memory id, function): allocations made, bytes requested,
 * failed allocations, what was live at the memory id's peak (the solver's
 * peak event) and at the end of the capture.
 */
#ifndef MEMPROF_FUNCTIONS_H
#define MEMPROF_FUNCTIONS_H

#include <memprof/error.h>
#include <memprof/solver.h>
#include <memprof/source.h>

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_func_frame {
	uint64_t address;     /* the return address as recorded (an interpreter frame: the tagged value) */
	const char *function; /* symbol, a Python function, or NULL when unknown */
	const char *object;   /* path of the object holding it, or NULL (always for a Python frame) */
	uint64_t offset;      /* address - the object's load bias (0 for a Python frame) */
	const char *file;     /* a Python frame's file, else NULL */
	uint32_t line;        /* a Python frame's line (0: unknown) */
	int kind;             /* mp_frame_kind_t: MP_FRAME_NATIVE, MP_FRAME_PYTHON */
} mp_func_frame_t;

typedef struct mp_func_row {
	uint32_t memory;          /* memory id */
	const char *function;     /* "alloc_a", "libfoo.so+0x1234" without a symbol, "(no stack)"; a Python
				     frame's function ("main") */
	const char *object;       /* path of the object holding it, "" when unknown or a Python frame */
	const char *file;         /* a Python frame's file, "" for the others */
	uint32_t line;            /* a Python frame's line, 0 for the others (and when unknown) */
	int kind;                 /* mp_frame_kind_t: MP_FRAME_PYTHON, MP_FRAME_NATIVE, MP_FRAME_UNKNOWN
				     ("(no stack)", a PyTorch snapshot's op) */
	const char *label;        /* what people read: "main (/home/u/train.py:12)" for a Python frame,
				     else function */
	uint64_t allocations;     /* ALLOC events (a realloc counts one) */
	uint64_t requested_bytes; /* their requested bytes, summed */
	uint64_t failed;          /* failed allocations */
	uint64_t peak_count, peak_bytes; /* live at the memory id's peak (allocated bytes) */
	uint64_t peak_requested_bytes;   /* the requested bytes of those blocks: what Python's
					    tracemalloc counts (pymalloc rounds to 16 B classes) */
	uint64_t leak_count, leak_bytes; /* live at the end of the capture */
	uint64_t leak_requested_bytes;   /* their requested bytes */
	uint32_t stacks;          /* distinct stacks in this row */
	uint32_t stack;           /* one of them: the one with the most bytes requested */
} mp_func_row_t;

typedef struct mp_functions mp_functions_t;

/* Group the events of src (a .memprof capture, already run through solver,
 * which gives the peak of each memory id) by allocating function. Rewinds
 * and reads src once more. Returns 0 with *out owned by the caller (free
 * with mp_functions_free), MP_ENODATA when src has no call stacks (*out
 * NULL), or the source's error with diag filled. */
int mp_functions_compute(mp_functions_t **out, mp_source_t *src, const mp_solver_t *solver, mp_diag_t *diag);
/* Which frame is the allocating one (docs/report.md "Allocations by
 * function"; the same options as PyTorch snapshots', docs/torch.md). */
typedef struct mp_functions_options {
	int all_frames;        /* --all-frames: the innermost frame that is neither memprof's nor an
				  allocator entry point, whatever code it is */
	const char *user_code; /* --user-code: more Python files that are the user's (memprof/pyfile.h),
				  or NULL */
	/* a window's state at its start (memprof report --from-event, a kept
	 * run), or NULL: its blocks are live when the source's events begin
	 * (live at the peak and at the end; not allocations of the source's) */
	const struct mp_solver_seed *seed;
} mp_functions_options_t;
/* mp_functions_compute with options (NULL: the defaults, all zero). */
int mp_functions_compute_opts(mp_functions_t **out, mp_source_t *src, const mp_solver_t *solver,
			      const mp_functions_options_t *opts, mp_diag_t *diag);

/* Make the breakdown (and the leaks, the OOM states, the charts' labels)
 * name an allocation without an op by the frame --by-function charges its
 * stack to ("alloc_a", "libfoo.so+0x1234"), where the stack holds no
 * Python frame of the user's (those the reader names itself): installs a
 * stack labeler on cap (mp_capture_set_stack_labeler; the capture owns
 * it). Call before the capture is read. 0, or MP_ENOMEM. */
typedef struct mp_capture mp_capture_t;
int mp_functions_label_stacks(mp_capture_t *cap, int all_frames, const char *user_code);
/* The same for a source whose events' op already names the allocating
 * frame (PyTorch snapshots: the innermost frame of the user's code,
 * docs/torch.md): rows by (memory id, op), every memory id kept, no stacks
 * (distinct_stacks 0, symbolizer "none"). */
int mp_functions_compute_ops(mp_functions_t **out, mp_source_t *src, const mp_solver_t *solver, mp_diag_t *diag);
void mp_functions_free(mp_functions_t *f);

/* Rows by memory id, then peak bytes, requested bytes (both descending) and
 * name. Borrowed; valid until mp_functions_free(). */
size_t mp_functions_count(const mp_functions_t *f);
const mp_func_row_t *mp_functions_row(const mp_functions_t *f, size_t i);

/* Distinct stacks in the capture; "libdw" or "none" (what named the frames). */
uint32_t mp_functions_distinct_stacks(const mp_functions_t *f);
const char *mp_functions_symbolizer(const mp_functions_t *f);

/* The symbolized frames of a stack, innermost first. *frames borrowed
 * (valid until the next call or mp_functions_free). Returns 0 or MP_ENOTFOUND. */
int mp_functions_frames(mp_functions_t *f, uint32_t stack, const mp_func_frame_t **frames, uint32_t *n);

/* Text table(s) for people: top rows per memory id (0 = 20). Only memory
 * id `device` when device_set. Returns 0 or -errno. */
int mp_functions_text(FILE *out, mp_functions_t *f, const mp_source_t *src, uint32_t top, int device_set,
		      uint32_t device);

/* {"symbolizer", "distinct_stacks", "rows": [...]} (docs/report.md). Caller
 * owns; NULL when out of memory. */
json_t *mp_functions_json(mp_functions_t *f, const mp_source_t *src, uint32_t top, int device_set, uint32_t device);

/* CSV: the header line (without newline), then the rows of one input
 * (section "functions", then file, device, and the row's fields). Returns 0
 * or -errno. */
extern const char *const mp_functions_csv_header;
int mp_functions_csv(FILE *out, mp_functions_t *f, const char *file, uint32_t top, int device_set, uint32_t device);

#ifdef __cplusplus
}
#endif
#endif
