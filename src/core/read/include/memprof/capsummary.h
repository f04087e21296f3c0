/* memprof/capsummary.h - the figures a capture's writer kept while it
 * recorded (format 2.1, docs/format.md "Summary"), read without decoding
 * a single event.
 *
 * The writer counts, per memory id, what the solver would find replaying
 * the capture (allocations, frees, failed and dropped events, the peak of
 * live bytes and its time, the blocks live at the end), in the events'
 * global time order, and writes those cumulative figures at the end of
 * every flush round. mp_capture_summary_read() reads the header, walks the
 * blocks' 24-byte frame headers (a seek each, no inflating), and inflates
 * only the last summary block -- a few hundred bytes -- and the trailer:
 * milliseconds, whatever the capture's size. A capture cut off mid-run
 * (SIGKILL) has the figures of its last complete flush round.
 */
#ifndef MEMPROF_CAPSUMMARY_H
#define MEMPROF_CAPSUMMARY_H

#include <memprof/error.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One memory id's figures, as `memprof report` counts them for the same
 * events (address model): a realloc is one free and one allocation there
 * (allocations + reallocs is report's "allocations", frees + reallocs its
 * "deallocations"); a free of an address not live is ignored, an
 * allocation at a live address first drops the block there. */
typedef struct mp_summary_memory {
	uint32_t id;
	int kind;              /* MP_MEMORY_KIND_* */
	char *name;            /* owned by the summary */
	int has_peak;          /* 0: no event of this memory id yet (the peaks are 0) */
	uint64_t allocations;  /* not counting reallocs */
	uint64_t frees;        /* not counting reallocs */
	uint64_t reallocs;
	uint64_t failed;       /* failed allocations */
	uint64_t dropped;      /* events the writer could not record */
	uint64_t peak_bytes;   /* live bytes at the peak: allocated sizes, or requested where none
				  was given (report's peak, peak.bytes in its JSON) */
	uint64_t peak_time_ns; /* the first event at that peak */
	uint64_t peak_requested;         /* the peak of live requested bytes */
	uint64_t peak_requested_time_ns; /* ... and its first event */
	uint64_t live_blocks;  /* at the summary's horizon (the end, for a clean capture) */
	uint64_t live_bytes;   /* as peak_bytes counts them */
	uint64_t live_requested;
	/* (2.5; has_seek_figures: the writer gave them) region events, frees
	 * of an address not live, rejected region changes, whether a region
	 * was declared, the reserved peak (most bytes of live regions, the
	 * first event to reach it) and its time: the solver's figures */
	int has_seek_figures;
	uint64_t region_events, unknown_frees, rejected_regions;
	int regions_seen, has_reserved_peak;
	uint64_t reserved_peak_bytes, reserved_peak_ns;
} mp_summary_memory_t;

typedef struct mp_capture_summary {
	uint16_t version_major, version_minor;
	int available;          /* 0: the capture holds no summary (a writer before 2.1, one whose
				   tally failed, or one killed before its first round): the
				   figures below but ended_cleanly, end_time_ns and blocks are 0 */
	int ended_cleanly;      /* the trailer is there and says the capture was closed (else it
				   ended abruptly, or its writer stopped: write_errno) */
	int write_errno;        /* (2.3) its writer stopped on this error (ENOSPC, EDQUOT, EFBIG)
				   and said so; 0: it did not */
	uint64_t write_offset;  /* ... the file's size when it stopped */
	uint64_t complete_ns;   /* ... its last horizon: events after it may be missing */
	uint64_t horizon_ns;    /* the figures count every event before this time; UINT64_MAX:
				   all of them (the writer's final round) */
	uint64_t events;        /* events the figures cover (a realloc counts 2), as the trailer
				   counts them */
	uint64_t stacks;        /* call stacks the capture defines (`memprof record --stacks`) */
	uint64_t end_time_ns;   /* the trailer's end time; else the horizon, or 0 when that is
				   UINT64_MAX (the final round's figures, the trailer not written:
				   killed while closing; only a replay finds its last event's time) */
	uint64_t blocks;        /* complete blocks in the file */
	size_t nmemories;
	mp_summary_memory_t *memories; /* by id order; owned by the summary */
} mp_capture_summary_t;

/* Read path's summary into *out (zeroed first; free it with
 * mp_capture_summary_free, also after an error). Returns 0 -- also when
 * the capture has no summary (out->available = 0) -- or a negative error
 * code with diag naming the file, the offset and what is wrong (not a
 * capture, an unknown major version, a damaged frame, trailer or summary
 * section). A closed capture is read from its end (its trailer and last
 * block: a read or two, whatever its size); the others, and a closed one
 * whose end does not give the figures, block by block. Damage in blocks
 * the read does not look at is not looked for: `memprof report` finds it. */
int mp_capture_summary_read(const char *path, mp_capture_summary_t *out, mp_diag_t *diag);

/* The same over a capture in memory (fuzzing, tests); name is used in
 * messages. */
int mp_capture_summary_read_memory(const void *data, size_t size, const char *name, mp_capture_summary_t *out,
				   mp_diag_t *diag);

/* The same figures computed from the capture's events, for a capture that
 * holds no summary (out->available 0 after mp_capture_summary_read): as
 * long as reading the capture (capsummary_replay.c). Returns 0 with
 * out->available = 1 and ended_cleanly / end_time_ns as the reader found
 * them, or a negative error code (diag set; the events read before a
 * damaged block are not counted). */
int mp_capture_summary_replay(const char *path, mp_capture_summary_t *out, mp_diag_t *diag);

/* The memory id of that name, or NULL. Borrowed from s. */
const mp_summary_memory_t *mp_capture_summary_find(const mp_capture_summary_t *s, const char *name);

void mp_capture_summary_free(mp_capture_summary_t *s);

#ifdef __cplusplus
}
#endif
#endif
