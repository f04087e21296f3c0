/* memprof/xplane.h - TF/JAX profiler captures (XSpace, *.xplane.pb).
 *
 * Reading: mp_xplane_open_source() turns one or several xplane.pb files (one
 * per host) into an mp_source_t of ALLOC/FREE events carrying the statistics
 * the allocator reported (MP_EVENT_F_STATS), in time order. It streams over
 * the file with a bounded buffer; memory grows with the number of memory
 * events (16 bytes each), never with the file size. gzip-compressed files
 * are decompressed to an unlinked temporary file first.
 *
 * Log directories: mp_xplane_find_runs() finds plugins/profile/<run>/ below
 * a TensorBoard log directory.
 *
 * Writing is the output side's (src/output): memprof/xplane_export.h
 * writes any source as an XSpace, memprof/xspace_build.h builds arbitrary
 * XSpaces.
 *
 * See docs/xplane.md for the mapping and where memprof differs from xprof.
 */
#ifndef MEMPROF_XPLANE_H
#define MEMPROF_XPLANE_H

#include <memprof/error.h>
#include <memprof/event.h>
#include <memprof/source.h>
#include <memprof/xplane_dtype.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_xplane_options {
	/* Prefix memory names with "<host>/": -1 = when several files are
	 * opened together (default), 0 = never, 1 = always. */
	int prefix_hosts;
	/* Host names, one per path (NULL = derived from the file name:
	 * "<host>.xplane.pb" -> "<host>"). Borrowed during the call. */
	const char *const *hosts;
	/* Event times: 0 = XLine.timestamp_ns + XEvent.offset_ps, relative to
	 * the earliest start of a line with memory events (correct); 1 =
	 * XEvent.offset_ps alone, as xprof computes them (identical when all
	 * lines start together, as in TF captures; JAX lines do not). */
	int xprof_clock;
} mp_xplane_options_t;

/* Open xplane.pb files (raw or gzip: decompressed to an unlinked temporary
 * file in $TMPDIR, which needs room for the decompressed bytes) as one event
 * source; 1 <= npaths <= 255. opts may be NULL (all fields 0 except
 * prefix_hosts -1). On success *out is owned by the caller: free it with
 * mp_source_close(). On failure *out is NULL and diag names the file, the
 * offset and what was wrong. A capture without memory events opens fine and
 * yields no events (see mp_xplane_memory_event_count()). */
int mp_xplane_open_source(mp_source_t **out, const char *const *paths, size_t npaths,
			  const mp_xplane_options_t *opts, mp_diag_t *diag);

/* 1 if src was opened by mp_xplane_open_source(), else 0. */
int mp_xplane_is_source(const mp_source_t *src);

/* Number of MemoryAllocation/MemoryDeallocation events found (0 for a
 * non-xplane source). */
uint64_t mp_xplane_memory_event_count(const mp_source_t *src);

/* Stored-order key of the event the last next() returned: events compare in
 * the order xprof iterates them (file, then offset in the file). Returns 0
 * and fills *key, or MP_EUSAGE for a non-xplane source / before next(). */
int mp_xplane_last_order(const mp_source_t *src, uint64_t *key);


/* ------------------------------------------------------------------------ */
/* TensorBoard log directories                                              */

/* All strings and arrays are owned by the mp_xplane_runs_t and freed by
 * mp_xplane_runs_free(). */
typedef struct mp_xplane_run {
	char *name;    /* the run directory's name ("2022_11_04_21_26_12") */
	char *dir;     /* its path */
	char **paths;  /* the <host>.xplane.pb files in it, sorted */
	char **hosts;  /* host names (file names without .xplane.pb[.gz]) */
	size_t nhosts;
} mp_xplane_run_t;

typedef struct mp_xplane_runs {
	mp_xplane_run_t *runs; /* sorted by name, then directory: newest last */
	size_t n;
} mp_xplane_runs_t;

/* Find every plugins/profile/<run>/ with at least one *.xplane.pb below dir
 * (searching at most 8 levels deep; dir may itself be plugins/profile or a
 * run directory). On success *out is filled (caller frees it with
 * mp_xplane_runs_free()); MP_ENOTFOUND with a diag when there is none. */
int mp_xplane_find_runs(const char *dir, mp_xplane_runs_t *out, mp_diag_t *diag);
/* Free what mp_xplane_find_runs() filled and empty *runs; safe with NULL. */
void mp_xplane_runs_free(mp_xplane_runs_t *runs);

/* Choose a run: name NULL = the newest (the last by name); else the run whose
 * name or directory equals name (or whose directory ends with "/name").
 * Returns the index, MP_ENOTFOUND when none matches, MP_EUSAGE when several
 * runs share the newest name or match name (diag lists them). */
int mp_xplane_select_run(const mp_xplane_runs_t *runs, const char *name, mp_diag_t *diag);

/* 1 if path names an xplane capture by its name (*.xplane.pb, *.xplane.pb.gz,
 * *.xpb) or is a directory; 0 otherwise. */
int mp_xplane_path_is_candidate(const char *path);

typedef struct mp_xplane_input_options {
	const char *run;  /* --run NAME; NULL = the newest run */
	int xprof_clock;  /* as in mp_xplane_options_t (--compat=xprof) */
} mp_xplane_input_options_t;

/* `memprof report`'s FILE arguments. If args[0] is an xplane input -- a
 * directory (log directory or run directory), a file named *.xplane.pb,
 * *.xplane.pb.gz or *.xpb, or a file starting with the XSpace.planes tag
 * that is not a memprof capture -- open it as one source: for a directory
 * the chosen run with all its hosts; for a file, it and the xplane files
 * that directly follow it (one per host, reported together). Returns the
 * number of arguments used (>= 1) with *out owned by the caller (free with
 * mp_source_close()), 0 when args[0] is not an xplane input, or a negative
 * code with diag. note (may be NULL) gets a line for the user, "" if none
 * (e.g. which of several runs was chosen). */
int mp_xplane_open_args(mp_source_t **out, const char *const *args, size_t nargs,
			const mp_xplane_input_options_t *opts, char *note, size_t note_size, mp_diag_t *diag);

#ifdef __cplusplus
}
#endif
#endif
