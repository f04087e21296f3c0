/* memprof/reader.h - reading a .memprof capture (docs/format.md).
 *
 * Yields events in global timestamp order (per-thread order kept), with
 * memory bounded by one flush round of data, never by file size. A capture
 * cut off by SIGKILL reads back up to its last complete block; any other
 * damage stops the reading with an error naming the block and its offset,
 * after every event of the blocks before it.
 */
#ifndef MEMPROF_READER_H
#define MEMPROF_READER_H

#include <memprof/error.h>
#include <memprof/event.h>
#include <memprof/format.h>
#include <memprof/source.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The header of a capture. Strings are owned by the reader. */
typedef struct mp_capture_header {
	uint16_t version_major, version_minor;
	const char *clock;          /* "CLOCK_MONOTONIC" */
	uint64_t clock_origin_ns;   /* clock value that event time 0 stands for */
	uint64_t start_wall_ns;     /* wall-clock time (ns since the Unix epoch) at time 0 */
	uint64_t pid;
	const char *hostname;
	const char *command_line;   /* arguments joined by spaces */
	uint64_t ppid;              /* (2.1) parent process id; 0: not recorded */
	const char *exe;            /* (2.1) the executable's path; "": not recorded */
} mp_capture_header_t;

/* Counts from the trailer (valid only when the capture ended cleanly or
 * its writer stopped: MP_END_WRITE_FAILED). */
typedef struct mp_capture_trailer {
	uint64_t events;
	uint64_t dropped;
	uint64_t blocks;
	uint64_t strings;
	uint64_t end_time_ns;
	/* (2.3) 0: the capture was closed. Else the errno that stopped its
	 * writer (ENOSPC, EDQUOT, EFBIG), the file's size then (where its
	 * blocks end), and the last horizon in it: events after that time
	 * may be missing (an unfinished round's are in it, later ones are
	 * not). */
	uint64_t write_errno;
	uint64_t write_offset;
	uint64_t complete_ns;
} mp_capture_trailer_t;

typedef struct mp_capture mp_capture_t;

/* Open a capture for reading. On success *out is owned by the caller and
 * must be freed with mp_capture_close(). */
int mp_capture_open(mp_capture_t **out, const char *path, mp_diag_t *diag);

/* The same, over a capture already in memory (fuzzing, tests). data must
 * stay valid until mp_capture_close(); name is used in messages. */
int mp_capture_open_memory(mp_capture_t **out, const void *data, size_t size, const char *name,
			   mp_diag_t *diag);

/* How blocks are fetched (read, checked, inflated):
 * - MP_READAHEAD_OFF: by the thread reading events, when it needs them;
 * - MP_READAHEAD_AUTO: ahead of it, up to a few blocks, by a thread of their
 *   own when the machine has 3 cores or more, and by any thread that helps
 *   (mp_source_help(), which the solver's pipeline calls from whichever of
 *   its threads would otherwise wait);
 * - MP_READAHEAD_THREAD: the same, with the thread of its own on any machine.
 * AUTO is the default for captures opened from a path; the environment can
 * say otherwise (MEMPROF_READAHEAD=0 or =thread). Captures in memory start
 * OFF. The events and errors are the same in every mode; only the speed
 * differs. Takes effect at the next block read, and lasts across rewinds.
 * Returns 0, MP_EUSAGE for another mode, or -errno when the file cannot be
 * positioned again. */
enum { MP_READAHEAD_OFF = 0, MP_READAHEAD_AUTO = 1, MP_READAHEAD_THREAD = 2 };
int mp_capture_set_readahead(mp_capture_t *cap, int mode);

/* The header; borrowed, valid until mp_capture_close(). */
const mp_capture_header_t *mp_capture_header(const mp_capture_t *cap);

/* The trailer, or NULL when the capture ended abruptly (or has not been
 * read to its end yet); write_errno says whether it was closed. Borrowed. */
const mp_capture_trailer_t *mp_capture_trailer(const mp_capture_t *cap);

/* The capture as an event source (borrowed view: do not mp_source_close() it;
 * it is valid until mp_capture_close()). */
mp_source_t *mp_capture_source(mp_capture_t *cap);

/* Open a capture directly as an owned source: mp_source_close() frees it. */
int mp_capture_open_source(mp_source_t **out, const char *path, mp_diag_t *diag);

/* The capture behind a source from mp_capture_open_source() or
 * mp_capture_source() (borrowed), or NULL when src is another kind of source. */
mp_capture_t *mp_capture_from_source(mp_source_t *src);

/* The capture whose call stacks src's events name: mp_capture_from_source,
 * else the one a source of a capture's events gives (its `capture` op: a
 * window of a capture), else NULL. Borrowed. */
mp_capture_t *mp_capture_stacks_of(mp_source_t *src);

/* Close and free; safe with NULL. */
void mp_capture_close(mp_capture_t *cap);

/* --- call stacks and the module map (format 1.1) ------------------------ */

/* A PT_LOAD segment of a loaded object: [bias + vaddr, bias + vaddr + size). */
typedef struct mp_capture_segment {
	uint64_t vaddr, size;
	uint32_t flags; /* PF_X 1, PF_W 2, PF_R 4 */
} mp_capture_segment_t;

/* A loaded object, as the traced process saw it. Borrowed from the capture. */
typedef struct mp_capture_module {
	const char *path;          /* absolute path, or a name such as "linux-vdso.so.1" */
	uint64_t bias;             /* load bias: runtime address = bias + ELF address */
	uint64_t start, end;       /* the range its segments cover at run time */
	const uint8_t *build_id;   /* GNU build id, NULL when the object has none */
	uint32_t build_id_len;
	uint32_t segment_count;
	const mp_capture_segment_t *segments;
} mp_capture_module_t;

/* Stacks defined so far (their ids are 1 .. count); grows as the capture
 * is read, and survives mp_source_rewind(). Every stack id an event carries
 * is defined by the time the event is returned. */
uint32_t mp_capture_stack_count(const mp_capture_t *cap);

/* The frames of stack `id` (return addresses, innermost first). *pcs is
 * borrowed, valid until mp_capture_close(). Returns 0, or MP_ENOTFOUND for
 * an id not (yet) defined. */
int mp_capture_stack(const mp_capture_t *cap, uint32_t id, const uint64_t **pcs, uint32_t *n);

/* The interpreter frame a stack value names (a value with
 * MP_STACK_FRAME_TAG set, format 2.2): its function, file (borrowed, valid
 * until mp_capture_close(); "" when unknown, never NULL), line (0 unknown)
 * and kind (mp_frame_kind_t). Returns 0, or MP_ENOTFOUND for a value that
 * is not a frame or a frame not (yet) defined. */
int mp_capture_frame(const mp_capture_t *cap, uint64_t value, const char **function, const char **file,
		     uint32_t *line, int *kind);

/* From now on, an allocation (ALLOC, ALLOC_FAILED, REALLOC) that has a
 * stack but no op gets as its op the stack's innermost Python frame of the
 * user's code, else of an installed package (format 2.2; the rule of
 * memprof/pyfile.h, user_code its --user-code list, borrowed, or NULL;
 * all_frames: the innermost Python frame), a string id that
 * mp_source_string names "function (file:line)": what the report's
 * breakdown, leaks and OOM tables group by, as a PyTorch snapshot's ops.
 * Stacks without such a frame keep no op. Before reading events. */
void mp_capture_set_frame_ops(mp_capture_t *cap, int all_frames, const char *user_code);

/* The op an allocation with stack `stack` and no op of its own gets by
 * mp_capture_set_frame_ops (a block a checkpoint holds: its tag's op is
 * the record's), 0: none, or frame ops not set. */
uint32_t mp_capture_stack_op(mp_capture_t *cap, uint32_t stack);

/* Name the op of allocations whose stack holds no Python frame of the
 * user's or a package's (mp_capture_set_frame_ops must be set too): fn
 * gives the label of stack `stack` -- a string that stays valid until the
 * next call, copied by the capture -- or NULL for none; it is asked once
 * per stack, at the stack's first allocation read. The report's labeler
 * (memprof/functions.h, mp_functions_label_stacks) names the frame
 * `report --by-function` charges the stack to. The capture owns ctx from
 * here: free_ctx(ctx) runs at mp_capture_close() or when another labeler
 * replaces it (and at once when cap is NULL). */
typedef const char *(*mp_stack_labeler_t)(void *ctx, const mp_capture_t *cap, uint32_t stack);
void mp_capture_set_stack_labeler(mp_capture_t *cap, mp_stack_labeler_t fn, void *ctx, void (*free_ctx)(void *));

/* The loaded objects described so far, in file order. Borrowed. */
size_t mp_capture_module_count(const mp_capture_t *cap);
const mp_capture_module_t *mp_capture_module(const mp_capture_t *cap, size_t i);

/* The object whose segments contain address pc (the latest described when
 * several do: an object loaded where an unloaded one was), or NULL. */
const mp_capture_module_t *mp_capture_module_at(const mp_capture_t *cap, uint64_t pc);

/* Number of blocks read so far (for dump). */
uint64_t mp_capture_blocks_read(const mp_capture_t *cap);

/* The most bytes of event records the reader has held at once since it was
 * opened: about one flush round, whatever the file size. */
uint64_t mp_capture_peak_buffered_bytes(const mp_capture_t *cap);

#ifdef __cplusplus
}
#endif
#endif
