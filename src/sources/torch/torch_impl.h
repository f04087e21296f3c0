/* torch_impl.h - the snapshot source's state, shared by torch_read.c (the
 * pickle's dicts into records), torch_frames.c (stacks into ops),
 * torch_state.c (the state before the trace) and torch_source.c (the
 * events). Internal to src/sources/torch. */
#ifndef MEMPROF_TORCH_IMPL_H
#define MEMPROF_TORCH_IMPL_H

#include <memprof/event.h>
#include <memprof/pickle.h>
#include <memprof/source.h>
#include <memprof/torch.h>

#include <memprof/strtab.h>
#include <memprof/vec.h>

#include <stddef.h>
#include <stdint.h>

#define TR_MAX_DEVICES 1024u
#define TR_MIN_BLOCK 512u /* the caching allocator rounds every block to this (kMinBlockSize) */
#define TR_SMALL_SIZE (1u << 20)    /* kSmallSize: requests up to this go to the small pool */
#define TR_SMALL_BUFFER (2u << 20)  /* kSmallBuffer: the small pool's segments */
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

/* A segment or an allocated block at dump time (or before the trace). */
typedef struct tr_span {
	uint64_t addr, size, requested;
	uint64_t size_max; /* a block before the trace: the most its size can be (the
	                    * layout's bound); = size when the size is exact */
	uint32_t op;
	uint32_t stack;    /* its frames' stack id (tr_src_t.stacks), 0 = none */
	uint8_t expandable;
	uint8_t small;     /* a segment of the small pool (blocks of 1 MiB or less) */
	uint8_t awaiting;  /* a block freed by the program, its free not completed
	                    * (another stream's work): not in allocated bytes */
} tr_span_t;

/* An external annotation (a phase's START or END) of one device. */
typedef struct tr_phase {
	int64_t time_us;
	uint32_t name;   /* string id */
	uint8_t begin;   /* 1: START, 0: END */
} tr_phase_t;

/* The caching allocator's settings that shape its blocks
 * (allocator_settings; PyTorch's defaults when the snapshot has none). */
typedef struct tr_settings {
	int known;                /* the snapshot had allocator_settings */
	uint64_t max_split_size;  /* UINT64_MAX: unlimited (PyTorch writes -1) */
	int expandable_segments;
	uint32_t divisions[64];   /* roundup_power2_divisions by interval: [0] below 2 MiB,
	                           * [k] from 2^k MiB to 2^(k+1) MiB */
} tr_settings_t;

/* What replaying the allocator's layout found on one device
 * (torch_layout.c): PyTorch's own counters and the dump check. */
typedef struct tr_counters {
	uint64_t start_min, start_max;   /* allocated at the trace's start */
	uint64_t peak_min, peak_max;     /* max_memory_allocated over the trace */
	int64_t peak_entry;              /* entry index of peak_min; -1: at the start */
	uint64_t final;                  /* allocated after the last entry */
	uint64_t unpinned;               /* blocks before the trace whose size is a range */
	uint64_t awaiting_peak;          /* most bytes freed but awaiting another stream */
	uint64_t requested_peak;         /* most requested bytes of blocks not yet free_completed:
	                                  * memory_viz's Active Memory Timeline */
	uint64_t anomalies;              /* entries the layout could not place */
	/* the dump check: the replay's end state against the dump's own */
	uint64_t dump_allocated, dump_reserved, dump_blocks, dump_segments;
	uint64_t end_reserved, end_blocks, end_segments;
	uint64_t blocks_differ;          /* blocks at an address or with a size the dump lacks */
	uint64_t first_differ_addr, first_differ_replay, first_differ_dump;
	uint64_t segments_differ;
	uint64_t expandable;             /* expandable segments in the dump: their mapped ranges
	                                  * are compared by bytes, not one by one */
} tr_counters_t;

/* A distinct list of frames (a stack), by stack id - 1: its frame ids are
 * stack_fids[first .. first + n), innermost first; op is what the list is
 * attributed to (torch_frames.c). */
typedef struct tr_stack {
	uint32_t first, n;
	uint32_t op;
} tr_stack_t;

/* A distinct frame. */
typedef struct tr_frame {
	uint32_t file, name; /* string ids */
	int64_t line;
	uint8_t kind;        /* what it is: user code, a package, a node... (torch_frames.c) */
} tr_frame_t;

typedef struct tr_dev {
	mp_vec_t recs;   /* tr_rec_t, in trace order */
	mp_vec_t rstacks; /* uint32_t per record: the stack id of its frames (0 = none); the
	                   * record keeps its 32 bytes, the op is still its own */
	mp_vec_t segs;   /* tr_span_t: segments at dump time */
	mp_vec_t blocks; /* tr_span_t: allocated blocks at dump time */
	mp_vec_t init_regions; /* tr_span_t: regions before the trace */
	mp_vec_t init_blocks;  /* tr_span_t: allocations before the trace */
	mp_vec_t runs;   /* tr_span_t: the regions now, sorted (while emitting) */
	mp_vec_t phases; /* tr_phase_t: external annotations, by time */
	mp_i64map_t extra; /* record index -> (block - tr_round(size)) / TR_MIN_BLOCK, for
	                  * the blocks the allocator did not cut to the rounded request */
	tr_counters_t count;
	uint64_t pending; /* free_requested entries not directly completed */
	uint32_t mem;    /* its first memory id (cuda:N); then reserved, then awaiting */
	uint32_t nmem;   /* 2, or 3 with frees awaiting another stream */
	int seen;
} tr_dev_t;

/* Roles the reader gives the pickle's containers. */
enum { TR_ROLE_ROOT = 1, TR_ROLE_SEGMENTS, TR_ROLE_SEGMENT, TR_ROLE_TRACES, TR_ROLE_DEVTRACE, TR_ROLE_ENTRY };

typedef struct tr_src {
	mp_source_t base;
	mp_torch_options_t opts;
	char *path;           /* base.path, owned */
	mp_strtab_t strings;
	mp_vec_t frames;      /* tr_frame_t, by frame id */
	mp_vec_t stacks;      /* tr_stack_t, by stack id - 1: one per distinct list of frames */
	mp_i64map_t stack_ids;  /* the hash of a stack's frame ids (then the next free keys) -> id */
	mp_vec_t stack_fids;  /* uint32_t: the frame ids of every stack, back to back */
	mp_source_frame_t *fbuf; /* stack_frames' answer (torch_frames.c): room for the
	                          * longest stack, made while reading */
	size_t fbuf_cap;
	uint32_t key[48];     /* ids of the schema's keys and actions (torch_read.c) */
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
	mp_i64map_t meta_slot;  /* string id -> slot */
	tr_settings_t settings;
	int has_time;         /* some entry had a time_us: else times are entry indexes */
	uint64_t unknown_actions; /* entries of actions memprof does not know */
	uint32_t nmems;       /* memory ids */
	mp_source_note_t *notes; /* what the report says beside the events (torch_notes.c) */
	size_t nnotes;
	char *note_text;      /* the notes' texts, back to back */

	/* emission (torch_source.c) */
	int phase;
	uint32_t pdev;
	size_t pidx;
	size_t *cursor;       /* per device: next record */
	size_t *pcursor;      /* per device: next phase */
	mp_vec_t queue;       /* mp_event_t: what the current entry gave */
	size_t qpos;
	uint64_t emitted;
	uint64_t now_ns;

	/* frames whose line is unknown (torch_frames.c): a 'line' outside
	 * int64 (Python 3.13 PyTorch writes 2**64-1) or negative */
	uint64_t unknown_lines;          /* such frames, one per distinct frame dict */
	char unknown_line_example[160];  /* the first: "forward (/x/model.py): line 18446744073709551615" */
} tr_src_t;

#define TR_AT(vec, type, i) MP_VEC_AT(vec, type, i)

/* torch_read.c: read the whole file into the source. */
int tr_read(tr_src_t *s, const char *path, mp_diag_t *diag);
/* torch_read.c: the slot of a user_metadata string id (0 for none); the
 * values past TR_MAX_META share its last slot. UINT32_MAX when out of memory. */
uint32_t tr_meta_slot(tr_src_t *s, uint32_t str);
/* torch_frames.c: the op and the stack id of a frames value (a list, or
 * the token of one seen before; its stack id is cached in the list). Both
 * 0 for an empty list or no list. */
int tr_frames_op(tr_src_t *s, const mp_pk_value_t *frames, uint32_t *op, uint32_t *stack, mp_diag_t *diag);
/* torch_frames.c: mp_source_ops_t.stack_frames. */
int tr_stack_frames(const mp_source_t *src, uint32_t stack, const mp_source_frame_t **out, uint32_t *n);
/* torch_state.c: the state before the trace, per device. */
int tr_rebuild(tr_src_t *s, mp_diag_t *diag);
/* torch_layout.c: replay the allocator's layout of a device: the real size
 * of every block (d->extra, the bounds of those before the trace), the
 * counters and the dump check (d->count). After tr_rebuild's first part. */
int tr_layout(tr_src_t *s, tr_dev_t *d);
/* torch_layout.c: the block size of record i of d (an alloc, or a free of
 * a block the trace allocated): tr_round(size) unless the layout says more. */
uint64_t tr_block_bytes(const tr_dev_t *d, size_t i);
/* torch_notes.c: the notes of the report, once the source is open. */
int tr_make_notes(tr_src_t *s);
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
int tr_runs_add(mp_vec_t *runs, uint64_t a, uint64_t b, const tr_runs_cb_t *cb);
int tr_runs_sub(mp_vec_t *runs, uint64_t a, uint64_t b, const tr_runs_cb_t *cb);

#endif
