/* wback.c - where a checkpoint's seek decodes from (format 3.0,
 * MP_CKPT_F_BACK; docs/format.md "Checkpoint", item 10): per thread, the
 * blocks of the pieces the flusher has encoded but the tally has not
 * wholly counted. A round's chunks carry every record in the rings, also
 * those at or past its horizon; a lane's hold (the CUDA lane's times lag)
 * can keep the horizon back for many rounds, and a lane's events ahead of
 * the clock wait until it passes them, so the events a checkpoint does
 * not cover can be in blocks far before its own. Flusher only. */
#include "writer_internal.h"

#include <string.h>

/* (3.0) Thread t's records up to ring position end are in block `block`
 * (a checkpoint's BACK). One entry a block; when full, the two
 * oldest become one, in the older block: a seek then decodes a little
 * more, never less. */
void mp__writer_note_piece(mp_wthread_t *t, uint64_t end, uint32_t block)
{
	if (t->npend && t->pend_block[t->npend - 1] == block) {
		t->pend_end[t->npend - 1] = end;
		return;
	}
	if (t->npend == MP_PEND_PIECES) {
		t->pend_end[0] = t->pend_end[1];
		memmove(&t->pend_end[1], &t->pend_end[2], (MP_PEND_PIECES - 2) * sizeof(t->pend_end[0]));
		memmove(&t->pend_block[1], &t->pend_block[2], (MP_PEND_PIECES - 2) * sizeof(t->pend_block[0]));
		t->npend--;
	}
	t->pend_end[t->npend] = end;
	t->pend_block[t->npend++] = block;
}

uint32_t mp__writer_ckpt_back(mp_writer_t *w)
{
	uint32_t first = UINT32_MAX;

	/* (the list only grows at its head: read without the lock; the
	 * entries are the flusher's) */
	for (mp_wthread_t *t = atomic_load_explicit(&w->threads, memory_order_acquire); t; t = t->next) {
		uint32_t k = 0;
		while (k < t->npend && t->pend_end[k] <= t->tallied)
			k++;
		if (k) { /* wholly tallied: covered by what ends this round */
			memmove(t->pend_end, t->pend_end + k, (t->npend - k) * sizeof(t->pend_end[0]));
			memmove(t->pend_block, t->pend_block + k, (t->npend - k) * sizeof(t->pend_block[0]));
			t->npend -= k;
		}
		/* (a block of a previous segment, --keep: not in this one) */
		if (t->npend && t->pend_block[0] < first && t->pend_block[0] < w->block_index)
			first = t->pend_block[0];
	}
	return first == UINT32_MAX ? 0 : w->block_index - first;
}

