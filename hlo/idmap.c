/* idmap.c - int64 -> int32 open-addressing hash map (linear probing). Ids in
 * HloProtos are sparse (instruction ids 588..66134 for 7757 instructions), so
 * dense arrays would not do; a map keeps index building O(n). */
#include "internal.h"

#include <stdlib.h>

static size_t slot_of(int64_t key, size_t cap)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;

	h ^= h >> 29;
	return (size_t)h & (cap - 1);
}

int mp_idmap_init(mp_idmap_t *m, size_t expected)
{
	size_t cap = 16;

	while (cap < expected * 2 + 2)
		cap *= 2;
	m->keys = malloc(cap * sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	m->cap = cap;
	m->count = 0;
	if (!m->keys || !m->vals) {
		mp_idmap_free(m);
		return MP_ENOMEM;
	}
	for (size_t i = 0; i < cap; i++)
		m->vals[i] = -1;
	return 0;
}

void mp_idmap_free(mp_idmap_t *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->count = 0;
}

static int grow(mp_idmap_t *m)
{
	mp_idmap_t n;
	int rc = mp_idmap_init(&n, m->cap);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->vals[i] >= 0) {
			size_t s = slot_of(m->keys[i], n.cap);

			while (n.vals[s] >= 0)
				s = (s + 1) & (n.cap - 1);
			n.keys[s] = m->keys[i];
			n.vals[s] = m->vals[i];
			n.count++;
		}
	}
	mp_idmap_free(m);
	*m = n;
	return 0;
}

static int put(mp_idmap_t *m, int64_t key, int32_t val, int overwrite)
{
	size_t s;

	if ((m->count + 1) * 2 > m->cap) {
		int rc = grow(m);

		if (rc < 0)
			return rc;
	}
	s = slot_of(key, m->cap);
	while (m->vals[s] >= 0) {
		if (m->keys[s] == key) {
			if (overwrite)
				m->vals[s] = val;
			return 0;
		}
		s = (s + 1) & (m->cap - 1);
	}
	m->keys[s] = key;
	m->vals[s] = val;
	m->count++;
	return 1;
}

int mp_idmap_put(mp_idmap_t *m, int64_t key, int32_t val)
{
	return put(m, key, val, 0);
}

int mp_idmap_set(mp_idmap_t *m, int64_t key, int32_t val)
{
	int rc = put(m, key, val, 1);

	return rc < 0 ? rc : 0;
}

int32_t mp_idmap_get(const mp_idmap_t *m, int64_t key)
{
	size_t s;

	if (!m->cap)
		return -1;
	s = slot_of(key, m->cap);
	while (m->vals[s] >= 0) {
		if (m->keys[s] == key)
			return m->vals[s];
		s = (s + 1) & (m->cap - 1);
	}
	return -1;
}
