/* checkpoint_section.h - the CHECKPOINT section's parser (internal; the
 * format is in memprof/format.h and docs/format.md "Checkpoint"). */
#ifndef MP_CHECKPOINT_SECTION_H
#define MP_CHECKPOINT_SECTION_H

#include <memprof/reader.h>

#include <stdint.h>

/* The section at *pp (after its tag byte), up to end, in the block raw
 * (at file offset boff), checked against the SUMMARY section that starts
 * at summary (after its tag; NULL: none before it in the block). With
 * apply, counted and handed to the capture's callback. Returns 0 with *pp
 * past the section, else an error set in diag (MP_ECORRUPT naming the
 * block, its offset, the field and its byte in the block). */
int mp__checkpoint_section(mp_capture_t *cap, const uint8_t **pp, const uint8_t *end, const uint8_t *raw,
			   const uint8_t *summary, uint64_t boff, int apply, mp_diag_t *diag);

#endif
