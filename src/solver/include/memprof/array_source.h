/* memprof/array_source.h - an mp_source_t over events held in memory, for
 * tests and for importers that build a whole event stream before analysing
 * it (the xplane importer). Part of memprof_solver (no I/O).
 */
#ifndef MEMPROF_ARRAY_SOURCE_H
#define MEMPROF_ARRAY_SOURCE_H

#include <memprof/error.h>
#include <memprof/event.h>
#include <memprof/source.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Make a source that yields a copy of events[0..n) (their `index` is set
 * to their position). strings[i] is the string of id i (strings[0] is
 * ignored: id 0 is ""); memories[i] describes memory id i. Everything is
 * copied. path names the input in messages (may be NULL). On success *out
 * is owned by the caller: free it with mp_source_close(). Returns 0 or
 * MP_ENOMEM. */
int mp_array_source_new(mp_source_t **out, const mp_event_t *events, size_t n,
			const char *const *strings, size_t nstrings,
			const mp_memory_info_t *memories, uint32_t nmemories, const char *path);

/* Make the source fail with `code` when the event at position `at` is asked
 * for (tests of error paths). */
void mp_array_source_fail_at(mp_source_t *src, size_t at, int code);

#ifdef __cplusplus
}
#endif
#endif
