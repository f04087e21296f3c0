/* strtab.c - see strtab.h. */
#include "strtab.h"

#include <memprof/error.h>

#include <stdlib.h>
#include <string.h>

uint64_t mp_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

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

void mp_strtab_init(mp_strtab_t *t)
{
	memset(t, 0, sizeof(*t));
}

void mp_strtab_free(mp_strtab_t *t)
{
	free(t->arena);
	free(t->offs);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

const char *mp_strtab_get(const mp_strtab_t *t, uint32_t id)
{
	if (id == 0 || id >= t->count)
		return "";
	return t->arena + t->offs[id];
}

static int eq(const mp_strtab_t *t, uint32_t id, const char *s, size_t n)
{
	const char *x = t->arena + t->offs[id];

	return strncmp(x, s, n) == 0 && x[n] == '\0' && memchr(s, '\0', n) == NULL;
}

uint32_t mp_strtab_find(const mp_strtab_t *t, const char *s, size_t n)
{
	uint32_t i;

	if (n == 0 || t->nslots == 0)
		return 0;
	i = (uint32_t)mp_hash_bytes(s, n) & (t->nslots - 1);
	while (t->slots[i]) {
		if (eq(t, t->slots[i], s, n))
			return t->slots[i];
		i = (i + 1) & (t->nslots - 1);
	}
	return 0;
}

static int grow_slots(mp_strtab_t *t)
{
	uint32_t nn = t->nslots ? t->nslots * 2 : 256, id, i;
	uint32_t *ns = calloc(nn, sizeof(*ns));

	if (!ns)
		return -1;
	for (id = 1; id < t->count; id++) {
		const char *x = t->arena + t->offs[id];

		i = (uint32_t)mp_hash_bytes(x, strlen(x)) & (nn - 1);
		while (ns[i])
			i = (i + 1) & (nn - 1);
		ns[i] = id;
	}
	free(t->slots);
	t->slots = ns;
	t->nslots = nn;
	return 0;
}

uint32_t mp_strtab_intern(mp_strtab_t *t, const char *s, size_t n)
{
	uint32_t id, i;
	const char *nul;

	if (n == 0)
		return 0;
	/* An embedded NUL ends the string (C strings downstream). */
	nul = memchr(s, '\0', n);
	if (nul)
		n = (size_t)(nul - s);
	if (n == 0)
		return 0;
	id = mp_strtab_find(t, s, n);
	if (id)
		return id;
	if (t->count == 0) {
		/* id 0 = "" */
		t->offs = malloc(64 * sizeof(*t->offs));
		t->arena = malloc(64);
		if (!t->offs || !t->arena)
			return UINT32_MAX;
		t->ocap = 64;
		t->acap = 64;
		t->arena[0] = '\0';
		t->alen = 1;
		t->offs[0] = 0;
		t->count = 1;
	}
	if ((t->count + 1) * 2 > t->nslots && grow_slots(t) < 0)
		return UINT32_MAX;
	if (t->alen + n + 1 > UINT32_MAX || t->count == UINT32_MAX - 1)
		return UINT32_MAX;
	if (t->alen + n + 1 > t->acap) {
		size_t nc = t->acap;
		char *na;

		while (nc < t->alen + n + 1)
			nc *= 2;
		na = realloc(t->arena, nc);
		if (!na)
			return UINT32_MAX;
		t->arena = na;
		t->acap = nc;
	}
	if (t->count == t->ocap) {
		uint32_t *no = realloc(t->offs, (size_t)t->ocap * 2 * sizeof(*no));

		if (!no)
			return UINT32_MAX;
		t->offs = no;
		t->ocap *= 2;
	}
	id = t->count++;
	t->offs[id] = (uint32_t)t->alen;
	memcpy(t->arena + t->alen, s, n);
	t->arena[t->alen + n] = '\0';
	t->alen += n + 1;
	i = (uint32_t)mp_hash_bytes(s, n) & (t->nslots - 1);
	while (t->slots[i])
		i = (i + 1) & (t->nslots - 1);
	t->slots[i] = id;
	return id;
}

void mp_imap_free(mp_imap_t *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static int imap_grow(mp_imap_t *m)
{
	uint32_t nc = m->cap ? m->cap * 2 : 64, i, j;
	int64_t *nk = malloc(nc * sizeof(*nk));
	uint32_t *nv = malloc(nc * sizeof(*nv));
	uint8_t *nu = calloc(nc, 1);

	if (!nk || !nv || !nu || nc == 0) {
		free(nk);
		free(nv);
		free(nu);
		return MP_ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		j = (uint32_t)mp_hash64((uint64_t)m->keys[i]) & (nc - 1);
		while (nu[j])
			j = (j + 1) & (nc - 1);
		nu[j] = 1;
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	free(m->used);
	m->keys = nk;
	m->vals = nv;
	m->used = nu;
	m->cap = nc;
	return 0;
}

int mp_imap_put(mp_imap_t *m, int64_t key, uint32_t val)
{
	uint32_t i;

	if ((m->n + 1) * 2 > m->cap && imap_grow(m) < 0)
		return MP_ENOMEM;
	i = (uint32_t)mp_hash64((uint64_t)key) & (m->cap - 1);
	while (m->used[i]) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

int mp_imap_get(const mp_imap_t *m, int64_t key, uint32_t *val)
{
	uint32_t i;

	if (m->cap == 0)
		return 0;
	i = (uint32_t)mp_hash64((uint64_t)key) & (m->cap - 1);
	while (m->used[i]) {
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return 1;
		}
		i = (i + 1) & (m->cap - 1);
	}
	return 0;
}
