/* memprof/xprof_compat.h - xprof's Memory Profile figures, reproduced
 * exactly (quirks included) from any source whose events carry allocator
 * stats (MP_EVENT_F_STATS: xplane imports, exported memprof captures).
 *
 * This is what `memprof report --compat=xprof` prints: the reference's
 * summary per allocator (its peak is the LAST event, in the order xprof
 * iterates, whose stack + heap reaches the maximum; its "lifetime peak" is
 * the last event's peak_bytes_in_use) and its "memory breakdown at peak"
 * table (only allocations of the peak step made up to the peak time, a
 * special row for the rest of the heap and one for the stack, rows grouped
 * and ordered like xprof). The default report uses memprof's solver instead;
 * docs/xplane.md lists the differences.
 */
#ifndef MEMPROF_XPROF_COMPAT_H
#define MEMPROF_XPROF_COMPAT_H

#include <memprof/error.h>
#include <memprof/source.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_xprof_options {
	/* Name of the special row for heap bytes not explained by the peak
	 * step's allocations: 1 = "preallocated/unknown" (TF <= 2.4, what the
	 * memory_profile.json.gz files of that era contain), 0 = "unused
	 * preallocated device memory" (current xprof). */
	int legacy_names;
} mp_xprof_options_t;

typedef struct mp_xprof_row {
	uint64_t allocation_bytes;
	uint64_t requested_bytes;
	uint64_t occurrences;
	const char *op;     /* owned by the profile; never NULL */
	const char *region; /* "" when the event had none */
	const char *dtype;
	const char *shape;
	int special;        /* 1 for the two rows xprof synthesizes */
	int unknown_origin; /* 1 for the heap not explained by the peak step's
			     * allocations (xprof's "preallocated/unknown") */
} mp_xprof_row_t;

typedef struct mp_xprof_memory {
	uint32_t id;                  /* the source's memory id */
	const char *name;             /* owned by the profile */
	const char *kind;             /* mp_memory_kind_name(): static */
	uint64_t events, allocations, deallocations; /* events: ALLOC and FREE */
	uint64_t stream_events;       /* every event of the memory id but steps and
				       * marks (its description too): the default
				       * report's "events" */
	int has_peak;                 /* 0 when the memory had no ALLOC/FREE event */
	uint64_t peak_bytes;          /* stack + heap at xprof's peak */
	uint64_t peak_time_ns;        /* the source's time of that event (xprof shows ps) */
	uint64_t stack_bytes, heap_bytes, free_bytes;
	double fragmentation;
	uint64_t capacity_bytes;      /* stack + heap + free at the peak */
	int64_t peak_step;            /* step of the last event (time order) at the peak level */
	uint64_t lifetime_peak_xprof; /* xprof's "lifetime peak": the last event's peak_bytes_in_use */
	uint64_t lifetime_peak_max;   /* the true maximum of peak_bytes_in_use */
	mp_xprof_row_t *rows;         /* the breakdown table, in xprof's order */
	size_t nrows;
} mp_xprof_memory_t;

typedef struct mp_xprof_profile {
	mp_xprof_memory_t *mems;      /* in memory id order; only ids with events */
	size_t n;
	int legacy_names;             /* the option it was computed with */
} mp_xprof_profile_t;

/* Compute the profile: two passes over src (it is rewound first and
 * between them). opts may be NULL (legacy_names = 1). Ties break like
 * xprof's by the source's stored order (mp_source_stored_order: an xplane
 * capture's file order), else by the stream order. On success *out is owned by the caller: free it with
 * mp_xprof_free(). */
int mp_xprof_compute(mp_source_t *src, const mp_xprof_options_t *opts, mp_xprof_profile_t **out,
		     mp_diag_t *diag);
void mp_xprof_free(mp_xprof_profile_t *p);

/* Output of `memprof report --compat=xprof` (docs/xplane.md has the JSON
 * fields and the CSV columns; docs/schema/report.schema.json the schema
 * the JSON follows, the same contract as the default report's). */
enum { MP_XPROF_TEXT = 0, MP_XPROF_JSON = 1, MP_XPROF_CSV = 2 };

/* The report's JSON version (MP_REPORT_JSON_VERSION of memprof/report.h,
 * which this library does not link; cmd_report.c asserts they agree). */
#define MP_XPROF_JSON_VERSION 2

/* The JSON object of one input: the report's contract (format
 * "memprof-report", version, devices[]) with xprof's figures, and the
 * compat-only ones as added fields. Caller owns; free with json_decref().
 * NULL when out of memory. device: NULL = all memories, else a memory name
 * or a memory id number (memories that do not match are left out). */
struct json_t;
struct json_t *mp_xprof_json(const mp_xprof_profile_t *p, const char *path, const char *device);

/* Print n profiles: text, CSV, or JSON (one object, or {"files": [...]} for
 * several). top: rows per breakdown table, 0 = all. Returns 0, MP_ENOTFOUND
 * when device matches no memory of some input (nothing printed), MP_ENOMEM
 * or -errno. */
int mp_xprof_print(FILE *out, const mp_xprof_profile_t *const *p, const char *const *paths, size_t n,
		   int format, const char *device, uint32_t top);

/* mp_xprof_compute() on each source, then mp_xprof_print(): what `memprof
 * report --compat=xprof` does. Sources without allocator statistics are
 * refused (MP_EUSAGE: xprof's figures need them). Returns 0 or a negative
 * code with diag (MP_ENOTFOUND: device matches no memory). */
int mp_xprof_report(FILE *out, mp_source_t *const *srcs, const char *const *paths, size_t n,
		    const mp_xprof_options_t *opts, int format, const char *device, uint32_t top,
		    mp_diag_t *diag);

#ifdef __cplusplus
}
#endif
#endif
