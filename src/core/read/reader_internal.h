/* reader_internal.h - the capture reader's structures (internal).
 *
 * reader.c reads the file: header and trailer, and the sections of each
 * block, fetched (read, checksummed, inflated) by blockio.c, in a read-ahead
 * thread for files. merge.c keeps, per thread, the chunks read but not yet
 * emitted (their parts, checked but not joined into rows) and merges the
 * threads by timestamp up to the last horizon read; decode.c decodes their
 * records lazily. Memory is the chunks of about one flush round, whatever
 * the file size.
 */
#ifndef MP_READER_INTERNAL_H
#define MP_READER_INTERNAL_H

#include <memprof/format.h>
#include <memprof/i64map.h>
#include <memprof/reader.h>
#include <memprof/vec.h>

#include "blockio.h"

struct mp_checkpoint; /* memprof/checkpoint.h */

#include <stdint.h>
#include <stdio.h>

typedef struct mp_chunk {
	struct mp_chunk *next;
	uint64_t block_index, block_offset; /* where it came from, for errors */
	size_t len;                         /* bytes of data[] in use */
	size_t room;                        /* bytes of data[] allocated */
	/* Records are decoded straight from the parts (format/columns.h): the
	 * tags, then per column a cursor in its heads and one in its tails;
	 * each field from its column, in record order. */
	const uint8_t *col[11], *cend[11]; /* MP_PARTS (format/columns.h) */
	uint64_t time, addr;                /* delta state (MP_ST_*, format/columns.h) */
	uint32_t memory, op, dtype, shape, region, stack;
	uint64_t reuse[MP_REUSE_SLOTS];     /* the freed-address cache */
	uint64_t *hist;                     /* addresses allocated in this chunk, in order */
	size_t nhist, cap_hist;
	uint64_t *fhist;                    /* addresses freed in this chunk (FREE, FREE_AGED), in order */
	size_t nfhist, cap_fhist;
	uint8_t data[];
} mp_chunk_t;

typedef struct mp_rthread {
	mp_chunk_t *head, *tail; /* queued chunks; head is being decoded */
	mp_event_t pending;      /* decoded, not yet emitted */
	int has_pending;
	int realloc_half;        /* pending is the FREE half; ALLOC half next */
	uint64_t realloc_new, realloc_req, realloc_alloc;
	mp_event_t realloc_ev;   /* the FREE half of a realloc: the ALLOC half's fields */
	uint64_t tid;
	uint32_t carry_stack;    /* a STACK record ended the last chunk: for the next one */
	int in_heap;
} mp_rthread_t;

typedef struct mp_merge {
	mp_rthread_t *threads;
	uint32_t nthreads, cap;
	uint32_t *heap;          /* thread indices ordered by pending time */
	uint32_t heap_len;
	uint32_t announced;      /* THREAD sections applied (bounds thread indices) */
	uint64_t buffered_bytes; /* chunk bytes held, for the memory bound */
	uint64_t peak_buffered;  /* the most ever held */
	/* Chunks decoded and kept for reuse, with their histories: a capture
	 * is read as a stream of similar chunks, and fresh allocations of a
	 * few hundred KB each came back as page faults (a quarter of a
	 * million in a 100-million-event capture). */
	struct mp_chunk *spare[8];
	uint32_t nspare;
} mp_merge_t;

struct mp_capture {
	mp_source_t src;
	mp_source_t *owned_src;  /* set when opened through mp_capture_open_source */
	char *path;
	FILE *f;
	mp_capture_header_t hdr;
	char *hdr_strings;       /* storage of hdr's strings */
	uint64_t data_offset;    /* first block */
	uint64_t offset;         /* next block */
	uint64_t block_index;    /* next block's expected index */
	uint64_t blocks_read;

	/* tables that survive rewind */
	char **strings;          /* strings[id - 1] */
	uint32_t nstrings;
	size_t cap_strings;
	mp_memory_info_t *memories;
	uint32_t nmemories;
	size_t cap_memories;
	/* call stacks and loaded objects (format 1.1; reader_stacks.c) */
	uint64_t *frames;        /* every stack's frames, back to back */
	size_t nframes, cap_frames;
	uint64_t *stack_at;      /* stack_at[id - 1]: offset in frames; the count is the next offset */
	uint32_t nstacks, cap_stacks;
	mp_capture_module_t *modules;
	uint32_t nmodules, cap_modules;
	uint32_t module_defs;    /* MODULE sections read since the last rewind */
	/* interpreter frames (format 2.2; reader_stacks.c): iframes[id - 1] */
	struct mp_iframe {
		uint32_t function, file, line; /* string ids (0: none), line (0: unknown) */
		int kind;                      /* mp_frame_kind_t */
	} *iframes;
	uint32_t niframes, cap_iframes;
	/* mp_capture_set_frame_ops (reader_stacks.c): allocations without an
	 * op get their stack's Python frame of the user's code as one */
	int frame_ops, frame_ops_all;
	const char *frame_ops_user;  /* borrowed */
	uint32_t *stack_op;          /* per stack id - 1: the op (0: not yet looked at; MP_FRAME_OP_NONE) */
	uint32_t cap_stack_op;
	char **frame_label;          /* per frame id - 1: "function (file:line)", made when first an op */
	/* mp_capture_set_stack_labeler (reader_labels.c): the op of a stack
	 * without a Python frame of the user's, named by the caller */
	mp_stack_labeler_t labeler;
	void *labeler_ctx;
	void (*labeler_free)(void *);
	char **labels;               /* interned labels (owned) */
	uint32_t nlabels;
	size_t cap_labels;
	mp_i64map_t label_index;     /* label hash (+ probe) -> label index */
	uint32_t cap_frame_label;

	/* pending synthetic events (memory declarations, dropped counts) */
	mp_event_t *synth;
	uint32_t nsynth, synth_pos;
	size_t cap_synth;

	mp_merge_t merge;
	uint64_t horizon;
	/* checkpoints (2.4, checkpoint_section.c) */
	int (*ckpt_fn)(void *ctx, const struct mp_checkpoint *ck);
	void *ckpt_ctx;
	uint64_t ncheckpoints;
	uint64_t ckpt_bad;       /* checkpoints that did not parse or disagreed with their summary: skipped */
	mp_diag_t ckpt_bad_diag; /* the first of them, said (mp_capture_checkpoints_bad) */
	/* a seek (seek.c): blocks before seek_block give their definitions
	 * only; while seeking, events earlier than seek_ns are not returned
	 * -- those the checkpoint covers: returned before a block after the
	 * checkpoint's (seek_ck_block) is applied, i.e. stamped (next_index)
	 * before seek_cover_end -- and those returned are numbered from
	 * seek_index on */
	uint64_t seek_block;
	uint64_t seek_ck_block, seek_cover_end;
	uint64_t seek_ns, seek_index;
	uint64_t seek_events;    /* the checkpoint's count, and its step: for a rewind */
	int64_t seek_step;
	int seeking;             /* 1: dropping what is earlier than seek_ns */
	int seeked;              /* a seek was made (the trailer's count covers what was skipped) */
	int stop_set, stopped;   /* mp_capture_seek_stop: events later than stop_ns end the read */
	uint64_t stop_ns;
	mp_end_status_t stop_end; /* ... which then ends as this */
	struct mp_walked {        /* mp_capture_round_ends' walk, per block (seek.c reuses it) */
		uint64_t off;
		uint32_t plen;
		uint8_t first;    /* its first section's tag (0: unknown) */
	} *walk;
	size_t nwalk, cap_walk;
	uint64_t last_time;
	int64_t step;
	uint64_t next_index;
	uint64_t records;        /* events decoded, to check against the trailer */

	mp_chunk_t **pend;       /* a block's chunks, joined while checking it */
	size_t npend, cap_pend, pend_pos;
	mp_fetch_t fetch;        /* the block being read, when read here */
	mp_readahead_t *ra;      /* the read-ahead, kept from the first wish for one to close */
	int ra_active;           /* ra is fetching (it owns cap->f) */
	int readahead;           /* MP_READAHEAD_*, from mp_capture_set_readahead(); OFF when ra is NULL */

	int eof;                 /* no more blocks will be read */
	int deferred_err;        /* error to return once buffered events are out */
	mp_diag_t deferred_diag;
	int sticky_err;
	mp_diag_t sticky_diag;
	mp_end_status_t end;
	mp_capture_trailer_t trailer;
	int has_trailer;
};

/* reader.c */
int mp__capture_next(mp_capture_t *cap, mp_event_t *ev, mp_diag_t *diag);
/* mp_source_ops_t.next_batch for captures. */
int mp__capture_next_batch(mp_capture_t *cap, mp_event_t *ev, size_t max, size_t *n, mp_diag_t *diag);
int mp__capture_rewind(mp_capture_t *cap, mp_diag_t *diag);
/* reader_sections.c: a block's sections at file offset boff; apply = 0
 * only checks that they parse (so that a damaged block contributes
 * nothing), 1 applies them. Returns 0 or an error naming the block. */
int mp__capture_sections(mp_capture_t *cap, const uint8_t *raw, size_t len, uint64_t boff, int apply,
			 mp_diag_t *diag);
/* mp_source_ops_t.help for captures: fetch a block ahead (blockio.h). */
int mp__capture_help(mp_capture_t *cap);

/* reader_stacks.c: parse (apply = 0: check only) a STACK or MODULE section
 * whose tag was just read; *p advances past it. Returns 0, -1 when it does
 * not parse (corruption) or -ENOMEM. */
int mp__read_stack_section(mp_capture_t *cap, const uint8_t **p, const uint8_t *end, int apply);
int mp__read_module_section(mp_capture_t *cap, const uint8_t **p, const uint8_t *end, int apply);
/* The same for a FRAME section (2.2); on -1, *why names what is wrong. */
int mp__read_frame_section(mp_capture_t *cap, const uint8_t **p, const uint8_t *end, int apply, const char **why);
void mp__stacks_release(mp_capture_t *cap);
/* The op of an allocation without one, by its stack (frame_ops set): a
 * string id of MP_FRAME_OP_BASE | frame id, or 0. */
#define MP_FRAME_OP_BASE 0x80000000u
#define MP_FRAME_OP_NONE UINT32_MAX
uint32_t mp__stack_op(mp_capture_t *cap, uint32_t stack);
/* The label of op id (MP_FRAME_OP_BASE set); "" when none. */
const char *mp__frame_op_label(const mp_capture_t *cap, uint32_t id);
/* reader_labels.c: a stack's op from the caller's labeler (a string id of
 * MP_STACK_LABEL_BASE | label index + 1), 0 when none; its label; the
 * labels' and the labeler's release at close. */
#define MP_STACK_LABEL_BASE 0x40000000u
uint32_t mp__stack_label_op(mp_capture_t *cap, uint32_t stack);
const char *mp__stack_label(const mp_capture_t *cap, uint32_t id);
void mp__labels_release(mp_capture_t *cap);

/* reader.c: a fetched block checked and applied (the reader's next). */
int mp__capture_apply_block(mp_capture_t *cap, const mp_fetch_t *fe, mp_diag_t *diag);
/* seek.c: drop from ev[0..*n) what a seek skips, renumber the rest. */
void mp__seek_filter(mp_capture_t *cap, mp_event_t *ev, size_t *n);

/* merge.c */
void mp__merge_init(mp_merge_t *m);
void mp__merge_release(mp_merge_t *m);
int mp__merge_add_chunk(mp_capture_t *cap, uint32_t thread, mp_chunk_t *c, mp_diag_t *diag);
/* chunks.c: a chunk with room for len bytes of data and empty histories,
 * reused when one is spare; NULL when out of memory. Give it back with
 * mp__chunk_release (owned by the caller until then, or by the merge once
 * added). */
mp_chunk_t *mp__chunk_new(mp_merge_t *m, size_t len);
void mp__chunk_release(mp_merge_t *m, mp_chunk_t *c);
/* Frees c and its histories at once (no spare kept). */
void mp__chunk_free(mp_chunk_t *c);
int mp__merge_ensure_thread(mp_merge_t *m, uint32_t thread);
/* decode.c: the next event of thread ti into *ev: 1, 0 when its queue is
 * empty, or a negative code (diag filled). Does not touch has_pending. */
int mp__decode_next(mp_capture_t *cap, uint32_t ti, mp_event_t *ev, mp_diag_t *diag);
/* Up to max events of thread ti into ev[] (*got of them): 1 when max were
 * decoded, 2 when ev[*got] is the first not earlier than limit, 0 when the
 * queue ran out, or a negative code. The same events as mp__decode_next in
 * a loop. */
int mp__decode_many(mp_capture_t *cap, uint32_t ti, mp_event_t *ev, size_t max, uint64_t limit, size_t *got,
		    mp_diag_t *diag);

/* 1 and *ev when an event earlier than `limit` is ready, 0 if none, <0 on a
 * corrupted record (diag filled). */
int mp__merge_next(mp_capture_t *cap, uint64_t limit, mp_event_t *ev, mp_diag_t *diag);
/* The fast path when a single thread has events: up to max events earlier
 * than `limit` straight into ev[], without the heap. Returns how many; *rc
 * is 0, or negative on a corrupted record after them (diag filled). */
size_t mp__merge_run(mp_capture_t *cap, uint64_t limit, mp_event_t *ev, size_t max, int *rc, mp_diag_t *diag);

/* reader.c: a capture over f (taken: closed on failure too); name for
 * messages. keep.c opens a kept run's window with it. */
int mp__capture_open_stream(mp_capture_t **out, FILE *f, const char *name, mp_diag_t *diag);

#endif
