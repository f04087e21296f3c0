/* u64map.c - the report's u64 -> u32 hash map (open addressing, linear
 * probing, a value stored + 1 so that 0 marks an empty slot): the call
 * tree's interning and aggregation, and the by-function rows. */
#include "livemap.h" /* rp_mix */
#include "report_impl.h"

#include <stdlib.h>
#include <string.h>

int rp_map_put(rp_map_t *m, uint64_t key, uint32_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->mask + 1) {
		size_t cap = m->mask ? (m->mask + 1) * 2 : 64, j;
		uint64_t *keys = calloc(cap, sizeof(*keys));
		uint32_t *vals = calloc(cap, sizeof(*vals));
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -1;
		}
		for (j = 0; m->vals && j <= m->mask; j++) {
			size_t k;
			if (!m->vals[j])
				continue;
			for (k = rp_mix(m->keys[j]) & (cap - 1); vals[k]; k = (k + 1) & (cap - 1))
				;
			keys[k] = m->keys[j];
			vals[k] = m->vals[j];
		}
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->mask = cap - 1;
	}
	for (i = rp_mix(key) & m->mask; m->vals[i]; i = (i + 1) & m->mask)
		if (m->keys[i] == key) {
			m->vals[i] = val + 1;
			return 0;
		}
	m->keys[i] = key;
	m->vals[i] = val + 1;
	m->n++;
	return 0;
}

int rp_map_get(const rp_map_t *m, uint64_t key, uint32_t *val)
{
	size_t i;

	if (!m->vals)
		return 0;
	for (i = rp_mix(key) & m->mask; m->vals[i]; i = (i + 1) & m->mask)
		if (m->keys[i] == key) {
			*val = m->vals[i] - 1;
			return 1;
		}
	return 0;
}

void rp_map_free(rp_map_t *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

