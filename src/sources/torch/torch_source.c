/* torch_source.c - a PyTorch memory snapshot as an mp_source_t.
 *
 * After the one pass of torch_read.c and the rebuild of torch_state.c,
 * events come from memory: the memory ids first (two per device that has
 * anything: "cuda:N" for blocks, "cuda:N reserved" for segments), then
 * each device's state before the trace (its segments as regions and as
 * reserved allocations, its older blocks as allocations "(before the
 * trace)"), then the trace entries of all devices merged by time. One
 * entry may give several events (a segment is a region of cuda:N and an
 * allocation of cuda:N reserved; a map that joins two mapped runs removes
 * them and adds the joined one), so they go through a small queue. */
#include "torch_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const mp_source_ops_t tr_ops;

enum { PH_MEMORY, PH_INIT, PH_TRACE, PH_END };

typedef struct emit {
	tr_src_t *s;
	uint32_t mem; /* cuda:N; cuda:N reserved is mem + 1 */
	uint32_t op;
} emit_t;

static mp_vec_t *queue_of(tr_src_t *s)
{
	return &s->queue;
}

/* An ALLOC's metadata is a string id, its stack a stack id
 * (tr_src_t.stacks); other events have neither. */
static int put_meta(tr_src_t *s, uint8_t kind, uint32_t mem, uint64_t addr, uint64_t req, uint64_t alloc, uint32_t op,
		    uint32_t meta, uint32_t stack)
{
	mp_event_t ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.memory = mem;
	ev.address = addr;
	ev.requested_bytes = req;
	ev.allocated_bytes = alloc;
	ev.op = op;
	ev.metadata = meta;
	ev.stack = stack;
	ev.step = -1;
	if (kind == MP_EV_MARK)
		ev.label = op, ev.op = 0;
	return mp_vec_push(queue_of(s), &ev, sizeof(ev));
}

static int put(tr_src_t *s, uint8_t kind, uint32_t mem, uint64_t addr, uint64_t req, uint64_t alloc, uint32_t op)
{
	return put_meta(s, kind, mem, addr, req, alloc, op, 0, 0);
}

static int run_removed(void *ctx, uint64_t base, uint64_t size)
{
	emit_t *e = ctx;
	int rc = put(e->s, MP_EV_REGION_REMOVE, e->mem, base, 0, 0, 0);

	(void)size;
	return rc < 0 ? rc : put(e->s, MP_EV_FREE, e->mem + 1, base, 0, 0, 0);
}

static int run_added(void *ctx, uint64_t base, uint64_t size)
{
	emit_t *e = ctx;
	int rc = put(e->s, MP_EV_REGION_ADD, e->mem, base, size, 0, 0);

	return rc < 0 ? rc : put(e->s, MP_EV_ALLOC, e->mem + 1, base, size, size, e->op);
}

/* The memory ids of a device: cuda:N, then cuda:N reserved, then (when
 * some free waited on another stream) cuda:N awaiting another stream. */
#define MEM_RESERVED 1u
#define MEM_AWAITING 2u

static int emit_rec(tr_src_t *s, tr_dev_t *d, size_t i)
{
	const tr_rec_t *r = &TR_AT(d->recs, tr_rec_t, i);
	uint32_t mem = d->mem, await = d->nmem > MEM_AWAITING ? mem + MEM_AWAITING : mem;
	emit_t e = {s, mem, s->op_segment};
	tr_runs_cb_t cb = {&e, run_removed, run_added};
	uint32_t meta = r->meta ? s->meta_ids[r->meta] : 0, stack = TR_AT(d->rstacks, uint32_t, i);
	int rc;

	switch (r->action) {
	case TA_ALLOC:
		return put_meta(s, MP_EV_ALLOC, mem, r->addr, r->size, tr_block_bytes(d, i), r->op, meta, stack);
	case TA_FREE_REQUESTED: /* out of allocated bytes (memory_allocated()) */
		if ((rc = put(s, MP_EV_FREE, mem, r->addr, 0, 0, 0)) < 0 || !r->pending)
			return rc;
		/* still in its segment until another stream's work is done */
		return put_meta(s, MP_EV_ALLOC, await, r->addr, r->size, tr_block_bytes(d, i), r->op, meta, stack);
	case TA_FREE_COMPLETED: /* the end of a wait, or nothing: the request came just before */
		if (i && r[-1].action == TA_FREE_REQUESTED && r[-1].addr == r->addr && !r[-1].pending)
			return 0;
		return put(s, MP_EV_FREE, await, r->addr, 0, 0, 0);
	case TA_SEGMENT_ALLOC:
		if ((rc = put(s, MP_EV_REGION_ADD, mem, r->addr, r->size, 0, 0)) < 0)
			return rc;
		return put_meta(s, MP_EV_ALLOC, mem + MEM_RESERVED, r->addr, r->size, r->size,
				r->op ? r->op : s->op_segment, meta, stack);
	case TA_SEGMENT_FREE:
		if ((rc = put(s, MP_EV_REGION_REMOVE, mem, r->addr, 0, 0, 0)) < 0)
			return rc;
		return put(s, MP_EV_FREE, mem + MEM_RESERVED, r->addr, 0, 0, 0);
	case TA_SEGMENT_MAP:
		return tr_runs_add(&d->runs, r->addr, r->addr + r->size, &cb);
	case TA_SEGMENT_UNMAP:
		return tr_runs_sub(&d->runs, r->addr, r->addr + r->size, &cb);
	case TA_OOM:
		return put_meta(s, MP_EV_ALLOC_FAILED, mem, 0, r->size, 0, r->op, 0, stack);
	default: /* snapshot, annotate */
		return r->op ? put(s, MP_EV_MARK, mem, 0, 0, 0, r->op) : 0;
	}
}

static int emit_phase(tr_src_t *s, const tr_dev_t *d, const tr_phase_t *p)
{
	mp_event_t ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = MP_EV_MARK;
	ev.memory = d->mem;
	ev.label = p->name;
	ev.flags = p->begin ? MP_EVENT_F_PHASE_BEGIN : MP_EVENT_F_PHASE_END;
	ev.step = -1;
	return mp_vec_push(queue_of(s), &ev, sizeof(ev));
}

static int emit_init(tr_src_t *s, tr_dev_t *d)
{
	uint32_t mem = d->mem;
	int rc = 0;

	for (size_t i = 0; i < d->init_regions.n && rc == 0; i++) {
		const tr_span_t *g = &TR_AT(d->init_regions, tr_span_t, i);
		if (g->expandable && (rc = tr_runs_add(&d->runs, g->addr, g->addr + g->size, NULL)) < 0)
			break;
		if ((rc = put(s, MP_EV_REGION_ADD, mem, g->addr, g->size, 0, 0)) == 0)
			rc = put(s, MP_EV_ALLOC, mem + MEM_RESERVED, g->addr, g->size, g->size, s->op_segment);
	}
	/* blocks older than the trace: named by the dump's frames where they
	 * live to the dump, sized at the least the layout allows (the range
	 * is in the notes); metadata unknown (their alloc entry is gone) */
	for (size_t i = 0; i < d->init_blocks.n && rc == 0; i++) {
		const tr_span_t *b = &TR_AT(d->init_blocks, tr_span_t, i);
		rc = put_meta(s, MP_EV_ALLOC, b->awaiting && d->nmem > MEM_AWAITING ? mem + MEM_AWAITING : mem, b->addr,
			      b->requested, b->size, b->op ? b->op : s->op_before, 0, b->stack);
	}
	return rc;
}

/* Where the next record or phase of device i falls: its time, or its
 * entry index when the snapshot has no times; a phase that starts at a
 * record's time comes before it, one that ends after it. */
typedef struct at {
	int64_t t;
	int order; /* 0 a phase's start, 1 a record, 2 a phase's end */
} at_t;

static int at_before(at_t a, at_t b)
{
	return a.t < b.t || (a.t == b.t && a.order < b.order);
}

/* The device whose next record or phase comes first (then the lower
 * device); *phase: 1 when it is a phase. NULL at the end. */
static tr_dev_t *next_dev(tr_src_t *s, uint32_t *which, int *phase)
{
	tr_dev_t *best = NULL;
	at_t best_at = {0, 0};

	for (uint32_t i = 0; i < s->ndevs; i++) {
		tr_dev_t *d = &s->devs[i];
		if (s->cursor[i] < d->recs.n) {
			at_t a = {s->has_time ? TR_AT(d->recs, tr_rec_t, s->cursor[i]).time_us : (int64_t)s->cursor[i], 1};
			if (!best || at_before(a, best_at))
				best = d, best_at = a, *which = i, *phase = 0;
		}
		if (s->has_time && s->pcursor[i] < d->phases.n) { /* phases need times to be placed */
			const tr_phase_t *p = &TR_AT(d->phases, tr_phase_t, s->pcursor[i]);
			at_t a = {p->time_us, p->begin ? 0 : 2};
			if (!best || at_before(a, best_at))
				best = d, best_at = a, *which = i, *phase = 1;
		}
	}
	return best;
}

/* Fill the queue with the next events. 1 when it has some, 0 at the end. */
static int refill(tr_src_t *s)
{
	mp_vec_t *q = queue_of(s);
	int rc;

	q->n = 0;
	s->qpos = 0;
	while (q->n == 0) {
		if (s->phase == PH_INIT) {
			if (s->pdev >= s->ndevs)
				goto next_phase;
			if (s->devs[s->pdev].seen && (rc = emit_init(s, &s->devs[s->pdev])) < 0)
				return rc;
			s->pdev++;
			continue;
		}
		if (s->phase == PH_TRACE) {
			uint32_t i = 0;
			int is_phase = 0;
			tr_dev_t *d = next_dev(s, &i, &is_phase);
			int64_t when;
			uint64_t t;
			if (!d)
				goto next_phase;
			if (is_phase)
				when = TR_AT(d->phases, tr_phase_t, s->pcursor[i]).time_us;
			else
				when = s->has_time ? TR_AT(d->recs, tr_rec_t, s->cursor[i]).time_us : (int64_t)s->cursor[i];
			/* times from the first entry; without times, the entry index */
			t = !s->has_time ? (uint64_t)when : when > s->origin_us ? (uint64_t)(when - s->origin_us) * 1000u : 0;
			if (t > s->now_ns)
				s->now_ns = t; /* never backwards */
			rc = is_phase ? emit_phase(s, d, &TR_AT(d->phases, tr_phase_t, s->pcursor[i]++))
				      : emit_rec(s, d, s->cursor[i]++);
			if (rc < 0)
				return rc;
			continue;
		}
		return 0;
	next_phase:
		s->phase++;
		s->pdev = 0;
	}
	return 1;
}

static int tr_next(mp_source_t *src, mp_event_t *ev, mp_diag_t *diag)
{
	tr_src_t *s = (tr_src_t *)src;
	mp_vec_t *q = queue_of(s);
	int rc;

	if (s->phase == PH_MEMORY && s->pdev < s->nmems) {
		memset(ev, 0, sizeof(*ev));
		ev->kind = MP_EV_MEMORY;
		ev->memory = s->pdev++;
		ev->step = -1;
		ev->index = s->emitted++;
		return 1;
	}
	if (s->phase == PH_MEMORY)
		s->phase = PH_INIT, s->pdev = 0;
	if (s->qpos >= q->n && (rc = refill(s)) <= 0)
		return rc < 0 ? mp_diag_set(diag, rc, -1, -1, "out of memory") : 0;
	*ev = TR_AT(*q, mp_event_t, s->qpos++);
	ev->time_ns = s->now_ns;
	ev->index = s->emitted++;
	return 1;
}

static int tr_rewind(mp_source_t *src, mp_diag_t *diag)
{
	tr_src_t *s = (tr_src_t *)src;

	(void)diag;
	s->phase = PH_MEMORY;
	s->pdev = 0;
	s->qpos = 0;
	queue_of(s)->n = 0;
	s->emitted = 0;
	s->now_ns = 0;
	memset(s->cursor, 0, s->ndevs * sizeof(*s->cursor));
	memset(s->pcursor, 0, s->ndevs * sizeof(*s->pcursor));
	for (uint32_t i = 0; i < s->ndevs; i++)
		s->devs[i].runs.n = 0;
	return 0;
}

static const char *tr_string(const mp_source_t *src, uint32_t id)
{
	return mp_strtab_get(&((const tr_src_t *)src)->strings, id);
}

static const mp_memory_info_t *tr_memory(const mp_source_t *src, uint32_t id)
{
	const tr_src_t *s = (const tr_src_t *)src;

	return id < s->nmems ? &s->mems[id] : NULL;
}

static uint32_t tr_memory_count(const mp_source_t *src)
{
	return ((const tr_src_t *)src)->nmems;
}

static const char *tr_time_unit(const mp_source_t *src)
{
	return ((const tr_src_t *)src)->has_time ? NULL : "trace entry";
}

static size_t tr_notes(const mp_source_t *src, const mp_source_note_t **out)
{
	const tr_src_t *s = (const tr_src_t *)src;

	*out = s->notes;
	return s->nnotes;
}

static mp_end_status_t tr_end_status(const mp_source_t *src)
{
	(void)src;
	return MP_END_CLEAN;
}

static void tr_close(mp_source_t *src)
{
	tr_src_t *s = (tr_src_t *)src;

	for (uint32_t i = 0; i < s->ndevs; i++) {
		tr_dev_t *d = &s->devs[i];
		mp_vec_t *v[] = {&d->recs, &d->rstacks, &d->segs, &d->blocks, &d->init_regions, &d->init_blocks, &d->runs,
				 &d->phases};
		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
			free(v[k]->v);
		mp_i64map_free(&d->extra);
	}
	for (uint32_t i = 0; i < s->nmems && s->mem_names; i++)
		free(s->mem_names[i]);
	free(s->mem_names);
	free(s->mems);
	free(s->devs);
	free(s->cursor);
	free(s->pcursor);
	free(s->notes);
	free(s->note_text);
	free(queue_of(s)->v);
	free(s->frames.v);
	free(s->stacks.v);
	mp_i64map_free(&s->stack_ids);
	free(s->stack_fids.v);
	free(s->fbuf);
	free(s->meta_ids);
	mp_i64map_free(&s->meta_slot);
	mp_strtab_free(&s->strings);
	free(s->path);
	free(s);
}

static const mp_source_ops_t tr_ops = {
	.next = tr_next,
	.rewind = tr_rewind,
	.string = tr_string,
	.memory = tr_memory,
	.memory_count = tr_memory_count,
	.end_status = tr_end_status,
	.close = tr_close,
	.time_unit = tr_time_unit,
	.notes = tr_notes,
	.stack_frames = tr_stack_frames,
};

/* A device has a third memory id when some block of it waited on
 * another stream: freed by the program, not yet by the allocator. */
static int has_awaiting(const tr_dev_t *d)
{
	if (d->pending)
		return 1;
	for (size_t i = 0; i < d->init_blocks.n; i++)
		if (TR_AT(d->init_blocks, tr_span_t, i).awaiting)
			return 1;
	return 0;
}

/* Memory ids for the devices that have anything, in device order. */
static int name_memories(tr_src_t *s)
{
	static const char *const suffix[] = {"", " reserved", " awaiting another stream"};
	static const char *const in_use[] = {"allocated", "reserved", "awaiting another stream"};
	uint32_t n = 0, ndev = 0;

	for (uint32_t i = 0; i < s->ndevs; i++) {
		tr_dev_t *d = &s->devs[i];
		if (!d->seen)
			continue;
		d->seen = (int)++ndev; /* its index + 1 */
		d->mem = n;
		d->nmem = has_awaiting(d) ? 3 : 2;
		n += d->nmem;
	}
	s->mems = calloc((size_t)n + 1, sizeof(*s->mems));
	s->mem_names = calloc((size_t)n + 1, sizeof(*s->mem_names));
	s->cursor = calloc((size_t)s->ndevs + 1, sizeof(*s->cursor));
	s->pcursor = calloc((size_t)s->ndevs + 1, sizeof(*s->pcursor));
	if (!s->mems || !s->mem_names || !s->cursor || !s->pcursor)
		return MP_ENOMEM;
	s->info.devices = ndev;
	s->nmems = n;
	for (uint32_t i = 0; i < s->ndevs; i++) {
		tr_dev_t *d = &s->devs[i];
		char name[64];
		if (!d->seen)
			continue;
		for (uint32_t r = 0; r < d->nmem; r++) {
			uint32_t id = d->mem + r;
			snprintf(name, sizeof(name), "cuda:%" PRIu32 "%s", i, suffix[r]);
			if (!(s->mem_names[id] = strdup(name)))
				return MP_ENOMEM;
			s->mems[id].name = s->mem_names[id];
			s->mems[id].kind = MP_MEMORY_DEVICE;
			s->mems[id].in_use_name = in_use[r];
		}
	}
	return 0;
}

static uint32_t intern(tr_src_t *s, const char *text)
{
	return mp_strtab_intern(&s->strings, text, strlen(text));
}

int mp_torch_open_source(mp_source_t **out, const char *path, const mp_torch_options_t *opts, mp_diag_t *diag)
{
	tr_src_t *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
	}
	s->base.ops = &tr_ops;
	s->base.path = s->path;
	if (opts)
		s->opts = *opts;
	mp_strtab_init(&s->strings);
	/* before the read, which labels snapshot entries with op_snapshot */
	s->op_before = intern(s, "(before the trace)");
	s->op_snapshot = intern(s, "snapshot");
	s->op_segment = intern(s, "segment");
	if (s->op_before == UINT32_MAX || s->op_snapshot == UINT32_MAX || s->op_segment == UINT32_MAX) {
		rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		goto fail;
	}
	if ((rc = tr_read(s, path, diag)) < 0 || (rc = tr_rebuild(s, diag)) < 0)
		goto fail;
	if ((rc = name_memories(s)) < 0 || (rc = tr_make_notes(s)) < 0) {
		rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		goto fail;
	}
	*out = &s->base;
	return 0;
fail:
	if (diag && !diag->file[0])
		mp_diag_set_file(diag, path);
	tr_close(&s->base);
	return rc;
}

int mp_torch_is_source(const mp_source_t *src)
{
	return src && src->ops == &tr_ops;
}

void mp_torch_info(const mp_source_t *src, mp_torch_info_t *info)
{
	memset(info, 0, sizeof(*info));
	if (mp_torch_is_source(src))
		*info = ((const tr_src_t *)src)->info;
}

int mp_torch_path_is_candidate(const char *path)
{
	static const char *const suffix[] = {".pickle", ".pickle.gz", ".pkl", ".pkl.gz"};
	size_t n = strlen(path);
	unsigned char head[2];
	gzFile gz;
	int got;

	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		size_t m = strlen(suffix[i]);
		if (n >= m && !strcmp(path + n - m, suffix[i]))
			return 1;
	}
	if (!(gz = gzopen(path, "rb")))
		return 0;
	got = gzread(gz, head, sizeof(head));
	gzclose(gz);
	return got == 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
}
