/* memprof/output/json.h - building jansson documents: the few rules every
 * JSON output of memprof shares (the report, diff, --compat=xprof, the HLO
 * report).
 *
 * Building a document makes many small values, each of which can fail to
 * allocate; rather than checking each, the builders pass an int *bad that
 * mp_json_put() sets on the first failure, and the writer checks it once.
 */
#ifndef MEMPROF_OUTPUT_JSON_H
#define MEMPROF_OUTPUT_JSON_H

#include <jansson.h>

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A byte count or a counter as an exact JSON integer (jansson's json_int_t
 * is 64-bit signed): values above INT64_MAX, which no real input reaches,
 * are clamped to INT64_MAX rather than wrapped negative. New reference
 * (NULL when out of memory). */
json_t *mp_json_u64(uint64_t v);

/* A new empty object (new reference); NULL and *bad = 1 when out of
 * memory, so that a builder returns NULL and its parent's mp_json_put()
 * needs no check of its own. */
json_t *mp_json_object(int *bad);

/* json_object_set_new(o, key, v) that remembers a failure: a NULL v (its
 * builder failed) or a failed insertion sets *bad = 1. Steals v either way,
 * as json_object_set_new does. */
void mp_json_put(json_t *o, const char *key, json_t *v, int *bad);

/* A JSON string of s (NULL = ""). JSON carries UTF-8 only; names read from
 * damaged files may not be, and rather than drop the field their bytes
 * >= 0x80 and control bytes become '?'. New reference (NULL when out of
 * memory). */
json_t *mp_json_text(const char *s);

/* The layout of memprof's JSON documents: two-space indents, keys in the
 * order they were set, reals with 17 significant digits (fragmentation
 * round-trips). */
#define MP_JSON_LAYOUT (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

/* Write doc with json_dumpf(flags) and a final newline, and release it
 * (doc is stolen, as json_object_set_new steals). Returns 0, or -errno
 * (-EIO when errno says nothing) when writing failed. */
int mp_json_write(FILE *out, json_t *doc, size_t flags);

#ifdef __cplusplus
}
#endif
#endif
