/* memprof/xspace_build.h - build an XSpace (the message of *.xplane.pb) in
 * memory, for test fixtures only (tests/xplane): a test-support library
 * (memprof_test_xspace), not shipped. `memprof convert` writes its
 * xplane.pb with the exporter (mp_xplane_export), not with this.
 *
 * Calls nest like the message: plane > line > event > stat. Starting a new
 * plane/line/event closes the open one of the same or a deeper level. Event
 * and stat names are turned into per-plane XEventMetadata / XStatMetadata
 * entries (ids 1, 2, ... in order of first use), written after the lines as
 * TensorFlow does. Errors (out of memory, a stat outside an event) are
 * sticky and reported by mp_xsb_finish().
 */
#ifndef MEMPROF_XSPACE_BUILD_H
#define MEMPROF_XSPACE_BUILD_H

#include <memprof/error.h>
#include <memprof/protowire.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_xsb mp_xsb_t;

/* Caller owns; free with mp_xsb_free(). NULL when out of memory. */
mp_xsb_t *mp_xsb_new(void);
void mp_xsb_free(mp_xsb_t *b);

void mp_xsb_hostname(mp_xsb_t *b, const char *host);          /* XSpace.hostnames */
void mp_xsb_plane(mp_xsb_t *b, int64_t id, const char *name);
void mp_xsb_line(mp_xsb_t *b, int64_t id, const char *name, int64_t timestamp_ns);
void mp_xsb_event(mp_xsb_t *b, const char *name, int64_t offset_ps, int64_t duration_ps);
void mp_xsb_stat_int(mp_xsb_t *b, const char *stat, int64_t v);    /* int64_value */
void mp_xsb_stat_uint(mp_xsb_t *b, const char *stat, uint64_t v);  /* uint64_value */
void mp_xsb_stat_double(mp_xsb_t *b, const char *stat, double v);  /* double_value */
void mp_xsb_stat_str(mp_xsb_t *b, const char *stat, const char *v); /* str_value */
void mp_xsb_stat_ref(mp_xsb_t *b, const char *stat, const char *v); /* ref_value -> XStatMetadata */
void mp_xsb_stat_bytes(mp_xsb_t *b, const char *stat, const char *v); /* bytes_value */
void mp_xsb_stat_gzstr(mp_xsb_t *b, const char *stat, const char *v); /* compressed_str_value (gzip) */

/* Close everything; *data (borrowed, valid until mp_xsb_free) holds the
 * serialized XSpace. Returns 0, MP_ENOMEM or MP_EUSAGE. */
int mp_xsb_finish(mp_xsb_t *b, const uint8_t **data, size_t *len);

/* mp_xsb_finish() then write the bytes to path (gzip-compressed if gzip). */
int mp_xsb_write(mp_xsb_t *b, const char *path, int gzip, mp_diag_t *diag);

#ifdef __cplusplus
}
#endif
#endif
