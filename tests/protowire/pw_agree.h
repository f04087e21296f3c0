/* pw_agree.h - the property memprof_protowire promises, as a check both its
 * unit test and its fuzz target run: on the same bytes, the memory face and
 * the file face give the same fields, or the same error (code, offset,
 * sentence) at the same place; and what the encoder writes back from the
 * fields decodes to the same fields. */
#ifndef MEMPROF_PW_AGREE_H
#define MEMPROF_PW_AGREE_H

#include <stddef.h>
#include <stdint.h>

typedef struct pw_agree_stats {
	uint64_t fields;   /* fields both faces read */
	uint64_t errors;   /* messages (top level or payloads) both faces refused */
} pw_agree_stats_t;

/* Walk data[0, size) as a message with both faces (the file face through a
 * memfd and a window of cap bytes growing to max_cap), and every
 * length-delimited payload as a message too, 8 levels deep. Returns 0 when
 * they agree (st counts what they read), -1 with why filled when not or
 * when the check itself cannot run (no memfd). */
int pw_agree(const uint8_t *data, size_t size, size_t cap, size_t max_cap, pw_agree_stats_t *st, char *why,
	     size_t why_size);

/* Re-encode the top-level fields data[0, size) holds (up to its first bad
 * field) with the encoder and decode the result: the same numbers, wire
 * types, values and payloads must come back, each varint as long as
 * mp_pw_varint_size says. Returns 0, or -1 with why filled. */
int pw_roundtrip(const uint8_t *data, size_t size, char *why, size_t why_size);

#endif
