/* memprof/i64map.h - the 64-bit key -> uint32 value hash map every memprof
 * library uses (ids, addresses, hashes to row or record indexes): open
 * addressing with linear probing, at most half full, backward-shift
 * deletion, one 16-byte slot per entry (a lookup touches one cache line).
 *
 * Keys are any 64-bit value (int64 ids convert); values any uint32.
 * A zeroed map ({0}, MP_I64MAP_INIT) is empty and ready; it owns its slots
 * (mp_i64map_free). Not for the writer's event path: it calls malloc. */
#ifndef MEMPROF_I64MAP_H
#define MEMPROF_I64MAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_i64map_slot {
	uint64_t key;
	uint32_t val;
	uint32_t used; /* 0: an empty slot */
} mp_i64map_slot_t;

typedef struct mp_i64map {
	mp_i64map_slot_t *s; /* owned; NULL until the first insert */
	size_t mask;         /* slots - 1 (slots a power of two) */
	size_t n;            /* entries */
} mp_i64map_t;

#define MP_I64MAP_INIT {NULL, 0, 0}

/* The map's mixer (also what callers use to fold a composite key). */
static inline uint64_t mp_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* FNV-1a over n bytes, then mp_hash64. */
uint64_t mp_hash_bytes(const void *p, size_t n);

/* Room for n entries without growing: 0 or MP_ENOMEM. */
int mp_i64map_reserve(mp_i64map_t *m, size_t n);
/* Insert, or replace the value of a present key: 0 or MP_ENOMEM. */
int mp_i64map_put(mp_i64map_t *m, uint64_t key, uint32_t val);
/* Insert unless present: 1 inserted, 0 present (its value kept), or
 * MP_ENOMEM. */
int mp_i64map_add(mp_i64map_t *m, uint64_t key, uint32_t val);
/* 1 and *val when present, else 0 (*val untouched). Inline: the report's
 * call tree looks up once per frame of every stack. */
static inline int mp_i64map_get(const mp_i64map_t *m, uint64_t key, uint32_t *val)
{
	size_t i;

	if (!m->s)
		return 0;
	for (i = (size_t)mp_hash64(key) & m->mask; m->s[i].used; i = (i + 1) & m->mask)
		if (m->s[i].key == key) {
			*val = m->s[i].val;
			return 1;
		}
	return 0;
}
/* Remove key: 1 removed, 0 absent. */
int mp_i64map_del(mp_i64map_t *m, uint64_t key);
/* The entries in slot order, which depends only on the sequence of
 * insertions and deletions (not on addresses or time):
 *	for (size_t pos = 0; mp_i64map_next(m, &pos, &key, &val);)
 * 1 and the next entry, or 0 at the end. */
int mp_i64map_next(const mp_i64map_t *m, size_t *pos, uint64_t *key, uint32_t *val);
void mp_i64map_free(mp_i64map_t *m);

#ifdef __cplusplus
}
#endif

#endif
