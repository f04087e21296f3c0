/* i64map.c - see memprof/i64map.h. */
#include <memprof/error.h>
#include <memprof/i64map.h>

#include <stdlib.h>

uint64_t mp_hash_bytes(const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ULL;
	}
	return mp_hash64(h);
}

/* Slot order is a function of the insertions alone (mp_i64map_next):
 * the torch source emits blocks in it, so hash and growth stay as they
 * were when the importers' map was written (64 slots, then doubling).
 * mp_i64map_get (the header) probes the same way. */
static inline size_t home(const mp_i64map_t *m, uint64_t key)
{
	return (size_t)mp_hash64(key) & m->mask;
}

static int rehash(mp_i64map_t *m, size_t slots)
{
	mp_i64map_t nm = {calloc(slots, sizeof(mp_i64map_slot_t)), slots - 1, m->n};
	size_t j, k;

	if (!nm.s)
		return MP_ENOMEM;
	for (j = 0; m->s && j <= m->mask; j++) {
		if (!m->s[j].used)
			continue;
		for (k = home(&nm, m->s[j].key); nm.s[k].used; k = (k + 1) & nm.mask)
			;
		nm.s[k] = m->s[j];
	}
	free(m->s);
	*m = nm;
	return 0;
}

int mp_i64map_reserve(mp_i64map_t *m, size_t n)
{
	size_t slots = m->s ? m->mask + 1 : 0, want = 64;

	if (n > SIZE_MAX / 4)
		return MP_ENOMEM;
	while (want < n * 2)
		want *= 2;
	return want > slots ? rehash(m, want) : 0;
}

/* The slot of key, or the empty slot it would take (room made first). */
static inline __attribute__((always_inline)) mp_i64map_slot_t *slot_for(mp_i64map_t *m, uint64_t key)
{
	size_t i;

	if ((m->n + 1) * 2 > (m->s ? m->mask + 1 : 0) && rehash(m, m->s ? (m->mask + 1) * 2 : 64) < 0)
		return NULL;
	for (i = home(m, key); m->s[i].used; i = (i + 1) & m->mask)
		if (m->s[i].key == key)
			break;
	return &m->s[i];
}

int mp_i64map_put(mp_i64map_t *m, uint64_t key, uint32_t val)
{
	mp_i64map_slot_t *s = slot_for(m, key);

	if (!s)
		return MP_ENOMEM;
	if (!s->used) {
		s->key = key;
		s->used = 1;
		m->n++;
	}
	s->val = val;
	return 0;
}

int mp_i64map_add(mp_i64map_t *m, uint64_t key, uint32_t val)
{
	mp_i64map_slot_t *s = slot_for(m, key);

	if (!s)
		return MP_ENOMEM;
	if (s->used)
		return 0;
	*s = (mp_i64map_slot_t){key, val, 1};
	m->n++;
	return 1;
}

int mp_i64map_del(mp_i64map_t *m, uint64_t key)
{
	size_t i, j;

	if (!m->s)
		return 0;
	for (i = home(m, key); m->s[i].key != key || !m->s[i].used; i = (i + 1) & m->mask)
		if (!m->s[i].used)
			return 0;
	m->s[i].used = 0;
	m->n--;
	for (j = i;;) {
		size_t k;

		j = (j + 1) & m->mask;
		if (!m->s[j].used)
			return 1;
		k = home(m, m->s[j].key);
		/* move j back to i when its home k lies cyclically outside (i, j] */
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			m->s[i] = m->s[j];
			m->s[j].used = 0;
			i = j;
		}
	}
}

int mp_i64map_next(const mp_i64map_t *m, size_t *pos, uint64_t *key, uint32_t *val)
{
	for (; m->s && *pos <= m->mask; ++*pos)
		if (m->s[*pos].used) {
			*key = m->s[*pos].key;
			*val = m->s[*pos].val;
			++*pos;
			return 1;
		}
	return 0;
}

void mp_i64map_free(mp_i64map_t *m)
{
	free(m->s);
	m->s = NULL;
	m->mask = m->n = 0;
}
