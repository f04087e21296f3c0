/* memprof/diff.h - what changed between two analysed inputs of the same
 * kind (`memprof diff A B`, docs/diff.md): per memory id, matched by name,
 * the peak in A and in B and its change, when each peak happened, reserved
 * bytes and fragmentation at it, failed allocations; then what was live at
 * the peak, matched row by row (by the breakdown's op, region, dtype, shape
 * and metadata, or by allocating function), as grown, shrunk, new and gone.
 *
 * A regression gate (mp_diff_gate_t) says whether B's peak exceeds A's by
 * more than a limit, in bytes or percent, per memory id or over their sum.
 *
 * Strings are borrowed from the inputs' sources and function tables: they
 * must stay open while the diff is used.
 */
#ifndef MEMPROF_DIFF_H
#define MEMPROF_DIFF_H

#include <memprof/functions.h>
#include <memprof/report.h>

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of `memprof diff --json` (docs/diff.md, docs/schema/
 * diff.schema.json). */
#define MP_DIFF_JSON_VERSION 1

/* A row's change at the peak. */
typedef enum mp_diff_kind {
	MP_DIFF_SAME = 0,   /* same bytes in both (not listed, counted) */
	MP_DIFF_GROWN = 1,  /* in both, more bytes in B */
	MP_DIFF_SHRUNK = 2, /* in both, fewer bytes in B */
	MP_DIFF_NEW = 3,    /* live at B's peak only */
	MP_DIFF_GONE = 4,   /* live at A's peak only */
} mp_diff_kind_t;

const char *mp_diff_kind_name(mp_diff_kind_t k); /* "same", "grown", ... */

/* One group of what was live at the peak, in A and in B. The key's fields
 * are "" where the grouping has none; by function, only `function` is set
 * (op, region, dtype, shape NULL). Borrowed strings. */
typedef struct mp_diff_row {
	const char *op, *region, *dtype, *shape, *metadata; /* metadata NULL: none */
	const char *function;
	uint64_t a_bytes, b_bytes;  /* live at each peak */
	uint64_t a_count, b_count;  /* live allocations */
	int64_t change_bytes;       /* b_bytes - a_bytes */
	mp_diff_kind_t kind;
} mp_diff_row_t;

/* The figures of one side at its peak. */
typedef struct mp_diff_side {
	const mp_solver_device_t *dev; /* borrowed */
	const char *name;              /* memory name in that input */
	const char *phase;             /* innermost phase open at the peak, NULL: none */
	char time[64];                 /* "12.345678 ms" or "trace entry 3697" */
} mp_diff_side_t;

/* One memory id present in both inputs. */
typedef struct mp_diff_memory {
	mp_diff_side_t a, b;
	int64_t change_bytes;        /* b peak - a peak */
	double change_percent;       /* 100 * change / a peak; NAN when a peak is 0 */
	mp_diff_row_t *rows;         /* changed rows, by |change| descending (ties: key) */
	size_t row_count;
	size_t unchanged_rows;       /* rows with the same bytes in both */
	uint64_t unchanged_bytes;
	size_t grown, shrunk, added, gone; /* rows of each kind */
	int has_rows;                /* 0: no breakdown / function table on either side */
} mp_diff_memory_t;

typedef struct mp_diff_options {
	int by_function;           /* rows by allocating function (functions tables given) */
	const char *const *map;    /* "A_NAME=B_NAME" pairs (--map); checked by mp_diff_compute */
	size_t map_count;
} mp_diff_options_t;

typedef struct mp_diff mp_diff_t;

/* Compare a and b (solvers run with breakdowns; fa/fb: their function
 * tables, used with opts->by_function, may be NULL otherwise). kind names
 * the inputs' kind ("capture", "snapshot", "xplane"), echoed in the output.
 * Returns 0 with *out owned by the caller (mp_diff_free), MP_ENOMEM, or
 * MP_EUSAGE with a sentence in why (a --map entry malformed or naming an
 * unknown memory). A diff with no common memory id is returned (count 0):
 * the caller says so, with mp_diff_only_a/_b. */
int mp_diff_compute(mp_diff_t **out, const mp_report_input_t *a, const mp_report_input_t *b, mp_functions_t *fa,
		    mp_functions_t *fb, const char *kind, const mp_diff_options_t *opts, char *why, size_t whysize);
void mp_diff_free(mp_diff_t *d);

/* Memory ids present in both, in A's order of ids. Borrowed. */
size_t mp_diff_count(const mp_diff_t *d);
const mp_diff_memory_t *mp_diff_memory(const mp_diff_t *d, size_t i);
/* Names of the memory ids only A / only B has. Borrowed. */
size_t mp_diff_only_a(const mp_diff_t *d, const char *const **names);
size_t mp_diff_only_b(const mp_diff_t *d, const char *const **names);

/* --fail-above [NAME:|total:]LIMIT; LIMIT is "5%", "5.5%", "67108864",
 * "64MiB", "1.5GiB", "512KiB", "100B" (units: B KiB MiB GiB TiB). */
typedef struct mp_diff_gate {
	const char *spec;      /* as given; borrowed */
	char memory[256];      /* "": every memory id; else its name in A (or in B) */
	int total;             /* 1: the sum of the peaks of the common memory ids */
	int percent;           /* 1: limit_percent applies, else limit_bytes */
	double limit_percent;
	uint64_t limit_bytes;
} mp_diff_gate_t;

/* Parse spec into g. Returns 0, or MP_EUSAGE with a sentence in why. */
int mp_diff_gate_parse(const char *spec, mp_diff_gate_t *g, char *why, size_t whysize);

/* 1 when B's figure b exceeds A's a by more than g's limit (the test
 * every gate makes; HLO modules' peaks are checked with it directly). */
int mp_diff_gate_exceeds(const mp_diff_gate_t *g, uint64_t a, uint64_t b);

/* One gate on one memory's peaks a -> b, as every diff reports it (the
 * captures' and the HLO modules'): mp_diff_gate_say writes the regression
 * line to err (nothing when err is NULL); mp_diff_gate_row appends the
 * gate's JSON row ({gate, memory, a_bytes, b_bytes, change_bytes, failed})
 * to arr and returns 0 or MP_ENOMEM. */
void mp_diff_gate_say(FILE *err, const mp_diff_gate_t *g, const char *memory, uint64_t a, uint64_t b);
int mp_diff_gate_row(json_t *arr, const mp_diff_gate_t *g, const char *memory, uint64_t a, uint64_t b);

/* Check gates[0..n) on d: writes one line per failure to err (NULL: none)
 * as "memprof: diff: regression: NAME: peak +N B (+H, +P%) from X B to Y B,
 * above --fail-above SPEC". Returns the number of failures, or MP_EUSAGE
 * when a gate names a memory id the diff does not have (said on err). */
int mp_diff_gate_check(const mp_diff_t *d, const mp_diff_gate_t *gates, size_t n, FILE *err);

/* Text for people: per common memory id its figures side by side, then
 * the top changed rows (0 = 20). Returns 0 or -errno. */
int mp_diff_text(FILE *out, const mp_diff_t *d, uint32_t top);

/* The JSON document (docs/diff.md): rows limited to top (0 = all), the
 * gates' results when gates is not NULL. Caller owns; NULL out of memory. */
json_t *mp_diff_json(const mp_diff_t *d, uint32_t top, const mp_diff_gate_t *gates, size_t ngates);

#ifdef __cplusplus
}
#endif
#endif
