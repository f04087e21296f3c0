/* internal.h - what the files of memprof_hlo share: id -> index lookups,
 * the loaded module and its indexes. Protobuf fields outside the generated
 * decoder are walked with memprof/protowire.h. */
#ifndef MEMPROF_HLO_INTERNAL_H
#define MEMPROF_HLO_INTERNAL_H

#include <memprof/hlo.h>
#include <memprof/i64map.h>
#include <memprof/protowire.h>
#include <memprof/vec.h>

#include "hlo_min.pb-c.h"

#include <stdbool.h>

/* ---- ids -> indexes: <memprof/i64map.h> ------------------------------------- */

/* The index stored for id, or -1 when absent. Ids in HloProtos are sparse
 * (instruction ids 588..66134 for 7757 instructions): a map, not an array. */
static inline int32_t hlo_index(const mp_i64map_t *m, int64_t id)
{
	uint32_t v;

	return mp_i64map_get(m, (uint64_t)id, &v) ? (int32_t)v : -1;
}

/* ---- load.c / xspace.c: the opened file ---------------------------------------- */

typedef struct module_entry {
	mp_hlo_module_info_t info; /* name/display point at the owned copies below */
	char *name, *display;
	const uint8_t *bytes;
	size_t len;
} module_entry_t;

struct mp_hlo_file {
	uint8_t *data;
	size_t len;
	int xspace;
	module_entry_t *mods;
	size_t n_mods;
	char path[256];
};

/* file.c: append a module (name/display copied; bytes borrowed from f->data). */
int mp_hlo_file_add_module(mp_hlo_file_t *f, const char *name, size_t name_len, const char *display,
			   size_t display_len, uint64_t id, const uint8_t *bytes, size_t len);
/* 1 if f holds an XSpace (modules added), 0 if not one, <0 on error. With
 * must set, malformed bytes are an error instead of "not an XSpace". */
int mp_hlo_scan_xspace(mp_hlo_file_t *f, int must, mp_diag_t *diag);

/* ---- model.c: the loaded module ------------------------------------------------ */

typedef struct mp_hlo_lb {
	const Xla__LogicalBufferProto *proto;
	int32_t instr;    /* index into module->instrs, -1 if unknown */
	int32_t alloc;    /* index into module->allocs of the (last) allocation assigning it, -1 if none */
	int64_t offset;   /* assigned offset in the allocation */
	const Xla__ShapeProto *shape_compat; /* last shape-index element, top level (xprof) */
	const Xla__ShapeProto *shape_full;   /* full shape-index walk */
	int64_t unpadded_compat;
	int64_t unpadded_full;
} mp_hlo_lb_t;

typedef struct mp_hlo_alloc {
	const Xla__BufferAllocationProto *proto;
	int64_t trace_id;  /* heap-simulator trace mapped to it by its first event, -1 */
	int32_t *lbs;      /* logical buffers assigned (indices into module->lbs) */
	size_t n_lbs;
} mp_hlo_alloc_t;

/* arena.c: a bump allocator for protobuf-c. Decoding a module makes one
 * allocation per message and string (hundreds of thousands); with the arena
 * they cost a pointer bump and the module is freed in a few calls. */
typedef struct mp_hlo_arena mp_hlo_arena_t;
mp_hlo_arena_t *mp_hlo_arena_new(void);
void mp_hlo_arena_free(mp_hlo_arena_t *a);
/* The protobuf-c allocator drawing from a; valid while a lives. */
ProtobufCAllocator *mp_hlo_arena_allocator(mp_hlo_arena_t *a);

struct mp_hlo_module {
	mp_hlo_arena_t *arena;  /* owns proto's memory */
	uint64_t program_id;    /* from the file's module list (profile program id) */
	Xla__HloProto *proto;
	const Xla__BufferAssignmentProto *ba;
	const Xla__HloInstructionProto **instrs;
	size_t n_instrs;
	mp_hlo_lb_t *lbs;
	size_t n_lbs;
	mp_i64map_t lb_by_id;   /* LogicalBufferProto.id -> index in lbs (only assigned, resolvable ones) */
	mp_hlo_alloc_t *allocs; /* ascending allocation index */
	size_t n_allocs;
	int64_t *colors;
	size_t n_colors;
	char **warnings;
	size_t n_warnings;
	size_t n_warnings_dropped;
};

/* Append a formatted warning (capped at 100; later ones are only counted). */
void mp_hlo_warn(char ***list, size_t *n, size_t *dropped, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Build the indexes of a decoded HloProto (takes ownership of the arena holding
 * proto on success and failure). */
int mp_hlo_model_build(mp_hlo_arena_t *arena, Xla__HloProto *proto, mp_hlo_module_t **out, mp_diag_t *diag);

/* ---- shape.c ------------------------------------------------------------------------ */

/* Sub-shape for a shape index: compat = xprof's last-element-at-top-level rule. */
const Xla__ShapeProto *mp_hlo_shape_resolve(const Xla__ShapeProto *shape, const int64_t *index,
					    size_t n, bool compat);
/* XLA's ShapeUtil::ByteSizeOf with the default layout (tiles ignored), pointer size 8. Saturates. */
int64_t mp_hlo_shape_unpadded_bytes(const Xla__ShapeProto *shape);
/* ShapeUtil::HumanStringWithLayout. Caller owns the result (free()); NULL on ENOMEM. */
char *mp_hlo_shape_string(const Xla__ShapeProto *shape);

/* ---- file.c: small string helpers ------------------------------------------------------- */
char *mp_hlo_strdup(const char *s); /* NULL -> "" copy; NULL on ENOMEM */

#endif
