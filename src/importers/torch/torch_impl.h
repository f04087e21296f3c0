/* torch_impl.h - the snapshot source's state, shared by torch_read.c (the
 * pickle's dicts into records), torch_frames.c (stacks into ops),
 * torch_state.c (the state before the trace) and torch_source.c (the
 * events). Internal to src/importers/torch. */
#ifndef MEMPROF_TORCH_IMPL_H
#define MEMPROF_TORCH_IMPL_H

#include <memprof/event.h>
#include <memprof/pickle.h>
#include <memprof/source.h>
#include <memprof/torch.h>

#include "../strtab.h"

#include <stddef.h>
#include <stdint.h>

#define TR_MAX_DEVICES 1024u
#define TR_MIN_BLOCK 512u /* the caching allocator rounds every block to this (kMinBlockSize) */
#define TR_MAX_META 65535u /* distinct user_metadata values kept (tr_rec_t.meta); the rest share one */

/* Trace actions, in the order of PyTorch's TraceEntry::Action names. */
enum {
	TA_ALLOC = 1, TA_FREE_REQUESTED, TA_FREE_COMPLETED, TA_SEGMENT_ALLOC, TA_SEGMENT_FREE,
	TA_SEGMENT_MAP, TA_SEGMENT_UNMAP, TA_OOM, TA_SNAPSHOT, TA_ANNOTATE, TA_COUNT
};

/* A trace entry as kept: 32 bytes instead of a dict (checked below). */
typedef struct tr_rec {
	uint64_t addr;    /* OOM: device_free */
	uint64_t size;
	int64_t time_us;
	uint32_t op;      /* string id: the attributed frame (OOM: with device free), MARK label */
	uint8_t action;   /* TA_* */
	uint8_t pending;  /* FREE_REQUESTED not directly followed by its FREE_COMPLETED */
	uint16_t meta;    /* user_metadata: an index into tr_src_t.meta_ids, 0 = none (a
	                   * pending free: its allocation's); fits the padding */
} tr_rec_t;
_Static_assert(sizeof(tr_rec_t) == 32, "a trace entry costs 32 bytes");

/* A segment or an allocated block at dump time. */
typedef struct tr_span {
	uint64_t addr, size, requested;
	uint32_t op;
	uint8_t expandable;
} tr_span_t;

/* A distinct frame. */
typedef struct tr_frame {
	uint32_t file, name; /* string ids */
	int64_t line;
	uint8_t kind;        /* what it is: user code, a package, a node... (torch_frames.c) */
} tr_frame_t;

typedef struct tr_vec {
	void *v;
	size_t n, cap;
} tr_vec_t;

typedef struct tr_dev {
	tr_vec_t recs;   /* tr_rec_t, in trace order */
	tr_vec_t segs;   /* tr_span_t: segments at dump time */
	tr_vec_t blocks; /* tr_span_t: allocated blocks at dump time */
	tr_vec_t init_regions; /* tr_span_t: regions before the trace */
	tr_vec_t init_blocks;  /* tr_span_t: allocations before the trace */
	tr_vec_t runs;   /* tr_span_t: the regions now, sorted (while emitting) */
	int seen;
} tr_dev_t;

/* Roles the reader gives the pickle's containers. */
enum { TR_ROLE_ROOT = 1, TR_ROLE_SEGMENTS, TR_ROLE_SEGMENT, TR_ROLE_TRACES, TR_ROLE_DEVTRACE, TR_ROLE_ENTRY };

typedef struct tr_src {
	mp_source_t base;
	mp_torch_options_t opts;
	char *path;           /* base.path, owned */
	mp_strtab_t strings;
	tr_vec_t frames;      /* tr_frame_t, by frame id */
	uint32_t key[32];     /* ids of the schema's keys and actions (torch_read.c) */
	tr_dev_t *devs;
	uint32_t ndevs;       /* devices seen (ids 0 .. ndevs-1) */
	uint32_t next_trace;  /* the device of the next device_traces list */
	int root_seen;
	mp_memory_info_t *mems; /* 2 per device */
	char **mem_names;
	mp_torch_info_t info;
	int64_t origin_us;    /* the earliest time_us */
	uint32_t op_before, op_snapshot, op_segment;
	uint32_t *meta_ids;   /* tr_rec_t.meta -> string id; [0] = 0 (none) */
	uint32_t nmeta;       /* used slots of meta_ids, 0 before the first value */
	mp_imap_t meta_slot;  /* string id -> slot */

	/* emission (torch_source.c) */
	int phase;
	uint32_t pdev;
	size_t pidx;
	size_t *cursor;       /* per device: next record */
	tr_vec_t queue;       /* mp_event_t: what the current entry gave */
	size_t qpos;
	uint64_t emitted;
	uint64_t now_ns;
} tr_src_t;

int tr_vec_push(tr_vec_t *v, const void *item, size_t size);
#define TR_AT(vec, type, i) (((type *)(vec).v)[i])

/* torch_read.c: read the whole file into the source. */
int tr_read(tr_src_t *s, const char *path, mp_diag_t *diag);
/* torch_read.c: the slot of a user_metadata string id (0 for none); the
 * values past TR_MAX_META share its last slot. UINT32_MAX when out of memory. */
uint32_t tr_meta_slot(tr_src_t *s, uint32_t str);
/* torch_frames.c: the op of a frames value (a list, or the token of one
 * seen before; its op is cached in the list). */
int tr_frames_op(tr_src_t *s, const mp_pk_value_t *frames, uint32_t *op, mp_diag_t *diag);
/* torch_state.c: the state before the trace, per device. */
int tr_rebuild(tr_src_t *s, mp_diag_t *diag);
/* Allocated size of a request: TR_MIN_BLOCK multiples. */
static inline uint64_t tr_round(uint64_t size)
{
	return size < TR_MIN_BLOCK ? TR_MIN_BLOCK : (size + TR_MIN_BLOCK - 1) / TR_MIN_BLOCK * TR_MIN_BLOCK;
}
/* Mapped ranges: insert [a, b) into a sorted run list (merging), remove it
 * (splitting). The changed runs are reported through the callbacks. */
typedef struct tr_runs_cb {
	void *ctx;
	int (*removed)(void *ctx, uint64_t base, uint64_t size);
	int (*added)(void *ctx, uint64_t base, uint64_t size);
} tr_runs_cb_t;
int tr_runs_add(tr_vec_t *runs, uint64_t a, uint64_t b, const tr_runs_cb_t *cb);
int tr_runs_sub(tr_vec_t *runs, uint64_t a, uint64_t b, const tr_runs_cb_t *cb);

#endif
