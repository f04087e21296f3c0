/* summary_section.h - the SUMMARY section's parser (internal; the format is
 * in memprof/format.h and docs/format.md). */
#ifndef MP_SUMMARY_SECTION_H
#define MP_SUMMARY_SECTION_H

#include <memprof/capsummary.h>

#include <stdint.h>

/* The section at *pp (after its tag byte), up to end: checked, and kept in
 * out (its earlier figures replaced) unless out is NULL. Returns 0 with
 * *pp past the section, -1 when it does not parse, or -ENOMEM. */
int mp__summary_section_parse(const uint8_t **pp, const uint8_t *end, mp_capture_summary_t *out);

/* Forget s's figures (memories, available, horizon, events). */
void mp__summary_clear_figures(mp_capture_summary_t *s);

#endif
