/* memprof/calltree.h - call trees of allocations: who allocated the bytes
 * live at the peak, the bytes still live at the end (leaks), the bytes
 * allocated over the run -- for every source with call stacks: captures
 * recorded with `memprof record --stacks` (return addresses, symbolized
 * now, as memprof/functions.h does) and sources that name their frames
 * themselves (mp_source_stack_frames: PyTorch snapshots).
 *
 * A tree per (memory id, kind): the root is the memory id, its children
 * the outermost frames of the stacks, down to the innermost frame that
 * asked for the memory. The innermost frames that are memprof's preload
 * library or an allocator entry point (malloc, calloc, realloc, operator
 * new, strdup, ...), and a snapshot's unwinder and caching-allocator
 * frames (torch::unwind::, torch::CapturedTraceback::, the snapshot's
 * gather, c10::cuda::CUDACachingAllocator::), are dropped, unless every
 * frame is one. Sibling frames with the same name, file, line and kind are
 * one node. Allocations without a stack are the root's child "(no stack)".
 *
 * The tree is a flat array of nodes in depth-first order (a parent before
 * its children), linked by indexes (parent, first child, next sibling),
 * children by inclusive bytes, largest first: what a chart walks. Bytes
 * are allocated bytes (the breakdown's), so the root of the peak tree is
 * the heap at the memory id's peak, the solver's peak event (--steps
 * chooses that event; the leaks and allocated trees cover the whole
 * source). Failed allocations are in no tree.
 *
 * Pruning: a node whose inclusive bytes are under a fraction of the
 * root's is folded, with everything under it, into one "(other)" child of
 * its parent, so that every node's inclusive bytes are its exclusive
 * bytes plus its children's.
 */
#ifndef MEMPROF_CALLTREE_H
#define MEMPROF_CALLTREE_H

#include <memprof/error.h>
#include <memprof/solver.h>
#include <memprof/source.h>

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which bytes a tree holds. */
#define MP_TREE_KIND_MAP(X)                    \
	X(MP_TREE_PEAK,      0, "peak")        \
	X(MP_TREE_LEAKS,     1, "leaks")       \
	X(MP_TREE_ALLOCATED, 2, "allocated")

typedef enum {
#define MP__TK_ENUM(name, val, str) name = (val),
	MP_TREE_KIND_MAP(MP__TK_ENUM)
#undef MP__TK_ENUM
	MP_TREE_KIND_MAX = 2
} mp_tree_kind_t;

/* "peak", "leaks", "allocated"; "?" out of range. Static, never NULL. */
const char *mp_tree_kind_name(int kind);
/* The kind of a name, or -1. */
int mp_tree_kind_parse(const char *name);

/* The default fold: nodes under 1% of the root's bytes (`--min-percent`). */
#define MP_CALLTREE_MIN_PERCENT_DEFAULT 1.0

typedef struct mp_calltree_options {
	double min_percent; /* fold nodes under this percentage of the root's bytes; 0 folds nothing */
	unsigned kinds;     /* 1u << MP_TREE_*: the trees to build; 0 = all three */
	/* a window's state at its start (memprof report --from-event, a kept
	 * run), or NULL: its blocks are live when the source's events begin
	 * (in the trees at the peak and at the end; not allocations of the
	 * source's) */
	const struct mp_solver_seed *seed;
	/* 1: every frame of every stack. 0: a capture's stack that holds
	 * Python frames starts at its outermost one -- the native frames
	 * outside it (the process's start and the interpreter's main loop,
	 * _start ... PyEval_EvalCode, or a thread's start) are in every
	 * allocation of a Python and say nothing of it (`report --all-frames`
	 * keeps them) */
	int all_frames;
} mp_calltree_options_t;

typedef struct mp_tree_node {
	const char *name;     /* the frame's function ("main", "libfoo.so+0x1234" without a symbol);
	                       * the root: the memory id's name; "(other)", "(no stack)" */
	const char *file;     /* Python: the source file; native: the file the source names
	                       * (a capture's: the object); "" unknown */
	int64_t line;         /* 0: unknown */
	int kind;             /* mp_frame_kind_t; MP_FRAME_UNKNOWN for the root, "(other)", "(no stack)" */
	uint64_t total_bytes; /* inclusive: allocations made here and in what it called */
	uint64_t self_bytes;  /* exclusive: allocations whose innermost (kept) frame it is */
	uint64_t total_count; /* allocations (peak, leaks: live blocks), inclusive */
	uint64_t self_count;  /* the same, exclusive */
	int32_t parent;       /* node index; -1 for the root */
	int32_t first_child;  /* -1: none */
	int32_t next_sibling; /* -1: none */
	uint32_t depth;       /* the root is 0 */
	uint64_t folded;      /* "(other)": the nodes folded into it; 0 for the others */
} mp_tree_node_t;

typedef struct mp_tree {
	uint32_t memory;             /* memory id */
	int kind;                    /* mp_tree_kind_t */
	const mp_tree_node_t *nodes; /* borrowed, as the nodes' strings: the calltree's, valid
	                              * until mp_calltree_free(); nodes[0] is the root */
	size_t count;                /* nodes */
	uint32_t stacks;             /* distinct stacks in it */
	uint64_t folded_nodes;       /* nodes folded into "(other)" nodes */
	uint64_t folded_bytes;       /* their bytes */
} mp_tree_t;

typedef struct mp_calltree mp_calltree_t;

/* The trees of src (already run through solver, which gives each memory
 * id's peak event); rewinds and reads src once more. Memory ids without
 * any allocation with a stack get no tree. Returns 0 with *out owned by
 * the caller (free with mp_calltree_free), MP_ENODATA when src has no
 * call stacks (*out NULL), or the source's error with diag filled. */
int mp_calltree_compute(mp_calltree_t **out, mp_source_t *src, const mp_solver_t *solver,
			const mp_calltree_options_t *opts, mp_diag_t *diag);
void mp_calltree_free(mp_calltree_t *t);

/* The trees, by memory id then kind. Borrowed: valid until
 * mp_calltree_free(). mp_calltree_find: NULL when there is none. */
size_t mp_calltree_count(const mp_calltree_t *t);
const mp_tree_t *mp_calltree_tree(const mp_calltree_t *t, size_t i);
const mp_tree_t *mp_calltree_find(const mp_calltree_t *t, uint32_t memory, int kind);

/* Distinct stacks of the source; what named the frames: "libdw" or "none"
 * (a capture), "source" (the source's own names). Static. */
uint32_t mp_calltree_distinct_stacks(const mp_calltree_t *t);
const char *mp_calltree_symbolizer(const mp_calltree_t *t);
/* The fold it was built with (percent). */
double mp_calltree_min_percent(const mp_calltree_t *t);

/* Text for people: the trees of `kind` as indented lines, memory ids by
 * their peak in solver (largest first; only `device` when device_set).
 * Returns 0 or -errno. */
int mp_calltree_text(FILE *out, const mp_calltree_t *t, const mp_source_t *src, const mp_solver_t *solver, int kind,
		     int device_set, uint32_t device);

/* {"kind", "min_percent", "symbolizer", "distinct_stacks", "trees": [...]}
 * (docs/report.md "Call trees"), memory ids in increasing order. Owned by
 * the caller; NULL when out of memory. */
json_t *mp_calltree_json(const mp_calltree_t *t, const mp_source_t *src, int kind, int device_set, uint32_t device);

/* CSV: the header line (without newline), then the nodes of one input
 * (section "call_tree", file, device, then the node's fields). Returns 0 or
 * -errno. */
extern const char *const mp_calltree_csv_header;
int mp_calltree_csv(FILE *out, const mp_calltree_t *t, const mp_source_t *src, const char *file, int kind,
		    int device_set, uint32_t device);

#ifdef __cplusplus
}
#endif
#endif
