/* memprof/error.h - error codes and diagnostics shared by every memprof library.
 *
 * The rule (libuv's): a function that returns int returns 0 on success and a
 * negative code on failure. Codes from the OS are -errno; memprof's own codes
 * live in a reserved range below -4000 so the two never collide.
 *
 * Parsers of outside input also fill an optional mp_diag_t with a sentence a
 * person can act on ("block 3 at offset 4096: checksum mismatch"), the file,
 * and the offset/index where reading stopped. Libraries never print; the CLI
 * prints the diag.
 */
#ifndef MEMPROF_ERROR_H
#define MEMPROF_ERROR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, value, "message") -- one table generates the enum, the names and
 * the messages, so they cannot drift apart. */
#define MP_ERRNO_MAP(X)                                                        \
	X(MP_EFORMAT,    -4000, "not a valid file of the expected format")        \
	X(MP_EVERSION,   -4001, "unsupported format version")                      \
	X(MP_ETRUNCATED, -4002, "input ends before the data it announces")         \
	X(MP_ECHECKSUM,  -4003, "checksum mismatch (corrupted data)")              \
	X(MP_ECORRUPT,   -4004, "corrupted data")                                  \
	X(MP_ELIMIT,     -4005, "value outside the supported range")               \
	X(MP_EUSAGE,     -4006, "invalid argument")                                \
	X(MP_ENOTFOUND,  -4007, "not found")                                       \
	X(MP_ECOMPRESS,  -4008, "compression library error")                       \
	X(MP_ECLOSED,    -4009, "object is closed or in an error state")           \
	X(MP_EHLO,       -4010, "invalid HLO module")                              \
	X(MP_ERENDER,    -4011, "rendering failed")                                \
	X(MP_ENODATA,    -4012, "no data of the requested kind")

typedef enum {
#define MP__ERR_ENUM(name, val, msg) name = (val),
	MP_ERRNO_MAP(MP__ERR_ENUM)
#undef MP__ERR_ENUM
	MP_ENOMEM = -12 /* -ENOMEM on Linux; named for readability */
} mp_errno_t;

/* Human-readable message for an error code (a memprof code or -errno).
 * Returns a static string; never NULL. */
const char *mp_strerror(int err);

/* Symbolic name of an error code ("MP_ECHECKSUM", "ENOENT"); never NULL. */
const char *mp_err_name(int err);

/* Where and why reading stopped. All fields are optional for the filler:
 * offset is -1 and index is -1 when they do not apply. */
typedef struct mp_diag {
	int code;           /* the error code returned alongside */
	int64_t offset;     /* byte offset in the file, -1 if unknown */
	int64_t index;      /* block / record / event index, -1 if unknown */
	char file[256];     /* the input's path, "" if unknown */
	char text[512];     /* one sentence, no trailing newline */
} mp_diag_t;

/* Reset a diag to "no error". Safe with NULL. */
void mp_diag_clear(mp_diag_t *diag);

/* Fill diag (if non-NULL) and return code, so callers can write
 *   return mp_diag_set(diag, MP_ECORRUPT, off, idx, "bad tag %u", tag); */
int mp_diag_set(mp_diag_t *diag, int code, int64_t offset, int64_t index,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Record the file name in diag (truncated to fit). Safe with NULL. */
void mp_diag_set_file(mp_diag_t *diag, const char *path);

#ifdef __cplusplus
}
#endif
#endif
