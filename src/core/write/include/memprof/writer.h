/* memprof/writer.h - writing a .memprof capture (docs/format.md).
 *
 * Thread-safe. Each thread appends to its own ring buffer with no global
 * lock; a background flusher compresses and writes a block at least every
 * flush interval (90 ms by default: a kill loses less than 100 ms, the
 * round's own time included) and at close. Memory is bounded: when a ring
 * is full the writer waits for the flusher (MP_WRITER_WAIT) or drops the
 * event and counts it (MP_WRITER_DROP); dropped counts are written to the
 * file. The writer runs inside traced programs: it links only libc,
 * pthreads and zlib, and takes its memory from mmap, never from malloc (it
 * may be called from inside the allocator hooks).
 */
#ifndef MEMPROF_WRITER_H
#define MEMPROF_WRITER_H

#include <memprof/error.h>
#include <memprof/event.h>
#include <memprof/format.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_writer mp_writer_t;

typedef enum {
	MP_WRITER_WAIT = 0, /* a thread whose ring is full waits for the flusher */
	MP_WRITER_DROP = 1, /* ... or drops the event and counts it */
} mp_writer_full_policy_t;

/* Who runs the flush rounds (mp_writer_options_t.help; docs/hooks.md,
 * "Cost"). */
typedef enum {
	MP_WRITER_HELP_OFF = 0,    /* the flusher thread */
	MP_WRITER_HELP_AUTO = 1,   /* the program's threads too, while every CPU is busy */
	MP_WRITER_HELP_ALWAYS = 2, /* the program's threads whenever a ring is half full (tests) */
} mp_writer_help_t;

typedef struct mp_writer_options {
	uint32_t flush_interval_ms; /* 0 = default (90) */
	uint32_t ring_bytes;        /* per-thread ring; 0 = default (16 MiB) */
	int full_policy;            /* mp_writer_full_policy_t */
	int shed;                   /* 0 (default): threads that record faster than the
				       flusher compresses wait for it; 1: the flusher sheds
				       work instead and writes less compressed blocks for a
				       while (docs/format.md, "Compression") */
	int compression_level;      /* 0/1 = default: memprof's Huffman coding per column (fast);
				       2-9: zlib deflate at that level (smaller, far slower) */
	const char *command_line;   /* NULL = read /proc/self/cmdline */
	/* Once every other thread of the process has ended -- the main thread
	 * by pthread_exit(), the rest after it -- the flusher alone would keep
	 * the process alive (glibc ends it when its last thread ends). The
	 * flusher then calls on_orphaned(orphaned_arg), once, on its own
	 * thread: 0 means it is handled (the callback starts the end of the
	 * process, and the flusher goes on until mp_writer_close()). NULL, or
	 * a nonzero return: the flusher writes a round and ends its thread, and
	 * glibc calls exit(0) on it. */
	int (*on_orphaned)(void *orphaned_arg);
	void *orphaned_arg;
	/* A recording window's end: stop_after_ms after the open (0 = none),
	 * the flusher calls on_stop(stop_arg), once, on its own thread, then
	 * writes a round. The callback is how a caller that decides per event
	 * whether to record (the preload's hooks) stops, without reading a
	 * clock on every event; the writer itself goes on taking events until
	 * it is closed. */
	uint32_t stop_after_ms;
	void (*on_stop)(void *stop_arg);
	void *stop_arg;
	/* mp_writer_help_t. With AUTO, the flusher looks at how long it waits
	 * for a CPU: while that is a quarter of its run time or more (the
	 * program keeps every CPU busy, and the flusher's time is taken from
	 * its threads anyway), a thread whose ring passes half full runs the
	 * round itself, inside the mp_writer_* call, on a stack of the writer's
	 * with every signal blocked, instead of waking the flusher. x86-64
	 * only: elsewhere it is OFF. */
	int help;
} mp_writer_options_t;

/* Create the file at path (it must not exist unless overwrite) and start the
 * flusher thread. On success *out owns the writer: close it with
 * mp_writer_close(). On failure *out is NULL and diag says why. */
int mp_writer_open(mp_writer_t **out, const char *path, int overwrite,
		   const mp_writer_options_t *opts, mp_diag_t *diag);

/* Flush everything, write the trailer, close the file and free the writer.
 * Returns the first error the writer met (sticky), or 0. Safe with NULL. */
int mp_writer_close(mp_writer_t *w);

/* Intern a string; returns its id (> 0), or 0 if it could not be stored.
 * Takes a lock only the first time a string is seen. */
uint32_t mp_writer_intern(mp_writer_t *w, const char *s);

/* Declare a memory id; returns it (>= 0) or a negative error. The name is
 * interned; declaring the same name twice returns the same id. */
int mp_writer_memory(mp_writer_t *w, const char *name, int kind, uint64_t capacity_bytes);

/* Per-thread context that the following ALLOC events of the calling thread
 * carry (string ids from mp_writer_intern, 0 = none). */
void mp_writer_set_context(mp_writer_t *w, uint32_t op, int region, uint32_t dtype, uint32_t shape);

/* Events. Timestamps are taken inside (CLOCK_MONOTONIC); each returns 0, or a
 * negative code when the event could not be recorded (then it is counted as
 * dropped). None of them allocates after the calling thread's first event.
 * A block of 4 MiB or more (alloc, realloc) and a failed allocation are on
 * disk within a few milliseconds, whatever the flush interval: a process is
 * often killed right after one. */
int mp_writer_alloc(mp_writer_t *w, uint32_t memory, uint64_t address, uint64_t requested, uint64_t allocated);
int mp_writer_free(mp_writer_t *w, uint32_t memory, uint64_t address);
int mp_writer_realloc(mp_writer_t *w, uint32_t memory, uint64_t old_address, uint64_t new_address,
		      uint64_t requested, uint64_t allocated);
int mp_writer_alloc_failed(mp_writer_t *w, uint32_t memory, uint64_t requested);
int mp_writer_region_add(mp_writer_t *w, uint32_t memory, uint64_t base, uint64_t size);
int mp_writer_region_remove(mp_writer_t *w, uint32_t memory, uint64_t base);
int mp_writer_step(mp_writer_t *w, int64_t step);
int mp_writer_mark(mp_writer_t *w, uint32_t label);

/* --- call stacks and loaded objects (format 1.1; docs/format.md) -------- */

/* Intern a call stack: n return addresses, innermost first (1 <= n <=
 * MP_WRITER_STACK_MAX). On success *id is its id (> 0). Lock-free when the
 * stack was seen before; the first sight takes a mutex, copies the frames
 * into the writer's arena and queues the STACK definition (written before
 * any event that uses the id). When a frame of a new stack lies outside
 * every object the capture describes and the dynamic loader has loaded
 * something since, the module map is refreshed (mp_writer_modules) after
 * the mutex is released. Never calls malloc. Returns 0, -EINVAL, -ENOMEM,
 * or -EDEADLK when the mutex stayed taken for 20 ms (a signal handler
 * interrupting its own thread's definition; then *id is 0). */
#define MP_WRITER_STACK_MAX 256
int mp_writer_stack(mp_writer_t *w, const uint64_t *pcs, uint32_t n, uint32_t *id);

/* Interpreter frames (format 2.2; docs/format.md, "Interpreter frames"):
 * a stack may hold, beside return addresses, frames of an interpreted
 * language (a Python function at a line). Such a frame is a value with
 * MP_STACK_FRAME_TAG set: the tag | a frame id, defined once by a FRAME
 * section (frame id, function string id, file string id, line, kind).
 * mp_writer_frame interns (function, file, line, kind) -- function and
 * file are string ids from mp_writer_intern, kind an mp_frame_kind_t
 * (MP_FRAME_PYTHON) -- and returns the value to put in the stack, or 0 when
 * it could not be stored (out of memory; the defs mutex stayed taken for
 * 20 ms, as mp_writer_stack's -EDEADLK; a kind beyond MP_FRAME_KIND_MAX or
 * a string id the writer never gave). Frame ids are 1, 2, 3, ... in the
 * order frames are first seen; equal tuples get the same value, from any
 * thread. Lock-free when the frame was seen before (a few tens of ns); the
 * first sight takes the defs mutex and queues the FRAME definition, so it
 * is written before any stack that holds it (call it before
 * mp_writer_stack). Never calls malloc. A stack of such values only does
 * not make mp_writer_stack refresh the module map. */
/* MP_STACK_FRAME_TAG (1ull << 63) is in <memprof/format.h>, which this
 * header includes (readers need it too). */
uint64_t mp_writer_frame(mp_writer_t *w, uint32_t function, uint32_t file, uint32_t line, int kind);

/* The stack of the calling thread's next ALLOC, REALLOC or ALLOC_FAILED
 * (a STACK record; no time, not an event). Returns 0 or a negative code. */
int mp_writer_next_stack(mp_writer_t *w, uint32_t id);

/* Describe the objects loaded in this process (dl_iterate_phdr: path, load
 * bias, GNU build id, PT_LOAD segments) that the capture does not describe
 * yet, as MODULE sections, so that stacks can be symbolized offline. Call it
 * once at start; mp_writer_stack calls it again when it meets code the
 * capture does not cover (after a dlopen). Returns the number of objects
 * added (0 when the loader loaded nothing since the last call, or another
 * thread is refreshing) or a negative code. Never calls malloc. */
int mp_writer_modules(mp_writer_t *w);

/* --- lanes: events the caller timestamps (wlane.c) ---------------------
 *
 * For a source that learns of events after they happened (the CUDA
 * backend: CUPTI delivers its records late, in buffers). A lane is a ring
 * of its own, owned by no thread; its events carry the caller's times, in
 * ns since the capture's origin (CLOCK_MONOTONIC minus
 * mp_writer_origin_ns()), and must come in time order (an earlier one is
 * moved up to the previous one's time). The caller serialises its calls on
 * one lane. mp_writer_lane_hold(l, t) promises that every event of the
 * lane earlier than t has been written: the writer's horizon (the point up
 * to which readers may return events) never passes the hold, so keep it
 * moving. A lane starts with its hold at the time it was opened. */
typedef struct mp_writer_lane mp_writer_lane_t;

/* Open a lane. On success *out is a lane the writer owns (it lives until
 * mp_writer_close()). Returns 0, MP_ENOMEM, or MP_ECLOSED (the writer
 * failed or is closing). */
int mp_writer_lane_open(mp_writer_t *w, mp_writer_lane_t **out);

/* CLOCK_MONOTONIC (ns) of the capture's time 0; the capture's time now. */
uint64_t mp_writer_origin_ns(const mp_writer_t *w);
uint64_t mp_writer_now(const mp_writer_t *w);

/* An event of kind MP_EV_ALLOC (address, bytes requested = allocated),
 * MP_EV_FREE (address), MP_EV_ALLOC_FAILED (bytes), MP_EV_REGION_ADD
 * (address = base, bytes = size) or MP_EV_REGION_REMOVE (address) at
 * time_ns. Returns 0, MP_EUSAGE (another kind, a memory id beyond 65535),
 * MP_ECLOSED, or -ENOBUFS (a full ring in drop mode; counted as dropped). */
int mp_writer_lane_event(mp_writer_lane_t *l, int kind, uint32_t memory, uint64_t time_ns, uint64_t address,
			 uint64_t bytes);

/* Every event of the lane earlier than time_ns is written. Never moves
 * backwards. */
void mp_writer_lane_hold(mp_writer_lane_t *l, uint64_t time_ns);

/* n events of memory the lane's source lost (CUPTI's dropped records):
 * written as dropped counts, like a full ring's. */
void mp_writer_lane_dropped(mp_writer_lane_t *l, uint32_t memory, uint64_t n);

/* Force a flush round now and wait for it to be on disk (tests, shutdown). */
int mp_writer_flush(mp_writer_t *w);

/* Events recorded / dropped so far (all threads). */
uint64_t mp_writer_event_count(const mp_writer_t *w);
uint64_t mp_writer_dropped_count(const mp_writer_t *w);

#ifdef __cplusplus
}
#endif
#endif
