/* report_window.c - the window of a run (report_window.h): the solver
 * seeded with the state at the window's start, its counters zero, then
 * fed the window's events. A kept run's state is its first checkpoint
 * (the segment's, written by the recorder); a full capture's is replayed
 * here from its first N events, by the solver's rules for blocks (an
 * allocation at a live address replaces the block, a free of an address
 * not live changes nothing) and regions (the live-set engine's), so that
 * the two meet: the test records both and compares the reports. */
#include "report_window.h"

#include <memprof/checkpoint.h>
#include <memprof/format.h>
#include <memprof/keep.h>
#include <memprof/live.h>
#include <memprof/reader.h>
#include <memprof/seed_checkpoint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the readers add to the recorded events: not counted in N. */
static int synthetic(const mp_event_t *ev)
{
	return ev->kind == MP_EV_MEMORY || ev->kind == MP_EV_DROPPED;
}

/* ---- a full capture's state after its first N events ---- */

typedef struct win_mem {
	mp_live_t live;            /* group: the block's index in blocks */
	mp_live_regions_t reg;
	int regions_seen;
	mp_solver_seed_block_t *blocks; /* by group; a dropped one's slot is reused */
	uint32_t *free_slots;
	size_t nblocks, nfree, cap, cap_free;
} win_mem_t;

typedef struct win_src {
	mp_source_t base;
	mp_source_t *in;    /* owned */
	uint64_t n;         /* the window's start */
	uint64_t at;        /* the events before w->in's first: its checkpoint's (0: none) */
	mp_event_t *decl;   /* the prefix's memory declarations, re-given numbered from n */
	size_t ndecl, cap_decl, next_decl;
	/* the state (built once) */
	win_mem_t *mem;
	uint32_t nmem;
	uint32_t last_mark, phases[64], nphase;
} win_src_t;

static int drop_block(win_mem_t *m, lm_entry_t *e)
{
	if (m->nfree == m->cap_free) {
		size_t c = m->cap_free ? 2 * m->cap_free : 64;
		uint32_t *p = realloc(m->free_slots, c * sizeof(*p));
		if (!p)
			return MP_ENOMEM;
		m->free_slots = p;
		m->cap_free = c;
	}
	m->free_slots[m->nfree++] = e->group;
	mp_live_drop(&m->live, e);
	return 0;
}

/* Block b made live in m (one at its address dropped first). */
static int add_block(win_mem_t *m, const mp_solver_seed_block_t *b)
{
	lm_entry_t *e = mp_live_alloc_replaces(&m->live, b->address);
	uint32_t slot;

	if (e && drop_block(m, e) < 0)
		return MP_ENOMEM;
	if (m->nfree) {
		slot = m->free_slots[--m->nfree];
	} else {
		if (m->nblocks == m->cap) {
			size_t c = m->cap ? 2 * m->cap : 256;
			mp_solver_seed_block_t *p = realloc(m->blocks, c * sizeof(*p));
			if (!p)
				return MP_ENOMEM;
			m->blocks = p;
			m->cap = c;
		}
		slot = (uint32_t)m->nblocks++;
	}
	m->blocks[slot] = *b;
	return mp_live_add(&m->live, b->address, mp_live_footprint(b->requested_bytes, b->allocated_bytes), slot, 0);
}

static int apply_alloc(win_mem_t *m, const mp_event_t *ev)
{
	mp_solver_seed_block_t b = {ev->address, ev->requested_bytes, ev->allocated_bytes, ev->op, ev->dtype, ev->shape,
				    ev->metadata, ev->region, ev->stack};

	return add_block(m, &b);
}

/* The solver's phase rule (solver.c, phase_mark), within 64 names. */
static void phase_mark(win_src_t *w, const mp_event_t *ev)
{
	const uint32_t max = sizeof(w->phases) / sizeof(w->phases[0]);
	uint32_t kept = w->nphase < max ? w->nphase : max;

	if (ev->flags & MP_EVENT_F_PHASE_BEGIN) {
		if (w->nphase < max)
			w->phases[w->nphase] = ev->label;
		w->nphase++;
		return;
	}
	if (w->nphase > max) {
		w->nphase--;
		return;
	}
	for (uint32_t i = kept; i-- > 0;)
		if (w->phases[i] == ev->label) {
			w->nphase = i;
			return;
		}
}

static win_mem_t *mem_of(win_src_t *w, uint32_t id)
{
	if (id >= 65536)
		return NULL;
	if (id >= w->nmem) {
		win_mem_t *p = realloc(w->mem, (id + 1) * sizeof(*p));
		if (!p)
			return NULL;
		memset(p + w->nmem, 0, (id + 1 - w->nmem) * sizeof(*p));
		for (uint32_t i = w->nmem; i <= id; i++) {
			mp_live_init(&p[i].live);
			mp_live_regions_init(&p[i].reg);
		}
		w->mem = p;
		w->nmem = id + 1;
	}
	return &w->mem[id];
}

static int apply(win_src_t *w, const mp_event_t *ev)
{
	win_mem_t *m;
	size_t pos;
	uint64_t old;

	if (ev->kind == MP_EV_MARK) {
		if (ev->flags & (MP_EVENT_F_PHASE_BEGIN | MP_EVENT_F_PHASE_END))
			phase_mark(w, ev);
		else
			w->last_mark = ev->label;
		return 0;
	}
	if (ev->kind != MP_EV_ALLOC && ev->kind != MP_EV_FREE && ev->kind != MP_EV_REGION_ADD &&
	    ev->kind != MP_EV_REGION_REMOVE)
		return 0;
	if (!(m = mem_of(w, ev->memory)))
		return MP_ENOMEM;
	switch (ev->kind) {
	case MP_EV_ALLOC:
		return apply_alloc(m, ev);
	case MP_EV_FREE: {
		lm_entry_t *e = mp_live_free_finds(&m->live, ev->address);
		return e ? drop_block(m, e) : 0;
	}
	case MP_EV_REGION_ADD:
		m->regions_seen = 1;
		return mp_live_region_add(&m->reg, ev->address, ev->requested_bytes, &pos, &old) < 0 ? MP_ENOMEM : 0;
	default:
		mp_live_region_remove(&m->reg, ev->address, &old);
		return 0;
	}
}

/* Read the first n events of w->in (and its declarations among them);
 * build: the state too. */
static int skip_prefix(win_src_t *w, int build, mp_diag_t *diag)
{
	uint64_t real = w->at;
	mp_event_t ev;
	int rc;

	w->ndecl = w->next_decl = 0;
	while (real < w->n) {
		if ((rc = mp_source_next(w->in, &ev, diag)) <= 0)
			return rc < 0 ? rc : mp_diag_set(diag, MP_EUSAGE, -1, -1, "--from-event: the capture has fewer events");
		if (ev.kind == MP_EV_MEMORY) {
			if (w->ndecl == w->cap_decl) {
				size_t c = w->cap_decl ? 2 * w->cap_decl : 8;
				mp_event_t *p = realloc(w->decl, c * sizeof(*p));
				if (!p)
					return MP_ENOMEM;
				w->decl = p;
				w->cap_decl = c;
			}
			w->decl[w->ndecl++] = ev;
		}
		if (synthetic(&ev))
			continue;
		real++;
		if (build && (rc = apply(w, &ev)) < 0)
			return mp_diag_set(diag, rc, -1, -1, "out of memory");
	}
	return 0;
}

/* The call stacks a sought capture defines in the blocks from where its
 * seek decodes up to its checkpoint's (read with their chunks, after the
 * seek), loaded before the checkpoint's blocks ask for their frames' ops:
 * the first event the seek returns comes after them, so one is read
 * (the memory declarations before it aside), then the source rewound to
 * the checkpoint (the definitions stay). Only when a block has a stack. */
static int load_stacks(mp_source_t *src, const mp_checkpoint_t *ck, mp_diag_t *diag)
{
	mp_event_t ev;
	size_t k;
	int rc;

	for (k = 0; k < ck->nblocks && !ck->blocks[k].stack; k++)
		;
	if (k == ck->nblocks)
		return 0;
	while ((rc = mp_source_next(src, &ev, diag)) == 1 && synthetic(&ev))
		;
	return rc < 0 ? rc : mp_source_rewind(src, diag);
}

/* The state of checkpoint ck into w (empty): its blocks with their tags
 * (as a kept window's seed has them: mp_checkpoint_seed), its regions,
 * its last mark. */
static int state_of_checkpoint(win_src_t *w, const mp_checkpoint_t *ck)
{
	win_mem_t *m;
	size_t pos;
	uint64_t old;
	int rc;

	for (size_t i = 0; i < ck->nmemories; i++) {
		const mp_checkpoint_memory_t *cm = &ck->memories[i];
		if (!(m = mem_of(w, cm->id)))
			return MP_ENOMEM;
		for (size_t k = 0; k < cm->nblocks; k++) {
			const mp_checkpoint_block_t *x = &cm->blocks[k];
			mp_solver_seed_block_t b = {.address = x->address, .requested_bytes = x->requested,
						    .allocated_bytes = x->bytes, .op = x->op, .dtype = x->dtype,
						    .shape = x->shape, .region = x->region, .stack = x->stack};
			if (!b.op && b.stack) /* (as the reader gives its allocation) */
				b.op = mp_capture_stack_op(mp_capture_from_source(w->in), b.stack);
			if ((rc = add_block(m, &b)) < 0)
				return rc;
		}
	}
	for (size_t i = 0; i < ck->nregions; i++) {
		if (!(m = mem_of(w, ck->regions[i].memory)) ||
		    mp_live_region_add(&m->reg, ck->regions[i].base, ck->regions[i].end - ck->regions[i].base, &pos, &old) < 0)
			return MP_ENOMEM;
		m->regions_seen = 1;
	}
	for (uint32_t id = 0; id < ck->nfigures && id < w->nmem; id++)
		w->mem[id].regions_seen |= ck->figures[id].regions_seen;
	w->last_mark = ck->last_mark;
	return 0;
}

/* (issue 43) Start w's prefix at the last good checkpoint at or before
 * event n, rather than at the first event: the checkpoint's live set is
 * the full replay's after its `events` (the reader checked it against its
 * round's SUMMARY), with the blocks' tags and the last mark. 1 when w->in
 * is sought there (w->at, the state set), 0 when none fits (a capture
 * without checkpoints, tags or last mark: from the first event), or an
 * error. A capture holds no phases (its MARK records have none), so
 * the checkpoint lacks nothing the state needs. */
static int from_checkpoint(win_src_t *w, mp_diag_t *diag)
{
	mp_capture_t *cap = mp_capture_from_source(w->in);
	mp_capture_round_end_t *re = NULL;
	mp_checkpoint_t ck;
	size_t nre = 0;
	int rc = 0, got = 0;
	const char *say = getenv("MEMPROF_SEEK_SAY");

	if (!cap || (rc = mp_capture_round_ends(cap, &re, &nre, diag)) < 0)
		return rc;
	for (size_t i = nre; i-- > 0 && !got;) {
		if ((rc = mp_capture_checkpoint_at(cap, &re[i], &ck, diag)) < 0)
			break;
		if (rc == 1 && ck.events <= w->n && (ck.flags & (MP_CKPT_F_TAGS | MP_CKPT_F_UNTAGGED)) &&
		    (ck.flags & MP_CKPT_F_LAST_MARK))
			got = 1;
		else if (rc == 1)
			mp_checkpoint_free(&ck);
	}
	free(re);
	if (rc < 0 || !got)
		return rc < 0 ? rc : 0;
	if ((rc = mp_capture_seek(cap, &ck, diag)) == 0 && (rc = load_stacks(w->in, &ck, diag)) == 0 &&
	    (rc = state_of_checkpoint(w, &ck)) < 0)
		mp_diag_set(diag, rc, -1, -1, "out of memory");
	if (rc == 0) {
		w->at = ck.events;
		if (say && !strcmp(say, "1"))
			fprintf(stderr, "memprof: %s: the window's state from the checkpoint at event %llu\n", w->in->path,
				(unsigned long long)ck.events);
	}
	mp_checkpoint_free(&ck);
	return rc < 0 ? rc : 1;
}

static int w_next(mp_source_t *s, mp_event_t *ev, mp_diag_t *diag)
{
	win_src_t *w = (win_src_t *)s;

	if (w->next_decl < w->ndecl) { /* as a seek gives them: numbered from n */
		*ev = w->decl[w->next_decl];
		ev->index = w->n + w->next_decl++;
		return 1;
	}
	return mp_source_next(w->in, ev, diag);
}

static int w_rewind(mp_source_t *s, mp_diag_t *diag)
{
	win_src_t *w = (win_src_t *)s;
	int rc = mp_source_rewind(w->in, diag);

	return rc < 0 ? rc : skip_prefix(w, 0, diag);
}

static const char *w_string(const mp_source_t *s, uint32_t id) { return mp_source_string(((const win_src_t *)s)->in, id); }
static const mp_memory_info_t *w_memory(const mp_source_t *s, uint32_t id)
{
	return mp_source_memory(((const win_src_t *)s)->in, id);
}
static uint32_t w_memory_count(const mp_source_t *s)
{
	const win_src_t *w = (const win_src_t *)s;
	return w->in->ops->memory_count(w->in);
}
static mp_end_status_t w_end_status(const mp_source_t *s)
{
	const win_src_t *w = (const win_src_t *)s;
	return w->in->ops->end_status(w->in);
}
static size_t w_notes(const mp_source_t *s, const mp_source_note_t **out)
{
	return mp_source_notes(((const win_src_t *)s)->in, out);
}
/* (a capture's stacks are its own: symbolized by the report) */
static mp_capture_t *w_capture(mp_source_t *s) { return mp_capture_from_source(((win_src_t *)s)->in); }
static const char *w_time_unit(const mp_source_t *s) { return mp_source_time_unit(((const win_src_t *)s)->in); }

static void free_state(win_src_t *w)
{
	for (uint32_t i = 0; i < w->nmem; i++) {
		mp_live_destroy(&w->mem[i].live);
		mp_live_regions_destroy(&w->mem[i].reg);
		free(w->mem[i].blocks);
		free(w->mem[i].free_slots);
	}
	free(w->mem);
	w->mem = NULL;
	w->nmem = 0;
}

static void w_close(mp_source_t *s)
{
	win_src_t *w = (win_src_t *)s;

	free_state(w);
	free(w->decl);
	mp_source_close(w->in);
	free(w);
}

static const mp_source_ops_t w_ops = {
	.next = w_next,
	.rewind = w_rewind,
	.string = w_string,
	.memory = w_memory,
	.memory_count = w_memory_count,
	.end_status = w_end_status,
	.close = w_close,
	.time_unit = w_time_unit,
	.notes = w_notes,
	.capture = w_capture,
};

/* The seed of w's state (zero counters): arrays into *b (freed by
 * mp_checkpoint_seed_free). */
static int seed_of_state(const win_src_t *w, mp_checkpoint_seed_t *b)
{
	size_t nb = 0, nr = 0, kb = 0, kr = 0;

	for (uint32_t i = 0; i < w->nmem; i++)
		nb += w->mem[i].live.map.count, nr += w->mem[i].reg.n;
	b->mem = calloc(w->nmem ? w->nmem : 1, sizeof(*b->mem));
	b->blocks = calloc(nb ? nb : 1, sizeof(*b->blocks));
	b->regions = calloc(nr ? nr : 1, sizeof(*b->regions));
	if (!b->mem || !b->blocks || !b->regions)
		return MP_ENOMEM;
	for (uint32_t i = 0; i < w->nmem; i++) {
		const win_mem_t *m = &w->mem[i];
		mp_solver_seed_memory_t *sm = &b->mem[i];
		sm->id = i;
		sm->blocks = b->blocks + kb;
		sm->regions = b->regions + kr;
		sm->regions_seen = m->regions_seen;
		for (size_t k = 0; k < m->live.map.cap; k++)
			if (m->live.map.slots[k].group != LM_EMPTY)
				b->blocks[kb + sm->nblocks++] = m->blocks[m->live.map.slots[k].group];
		for (size_t k = 0; k < m->reg.n; k++)
			b->regions[kr + sm->nregions++] =
				(mp_solver_seed_region_t){m->reg.r[k].base, m->reg.r[k].end - m->reg.r[k].base};
		kb += sm->nblocks;
		kr += sm->nregions;
	}
	b->seed = (mp_solver_seed_t){.events = w->n, .last_mark = w->last_mark, .phases = w->phases,
				     .nphases = w->nphase < 64 ? w->nphase : 64, .memories = b->mem, .nmemories = w->nmem};
	return 0;
}

/* The figures of the events before the window: zero (its counters count
 * its own events); the state stays. */
static void zero_figures(mp_checkpoint_seed_t *b)
{
	for (size_t i = 0; i < b->seed.nmemories; i++) {
		mp_solver_seed_memory_t *m = &b->mem[i];
		m->events = m->allocations = m->deallocations = m->failed_allocations = m->dropped_events = 0;
		m->unknown_frees = m->duplicate_allocations = m->rejected_regions = m->lifetime_peak_bytes = 0;
		m->has_peak = 0;
		m->peak_bytes = 0;
		m->has_reserved_peak = 0;
		m->reserved_peak_bytes = m->reserved_peak_time_ns = 0;
		m->reserved_peak_event = UINT64_MAX;
	}
	b->seed.dropped_unattributed = 0;
	b->seed.phase_marks = 0;
}

int cli_window_kept_source(const char *path, const cli_inputs_options_t *o, mp_source_t **src, mp_checkpoint_t *ck,
			   mp_diag_t *diag)
{
	mp_keep_run_t *k;
	int rc;

	*src = NULL;
	memset(ck, 0, sizeof(*ck));
	if ((rc = mp_keep_open(&k, path, diag)) < 0)
		return rc;
	rc = mp_keep_window_checkpoint(k, ck, diag);
	mp_keep_close(k);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	/* (block 0 of the first segment: block 0 of the joined stream) */
	if ((rc = mp_capture_open_source(src, path, diag)) < 0)
		goto fail;
	if (o) /* (before the seek reads the stacks) */
		cli_capture_frame_ops(mp_capture_from_source(*src), o);
	/* (the seek keeps every event after the checkpoint's block, those of
	 * a lane behind its horizon too: seek.c) */
	if ((rc = mp_capture_seek(mp_capture_from_source(*src), ck, diag)) < 0)
		goto fail;
	return 1;
fail:
	if (*src)
		mp_source_close(*src);
	*src = NULL;
	mp_checkpoint_free(ck);
	return rc;
}

/* The blocks of b that have a stack and no op: their frames' op, as the
 * reader gives an allocation read with them (cli_capture_frame_ops). */
static void frame_ops_of(mp_source_t *src, mp_checkpoint_seed_t *b)
{
	mp_capture_t *cap = mp_capture_from_source(src);

	for (size_t i = 0; i < b->seed.nmemories; i++)
		for (size_t k = 0; k < b->mem[i].nblocks; k++) {
			mp_solver_seed_block_t *x = &b->blocks[(size_t)(b->mem[i].blocks - b->blocks) + k];
			if (!x->op && x->stack)
				x->op = mp_capture_stack_op(cap, x->stack);
		}
}

/* A kept run's window: its source and the seed of its first checkpoint;
 * 0 when it starts at the process's start. */
static int kept_window(const char *path, const cli_inputs_options_t *o, mp_source_t **src, mp_checkpoint_seed_t *b,
		       uint64_t *n, mp_diag_t *diag)
{
	mp_checkpoint_t ck;
	int rc = cli_window_kept_source(path, o, src, &ck, diag);

	if (rc <= 0)
		return rc;
	*n = ck.events;
	if ((rc = load_stacks(*src, &ck, diag)) == 0 && (rc = mp_checkpoint_seed(&ck, NULL, b)) == 0)
		frame_ops_of(*src, b);
	mp_checkpoint_free(&ck);
	return rc < 0 ? rc : 1;
}

int cli_window_solve(const char *path, const cli_inputs_options_t *o, mp_source_t **src_out, mp_solver_t **solver_out,
		     uint64_t *start, mp_checkpoint_seed_t *seed_out, mp_diag_t *diag)
{
	const mp_solver_options_t *opt = o->solver;
	int from_set = o->from_set, replay = o->window_replay;
	uint64_t from_event = o->from_event;
	mp_checkpoint_seed_t b;
	mp_source_t *src = NULL;
	mp_solver_t *s = NULL;
	win_src_t *w;
	int rc = 0;

	*src_out = NULL;
	*solver_out = NULL;
	memset(&b, 0, sizeof(b));
	if (!from_set) {
		if (!mp_keep_is_run(path) || (rc = kept_window(path, o, &src, &b, start, diag)) <= 0)
			goto out;
	} else {
		if (mp_keep_is_run(path)) /* (its events start at its checkpoint, not at the process's start) */
			return mp_diag_set(diag, MP_EUSAGE, -1, -1,
					   "--from-event applies to full captures: a kept run's window starts at its checkpoint");
		if (!(w = calloc(1, sizeof(*w))))
			return mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		w->base.ops = &w_ops;
		w->n = *start = from_event;
		src = &w->base;
		if ((rc = mp_capture_open_source(&w->in, path, diag)) < 0) {
			free(w);
			return rc;
		}
		w->base.path = w->in->path;
		cli_capture_frame_ops(mp_capture_from_source(w->in), o);
		if ((!replay && (rc = from_checkpoint(w, diag)) < 0) || (rc = skip_prefix(w, 1, diag)) < 0 ||
		    (rc = seed_of_state(w, &b)) < 0)
			goto out;
		free_state(w); /* (the seed holds a copy) */
	}
	zero_figures(&b);
	rc = MP_ENOMEM;
	if (!(s = mp_solver_new(opt)) || (rc = mp_solver_seed(s, &b.seed, diag)) < 0 ||
	    (rc = mp_solver_run(s, src, diag)) < 0)
		goto out;
	*src_out = src;
	*solver_out = s;
	*seed_out = b;
	memset(&b, 0, sizeof(b));
	src = NULL;
	s = NULL;
	rc = 1;
out:
	mp_checkpoint_seed_free(&b);
	mp_solver_free(s);
	if (src)
		mp_source_close(src);
	return rc;
}
