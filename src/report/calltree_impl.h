/* calltree_impl.h - the call trees' state, shared by calltree.c (the pass
 * and the frames), calltree_build.c (the trees) and calltree_out.c (text,
 * JSON, CSV). Internal to memprof_report. */
#ifndef MP_CALLTREE_IMPL_H
#define MP_CALLTREE_IMPL_H

#include <memprof/calltree.h>
#include <memprof/capture.h>

#include "symbolize.h"

#include "report_impl.h"

#include <stddef.h>
#include <stdint.h>

/* A distinct frame; strings interned in mp_calltree_t.strs. */
typedef struct ct_frame {
	const char *name, *file;
	int64_t line;
	int kind;
} ct_frame_t;

/* Frame ids from CT_SPECIAL up are the tree's own nodes. */
#define CT_SPECIAL (UINT32_MAX - 4)
#define CT_ROOT (UINT32_MAX - 1)
#define CT_NO_STACK (UINT32_MAX - 2)
#define CT_OTHER (UINT32_MAX - 3)

/* A stack id's frames: path[first .. first + n), outermost first. */
typedef struct ct_stack {
	uint32_t first, n;
	uint8_t seen, resolved;
} ct_stack_t;

/* The figures of one (memory id, stack), stack 0 = none. */
enum { CT_LIVE_B, CT_LIVE_C, CT_PEAK_B, CT_PEAK_C, CT_ALLOC_B, CT_ALLOC_C, CT_NV };
typedef struct ct_agg {
	uint32_t memory, stack;
	uint64_t v[CT_NV];
} ct_agg_t;

struct mp_calltree {
	mp_source_t *src;          /* borrowed, while computing */
	mp_capture_t *cap;         /* a capture: its stacks are return addresses */
	mp_symbolizer_t *sym;
	double min_percent;
	unsigned kinds;
	int all_frames;            /* mp_calltree_options_t.all_frames */
	char **strs;               /* interned strings (owned), str_map: hash -> index */
	size_t nstrs, cap_strs;
	mp_i64map_t str_map;
	ct_frame_t *frames;        /* frame_map: hash of (name, file, line, kind) -> index */
	size_t nframes, cap_frames;
	mp_i64map_t frame_map;
	mp_i64map_t pc_map;        /* a capture's return address -> frame id << 1 | dropped */
	ct_stack_t *stacks;        /* by stack id */
	size_t nstacks_cap;
	uint32_t *path;            /* the stacks' frame ids, back to back */
	size_t npath, cap_path;
	uint32_t distinct_stacks;
	int any_stack;             /* some allocation had a stack */
	ct_agg_t *aggs;            /* agg_map: memory << 32 | stack -> index */
	size_t naggs, cap_aggs;
	mp_i64map_t agg_map;
	mp_tree_t *trees;          /* by memory id, then kind; nodes owned */
	size_t ntrees;
};

/* calltree.c: the interned copy of s (owned by t); NULL when out of memory. */
const char *ct_intern(mp_calltree_t *t, const char *s);

/* The frames of stack (a path of frame ids, outermost first; none for
 * stack 0 or a stack that cannot be read). 0, or -1 out of memory. */
typedef int (*ct_path_fn)(mp_calltree_t *t, uint32_t stack, const uint32_t **path, uint32_t *n);
int ct_resolve_needed(mp_calltree_t *t, uint32_t stack, const uint32_t **path, uint32_t *n);

/* calltree_build.c: every tree of t->kinds for the memory ids with a
 * stack. 0, or -1 out of memory. */
int ct_build_all(mp_calltree_t *t, ct_path_fn path_of);

#endif
