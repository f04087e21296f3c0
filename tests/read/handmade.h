/* handmade.h - captures built byte by byte (header, one block, trailer)
 * around chunk sections written out literally from docs/format.md or made
 * by the writer's encoder, so that the reader is checked against figures
 * worked out by hand, not against the writer (tests/read/test_layout.c,
 * tests/write/test_encoder.c). Failures are cmocka assertions. */
#ifndef MP_TEST_HANDMADE_H
#define MP_TEST_HANDMADE_H

#include <memprof/reader.h>

#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint8_t b[1 << 20];
	size_t n;
} buf_t;

void put_byte(buf_t *b, uint8_t v);
void put_v(buf_t *b, uint64_t v);

/* The sections every hand-made capture starts with: strings "host" (1)
 * and "op" (2), memory 0 named "host", thread 0. */
void put_defs(buf_t *raw);

/* A chunk section of thread 0: tag (MP_SEC_CHUNK or MP_SEC_CHUNK2), start
 * time, a zero address/context/cache state, then nparts lengths and the
 * parts' bytes. */
void put_chunk(buf_t *raw, uint8_t tag, uint64_t time, const uint8_t *const *parts, const uint64_t *lens,
	       int nparts);

/* Header (version major.0), one block holding raw (zlib level 6), the
 * trailer announcing `events`. */
void write_capture(const char *path, int major, const buf_t *raw, uint64_t events);

/* Reads path; returns the heap events (no MEMORY declarations) in out, at
 * most max. The batch path (the reader's fast decoder) must return the
 * same. *rc and *diag: how the reading ended. */
size_t read_heap(const char *path, mp_event_t *out, size_t max, int *rc, mp_diag_t *diag);

#endif
