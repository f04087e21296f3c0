/* strtab.c - see memprof/strtab.h. */
#include <memprof/strtab.h>
#include <memprof/vec.h>

#include <stdlib.h>
#include <string.h>

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
		if (MP_VEC_RESERVE(t->offs, t->ocap, 64) < 0 || MP_VEC_RESERVE(t->arena, t->acap, 64) < 0)
			return UINT32_MAX;
		t->arena[0] = '\0';
		t->alen = 1;
		t->offs[0] = 0;
		t->count = 1;
	}
	if ((t->count + 1) * 2 > t->nslots && grow_slots(t) < 0)
		return UINT32_MAX;
	if (t->alen + n + 1 > UINT32_MAX || t->count == UINT32_MAX - 1)
		return UINT32_MAX;
	if (MP_VEC_RESERVE(t->arena, t->acap, t->alen + n + 1) < 0 ||
	    MP_VEC_RESERVE(t->offs, t->ocap, (size_t)t->count + 1) < 0)
		return UINT32_MAX;
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
