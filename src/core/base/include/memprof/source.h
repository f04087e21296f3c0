/* memprof/source.h - an event source: anything that yields an mp_event_t
 * stream in global timestamp order (a .memprof capture, an xplane.pb import).
 *
 * The solver and the report consume sources through this interface only, so
 * a new input format is a new source and nothing else changes.
 *
 * Lifetime: strings and memory descriptions returned by a source are
 * borrowed; they stay valid until mp_source_close() (ids never change
 * meaning within one source, and survive mp_source_rewind()).
 */
#ifndef MEMPROF_SOURCE_H
#define MEMPROF_SOURCE_H

#include <memprof/error.h>
#include <memprof/event.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A memory id's description. */
typedef struct mp_memory_info {
	const char *name;        /* "host", "GPU_0_bfc"; never NULL */
	uint64_t capacity_bytes; /* 0 if unknown */
	int kind;                /* mp_memory_kind_t */
	const char *in_use_name; /* what its allocations are, in the words of its producer
	                          * ("allocated", "reserved" for a PyTorch snapshot's
	                          * blocks and segments); NULL: memprof's own words */
} mp_memory_info_t;

/* A fact a source states about its input beside its events: a figure the
 * input's own producer counted (a PyTorch snapshot's allocator counters),
 * a check of the input against itself, a warning about a value it could
 * not use. The report prints them under their memory id (text) and keeps
 * them by key (JSON "source_notes"). */
#define MP_NOTE_INPUT UINT32_MAX /* memory: the note is about the whole input */
typedef enum {
	MP_NOTE_TEXT = 0,  /* text only */
	MP_NOTE_BYTES = 1, /* value is a byte count */
	MP_NOTE_COUNT = 2, /* value is a count (an index, a number of entries) */
	MP_NOTE_FLAG = 3,  /* value is 0 or 1 (a check that held or not) */
} mp_note_kind_t;

typedef struct mp_source_note {
	uint32_t memory;   /* the memory id it is about, or MP_NOTE_INPUT */
	const char *key;   /* JSON name: lowercase letters, digits and '_'; never NULL */
	const char *text;  /* one line for people, figures with their units; never NULL;
	                    * "": a figure for tools only (another note says it to people) */
	int kind;          /* mp_note_kind_t */
	uint64_t value;    /* the figure, for kinds other than MP_NOTE_TEXT */
	int warning;       /* 1: the user must not miss it (a check failed, a value was unusable) */
} mp_source_note_t;

/* What kind of code a stack frame is. A source says it per frame: a
 * PyTorch snapshot's frames in a .py file (or <frozen ...>, <string>) are
 * Python, the others native; a capture's return addresses are native.
 * Python frames recorded by the hooks (interpreter stacks) will be
 * MP_FRAME_PYTHON with their file and line too. */
#define MP_FRAME_KIND_MAP(X)               \
	X(MP_FRAME_UNKNOWN, 0, "unknown")  \
	X(MP_FRAME_NATIVE,  1, "native")   \
	X(MP_FRAME_PYTHON,  2, "python")   \
	X(MP_FRAME_KERNEL,  3, "kernel")

typedef enum {
#define MP__FK_ENUM(name, val, str) name = (val),
	MP_FRAME_KIND_MAP(MP__FK_ENUM)
#undef MP__FK_ENUM
	MP_FRAME_KIND_MAX = 3
} mp_frame_kind_t;

/* Static name of a frame kind ("python"); "?" out of range. Never NULL. */
const char *mp_frame_kind_name(int kind);

/* One frame of a call stack, as its source knows it. */
typedef struct mp_source_frame {
	const char *name;  /* the function (demangled for C++); never NULL, "" unknown */
	const char *file;  /* source file (Python: its path), or the object; never NULL, "" unknown */
	int64_t line;      /* 1-based; 0 unknown */
	int kind;          /* mp_frame_kind_t */
} mp_source_frame_t;

/* How a source ended (valid once next() has returned 0). */
typedef enum {
	MP_END_CLEAN = 0,   /* the capture was closed properly */
	MP_END_ABRUPT = 1,  /* cut off (SIGKILL, OOM kill): read up to the last complete block */
	MP_END_WRITE_FAILED = 2, /* the writer stopped on a full disk or the file size limit and
				    said so (format 2.3): read up to its last complete block */
} mp_end_status_t;

typedef struct mp_source mp_source_t;

typedef struct mp_source_ops {
	/* Next event: returns 1 and fills ev, 0 at the end, or a negative code
	 * with diag filled. After an error the source stays at that error. */
	int (*next)(mp_source_t *src, mp_event_t *ev, mp_diag_t *diag);
	/* Start again from the first event (for two-pass analyses). */
	int (*rewind)(mp_source_t *src, mp_diag_t *diag);
	/* String for an id; "" for 0 or an unknown id. Never NULL. */
	const char *(*string)(const mp_source_t *src, uint32_t id);
	/* Description of a memory id, or NULL if not (yet) declared. */
	const mp_memory_info_t *(*memory)(const mp_source_t *src, uint32_t id);
	/* Number of memory ids declared so far (ids are 0 .. count-1). */
	uint32_t (*memory_count)(const mp_source_t *src);
	/* End status; meaningful after next() returned 0. */
	mp_end_status_t (*end_status)(const mp_source_t *src);
	/* Free everything. */
	void (*close)(mp_source_t *src);
	/* Optional (NULL: next() is called in a loop): up to max events into
	 * ev[0..max), *n of them filled. Returns what the last next() would
	 * have: 1 (the batch is full, more may follow), 0 (the end came after
	 * *n events) or a negative code (an error after *n good events, diag
	 * filled). Saves a call per event for fast sources. */
	int (*next_batch)(mp_source_t *src, mp_event_t *ev, size_t max, size_t *n, mp_diag_t *diag);
	/* Optional (NULL: nothing to help with): from a thread other than the
	 * one reading events, while it reads, do one piece of the source's
	 * work ahead (a capture inflates its next blocks). Returns 1 when it
	 * did some, 0 when there was none to do now. For threads that would
	 * otherwise wait for the reader. */
	int (*help)(mp_source_t *src);
	/* Optional (NULL: nanoseconds): what mp_event_t.time_ns counts when it
	 * is not time, e.g. "trace entry" for a PyTorch snapshot without
	 * time_us (time_ns is then the entry's index). Static or owned by the
	 * source. */
	const char *(*time_unit)(const mp_source_t *src);
	/* Optional (NULL: none): the source's notes, valid once next() has
	 * returned 0 (some are known only after the whole input was read).
	 * *out is borrowed, valid until mp_source_close(). Returns the count. */
	size_t (*notes)(const mp_source_t *src, const mp_source_note_t **out);
	/* Optional (NULL: the source names no frames itself): the frames of
	 * call stack `stack` (an mp_event_t.stack > 0), innermost first,
	 * into *out (borrowed: valid until the next call or
	 * mp_source_close()) and *n. Returns 0, or MP_ENOTFOUND for an id
	 * the source never gave. Valid once next() has returned 0. A
	 * PyTorch snapshot implements it (its frames are names already).
	 * An op of the source rather than a call of one importer, so that
	 * whatever reads stacks (the call tree, memprof/calltree.h) asks
	 * every source the same way: a capture whose hooks record Python
	 * frames, or a capture symbolized ahead, can answer it later
	 * without its readers changing. A capture's return addresses are
	 * symbolized by the report (memprof_report, with libdw), which the
	 * capture core must not depend on, so today it has none. */
	int (*stack_frames)(const mp_source_t *src, uint32_t stack, const mp_source_frame_t **out, uint32_t *n);
	/* Optional (NULL: the stream order is the stored order): a key of
	 * the event next() returned last, in the order the input stores its
	 * events (an xplane capture: file, then offset), which can differ
	 * from time order. Returns 0 and fills *key, or MP_EUSAGE before
	 * next(). An op rather than a call of one importer, so that what
	 * breaks ties the way the input's own tools iterate (xprof's peak,
	 * memprof/xprof_compat.h) reads no input format. */
	int (*stored_order)(const mp_source_t *src, uint64_t *key);
	/* Optional (NULL: none): a source that returns a capture's events,
	 * a window of them (`report --from-event`), gives that capture, whose
	 * call stacks and loaded objects its events' stack ids name
	 * (mp_capture_stacks_of, memprof/reader.h). */
	struct mp_capture *(*capture)(mp_source_t *src);
} mp_source_ops_t;

struct mp_source {
	const mp_source_ops_t *ops;
	const char *path; /* the input's name for messages; owned by the source */
};

static inline int mp_source_next(mp_source_t *s, mp_event_t *ev, mp_diag_t *d) { return s->ops->next(s, ev, d); }
/* See next_batch above; works with every source. */
static inline int mp_source_next_batch(mp_source_t *s, mp_event_t *ev, size_t max, size_t *n, mp_diag_t *d)
{
	int rc = 1;

	if (s->ops->next_batch)
		return s->ops->next_batch(s, ev, max, n, d);
	for (*n = 0; *n < max && (rc = s->ops->next(s, ev + *n, d)) > 0;)
		++*n;
	return rc;
}
/* See time_unit above: NULL when time_ns is nanoseconds. */
static inline const char *mp_source_time_unit(const mp_source_t *s) { return s->ops->time_unit ? s->ops->time_unit(s) : NULL; }
/* See notes above; 0 (and *out NULL) for sources without them. */
static inline size_t mp_source_notes(const mp_source_t *s, const mp_source_note_t **out)
{
	*out = NULL;
	return s->ops->notes ? s->ops->notes(s, out) : 0;
}
/* See stack_frames above; MP_ENOTFOUND (and *out NULL, *n 0) for sources
 * without it. */
static inline int mp_source_stack_frames(const mp_source_t *s, uint32_t stack, const mp_source_frame_t **out,
					 uint32_t *n)
{
	*out = NULL;
	*n = 0;
	return s->ops->stack_frames ? s->ops->stack_frames(s, stack, out, n) : MP_ENOTFOUND;
}
/* See stored_order above; MP_EUSAGE for sources without it. */
static inline int mp_source_stored_order(const mp_source_t *s, uint64_t *key)
{
	return s->ops->stored_order ? s->ops->stored_order(s, key) : MP_EUSAGE;
}
/* See help above; 0 for sources without it. */
static inline int mp_source_help(mp_source_t *s) { return s->ops->help ? s->ops->help(s) : 0; }
static inline int mp_source_rewind(mp_source_t *s, mp_diag_t *d) { return s->ops->rewind(s, d); }
static inline const char *mp_source_string(const mp_source_t *s, uint32_t id) { return s->ops->string(s, id); }
static inline const mp_memory_info_t *mp_source_memory(const mp_source_t *s, uint32_t id) { return s->ops->memory(s, id); }
static inline uint32_t mp_source_memory_count(const mp_source_t *s) { return s->ops->memory_count(s); }
static inline mp_end_status_t mp_source_end_status(const mp_source_t *s) { return s->ops->end_status(s); }
/* Close and free; safe with NULL. */
static inline void mp_source_close(mp_source_t *s) { if (s) s->ops->close(s); }

#ifdef __cplusplus
}
#endif
#endif
