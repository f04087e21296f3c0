/* symbolize.h - addresses of a capture's stacks to function names, offline,
 * at report time (internal to memprof_report).
 *
 * The capture's module map (MODULE sections) says which object was loaded
 * where; the objects are read from disk now, on the machine that recorded
 * them. With libdw (elfutils) a frame gets the name of the symbol that
 * contains it (.symtab, or .dynsym, or separate debug info found by build
 * id); an object whose build id no longer matches the capture's (rebuilt or
 * upgraded since) is not trusted and its frames stay object+offset. Without
 * libdw every frame is object+offset.
 */
#ifndef MP_SYMBOLIZE_H
#define MP_SYMBOLIZE_H

#include <memprof/capture.h>

#include <stdint.h>

typedef struct mp_symbolizer mp_symbolizer_t;

/* A symbolizer over cap's module map as read so far (read the capture to
 * its end first). Caller owns; free with mp_symbolizer_free(). NULL when
 * out of memory. */
mp_symbolizer_t *mp_symbolizer_new(const mp_capture_t *cap);
void mp_symbolizer_free(mp_symbolizer_t *s);

/* "libdw" or "none": what names the frames. Static. */
const char *mp_symbolizer_backend(void);

typedef struct mp_symbol {
	const char *function; /* symbol name, or NULL when unknown */
	const char *object;   /* path of the object holding pc, or NULL when none does */
	uint64_t offset;      /* pc - the object's load bias (its ELF address) */
	int stale;            /* the object on disk is not the one that was loaded */
} mp_symbol_t;

/* Resolve pc, a return address (the call instruction before it is what is
 * looked up). Strings are borrowed from the symbolizer. */
void mp_symbolize(mp_symbolizer_t *s, uint64_t pc, mp_symbol_t *out);

#endif
