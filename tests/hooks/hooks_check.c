/* hooks_check.c - see hooks_check.h. */
#include "hooks_check.h"

#include <memprof/capture.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	uint64_t addr, size1; /* size + 1; 0 = empty */
} slot_t;

typedef struct {
	slot_t *s;
	size_t cap, n;
} map_t;

static size_t hash(uint64_t a, size_t cap)
{
	return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

static slot_t *find(map_t *m, uint64_t a)
{
	size_t i;

	for (i = hash(a, m->cap); m->s[i].size1; i = (i + 1) & (m->cap - 1))
		if (m->s[i].addr == a)
			return &m->s[i];
	return &m->s[i];
}

static int grow(map_t *m)
{
	map_t g = {calloc(m->cap * 2, sizeof(slot_t)), m->cap * 2, m->n};
	size_t i;

	if (!g.s)
		return -1;
	for (i = 0; i < m->cap; i++)
		if (m->s[i].size1)
			*find(&g, m->s[i].addr) = m->s[i];
	free(m->s);
	*m = g;
	return 0;
}

/* Remove slot e, re-inserting the rest of its probe chain. */
static void erase(map_t *m, slot_t *e)
{
	size_t i = (size_t)(e - m->s);

	e->size1 = 0;
	m->n--;
	for (i = (i + 1) & (m->cap - 1); m->s[i].size1; i = (i + 1) & (m->cap - 1)) {
		slot_t t = m->s[i];
		m->s[i].size1 = 0;
		*find(m, t.addr) = t;
	}
}

static hk_watch_t *watched(hk_stats_t *st, uint64_t size)
{
	int i;

	for (i = 0; i < st->nwatch; i++)
		if (st->watch[i].size == size)
			return &st->watch[i];
	return NULL;
}

/* The memory's regions as declared so far (base, size; a REGION_ADD at a
 * known base resizes it). */
#define HK_REGIONS 1024

typedef struct {
	uint64_t base[HK_REGIONS], size[HK_REGIONS];
	int n, overflow, any;
} regions_t;

static int region_at(const regions_t *r, uint64_t base)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (r->base[i] == base)
			return i;
	return -1;
}

static void region_event(regions_t *r, const mp_event_t *ev)
{
	int i = region_at(r, ev->address);

	if (ev->kind == MP_EV_REGION_REMOVE) {
		if (i >= 0) {
			r->n--;
			r->base[i] = r->base[r->n];
			r->size[i] = r->size[r->n];
		}
		return;
	}
	r->any = 1;
	if (i < 0) {
		if (r->n == HK_REGIONS) {
			r->overflow = 1;
			return;
		}
		i = r->n++;
		r->base[i] = ev->address;
	}
	r->size[i] = ev->requested_bytes;
}

static int inside_regions(const regions_t *r, uint64_t addr, uint64_t len)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (addr >= r->base[i] && addr - r->base[i] <= r->size[i] && len <= r->size[i] - (addr - r->base[i]))
			return 1;
	return 0;
}

int hk_replay(const char *path, hk_stats_t *st)
{
	regions_t *regions = calloc(1, sizeof(regions_t));
	const char *want = st->memory ? st->memory : "host";
	map_t live = {calloc(1024, sizeof(slot_t)), 1024, 0};
	uint64_t cur = 0, pending_old = 0;
	int64_t mem = -1;
	mp_source_t *src;
	mp_capture_t *cap;
	mp_event_t ev;
	mp_diag_t diag;
	uint32_t i;
	int rc;

	if (!live.s || !regions) {
		free(live.s);
		free(regions);
		return -1;
	}
	if (mp_capture_open_source(&src, path, &diag)) {
		fprintf(stderr, "hk_replay: %s: %s\n", path, diag.text);
		free(live.s);
		free(regions);
		return -1;
	}
	while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
		st->events++;
		if (ev.thread + 1 > st->threads)
			st->threads = ev.thread + 1;
		if (ev.kind == MP_EV_MEMORY || mem < 0) {
			st->memories = mp_source_memory_count(src);
			for (i = 0; i < st->memories; i++)
				if (!strcmp(mp_source_memory(src, i)->name, want))
					mem = i;
		}
		if (ev.kind == MP_EV_DROPPED)
			st->dropped += ev.requested_bytes;
		if ((int64_t)ev.memory != mem)
			continue;
		if (ev.kind == MP_EV_REGION_ADD || ev.kind == MP_EV_REGION_REMOVE)
			region_event(regions, &ev);
		else if (ev.kind == MP_EV_ALLOC && regions->any && !regions->overflow &&
			 !inside_regions(regions, ev.address, ev.requested_bytes))
			st->outside_regions++;
		if (st->skip_first_thread && ev.thread == 0)
			continue;
		switch (ev.kind) {
		case MP_EV_ALLOC: {
			slot_t *e;
			hk_watch_t *w = watched(st, ev.requested_bytes);
			if ((live.n + 1) * 2 > live.cap && grow(&live))
				goto fail;
			e = find(&live, ev.address);
			if (e->size1) {
				st->double_allocs++;
				cur -= e->size1 - 1;
				live.n--;
			}
			e->addr = ev.address;
			e->size1 = ev.requested_bytes + 1;
			live.n++;
			cur += ev.requested_bytes;
			if (cur > st->peak)
				st->peak = cur;
			if (ev.flags & MP_EVENT_F_REALLOC) {
				if (st->nrealloc < HK_REALLOCS) {
					hk_realloc_t *r = &st->realloc_list[st->nrealloc++];
					r->old_addr = pending_old;
					r->new_addr = ev.address;
					r->requested = ev.requested_bytes;
				}
				st->reallocs++;
			} else {
				st->allocs++;
			}
			if (w) {
				w->allocs++;
				w->allocated = ev.allocated_bytes;
				if (w->align && ev.address % w->align)
					w->misaligned++;
				w->op = ev.op;
				snprintf(w->op_name, sizeof(w->op_name), "%s", mp_source_string(src, ev.op));
			}
			break;
		}
		case MP_EV_FREE: {
			slot_t *e = find(&live, ev.address);
			if (ev.flags & MP_EVENT_F_REALLOC)
				pending_old = ev.address;
			else
				st->frees++;
			if (!e->size1) {
				st->unknown_frees++;
				break;
			}
			if (!(ev.flags & MP_EVENT_F_REALLOC)) {
				hk_watch_t *w = watched(st, e->size1 - 1);
				if (w)
					w->frees++;
			}
			cur -= e->size1 - 1;
			erase(&live, e);
			break;
		}
		case MP_EV_ALLOC_FAILED:
			if (st->nfailed < 8)
				st->failed_req[st->nfailed++] = ev.requested_bytes;
			st->failed++;
			break;
		case MP_EV_REGION_ADD:
			st->regions_added++;
			break;
		case MP_EV_REGION_REMOVE:
			st->regions_removed++;
			break;
		default:
			break;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "hk_replay: %s: %s\n", path, diag.text);
		goto fail;
	}
	if (regions->overflow) {
		/* outside_regions would have stopped counting: not a silent pass */
		fprintf(stderr, "hk_replay: %s: more than %d regions at once (raise HK_REGIONS)\n", path, HK_REGIONS);
		goto fail;
	}
	cap = mp_capture_from_source(src);
	(void)cap;
	st->abrupt = mp_source_end_status(src) == MP_END_ABRUPT;
	st->live_blocks = live.n;
	st->live_bytes = cur;
	free(live.s);
	free(regions);
	mp_source_close(src);
	return 0;
fail:
	free(live.s);
	free(regions);
	mp_source_close(src);
	return -1;
}
