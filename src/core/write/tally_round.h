/* tally_round.h - what the round's loops (tally_round.c) and their
 * decoder (tally_decode.c) share (internal): the events as the loops take
 * them, and each thread's cursor over its ring. */
#ifndef MP_TALLY_ROUND_H
#define MP_TALLY_ROUND_H

#include "tally.h"
#include "writer_internal.h"

/* A decoded event: an allocation or free at an address below 2^53, or
 * (key 0) any other, whole in the cursor's side array at fp. */
typedef struct {
	uint64_t ns;
	uint64_t key; /* mp__tally_key: below MP_TALLY_HIGH, its top bits mem + 1 */
	uint64_t fp;  /* an allocation's footprint (below 2^40) | its tag << 40 (2.5, below
		       * 2^23); a free: top bit set */
	uint64_t req; /* a free: 0 */
} mp_tally_tev_t;

#define MP_TALLY_ADDR_MASK ((1ull << MP_TALLY_KEY_BITS) - 1)
/* (2.5) a decoded event's fp: the footprint's bits, and the tag's above */
#define MP_TALLY_FP_BITS 40
#define MP_TALLY_FP_MASK ((1ull << MP_TALLY_FP_BITS) - 1)
#define MP_TALLY_TAG_FAST (1u << 23) /* tags from this id on go as side events */

typedef struct {
	mp_wthread_t *t;
	uint64_t pos, end;   /* ring bytes: the next record to decode, where the round stops */
	uint64_t last;       /* the time of the last record decoded (times never go back) */
	clock_cache_t cc;
	mp_tally_tev_t *ev;  /* decoded, not yet taken: ev[head..n) */
	mp_tally_ev_t *side; /* the batch's other events (as many as ev can hold) */
	uint32_t head, n, cap;
	uint32_t index;      /* the thread's */
	uint32_t mem;        /* the memory id of the last allocation or free decoded */
	int done;            /* no record earlier than the horizon left to decode */
} mp_tally_cursor_t;

/* Decode c's records into c->ev (emptied first) until it holds cap - 1
 * events or more (a REALLOC gives two), or no record earlier than the
 * horizon is left (c->done), counting allocations, frees and reallocs,
 * and hand their ring space back. Room in the table is made for them
 * first. Returns -1 on a record that does not parse (a writer bug),
 * -ENOMEM, else 0. */
int mp__tally_refill(mp_tally_t *ty, mp_tally_cursor_t *c, uint64_t horizon);

#endif
