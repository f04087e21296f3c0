/* chunks.c - the decoded chunks' memory: a new chunk, or a spare one the
 * merge reused, and its release. Below both merge.c (which queues chunks)
 * and decode.c (which releases each one it has read): neither calls the
 * other through here (see reader_internal.h). */
#include "reader_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

void mp__chunk_free(mp_chunk_t *c)
{
	free(c->hist);
	free(c->fhist);
	free(c);
}

/* Room rounded up to a power of two, so that a spare fits most chunks. */
mp_chunk_t *mp__chunk_new(mp_merge_t *m, size_t len)
{
	size_t room = 4096;
	mp_chunk_t *c;
	uint32_t i;

	for (i = 0; i < m->nspare; i++) {
		if (m->spare[i]->room >= len) {
			c = m->spare[i];
			m->spare[i] = m->spare[--m->nspare];
			c->nhist = c->nfhist = 0;
			return c;
		}
	}
	while (room < len)
		room *= 2;
	if (room > SIZE_MAX - sizeof(*c) || !(c = malloc(sizeof(*c) + room)))
		return NULL;
	c->room = room;
	c->hist = c->fhist = NULL;
	c->nhist = c->cap_hist = c->nfhist = c->cap_fhist = 0;
	return c;
}

/* Spares are kept up to this size: the writer's chunks are a few hundred
 * KB (a 512 KiB piece of a ring), and a bigger one in some other file must
 * not stay held after use. */
#define SPARE_MAX (4u << 20)

void mp__chunk_release(mp_merge_t *m, mp_chunk_t *c)
{
	if (m->nspare < sizeof(m->spare) / sizeof(m->spare[0]) && c->room <= SPARE_MAX &&
	    c->cap_hist + c->cap_fhist <= SPARE_MAX / sizeof(uint64_t))
		m->spare[m->nspare++] = c;
	else
		mp__chunk_free(c);
}
