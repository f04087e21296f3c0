/* run_tally.c - one capture's figures for a run (run_internal.h), from its
 * events: the replay a capture without a summary needs. Bytes in use per
 * memory id, as the solver counts them: a block's footprint is what the
 * allocator reserved for it (else what was requested), live from its
 * allocation to its free; a free of an address that is not live, and the
 * second allocation at a live address, change nothing. */
#include "run_internal.h"

#include <memprof/reader.h>

#include <stdlib.h>
#include <string.h>

typedef struct {
	uint64_t addr, size; /* size + 1; 0: an empty slot */
} slot_t;

typedef struct {
	slot_t *s;
	size_t cap, n;
} live_t;

static size_t slot_of(uint64_t a, size_t cap)
{
	return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

static int live_grow(live_t *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024, i, j;
	slot_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return -1;
	for (i = 0; i < m->cap; i++) {
		if (!m->s[i].size)
			continue;
		for (j = slot_of(m->s[i].addr, cap); s[j].size; j = (j + 1) & (cap - 1))
			;
		s[j] = m->s[i];
	}
	free(m->s);
	m->s = s;
	m->cap = cap;
	return 0;
}

/* The slot of a, or the empty slot where it would go. */
static slot_t *live_find(live_t *m, uint64_t a)
{
	size_t i;

	for (i = slot_of(a, m->cap); m->s[i].size && m->s[i].addr != a; i = (i + 1) & (m->cap - 1))
		;
	return &m->s[i];
}

/* Remove the entry at e, shifting the chain after it back. */
static void live_erase(live_t *m, slot_t *e)
{
	size_t j = (size_t)(e - m->s), k, h;

	for (k = (j + 1) & (m->cap - 1); m->s[k].size; k = (k + 1) & (m->cap - 1)) {
		h = slot_of(m->s[k].addr, m->cap);
		if ((j <= k) ? (h <= j || h > k) : (h <= j && h > k)) {
			m->s[j] = m->s[k];
			j = k;
		}
	}
	m->s[j].size = 0;
	m->n--;
}

typedef struct {
	mp_run_memory_t fig;
	live_t live;
} tally_t;

int mp__run_tally(mp_capture_t *cap, mp__run_figures_t *out, mp_diag_t *diag)
{
	mp_source_t *src = mp_capture_source(cap);
	tally_t *t = NULL;
	size_t nt = 0, i;
	mp_event_t ev;
	int rc;

	memset(out, 0, sizeof(*out));
	while ((rc = mp_source_next(src, &ev, diag)) == 1) {
		tally_t *m;
		slot_t *e;
		uint64_t fp; /* the block's footprint, as the solver counts it */

		out->events++;
		out->last_time_ns = ev.time_ns;
		if (ev.kind != MP_EV_ALLOC && ev.kind != MP_EV_FREE)
			continue;
		if (ev.memory >= nt) {
			tally_t *g = realloc(t, (ev.memory + 1) * sizeof(*t));
			if (!g) {
				rc = MP_ENOMEM;
				break;
			}
			memset(g + nt, 0, (ev.memory + 1 - nt) * sizeof(*t));
			t = g;
			nt = ev.memory + 1;
		}
		m = &t[ev.memory];
		fp = ev.allocated_bytes ? ev.allocated_bytes : ev.requested_bytes;
		if (ev.kind == MP_EV_ALLOC) {
			m->fig.allocations++; /* a realloc's halves count, as report counts them */
			if ((m->live.n + 1) * 2 > m->live.cap && live_grow(&m->live)) {
				rc = MP_ENOMEM;
				break;
			}
			e = live_find(&m->live, ev.address);
			if (e->size)
				continue; /* a second allocation at a live address */
			e->addr = ev.address;
			e->size = fp + 1;
			m->live.n++;
			m->fig.live_bytes += fp;
			if (m->fig.live_bytes > m->fig.peak_bytes)
				m->fig.peak_bytes = m->fig.live_bytes;
		} else {
			m->fig.frees++;
			if (!m->live.cap || !(e = live_find(&m->live, ev.address))->size)
				continue;
			m->fig.live_bytes -= e->size - 1;
			live_erase(&m->live, e);
		}
	}
	if (rc == 0) {
		out->clean = mp_source_end_status(src) == MP_END_CLEAN;
		out->memory_count = mp_source_memory_count(src);
		if (out->memory_count && !(out->memories = calloc(out->memory_count, sizeof(*out->memories))))
			rc = MP_ENOMEM;
		for (i = 0; rc == 0 && i < out->memory_count; i++) {
			out->memories[i] = i < nt ? t[i].fig : (mp_run_memory_t){0};
			if (!(out->memories[i].name = strdup(mp_source_memory(src, (uint32_t)i)->name)))
				rc = MP_ENOMEM;
			out->memories[i].live_blocks = i < nt ? t[i].live.n : 0;
		}
	}
	for (i = 0; i < nt; i++)
		free(t[i].live.s);
	free(t);
	return rc < 0 ? rc : 0;
}
