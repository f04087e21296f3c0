/* memprof/hlo_diff.h - what changed between two analysed HLO modules
 * (`memprof diff a.hlo.pb b.hlo.pb`, docs/diff.md): the peak working space
 * and its instruction, padding and indefinite bytes at it, and the buffers
 * live at each peak matched by identity -- instruction name with its shape
 * index, else (opcode, shape, size) -- as grown, shrunk, new and gone.
 * Buffers are borrowed from the two results, which must outlive the diff. */
#ifndef MEMPROF_HLO_DIFF_H
#define MEMPROF_HLO_DIFF_H

#include <memprof/hlo.h>

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_hlo_diff_row {
	const mp_hlo_buffer_t *a, *b; /* NULL on the side it is not live at the peak */
	int64_t change_bytes;         /* b size - a size (padded bytes) */
	const char *kind;             /* "grown", "shrunk", "new", "gone"; static */
	int by_shape;                 /* 1: matched by (opcode, shape, size), the names differ */
} mp_hlo_diff_row_t;

typedef struct mp_hlo_diff {
	const mp_hlo_result_t *a, *b;
	mp_hlo_diff_row_t *rows;      /* changed, by |change| descending; owned */
	size_t n_rows;
	size_t grown, shrunk, added, gone;
	size_t unchanged;             /* buffers matched with the same size */
	int64_t unchanged_bytes;
	size_t renamed;               /* of those matched, by (opcode, shape, size) */
} mp_hlo_diff_t;

/* Compare. Returns 0 with *out owned by the caller (mp_hlo_diff_free) or
 * MP_ENOMEM. */
int mp_hlo_diff_compute(const mp_hlo_result_t *a, const mp_hlo_result_t *b, mp_hlo_diff_t **out);
void mp_hlo_diff_free(mp_hlo_diff_t *d);

/* Text for people: the summary side by side, then top rows (0 = all).
 * Returns 0 or -errno. */
int mp_hlo_diff_text(FILE *out, const mp_hlo_diff_t *d, const char *path_a, const char *path_b, size_t top);

/* The "hlo" object of `diff --json` (docs/diff.md). Caller owns; NULL
 * when out of memory. */
json_t *mp_hlo_diff_json(const mp_hlo_diff_t *d, size_t top);

/* The whole `diff --json` document of two modules (docs/diff.md): format,
 * version, kind "hlo", the files, the "hlo" object and an empty "gates"
 * array for the caller's gate rows (mp_diff_gate_row). Caller owns; NULL
 * when out of memory. */
json_t *mp_hlo_diff_document(const mp_hlo_diff_t *d, const char *path_a, const char *path_b, size_t top);

#ifdef __cplusplus
}
#endif
#endif
