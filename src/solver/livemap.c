/* livemap.c - the solver's group table (see livemap.h). */
#include "livemap.h"

#include <memprof/error.h>
#include <memprof/vec.h>

#include <stdlib.h>
#include <string.h>

/* ---- groups ---- */

void grp_init(grp_table_t *t)
{
	memset(t, 0, sizeof(*t));
}

void grp_destroy(grp_table_t *t)
{
	free(t->g);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static int grp_rehash(grp_table_t *t, size_t ncap)
{
	uint32_t *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return MP_ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = (size_t)grp_hash(&t->g[i].key) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = (uint32_t)(i + 1);
	}
	free(t->slot);
	t->slot = ns;
	t->scap = ncap;
	return 0;
}

uint32_t grp_add(grp_table_t *t, const grp_key_t *key)
{
	size_t j;

	if (t->n >= UINT32_MAX - 2)
		return LM_EMPTY;
	if ((t->n + 1) * 2 > t->scap && grp_rehash(t, t->scap ? t->scap * 2 : 64) < 0)
		return LM_EMPTY;
	if (MP_VEC_RESERVE(t->g, t->gcap, t->n + 1) < 0)
		return LM_EMPTY;
	t->g[t->n].key = *key;
	t->g[t->n].live = 0;
	t->g[t->n].at_peak = 0;
	t->g[t->n].dirty = 0;
	for (j = (size_t)grp_hash(key) & (t->scap - 1); t->slot[j]; j = (j + 1) & (t->scap - 1))
		;
	t->slot[j] = (uint32_t)(t->n + 1);
	return (uint32_t)t->n++;
}
