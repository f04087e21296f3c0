/* report_impl.h - helpers shared by the text, JSON and CSV writers. */
#ifndef MEMPROF_REPORT_IMPL_H
#define MEMPROF_REPORT_IMPL_H

#include <memprof/i64map.h>
#include <memprof/report.h>
/* byte units, CSV fields and JSON values: the output layer's helpers */
#include <memprof/output/csv.h>
#include <memprof/output/json.h>
#include <memprof/output/units.h>
#include <memprof/vec.h>

/* The op name of a row ("(unknown origin)" for the unknown-origin row). */
#define RP_UNKNOWN_ORIGIN "(unknown origin)"

/* Sections with the default applied. */
unsigned rp_sections(const mp_report_options_t *o);

/* The devices to report, filtered by opts->device; by_peak: highest peak
 * first (ties: lower id), else by id. Caller frees the array. Returns the
 * count, or (size_t)-1 on allocation failure. */
size_t rp_devices(const mp_report_input_t *in, const mp_report_options_t *o, int by_peak,
		  const mp_solver_device_t ***out);

/* Resolved strings (never NULL). */
const char *rp_str(const mp_report_input_t *in, uint32_t id);
const char *rp_memory_name(const mp_report_input_t *in, uint32_t id);
const char *rp_memory_kind(const mp_report_input_t *in, uint32_t id);
const char *rp_row_op(const mp_report_input_t *in, const mp_solver_row_t *r);

/* A time for people: "12.345678 ms", or "trace entry 3697" when the
 * source's time_ns counts something else (mp_source_time_unit). */
const char *rp_time(const mp_report_input_t *in, char *buf, size_t n, uint64_t time_ns);


/* The source's notes about one memory id (MP_NOTE_INPUT: the input's own),
 * in the source's order: *i is the cursor (start at 0); NULL at the end. */
const mp_source_note_t *rp_next_note(const mp_report_input_t *in, uint32_t memory, size_t *i);

/* How the input ended, for people: "ended cleanly", "cut off (read up to
 * its last complete block)", or why its writer stopped ("cut short: the
 * disk was full (ENOSPC) at 1.21 GiB; events after 12.3 s are not all in
 * it"). Returns buf or a constant. */
const char *rp_end_text(const mp_report_input_t *in, char *buf, size_t size);

/* How many of n rows to print under `top` (0 = all), and what is left. */
size_t rp_shown(size_t n, uint32_t top);
uint64_t rp_rest_bytes(const mp_solver_row_t *rows, size_t n, size_t shown);

#endif
