/* intern.c - string interning for the writer.
 *
 * Lookups are lock-free (an open-addressing table whose slots are published
 * with a release store of the string pointer); inserts take defs_mu, append
 * the STRING section to the pending defs, and only then publish the slot, so
 * no event can carry an id whose definition the flusher could miss. The
 * table grows by publishing a bigger copy; old tables stay in the arena
 * until the writer closes, so a concurrent lookup never reads freed memory.
 */
#include <memprof/format.h>
#include <memprof/format/varint.h>

#include "writer_internal.h"

#include <errno.h>
#include <string.h>

uint64_t mp__hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 0x100000001b3ull;
	}
	return h | 1; /* never 0 */
}

uint32_t mp__intern_lookup(mp_writer_t *w, const char *s, size_t len, uint64_t hash)
{
	mp_intern_table_t *t = atomic_load_explicit(&w->strings, memory_order_acquire);
	uint32_t i;

	if (!t)
		return 0;
	for (i = (uint32_t)hash & t->mask;; i = (i + 1) & t->mask) {
		mp_intern_slot_t *slot = &t->slots[i];
		const char *str = atomic_load_explicit(&slot->str, memory_order_acquire);
		if (!str)
			return 0;
		if (slot->hash == hash && slot->len == len && memcmp(str, s, len) == 0)
			return slot->id;
	}
}

static void table_put(mp_intern_table_t *t, const char *str, uint32_t len, uint64_t hash, uint32_t id)
{
	uint32_t i = (uint32_t)hash & t->mask;

	while (atomic_load_explicit(&t->slots[i].str, memory_order_relaxed))
		i = (i + 1) & t->mask;
	t->slots[i].hash = hash;
	t->slots[i].len = len;
	t->slots[i].id = id;
	atomic_store_explicit(&t->slots[i].str, str, memory_order_release);
}

static mp_intern_table_t *table_new(mp_writer_t *w, uint32_t cap)
{
	mp_intern_table_t *t = mp_arena_alloc(&w->arena, sizeof(*t) + (size_t)cap * sizeof(mp_intern_slot_t));

	if (t)
		t->mask = cap - 1;
	return t;
}

/* Caller holds defs_mu. */
int mp__intern_insert_locked(mp_writer_t *w, const char *s, size_t len, uint64_t hash, uint32_t *id)
{
	mp_intern_table_t *t = atomic_load_explicit(&w->strings, memory_order_relaxed);
	uint8_t hdr[1 + 2 * MP_VARINT_MAX], *p;
	char *copy;
	uint32_t found;

	found = mp__intern_lookup(w, s, len, hash);
	if (found) {
		*id = found;
		return 0;
	}
	if (len > UINT32_MAX / 2)
		return -E2BIG;
	if (!t || (w->string_count + 1) * 2 > t->mask + 1) {
		uint32_t cap = t ? (t->mask + 1) * 2 : 1024, i;
		mp_intern_table_t *bigger = table_new(w, cap);
		if (!bigger)
			return -ENOMEM;
		if (t) {
			for (i = 0; i <= t->mask; i++) {
				const char *str = atomic_load_explicit(&t->slots[i].str, memory_order_relaxed);
				if (str)
					table_put(bigger, str, t->slots[i].len, t->slots[i].hash, t->slots[i].id);
			}
		}
		atomic_store_explicit(&w->strings, bigger, memory_order_release);
		t = bigger;
	}
	copy = mp_arena_alloc(&w->arena, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';

	p = hdr;
	*p++ = MP_SEC_STRING;
	p = mp_varint_put(p, w->string_count + 1);
	p = mp_varint_put(p, len);
	if (mp_mbuf_reserve(&w->defs, (size_t)(p - hdr) + len))
		return -ENOMEM;
	mp_mbuf_append(&w->defs, hdr, (size_t)(p - hdr));
	mp_mbuf_append(&w->defs, s, len);

	*id = ++w->string_count;
	table_put(t, copy, (uint32_t)len, hash, *id);
	return 0;
}

uint32_t mp_writer_intern(mp_writer_t *w, const char *s)
{
	size_t len;
	uint64_t hash;
	uint32_t id;

	if (!w || !s)
		return 0;
	len = strlen(s);
	hash = mp__hash(s, len);
	id = mp__intern_lookup(w, s, len, hash);
	if (id)
		return id;
	pthread_mutex_lock(&w->defs_mu);
	if (mp__intern_insert_locked(w, s, len, hash, &id))
		id = 0;
	pthread_mutex_unlock(&w->defs_mu);
	return id;
}
