/* memprof/format.h - on-disk constants of the .memprof capture.
 * docs/format.md is the full specification; this file is its code twin,
 * shared by the writer (memprof_write) and the reader (memprof_read).
 *
 * File:
 *   +----------------+------------+------------+------------+=============+-----------+
 *   | "MEMPROF\0" 8B | major u16  | minor u16  | hlen u32   | header body | crc32 u32 |
 *   +----------------+------------+------------+------------+=============+-----------+
 *   then blocks, then (on a clean close) the trailer.
 *
 * Block (24-byte frame header, then the raw-deflate payload):
 *   +--------+---------+-------------+---------+-------------+------------+=========+
 *   | "MPBK" | index   | payload_len | raw_len | payload_crc | header_crc | payload |
 *   +--------+---------+-------------+---------+-------------+------------+=========+
 *   all u32 little-endian; header_crc covers the 20 bytes before it.
 *
 * Trailer:
 *   +--------+----------+--------------+======+---------------+
 *   | "MPTR" | blen u32 | hcrc u32     | body | body crc32 u32|   hcrc covers the 8 bytes before it
 *   +--------+----------+--------------+======+---------------+
 *
 * A decompressed block payload is a sequence of sections, each a tag byte
 * followed by varints (see MP_SEC_*). Chunk sections hold one thread's event
 * records (MP_REC_*), delta-encoded against the state that the chunk header
 * gives, so each block decodes on its own.
 */
#ifndef MEMPROF_FORMAT_H
#define MEMPROF_FORMAT_H

#include <stdint.h>

#define MP_FORMAT_VERSION_MAJOR 3 /* written; readers also read 1.x and 2.x */
#define MP_FORMAT_VERSION_MINOR 0 /* 2.1: parent pid and executable in the header, SUMMARY sections;
				   2.2: FRAME sections (interpreter frames in stacks);
				   2.3: the trailer of a writer stopped by a full disk;
				   2.4: CHECKPOINT sections (the live blocks at a horizon);
				   2.5: ROUND sections (a round's timeline figures);
				   3.0: 2.5's sections, a major so that a 2.x reader says
				   it cannot read the file instead of calling it
				   corrupt at its first ROUND section */

/* Whether a file of version major.minor has what version want_major.
 * want_minor brought: every later version keeps what an earlier one added
 * (3.0 has all of 2.5). */
static inline int mp_format_at_least(unsigned major, unsigned minor, unsigned want_major, unsigned want_minor)
{
	return major > want_major || (major == want_major && minor >= want_minor);
}

#define MP_FILE_MAGIC "MEMPROF"      /* 8 bytes with the NUL */
#define MP_FILE_MAGIC_LEN 8
#define MP_FILE_PREFIX_LEN 16        /* magic + major + minor + hlen */
#define MP_BLOCK_MAGIC 0x4b42504du   /* "MPBK" little-endian */
#define MP_TRAILER_MAGIC 0x5254504du /* "MPTR" little-endian */
#define MP_BLOCK_HEADER_LEN 24
#define MP_HEADER_MAX 65536          /* largest header body a reader accepts */
#define MP_BLOCK_RAW_MAX (64u << 20) /* largest decompressed block */

/* A run directory's file of how its processes ended, as the traced
 * parents that reaped them saw it: lines "PID STATUS WALL_NS" (the wait
 * status, CLOCK_REALTIME ns at the reap), appended by the preload
 * (allocator_hooks/preload/reap.c), read with the run (memprof/run.h;
 * docs/format.md "Runs"). */
#define MP_RUN_ENDS "memprof.ends"
#define MP_BLOCK_PAYLOAD_MAX (64u << 20)
#define MP_TRAILER_MAX 4096

/* Sections of a block payload. */
enum {
	MP_SEC_STRING = 1,  /* id, len, bytes */
	MP_SEC_MEMORY = 2,  /* memory id, name string id, kind, capacity */
	MP_SEC_THREAD = 3,  /* thread index, OS thread id */
	MP_SEC_CHUNK = 4,   /* (1.x only) thread, start state, byte length, 5 column lengths, columns */
	MP_SEC_DROPPED = 5, /* thread, memory id, count */
	MP_SEC_HORIZON = 6, /* time: every event earlier than it is in this block or before */
	MP_SEC_STACK = 7,   /* (1.1) stack id, frame count n, n return addresses */
	MP_SEC_MODULE = 8,  /* (1.1) a loaded object: path, load bias, build id, segments */
	MP_SEC_CHUNK2 = 9,  /* (2.0) thread, start state, byte length, 11 part lengths, parts */
	MP_SEC_SUMMARY = 10,/* (2.1) body length, body: the writer's figures up to a horizon (below) */
	MP_SEC_FRAME = 11,  /* (2.2) frame id, function string id, file string id, line, kind */
	MP_SEC_CHECKPOINT = 12, /* (2.4) body length, body: the live blocks at a horizon (below) */
	MP_SEC_ROUND = 13,  /* (2.5) body length, body: a flush round's timeline figures (below) */
};

/* The CHECKPOINT section's body (2.4; docs/format.md "Checkpoint"):
 * flags (MP_CKPT_F_*), horizon, events, total live blocks N, memory count
 * m, then per memory id that has live blocks, ids ascending: id gap (the
 * first: its id; then id - previous id - 1), block count c, then c blocks
 * in increasing address order: address gap (the first: its address; then
 * address - previous address, > 0), footprint, zz(footprint - requested).
 * Then zz(step) (-1: none yet), the live region count R and per region,
 * by memory id then base: id gap (from the previous region's id; the
 * first: its id), base gap (from the previous region's end in the same id,
 * else the base), size (> 0). Later versions append after them. */
#define MP_CKPT_F_NO_TAGS 1u        /* the blocks carry no op, dtype, shape, region type or stack */
/* (2.5) no CONTEXT or STACK record came before it: every block's op,
 * dtype, shape, region type and stack are none (so NO_TAGS loses nothing) */
#define MP_CKPT_F_UNTAGGED 2u
/* (2.5) after the regions: the label of the last mark before it (string
 * id, 0: none) */
#define MP_CKPT_F_LAST_MARK 4u
/* (2.5) after the last mark: each block's tag id (0: none), in the
 * blocks' order, then the count of tags they use and per tag, ids
 * increasing: id gap (from the previous one; the first: its id), op,
 * region type, dtype, shape (string ids), stack id. NO_TAGS is then off. */
#define MP_CKPT_F_TAGS 8u
/* (3.0) last, after the tags (or the last mark without them): BACK, how
 * many blocks before the checkpoint's the first one lies that holds an
 * event it does not cover (a thread's events wait in the blocks of the
 * rounds before their horizon -- for as many rounds as a lane's hold
 * keeps the horizon back); 0: none before it. A seek decodes the chunks
 * from there on (without the flag: from 6 blocks before). */
#define MP_CKPT_F_BACK 16u
/* MP_SUMF_REGION_FLAGS (2.5) */
#define MP_SUMF_REGION_F_SEEN 1u        /* a REGION_ADD came before the horizon */
#define MP_SUMF_REGION_F_RESERVED_PEAK 2u /* the reserved peak is set */
#define MP_CKPT_MEMORIES_MAX 1024   /* a writer's memory ids (MP_TALLY_MEMS) */
#define MP_CKPT_BODY_MAX (48u << 20) /* a larger live set gets no checkpoint */

/* The SUMMARY section's body (2.1; docs/format.md "Summary"): flags
 * (MP_SUMMARY_F_*), horizon, events, call stacks defined, memory count n, then per memory id:
 * id, kind, flags (MP_SUMMARY_MEM_F_*), name (varint length, bytes), field
 * count k, then k varints, MP_SUMF_* in order (a reader takes those it
 * knows and skips the rest; later fields go at the end). */
#define MP_SUMMARY_F_UNAVAILABLE 1u /* the writer could not keep the figures: none follow */
#define MP_SUMMARY_MEM_F_PEAK 1u    /* the memory id has a peak (it had an event) */
#define MP_SUMMARY_NAME_MAX 4096    /* longest memory name a reader accepts */
#define MP_SUMMARY_MEMORIES_MAX 65536
enum {
	MP_SUMF_ALLOCS,       /* allocations, a realloc's not counted */
	MP_SUMF_FREES,        /* frees, a realloc's not counted */
	MP_SUMF_REALLOCS,     /* reallocs (each one free and one allocation in the events) */
	MP_SUMF_FAILED,       /* failed allocations */
	MP_SUMF_DROPPED,      /* events not recorded */
	MP_SUMF_PEAK,         /* peak of live bytes (allocated, or requested where 0): report's peak */
	MP_SUMF_PEAK_NS,      /* its time */
	MP_SUMF_PEAK_REQ,     /* peak of live requested bytes */
	MP_SUMF_PEAK_REQ_NS,  /* its time */
	MP_SUMF_LIVE_BLOCKS,  /* blocks live at the horizon */
	MP_SUMF_LIVE,         /* their bytes (as MP_SUMF_PEAK counts them) */
	MP_SUMF_LIVE_REQ,     /* their requested bytes */
	/* (2.5) what a seek from a checkpoint, or one that stops after the
	 * peak, prints and the fields above do not give (the solver's rules) */
	MP_SUMF_REGION_EVENTS,    /* REGION_ADD and REGION_REMOVE events */
	MP_SUMF_UNKNOWN_FREES,    /* frees of an address not live */
	MP_SUMF_REJECTED,         /* rejected region changes */
	MP_SUMF_RESERVED_PEAK,    /* the most bytes of live regions (the first event to reach it) */
	MP_SUMF_RESERVED_PEAK_NS, /* its time */
	MP_SUMF_REGION_FLAGS,     /* MP_SUMF_REGION_F_* */
	MP_SUMF_COUNT
};

/* The ROUND section's body (2.5; docs/format.md "Round"): flags
 * (MP_ROUND_F_*), horizon, the round's start (the previous round's horizon, 0 for the
 * first), zz(step at the horizon; -1 none yet), events counted so far,
 * memory count n, then per memory id with a moment in the round: id,
 * field count k, then k varints, MP_ROUNDF_* in order (a reader takes
 * those it knows; later fields go at the end). */
/* (3.0) A step in the round was lower than the one in force before it
 * (an epoch restarting its numbers): the rounds' steps do not show it when
 * the round ends no lower than the one before. Readers before it ignore
 * flags. */
#define MP_ROUND_F_STEP_BACK 1u

enum {
	MP_ROUNDF_LIVE,            /* live bytes at the horizon (the SUMMARY's MP_SUMF_LIVE) */
	MP_ROUNDF_MIN,             /* least live bytes in the round, its start included */
	MP_ROUNDF_MIN_NS,          /* its first time (the round's start: held from there) */
	MP_ROUNDF_MAX,             /* most live bytes in the round, its start included */
	MP_ROUNDF_MAX_NS,          /* its first time */
	MP_ROUNDF_MAX_STEP,        /* zz(the step then) */
	MP_ROUNDF_FIRST_NS,        /* the round's first moment of this memory id */
	MP_ROUNDF_LAST_NS,         /* ... and its last */
	MP_ROUNDF_RESERVED,        /* bytes of the live regions at the horizon */
	MP_ROUNDF_RESERVED_MAX,    /* their most in the round, its start included */
	MP_ROUNDF_RESERVED_MAX_NS, /* its first time */
	MP_ROUNDF_FAILED,          /* failed allocations in the round */
	MP_ROUNDF_FAILED_NS,       /* the first one's time (0: none) */
	MP_ROUNDF_FAILED_REQ,      /* ... and its requested bytes */
	MP_ROUNDF_COUNT
};

/* Limits a reader enforces on the 1.1 sections (a writer stays below). */
#define MP_STACK_MAX_FRAMES 256  /* frames per stack (the hooks keep 64) */
#define MP_MODULE_MAX_SEGMENTS 64
#define MP_MODULE_MAX_BUILD_ID 64
/* (2.2) A stack value with bit 63 set is an interpreter frame: the bit | a
 * FRAME section's id (mp_writer_frame, mp_capture_frame). No return
 * address has it (user space is the low half of the address space). */
#define MP_STACK_FRAME_TAG ((uint64_t)1 << 63)

/* Records inside a chunk: low 4 bits kind, high bits flags. */
enum {
	MP_REC_ALLOC = 1,        /* dt, zz(addr delta), requested, [zz(allocated-requested)] */
	MP_REC_FREE = 2,         /* dt, zz(addr delta) */
	MP_REC_ALLOC_FAILED = 3, /* dt, requested */
	MP_REC_REGION_ADD = 4,   /* dt, zz(addr delta), size */
	MP_REC_REGION_REMOVE = 5,/* dt, zz(addr delta) */
	MP_REC_STEP = 6,         /* dt, zz(step) */
	MP_REC_MARK = 7,         /* dt, label string id */
	MP_REC_REALLOC = 8,      /* dt, zz(old delta), zz(new - old), requested, [zz(allocated-requested)] */
	MP_REC_CONTEXT = 9,      /* op, region, dtype, shape (no time) */
	MP_REC_ALLOC_REUSED = 10,/* dt, slot of the freed-address cache holding the address, requested, [allocated] */
	MP_REC_STACK = 11,       /* stack id of the next ALLOC/REALLOC/ALLOC_FAILED of the thread (no time) */
	MP_REC_FREE_AGED = 12,   /* dt, age: the block allocated `age` allocations ago in this chunk */
	MP_REC_ALLOC_REFREED = 13,/* (2.0) dt, age: at the address of the `age`-th latest free of this chunk, requested, [allocated] */
	MP_REC_KIND_MASK = 0x0f,
	MP_RECF_MEMORY = 0x10,   /* a memory id varint follows the tag */
	MP_RECF_USABLE16 = 0x20, /* allocated = max(32, (requested + 23) & ~15) - 8 (glibc's usable size) */
	MP_RECF_ALIGN16 = 0x40,  /* address deltas are in units of 16 bytes */
	MP_RECF_EXACT = 0x80,    /* allocated == requested */
};

/* The freed-address cache: 64 slots, direct-mapped by address. */
#define MP_REUSE_SLOTS 64

static inline unsigned mp_reuse_slot(uint64_t addr)
{
	return (unsigned)(((addr >> 4) * 0x9E3779B97F4A7C15ull) >> 58);
}

/* glibc malloc's usable size for a request (non-mmapped chunks). */
static inline uint64_t mp_usable16(uint64_t requested)
{
	uint64_t chunk = (requested + 8 + 15) & ~(uint64_t)15;

	return (chunk < 32 ? 32 : chunk) - 8;
}

#endif
