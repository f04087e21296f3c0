/* memprof/output/units.h - byte counts for people, one way everywhere
 * (the report, the CLI's messages, --compat=xprof, the HLO report, the
 * charts' hover text).
 *
 * Binary units (1 KiB = 1024 B) up to EiB, two decimals. Each function
 * writes into buf (size bytes; MP_BYTES_BUF always suffices), truncating
 * like snprintf, and returns buf, so that a call can stand in a printf
 * argument list. No allocation, no state: safe from any thread.
 */
#ifndef MEMPROF_OUTPUT_UNITS_H
#define MEMPROF_OUTPUT_UNITS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for the longest text any of them writes ("18446744073709551615 B
 * (16.00 EiB)" is 36 bytes with its NUL). */
#define MP_BYTES_BUF 48

/* The unit alone: "512 B", "1.50 KiB", "105.01 MiB". */
const char *mp_bytes_human(char *buf, size_t size, uint64_t bytes);

/* The same for a signed amount (a difference, a hostile trace's negative
 * size): "-512 B", "-1.50 KiB". */
const char *mp_bytes_human_signed(char *buf, size_t size, int64_t bytes);

/* The exact count, then the unit: "512 B", "66060288 B (63.00 MiB)". */
const char *mp_bytes_exact(char *buf, size_t size, uint64_t bytes);

#ifdef __cplusplus
}
#endif
#endif
