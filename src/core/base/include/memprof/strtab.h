/* memprof/strtab.h - interned strings: each distinct string once, named by a
 * dense uint32 id (xplane metadata, pickle names, torch frames).
 *
 * Ownership: the table owns its strings (mp_strtab_free frees them all);
 * mp_strtab_get lends one until the next mp_strtab_intern, which may move
 * the arena. A zeroed table (mp_strtab_init) is empty and ready. Not for the
 * writer's event path: it calls malloc. */
#ifndef MEMPROF_STRTAB_H
#define MEMPROF_STRTAB_H

#include <memprof/i64map.h> /* mp_hash64, mp_hash_bytes */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Interned strings: id 0 is "", ids 1.. are distinct strings. */
typedef struct mp_strtab {
	char *arena;        /* owned: NUL-terminated strings back to back */
	size_t alen, acap;
	uint32_t *offs;     /* owned: offs[id] = arena offset */
	uint32_t count;
	size_t ocap;
	uint32_t *slots;    /* owned: hash slots, id (0 = empty) */
	uint32_t nslots;
} mp_strtab_t;

void mp_strtab_init(mp_strtab_t *t);
void mp_strtab_free(mp_strtab_t *t);
/* Id of s[0..n) (interned on first use; an embedded NUL ends it); 0 for
 * the empty string; UINT32_MAX when out of memory or the table would
 * exceed 4 GiB. */
uint32_t mp_strtab_intern(mp_strtab_t *t, const char *s, size_t n);
/* Id if present, else 0 (also 0 for ""). */
uint32_t mp_strtab_find(const mp_strtab_t *t, const char *s, size_t n);
/* String of an id; "" for 0 or unknown ids. Borrowed until the next intern. */
const char *mp_strtab_get(const mp_strtab_t *t, uint32_t id);

#ifdef __cplusplus
}
#endif

#endif
