/* writer_internal.h - the writer's shared structures (internal).
 *
 * How events travel (redis-style narrative, because the ordering argument
 * is the whole point of this file):
 *
 * 1. Each thread that records an event owns an mp_wthread: a power-of-two
 *    ring it appends fixed-width records to (encoder.h), with no lock.
 *    Only the owning thread writes `head`; only the flusher writes `tail`. The ring
 *    holds raw values (a raw clock reading, whole addresses and sizes):
 *    storing them is the cheapest thing the event path can do, and all the
 *    encoding (time conversion, deltas, the freed-address cache, varints,
 *    columns) happens on the flusher's side (encoder.h).
 *
 * 2. Around each event the thread bumps `seq` to odd, reads the clock,
 *    writes the record into the ring, publishes `head`, and bumps `seq` to
 *    even.
 *
 * 3. A flush round reads the clock (F), runs an asymmetric memory barrier
 *    over all threads of the process (membarrier), then visits every
 *    thread. A thread whose seq is even has committed every event it
 *    timestamped before F; one whose seq is odd is waited for briefly. So
 *    when the round has copied every ring up to its head, every event
 *    earlier than F is in the file, and the round ends its last block with
 *    a HORIZON section carrying F. The reader merges per-thread chunks and
 *    may emit every event earlier than the last horizon it has read: global
 *    timestamp order with memory bounded by one round of data. The round
 *    encodes each ring a piece at a time and hands each piece's space back
 *    as soon as it is encoded, before the block is compressed and written
 *    (a kill loses what sits in the ring and in the flusher's buffers
 *    alike), waking its thread if it waits for room.
 *
 * 3b. Each round also tallies the records earlier than its horizon, of all
 *    threads merged in the reader's order (tally_round.c), before encoding
 *    them, and ends its last block with the running figures (a SUMMARY
 *    section, tally.h). So `tail` is min(encoded, tallied): records at or
 *    past the horizon are encoded this round but tallied in the next, and
 *    keep their ring space until then.
 *
 * 4. Strings and memory ids are defined through a small "defs" buffer under
 *    a mutex (only the first time a string is seen). The flusher takes the
 *    defs after snapshotting the rings, so any id an event refers to has its
 *    definition written in the same block or an earlier one.
 */
#ifndef MP_WRITER_INTERNAL_H
#define MP_WRITER_INTERNAL_H

#include <memprof/writer.h>
#include <memprof/format/mbuf.h>

#include "arena.h"
#include "clock.h"
#include "encoder.h"
#include "tally.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/uio.h>
#include <zlib.h>

#define MP_DROP_SLOTS 64 /* per-thread dropped counters, by memory id (last slot: ids >= 63) */
#define MP_PEND_PIECES 8 /* per thread: the blocks of pieces not wholly tallied (a checkpoint's BACK) */

/* A thread's delta-encoding state (MP_ST_*, memprof/format/columns.h). A chunk header
 * carries it, so every block decodes on its own; the flusher keeps each
 * thread's copy as it encodes. */
typedef struct mp_chunk_state {
	uint64_t v[MP_ST_COUNT];
} mp_chunk_state_t;

typedef struct mp_wthread mp_wthread_t;

/* Records in a row that the serial clock may time with the previous one's
 * time (wthread_path.h, mp__rec_clock_serial): the default of
 * w->serial_reuse, which MEMPROF_SERIAL_REUSE sets (0: every record reads
 * the clock). */
#define MP_SERIAL_REUSE 16

struct mp_wthread {
	/* --- set when the ring is made, read by both sides: a line of their
	 * own (beside the thread's counters, every batch the flusher decoded
	 * read a line the thread writes on every event: a miss for the
	 * flusher, and one more for the thread's next write) --- */
	uint8_t *ring;         /* ring_mask + 1 bytes, plus MP_RING_SLACK */
	uint64_t ring_mask;
	/* --- written by the owning thread --- */
	_Alignas(64) _Atomic uint64_t seq; /* odd while an event is being recorded */
	_Atomic uint64_t head;             /* bytes ever written to the ring */
	uint64_t tail_cache;   /* last tail seen, to avoid touching the flusher's line */
	uint32_t ctx[4];       /* the context last recorded (op, region, dtype, shape) */
	_Atomic uint64_t events;                  /* records committed (realloc = 2) */
	_Atomic uint64_t dropped[MP_DROP_SLOTS];  /* events not recorded, by memory id */
	_Atomic int wake_sent;
	_Atomic int waiting;                      /* in ring_wait: wake `space` when room is made */
	_Atomic uint32_t space;                   /* futex word: bumped when the flusher frees room */
	uint64_t last_time;    /* the raw time of the thread's last timed record */
	uint32_t serial_left;  /* records that may still take last_time (mp__rec_clock_serial) */
	/* --- written by the flusher --- */
	_Alignas(64) _Atomic uint64_t tail;       /* min(encoded, tallied): the space handed back */
	uint64_t encoded;                         /* ring bytes encoded into blocks */
	uint64_t tallied;                         /* ring bytes counted in the tally (tally_round.c) */
	uint64_t tally_time;                      /* the time of the last record tallied */
	uint32_t tally_ctx[4];                    /* (2.5) its CONTEXT as tallied: op, region, dtype, shape */
	uint32_t tally_stack;                     /* (2.5) its STACK for its next allocation, 0: none */
	uint32_t tally_ctxtag;                    /* (2.5) the tag of its CONTEXT (no stack), interned */
	mp_chunk_state_t flushed;                 /* encoding state at encoded */
	/* (2.5) the pieces encoded but not wholly tallied, oldest first: the
	 * ring position each ends at, and its block (a checkpoint's BACK:
	 * flush.c, mp__writer_ckpt_back); two merged into the older when full */
	uint64_t pend_end[MP_PEND_PIECES];
	uint32_t pend_block[MP_PEND_PIECES];
	uint32_t npend;
	uint64_t dropped_reported[MP_DROP_SLOTS];
	int announced;                            /* THREAD section written */
	/* --- registry --- */
	uint32_t index;       /* thread index in the capture */
	uint64_t tid;         /* OS thread id */
	_Atomic int exited;   /* set by the pthread key destructor */
	mp_wthread_t *next;   /* registry list, newest first */
	/* --- a lane (wlane.c): a ring no thread owns, for events its caller
	 * timestamps (ns since the origin, not raw clock readings) --- */
	int lane;
	_Atomic uint64_t hold; /* every event of the lane earlier than this is in the ring */
};

/* Records are written straight into the ring; this much room past its end
 * lets a record that wraps be written contiguously, then moved (and lets
 * the encoder read whole words past a chunk's end). */
#define MP_RING_SLACK 128
#define MP_REC_MAX 64 /* no record is longer */

typedef struct mp_intern_slot {
	_Atomic(const char *) str; /* published last, with release */
	uint64_t hash;
	uint32_t id;
	uint32_t len;
} mp_intern_slot_t;

typedef struct mp_intern_table {
	uint32_t mask;
	mp_intern_slot_t slots[];
} mp_intern_table_t;

/* Call stacks, interned like strings (wstack.c): frames published last. */
typedef struct mp_stack_slot {
	_Atomic(const uint64_t *) frames;
	uint64_t hash;
	uint32_t id;
	uint32_t n;
} mp_stack_slot_t;

typedef struct mp_stack_table {
	uint32_t mask;
	mp_stack_slot_t slots[];
} mp_stack_table_t;

/* Interpreter frames (wframe.c): (function, file, line, kind) to a frame
 * id, interned like stacks; id published last (0: an empty slot). */
typedef struct mp_frame_slot {
	_Atomic uint32_t id;
	uint32_t line;
	uint32_t function, file;
	uint64_t hash;
	int kind;
} mp_frame_slot_t;

typedef struct mp_frame_table {
	uint32_t mask;
	mp_frame_slot_t slots[];
} mp_frame_table_t;

/* A loaded object the capture describes (wmodules.c): the address range
 * of its PT_LOAD segments, to tell whether a stack frame is covered. */
typedef struct mp_wmodule {
	uint64_t lo, hi, bias, name_hash;
} mp_wmodule_t;

#define MP_WMODULES_MAX 8192

/* Rounds on the program's threads (help.c). */
typedef struct mp_help {
	_Atomic int policy;   /* MP_WRITER_HELP_*: OFF where stacks cannot be switched (the
			       * flusher's after the open: it turns AUTO off without schedstat,
			       * while recording threads read it, mp__help_spare) */
	_Atomic int on;       /* a thread whose ring passes half full runs the round itself */
	void *stack;          /* the rounds' stack (flush_mu), mapped at the first one */
	uint64_t rounds;      /* rounds the program's threads ran (flush_mu) */
	/* the flusher's judgement (mp__help_judge_at, on the flusher only) */
	int started, probing;
	uint64_t run0, wait0; /* its run and wait time (schedstat, ns) at the window's start */
	uint64_t probe_at;    /* help on: when to look again (mp_clock_ns) */
	uint64_t probe_gap;
	unsigned ncpu;        /* CPUs online */
	int idle_started;
	uint64_t idle0, total0; /* help on: the machine's idle and all CPU ticks at the window's start */
	_Atomic int spare;    /* a thread found a CPU idle and turned help off: the flusher
			       * starts its judgement afresh (mp__help_judge) */
} mp_help_t;

struct mp_writer {
	uint64_t id;          /* unique per writer, for the threads' TLS binding */
	int fd;               /* the capture; wfile.c keeps it the capture (-1: none) */
	uint32_t ring_bytes;
	uint32_t flush_interval_ms;
	int full_policy;
	int shed;
	int level;
	int use_membarrier;
	uint32_t serial_reuse; /* MP_SERIAL_REUSE, or MEMPROF_SERIAL_REUSE's (wthread_path.h) */

	mp_arena_t arena;

	/* registry of threads */
	pthread_mutex_t reg_mu;
	_Atomic(mp_wthread_t *) threads;
	uint32_t thread_count;
	pthread_key_t key;
	int key_ok;

	/* interning and memory ids: mutex only on first sight */
	pthread_mutex_t defs_mu;
	_Atomic(mp_intern_table_t *) strings;
	uint32_t string_count;
	mp_mbuf_t defs;        /* pending STRING / MEMORY / THREAD sections */
	uint32_t memory_count;
	uint32_t memory_names[1024]; /* string id of each memory id's name */

	/* flusher */
	/* Threads that could not get a ring (its mapping failed: address
	 * space or memory exhausted) count their events here, as dropped: a
	 * pseudo-thread without a ring (tid 0), in the registry from its first
	 * use on. */
	mp_wthread_t *unbound;
	_Atomic int unbound_listed;

	pthread_t flusher;
	int flusher_started;
	int (*on_orphaned)(void *); /* the options' (orphan.c) */
	void *orphaned_arg;
	uint64_t stop_at_ns;        /* mp_clock_ns() of the options' stop_after_ms; 0: none */
	void (*on_stop)(void *);
	void *stop_arg;
	_Atomic uint32_t wake;       /* futex word: bumped to wake the flusher */
	_Atomic int closing;
	/* Rounds asked of the flusher by other threads (mp_writer_flush, the
	 * final round of mp_writer_close): a round needs ~13 KiB of stack,
	 * more than a program's thread may have (PTHREAD_STACK_MIN is 16 KiB),
	 * so it runs on the flusher's. flush_done (a futex word) is the last
	 * request a finished round covered. */
	_Atomic uint32_t flush_asked;
	_Atomic uint32_t flush_done;
	_Atomic int flusher_gone;    /* its loop is over: ask nothing more of it */
	int final_done;              /* the final round ran (on the flusher) */
	_Atomic int error;           /* first error, sticky */
	pthread_mutex_t flush_mu;    /* serialises rounds (flusher, mp_writer_flush, help) */
	_Atomic uint64_t round_ns;   /* mp_clock_ns() at the last round's start */
	_Atomic int prompt_pending;  /* a prompt (mp__writer_prompt) waits for its round */
	_Atomic int64_t net_level;   /* the threads' reported moves, summed (mp__writer_net_moved) */
	_Atomic int64_t net_high;    /* net_level at the last prompt its growth made */
	_Atomic int64_t net_top;     /* the highest net_level since the last prompt it made */
	_Atomic uint64_t round_heads; /* the rings' bytes the last round took, all threads' (flusher.c) */
	mp_help_t help;
	mp_mbuf_t raw, out;          /* block being built / compressed */
	mp_mbuf_t segs;              /* uint64_t offsets in raw where columns start */
	mp_mbuf_t snaps, sections;   /* per-round scratch */
	mp_mbuf_t rows;              /* a chunk's records made contiguous */
	mp_chunk_encoder_t enc;      /* aged frees + columns (encoder.h) */
	z_stream z;                  /* compression levels 2-9 only */
	int z_ok;
	int behind;                  /* BEHIND_*: what this round sheds to catch up */
	uint32_t block_index;
	uint64_t events_flushed;     /* events in the blocks written: the trailer's count */
	uint64_t file_offset;        /* bytes written: where the next write goes */
	uint64_t events_written;     /* events in the blocks that reached the file */
	uint64_t complete_ns;        /* the last horizon that reached the file */
	int no_reserve;              /* fallocate does not work here: no reserved tail (wfile.c) */
	uint64_t file_dev, file_ino; /* the capture file, to tell it from what holds its number later */
	int file_stream;             /* the capture is a pipe: written in order, not at offsets */
	char path[PATH_MAX];         /* the capture's absolute path, to reopen it */
	_Atomic uint64_t last_horizon; /* read by registering threads */
	/* The serial clock (wthread_path.h, mp__rec_clock_serial): a raw
	 * time every record opened from now on is at or after (stored by each
	 * round before it looks at the rings), and the thread whose record of
	 * the serial kind came last. Lines of their own: the flusher writes
	 * the first once a round, the recording thread the second. */
	_Alignas(64) _Atomic uint64_t time_floor;
	_Alignas(64) _Atomic(mp_wthread_t *) serial_last;
	_Alignas(64) char serial_pad_;
	mp_capclock_t clock;         /* event times (clock.h) */
	mp_tally_t tally;            /* the figures of the SUMMARY sections (tally.h) */
	mp_mbuf_t tally_src;         /* per round: mp_tally_src_t of the threads to tally */

	/* call stacks and loaded objects (format 1.1; wstack.c, wmodules.c).
	 * Inserts and the module table are guarded by defs_mu; the struct is
	 * zeroed at open, which is their initial state. */
	_Atomic(mp_stack_table_t *) stacks;
	uint32_t stack_count;
	mp_wmodule_t *modules;       /* MP_WMODULES_MAX entries, from the arena */
	uint32_t module_count;
	_Atomic int modules_busy;    /* a refresh is running (others skip theirs) */
	char modules_exe[4096];      /* the refresh's buffer for the main program's path:
					not on the stack of the thread that met new code */
	_Atomic uint64_t modules_adds; /* the loader's load count at the last refresh */
	/* interpreter frames (format 2.2; wframe.c): inserts under defs_mu */
	_Atomic(mp_frame_table_t *) frames;
	uint32_t frame_count;
	/* the flight recorder (wkeep.c): NULL unless MEMPROF_KEEP_* */
	struct mp_keep *keep;
};

enum { BEHIND_NOT, BEHIND_SOME /* no aged frees */, BEHIND_FAR /* and stored blocks */ };

/* An unsigned decimal environment variable, or dflt when it is unset,
 * empty or not a number (writer.c; read when a writer opens). */
uint64_t mp__env_u64(const char *name, uint64_t dflt);

/* intern.c */
uint32_t mp__intern_lookup(mp_writer_t *w, const char *s, size_t len, uint64_t hash);
uint64_t mp__hash(const char *s, size_t len);
int mp__intern_insert_locked(mp_writer_t *w, const char *s, size_t len, uint64_t hash, uint32_t *id);

/* wstack.c: take defs_mu, giving up after 20 ms (-EDEADLK): a signal
 * handler may interrupt its own thread's definition. */
int mp__defs_lock(mp_writer_t *w);

/* wmodules.c: whether every frame lies inside a described object (defs_mu held). */
int mp__modules_cover_locked(const mp_writer_t *w, const uint64_t *pcs, uint32_t n);

/* wfile.c: the capture file, guarded against the traced program's own
 * descriptor handling. open: create path (open(2) flags) as w->fd, 0 or a
 * negative error with diag set. write: the iovecs (at most 4) at
 * w->file_offset, advancing it; 0 or a negative error code. close: close
 * w->fd if it is still the capture. */
int mp__wfile_open(mp_writer_t *w, const char *path, int flags, mp_diag_t *diag);
int mp__wfile_write(mp_writer_t *w, const struct iovec *iov, int n);
int mp__wfile_close(mp_writer_t *w);
/* The record that ends a capture whose writer stopped, at w->file_offset,
 * into the tail every write keeps reserved past it (fallocate, and below
 * the file size limit): see "Trailer" in docs/format.md. The file ends
 * after it. 0 or a negative error code. */
int mp__wfile_put_last(mp_writer_t *w, const void *buf, size_t len);
/* Whether err (negative) says the file system has no room for the capture:
 * ENOSPC, EDQUOT, EFBIG. */
int mp__wfile_no_room(int err);

/* wkeep.c: the flight recorder (`record --keep`; its comment says how).
 * open: after the header went to path, when MEMPROF_KEEP_BYTES or
 * MEMPROF_KEEP_NS is set, path becomes the whole-run file and w's file the
 * first segment (else nothing, 0). log: definition sections written (every
 * segment re-emits them). due: the segment is full (a round start asks).
 * seam_ready: every record encoded is counted (a rotation waits for it).
 * whole: the sections that end a round, as a block of the whole-run file.
 * rotate: after the round's last block, the next segment (the round ran
 * with set_rotate: its chunks stop at the horizon). close: after the last
 * segment's trailer, the whole-run file's; returns rc or its own error. */
#define MP_KEEP_SEGMENT_MIN (2ull << 20)
#define MP_KEEP_SEGMENT_MAX (64ull << 20)
uint64_t mp__keep_segment_bytes(uint64_t bound_bytes);
int mp__keep_open(mp_writer_t *w, const char *path, int overwrite, mp_diag_t *diag);
int mp__keep_log(mp_writer_t *w, const void *data, size_t len);
int mp__keep_due(mp_writer_t *w);
int mp__keep_seam_ready(mp_writer_t *w);
void mp__keep_set_rotate(mp_writer_t *w, int rotate);
int mp__keep_rotating(const mp_writer_t *w);
int mp__keep_whole(mp_writer_t *w, const uint8_t *sections, size_t len, uint64_t horizon);
int mp__keep_rotate(mp_writer_t *w, uint64_t horizon);
void mp__keep_round_done(mp_writer_t *w, uint64_t horizon); /* any other round: the bound */
/* wfile.c, around every write while --keep is on: room before len bytes
 * go to w's file (the oldest segments unlinked while the run would pass
 * the bound plus a segment: the bound holds at every moment), wrote after.
 * The hook, when set (tests only), is called after every such write with
 * rotating 1 while a new segment's first block is not complete. */
void mp__keep_room(mp_writer_t *w, size_t len);
void mp__keep_wrote(mp_writer_t *w);
extern void (*mp__keep_test_hook)(void *arg, int rotating);
extern void *mp__keep_test_arg;
int mp__keep_close(mp_writer_t *w, int rc);
/* writer.c: the trailer of a closed capture at w's file; flush.c: w->raw
 * as a block of w's file, a section of varints into b. */
int mp__writer_put_trailer(mp_writer_t *w);
int mp__writer_emit_block(mp_writer_t *w);
int mp__writer_put_section(mp_mbuf_t *b, const uint64_t *v, int n, uint8_t tag);

/* writer.c: on the first write error that is a lack of room, the trailer
 * that says so (the events before it stay readable). */
void mp__writer_stopped(mp_writer_t *w, int err);

/* The clock thread t's ring times go through (the encoder's and the
 * tally's): the capture clock, or for a lane, whose events carry ns
 * already (wlane.c), the identity (a clock without the TSC). */
static inline const mp_capclock_t *mp__ring_clock(const mp_writer_t *w, const mp_wthread_t *t)
{
	static const mp_capclock_t identity = {0};

	return t->lane ? &identity : &w->clock;
}

/* flush.c */
int mp__writer_round(mp_writer_t *w, int final);
/* The same, flush_mu held by the caller. */
int mp__writer_round_locked(mp_writer_t *w, int final);
/* (2.5) Thread t's records up to ring position end went to block `block`
 * (wback.c; the flusher, as it encodes a piece). */
void mp__writer_note_piece(mp_wthread_t *t, uint64_t end, uint32_t block);

/* (3.0) A checkpoint's BACK (memprof/format.h, MP_CKPT_F_BACK): how many
 * blocks before the one being built holds the oldest event not yet
 * tallied, 0: none. The flusher's, after the round's tally. */
uint32_t mp__writer_ckpt_back(mp_writer_t *w);

/* Hand thread t's ring space back up to min(encoded, tallied) (the
 * records after either are still needed), waking it if it waits for
 * room. Flusher only. */
void mp__writer_give_back(mp_wthread_t *t);

/* tally_round.c: a round's records earlier than horizon, of threads
 * src[0..n) (each from its `tallied` to end), into w->tally in the
 * reader's order; moves their `tallied` (handing ring space back as it
 * goes) and `tally_time`. 0, or -1 / -ENOMEM
 * with w->tally.failed set (their rings are drained all the same). */
typedef struct mp_tally_src {
	mp_wthread_t *t;
	uint64_t end;
} mp_tally_src_t;
int mp__tally_round(mp_writer_t *w, const mp_tally_src_t *src, size_t n, uint64_t horizon);
/* flusher.c: the flusher thread; its name (/proc/PID/task/TID/comm, 15
 * bytes at most). */
void *mp__flusher_main(void *arg);
#define MP_FLUSHER_NAME "memprof-flush"
/* Have the flusher run a round, and wait for it (see flush_asked): the
 * writer's error, or -EAGAIN when the flusher has stopped. */
int mp__writer_flush_on_flusher(mp_writer_t *w);

/* orphan.c: flushers count themselves in and out; 1 when the main thread
 * has ended (pthread_exit) and only flushers are left alive. */
void mp__flusher_enter(void);
void mp__flusher_leave(void);
int mp__process_orphaned(void);
/* flusher.c */
void mp__futex_wake(_Atomic uint32_t *word);
void mp__futex_wait(_Atomic uint32_t *word, uint32_t val, uint32_t timeout_ms);
/* One more wake-up for the flusher: its loop runs a round for those it
 * has not answered. */
void mp__flusher_wake(mp_writer_t *w);
/* The calling thread just recorded an event that a kill a moment later
 * must not take along: a block that moves the figures by megabytes
 * (MP_PROMPT_BYTES or more, allocated or freed: a pool's worker terminated
 * right after its task; a process the OOM killer picks while it touches
 * what it just allocated), or a failed allocation (what often ends a
 * process next). A round soon: at once when the last round started
 * MP_PROMPT_GAP_NS ago or more, else that long after it, so that a program
 * making such events by the thousand gets a round every MP_PROMPT_GAP_NS at
 * most. Makes no allocation; a system call at most. */
void mp__writer_prompt(mp_writer_t *w);
#define MP_PROMPT_GAP_NS (2u * 1000000u)

/* A block this large asks for a round (above). A round's fixed cost (tens
 * of microseconds) is small beside what allocating and using 4 MiB costs. */
#define MP_PROMPT_BYTES (4u << 20)

/* A thread's net memory (the preload: its host heap and mappings) moved by
 * bytes (about MP_PROMPT_BYTES / 4 either way) since it last said so. The
 * moves are summed over the threads into the process's level, and each
 * time that passes the level of the last prompt by MP_PROMPT_BYTES, a
 * prompt: a process gets a round for every 4 MiB it grows beyond the
 * highest level it had, whichever threads grew it, so that a kill takes at
 * most that much of a new peak along (and 1 MiB a thread, not yet said).
 * Not for a move back and forth: a process in a steady state, or one whose
 * threads hand blocks to each other (a producer's heap grows and its
 * consumer's shrinks; alloc_bench -x 50 got 5 times more rounds when each
 * thread's 4 MiB asked, 4-5% more time), stays below its high. A drop asks
 * too, once the level is MP_PROMPT_DROP_BYTES or an eighth of the highest
 * it reached since the last prompt below that (whichever is more): a
 * pool's worker that frees its task's objects and is terminated a moment
 * later otherwise leaves a capture whose blocks look leaked. (Far more
 * than a steady state's swings, and a few rounds for a training step that
 * frees gigabytes; alloc_bench -x 50, whose cross-thread mailboxes swing
 * its heap between 25 and 57 MiB, gets a round a drop.) An atomic add:
 * threads call it once a megabyte at most. */
void mp__writer_net_moved(mp_writer_t *w, int64_t bytes);
#define MP_PROMPT_DROP_BYTES (16u << 20)

/* After recording a block of that many bytes into w (NULL: none). */
static inline void mp__prompt_if_large(mp_writer_t *w, uint64_t bytes)
{
	if (__builtin_expect(bytes >= MP_PROMPT_BYTES, 0) && w)
		mp__writer_prompt(w);
}

/* help.c: rounds on the program's threads while every CPU is busy. */
/* The policy a writer gets for the one asked (OFF where unsupported). */
int mp__help_policy(int asked);
void mp__help_start(mp_help_t *h, int policy, unsigned ncpu);
/* On the flusher, after each wake-up: its run and wait time so far read
 * from /proc/thread-self/schedstat into mp__help_judge_at, which turns
 * help on (a quarter of the window's run time or more spent waiting for a
 * CPU) or off (to look again, at probe_at), and while it is on the
 * machine's idle time into mp__help_idle_at. */
void mp__help_judge(mp_writer_t *w, uint64_t now);
/* The texts it reads, parsed: /proc/thread-self/schedstat's run and wait
 * time (ns), /proc/stat's first line's idle (idle + iowait) and all ticks.
 * 0, or -1 when the text is not of that form. */
int mp__help_schedstat_in(const char *schedstat, uint64_t *run, uint64_t *wait);
int mp__help_stat_in(const char *stat, uint64_t *idle, uint64_t *total);
void mp__help_judge_at(mp_help_t *h, uint64_t run, uint64_t wait, uint64_t now);
/* While help is on: the machine's idle and all CPU ticks (/proc/stat's
 * first line, cumulative); half a CPU idle on average over a window of 50
 * ticks a CPU turns help off, for a window of the flusher's to decide. */
void mp__help_idle_at(mp_help_t *h, uint64_t idle, uint64_t total);
/* due, or sooner when help is on and looks again before it. */
uint64_t mp__help_due(const mp_help_t *h, uint64_t due);
/* A round on the calling thread (help on, its ring half full or full): 0,
 * -EBUSY when one runs already (it, or the next, takes this ring), -EAGAIN
 * when the writer is closing, -ENOMEM (no stack: help is then off until the
 * flusher turns it on again). errno kept. */
int mp__help_round(mp_writer_t *w);
/* /proc/loadavg's text: 1 if its runnable tasks (the fourth field's
 * numerator, the caller among them) are fewer than ncpu, 0 if not or if it
 * does not parse. */
int mp__help_spare_in(const char *loadavg, unsigned ncpu);
/* Help on, and a thread about to run a round: when a CPU idles now, help
 * goes off (the flusher, woken by the caller, runs the round there) and 1
 * is returned; else 0. Keeps errno. */
int mp__help_spare(mp_writer_t *w);
void mp__help_release(mp_help_t *h);

/* wthread.c (the event path itself: wthread_path.h) */
/* pthread key destructor: marks the thread exited so its ring can be reused. */
void mp__wthread_exit(void *arg);

#endif
