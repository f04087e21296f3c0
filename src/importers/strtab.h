/* strtab.h - string interning and an int64 -> uint32 hash map (internal). */
#ifndef MEMPROF_STRTAB_H
#define MEMPROF_STRTAB_H

#include <stddef.h>
#include <stdint.h>

/* Interned strings: id 0 is "", ids 1.. are distinct strings. */
typedef struct mp_strtab {
	char *arena;        /* NUL-terminated strings back to back */
	size_t alen, acap;
	uint32_t *offs;     /* offs[id] = arena offset */
	uint32_t count, ocap;
	uint32_t *slots;    /* hash slots: id, 0 = empty */
	uint32_t nslots;
} mp_strtab_t;

void mp_strtab_init(mp_strtab_t *t);
void mp_strtab_free(mp_strtab_t *t);
/* Id of s[0..n) (interned on first use); 0 for the empty string; UINT32_MAX
 * when out of memory or the table would exceed 4 GiB. */
uint32_t mp_strtab_intern(mp_strtab_t *t, const char *s, size_t n);
/* Id if present, else 0 (also 0 for ""). */
uint32_t mp_strtab_find(const mp_strtab_t *t, const char *s, size_t n);
/* String of an id; "" for 0 or unknown ids. Borrowed until the next intern. */
const char *mp_strtab_get(const mp_strtab_t *t, uint32_t id);

/* int64 key -> uint32 value, open addressing. */
typedef struct mp_imap {
	int64_t *keys;
	uint32_t *vals;
	uint8_t *used;
	uint32_t n, cap;
} mp_imap_t;

void mp_imap_free(mp_imap_t *m);
/* Insert or replace; 0 or MP_ENOMEM. */
int mp_imap_put(mp_imap_t *m, int64_t key, uint32_t val);
/* 1 and *val if present, else 0. */
int mp_imap_get(const mp_imap_t *m, int64_t key, uint32_t *val);

uint64_t mp_hash64(uint64_t x);
uint64_t mp_hash_bytes(const void *p, size_t n);

#endif
