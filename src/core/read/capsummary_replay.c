/* capsummary_replay.c - a capture's summary (memprof/capsummary.h) from its
 * events, for a capture whose writer kept none: one written before format
 * 2.1, one whose tally ran out of memory, one killed before its first
 * round. The figures follow the rules the writer's tally follows (and the
 * solver's): a realloc is a free and an allocation, counted apart; a free
 * of an address that is not live changes nothing; an allocation at a live
 * address first drops the block there; a block's bytes in use are what the
 * allocator reserved for it, else what was requested. */
#include <memprof/capsummary.h>
#include <memprof/reader.h>

#include <stdlib.h>
#include <string.h>

typedef struct {
	uint64_t addr, used, req; /* used + 1; 0: an empty slot */
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
		if (!m->s[i].used)
			continue;
		for (j = slot_of(m->s[i].addr, cap); s[j].used; j = (j + 1) & (cap - 1))
			;
		s[j] = m->s[i];
	}
	free(m->s);
	m->s = s;
	m->cap = cap;
	return 0;
}

/* The slot of a, or the empty slot where it would go (m->cap > 0). */
static slot_t *live_find(live_t *m, uint64_t a)
{
	size_t i;

	for (i = slot_of(a, m->cap); m->s[i].used && m->s[i].addr != a; i = (i + 1) & (m->cap - 1))
		;
	return &m->s[i];
}

/* Remove the entry at e, shifting the chain after it back. */
static void live_erase(live_t *m, slot_t *e)
{
	size_t j = (size_t)(e - m->s), k, h;

	for (k = (j + 1) & (m->cap - 1); m->s[k].used; k = (k + 1) & (m->cap - 1)) {
		h = slot_of(m->s[k].addr, m->cap);
		if ((j <= k) ? (h <= j || h > k) : (h <= j && h > k)) {
			m->s[j] = m->s[k];
			j = k;
		}
	}
	m->s[j].used = 0;
	m->n--;
}

typedef struct {
	mp_summary_memory_t m;
	live_t live;
} tally_t;

/* Drop the live block at a, if there is one. */
static void drop(tally_t *t, uint64_t a)
{
	slot_t *e;

	if (!t->live.cap || !(e = live_find(&t->live, a))->used)
		return;
	t->m.live_bytes -= e->used - 1;
	t->m.live_requested -= e->req;
	live_erase(&t->live, e);
	t->m.live_blocks--;
}

static int apply(tally_t *t, const mp_event_t *ev)
{
	slot_t *e;
	uint64_t used;

	switch (ev->kind) {
	case MP_EV_DROPPED:
		t->m.dropped += ev->requested_bytes; /* its count */
		return 0;
	case MP_EV_ALLOC_FAILED:
		t->m.failed++;
		return 0;
	case MP_EV_FREE:
		t->m.frees += !(ev->flags & MP_EVENT_F_REALLOC);
		drop(t, ev->address);
		return 0;
	case MP_EV_ALLOC:
		break;
	default:
		return 0;
	}
	if (ev->flags & MP_EVENT_F_REALLOC)
		t->m.reallocs++;
	else
		t->m.allocations++;
	drop(t, ev->address);
	if ((t->live.n + 1) * 2 > t->live.cap && live_grow(&t->live))
		return MP_ENOMEM;
	used = ev->allocated_bytes ? ev->allocated_bytes : ev->requested_bytes;
	e = live_find(&t->live, ev->address);
	e->addr = ev->address;
	e->used = used + 1;
	e->req = ev->requested_bytes;
	t->live.n++;
	t->m.live_blocks++;
	t->m.live_bytes += used;
	t->m.live_requested += ev->requested_bytes;
	if (!t->m.has_peak || t->m.live_bytes > t->m.peak_bytes) {
		t->m.peak_bytes = t->m.live_bytes;
		t->m.peak_time_ns = ev->time_ns;
	}
	if (!t->m.has_peak || t->m.live_requested > t->m.peak_requested) {
		t->m.peak_requested = t->m.live_requested;
		t->m.peak_requested_time_ns = ev->time_ns;
	}
	t->m.has_peak = 1;
	return 0;
}

int mp_capture_summary_replay(const char *path, mp_capture_summary_t *out, mp_diag_t *diag)
{
	mp_capture_t *cap;
	mp_source_t *src;
	tally_t *t = NULL;
	size_t nt = 0, i;
	uint64_t last = 0;
	mp_event_t ev;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = mp_capture_open(&cap, path, diag)) < 0)
		return rc;
	src = mp_capture_source(cap);
	while ((rc = mp_source_next(src, &ev, diag)) == 1) {
		if (ev.kind == MP_EV_MEMORY)
			continue;
		out->events += ev.kind != MP_EV_DROPPED;
		last = ev.time_ns;
		if (ev.memory >= nt) {
			tally_t *g = realloc(t, (ev.memory + 1) * sizeof(*t));
			if (!g) {
				rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
				break;
			}
			memset(g + nt, 0, (ev.memory + 1 - nt) * sizeof(*t));
			t = g;
			nt = ev.memory + 1;
		}
		if ((rc = apply(&t[ev.memory], &ev)) < 0) {
			mp_diag_set(diag, rc, -1, -1, "out of memory");
			break;
		}
	}
	if (rc == 0) {
		const mp_capture_trailer_t *tr = mp_capture_trailer(cap);
		out->version_major = mp_capture_header(cap)->version_major;
		out->version_minor = mp_capture_header(cap)->version_minor;
		out->available = 1;
		out->ended_cleanly = tr && !tr->write_errno;
		out->write_errno = tr ? (int)tr->write_errno : 0;
		out->write_offset = tr ? tr->write_offset : 0;
		out->complete_ns = tr ? tr->complete_ns : 0;
		out->horizon_ns = UINT64_MAX;
		out->end_time_ns = tr ? tr->end_time_ns : last;
		out->stacks = mp_capture_stack_count(cap);
		out->blocks = mp_capture_blocks_read(cap);
		out->nmemories = mp_source_memory_count(src);
		if (out->nmemories && !(out->memories = calloc(out->nmemories, sizeof(*out->memories))))
			rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		for (i = 0; rc == 0 && i < out->nmemories; i++) {
			const mp_memory_info_t *info = mp_source_memory(src, (uint32_t)i);
			out->memories[i] = i < nt ? t[i].m : (mp_summary_memory_t){0};
			out->memories[i].id = (uint32_t)i;
			out->memories[i].kind = info->kind;
			if (!(out->memories[i].name = strdup(info->name)))
				rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		}
	}
	for (i = 0; i < nt; i++)
		free(t[i].live.s);
	free(t);
	mp_capture_close(cap);
	if (rc < 0) {
		mp_capture_summary_free(out);
		memset(out, 0, sizeof(*out));
	}
	return rc < 0 ? rc : 0;
}
