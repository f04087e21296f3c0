/* memprof/keep.h - a kept run (`memprof record --keep`, the flight
 * recorder; docs/format.md "Segments and the ring") read as one source.
 *
 * A process recorded with --keep leaves, for its capture path P:
 *   P                        the whole-run file: a capture whose blocks hold
 *                            every round's HORIZON and SUMMARY (and the
 *                            round's other end sections), never rotated;
 *                            memprof/capsummary.h reads its figures (the
 *                            whole run's peak per memory id, exact)
 *   P.d/seg-NNNNNN.memprof   the segments still kept, each a capture of its
 *                            own; from the second on, each starts with a
 *                            block that re-defines everything and holds a
 *                            CHECKPOINT of the live set at its start
 *
 * The window is the newest run of segments that reads as one stream: the
 * newest segment whose first block is complete (a kill mid-rotation leaves
 * a newer one without it: skipped), and before it every segment with the
 * number just below that ends with its trailer (a gap, or one damaged,
 * ends the window there). mp_capture_open() on P (or on P.d) opens the
 * window: the segments' blocks as one capture, renumbered, one header, and
 * a trailer summing theirs when the newest was closed (else the capture
 * ends abruptly, as a killed one does). Every event of the window comes
 * after its first checkpoint (mp_keep_window_checkpoint), which holds the
 * blocks born before it: `memprof report` seeds its solver from it
 * (src/cli/report_window.c).
 */
#ifndef MEMPROF_KEEP_H
#define MEMPROF_KEEP_H

#include <memprof/capsummary.h>
#include <memprof/checkpoint.h>
#include <memprof/error.h>
#include <memprof/reader.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_keep_segment {
	uint64_t number;     /* NNNNNN of its name: 0 for the process's first */
	char *path;          /* owned by the run */
	uint64_t bytes;      /* the file's size */
	uint64_t header_len; /* its header's bytes (blocks start there) */
	uint64_t blocks;     /* complete blocks */
	uint64_t data_end;   /* the end of its last complete block */
	int closed;          /* it ends with a complete trailer */
	uint64_t trailer_off;
} mp_keep_segment_t;

typedef struct mp_keep_run {
	char *whole_path;           /* P; owned */
	char *dir;                  /* P.d; owned */
	size_t nsegments;           /* the window's segments, oldest first */
	mp_keep_segment_t *segments;
	size_t present;             /* segment files in the directory */
	size_t skipped;             /* of those, outside the window (damaged, before a gap, a
				       newest one without its first block) */
	int whole_ok;               /* whole holds the whole-run file's figures */
	mp_capture_summary_t whole; /* the last complete round's, or the final ones */
} mp_keep_run_t;

/* 1 when path is a kept run: a file P beside a directory P.d, or such a
 * directory itself (its name ends in ".d" and it holds segments); else 0. */
int mp_keep_is_run(const char *path);

/* Open the kept run at path (P or P.d): list its segments, choose the
 * window, read the whole-run figures (a whole-run file that is missing or
 * has no round yet leaves whole_ok 0, not an error). MP_EFORMAT when no
 * segment reads. Free with mp_keep_close. */
int mp_keep_open(mp_keep_run_t **out, const char *path, mp_diag_t *diag);
void mp_keep_close(mp_keep_run_t *k);

/* The window as one capture (see above); close it with mp_capture_close
 * (it does not borrow k). */
int mp_keep_window_open(const mp_keep_run_t *k, mp_capture_t **out, mp_diag_t *diag);

/* The checkpoint the window starts at: the first segment's first one, a
 * copy into *out (mp_checkpoint_free it). 0; 1 when the window starts at
 * the process's start (segment 0: nothing was live) or its first segment
 * has none (a live set too large for one; *out untouched); or an error. */
int mp_keep_window_checkpoint(const mp_keep_run_t *k, mp_checkpoint_t *out, mp_diag_t *diag);

#ifdef __cplusplus
}
#endif
#endif
