/* memprof/output/csv.h - CSV fields (RFC 4180), one quoting rule for every
 * table memprof writes (report, --compat=xprof, the HLO report). */
#ifndef MEMPROF_OUTPUT_CSV_H
#define MEMPROF_OUTPUT_CSV_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write s (not NULL) as one field, without a separator: as it is, or in
 * double quotes with each quote doubled when it holds a comma, a quote, a
 * carriage return or a line feed. Write errors stay in out's error flag
 * (the caller checks ferror() once, after the table). */
void mp_csv_field(FILE *out, const char *s);

#ifdef __cplusplus
}
#endif
#endif
