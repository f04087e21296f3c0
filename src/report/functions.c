/* functions.c - allocations by allocating function (memprof/functions.h).
 *
 * One extra pass over the capture, after the solver: each allocation is
 * charged to the frame of the user's code its stack names (userframe.c;
 * stacks are symbolized once per distinct stack, not per event), the
 * live-set engine (livesets.h) keeps the live blocks, so what each
 * function holds, and at each memory id's peak event (from the solver) the
 * live figures are copied into the rows. Memory: the live blocks (48 to 96 B
 * each), the distinct stacks and the rows.
 */
#include <memprof/capture.h>
#include <memprof/functions.h>

#include "livesets.h"
#include "report_impl.h"
#include "stackframes.h"
#include "symbolize.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NO_STACK "(no stack)"

/* The allocating frame of a stack: name indexes + 1 of its label, function
 * and file, its line and kind, its object. */
typedef struct site {
	uint32_t label, function, file, line;
	int kind;
	const char *object;
} site_t;

struct mp_functions {
	mp_capture_t *cap;
	mp_symbolizer_t *sym;
	mp_func_row_t *rows;
	size_t nrows, cap_rows;
	char **names;            /* interned function names (owned) */
	size_t nnames, cap_names;
	mp_i64map_t name_index;  /* name hash (+ probe) -> name index */
	mp_i64map_t row_index;   /* (memory, label) -> row index */
	site_t *stack_site;      /* per stack id: its allocating frame (label 0: not yet resolved) */
	uint32_t *stack_row;     /* per stack id: the row it was last charged to + 1 */
	uint64_t *stack_bytes;   /* per stack id: requested bytes */
	long empty_name;         /* the name index of "", or -1 */
	int all_frames;          /* mp_functions_options_t */
	const char *user_code;
	uint32_t nstacks;
	mp_func_frame_t *frames; /* mp_functions_frames' buffer */
	mp_symbol_t *syms;       /* per stack frame, scratch */
	int by_op;               /* mp_functions_compute_ops: the op is the function */
};

/* --- interned names and rows -------------------------------------------- */

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s) {
		h ^= (uint8_t)*s++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Intern s; returns its index, or -1 when out of memory. Hashes that
 * collide take the next free key. */
static long name_id(mp_functions_t *f, const char *s)
{
	uint64_t k = str_hash(s);
	uint32_t i;

	for (; mp_i64map_get(&f->name_index, k, &i); k++)
		if (!strcmp(f->names[i], s))
			return (long)i;
	if (MP_VEC_RESERVE(f->names, f->cap_names, f->nnames + 1) < 0 || !(f->names[f->nnames] = strdup(s)))
		return -1;
	if (mp_i64map_put(&f->name_index, k, (uint32_t)f->nnames) < 0) {
		free(f->names[f->nnames]);
		return -1;
	}
	return (long)f->nnames++;
}

/* The row of (memory, site's label); returns its index or -1 when out of
 * memory. */
static long row_of(mp_functions_t *f, uint32_t memory, const site_t *st)
{
	uint64_t key = (uint64_t)memory << 32 | (st->label - 1);
	uint32_t row;
	mp_func_row_t *r;

	if (mp_i64map_get(&f->row_index, key, &row))
		return (long)row;
	if (MP_VEC_RESERVE(f->rows, f->cap_rows, f->nrows + 1) < 0 ||
	    mp_i64map_put(&f->row_index, key, (uint32_t)f->nrows) < 0)
		return -1;
	r = &f->rows[f->nrows];
	memset(r, 0, sizeof(*r));
	r->memory = memory;
	r->label = f->names[st->label - 1];
	r->function = f->names[st->function - 1];
	r->file = f->names[st->file - 1];
	r->line = st->line;
	r->kind = st->kind;
	r->object = st->object ? st->object : "";
	return (long)f->nrows++;
}

/* A site of names (the label, function and file interned); -1 when out of
 * memory. */
static int site_of(mp_functions_t *f, site_t *st, const char *label, const char *function, const char *file,
		   uint32_t line, int kind, const char *object)
{
	/* a snapshot's op names a row per event: one lookup when label is
	 * the function and there is no file */
	long a = name_id(f, label), b = function == label ? a : a < 0 ? -1 : name_id(f, function),
	     c = b < 0 ? -1 : !file[0] && f->empty_name >= 0 ? f->empty_name : name_id(f, file);

	if (c < 0)
		return -1;
	st->label = (uint32_t)a + 1;
	st->function = (uint32_t)b + 1;
	st->file = (uint32_t)c + 1;
	st->line = line;
	st->kind = kind;
	st->object = object;
	return 0;
}

/* --- the allocating function of a stack --------------------------------- */

/* Resolve stack id (1..) to its allocating frame. 0, or -1 when out of
 * memory. */
static int stack_site(mp_functions_t *f, uint32_t id, site_t *st)
{
	const uint64_t *pcs;
	const char *fn, *file;
	uint32_t n, pick, line;
	char buf[1024];
	int kind;

	if (mp_capture_stack(f->cap, id, &pcs, &n) || n == 0)
		return site_of(f, st, NO_STACK, NO_STACK, "", 0, MP_FRAME_UNKNOWN, NULL);
	pick = rp_user_frame(f->cap, f->sym, pcs, n, f->all_frames, f->user_code, f->syms);
	if (!(pcs[pick] & MP_STACK_FRAME_TAG)) {
		rp_frame_name(&f->syms[pick], pcs[pick], buf, sizeof(buf));
		return site_of(f, st, buf, buf, "", 0, MP_FRAME_NATIVE, f->syms[pick].object);
	}
	if (mp_capture_frame(f->cap, pcs[pick], &fn, &file, &line, &kind))
		fn = RP_UNKNOWN_FRAME, kind = MP_FRAME_PYTHON;
	fn = fn[0] ? fn : "?";
	if (file[0] && line)
		snprintf(buf, sizeof(buf), "%s (%s:%" PRIu32 ")", fn, file, line);
	else if (file[0])
		snprintf(buf, sizeof(buf), "%s (%s)", fn, file);
	else
		snprintf(buf, sizeof(buf), "%s", fn);
	return site_of(f, st, buf, fn, file, line, kind, NULL);
}

/* --- the pass ------------------------------------------------------------- */

static int cmp_rows(const void *a, const void *b)
{
	const mp_func_row_t *x = a, *y = b;

	if (x->memory != y->memory)
		return x->memory < y->memory ? -1 : 1;
	if (x->peak_bytes != y->peak_bytes)
		return x->peak_bytes > y->peak_bytes ? -1 : 1;
	if (x->requested_bytes != y->requested_bytes)
		return x->requested_bytes > y->requested_bytes ? -1 : 1;
	return strcmp(x->label, y->label);
}

static int oom(mp_diag_t *diag)
{
	return mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
}

/* The tables before the pass: per stack id, and the symbolizer. NULL, or
 * a table missing, when out of memory (mp_functions_free frees it). */
static mp_functions_t *functions_new(mp_capture_t *cap, int by_op, const mp_functions_options_t *opts)
{
	mp_functions_t *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->cap = cap;
	f->by_op = by_op;
	f->empty_name = -1;
	f->all_frames = opts ? opts->all_frames : 0;
	f->user_code = opts ? opts->user_code : NULL;
	f->nstacks = by_op ? 0 : mp_capture_stack_count(cap);
	f->sym = by_op ? NULL : mp_symbolizer_new(cap);
	f->stack_site = calloc((size_t)f->nstacks + 1, sizeof(*f->stack_site));
	f->stack_row = calloc((size_t)f->nstacks + 1, sizeof(*f->stack_row));
	f->stack_bytes = calloc((size_t)f->nstacks + 1, sizeof(*f->stack_bytes));
	f->syms = calloc(MP_WRITER_STACK_MAX, sizeof(*f->syms));
	f->frames = calloc(MP_WRITER_STACK_MAX, sizeof(*f->frames));
	return f;
}

/* Each memory id's peak event, from the solver: *peak_at[memory id]
 * (UINT64_MAX: none), the caller's. */
static int peak_events(const mp_solver_t *solver, uint64_t **peak_at, uint32_t *npeak)
{
	for (size_t d = 0; d < mp_solver_device_count(solver); d++) {
		const mp_solver_device_t *dev = mp_solver_device(solver, d);
		if (dev->id >= *npeak) {
			uint32_t n = dev->id + 1;
			uint64_t *a = realloc(*peak_at, n * sizeof(*a));
			if (!a)
				return MP_ENOMEM;
			for (uint32_t i = *npeak; i < n; i++)
				a[i] = UINT64_MAX;
			*peak_at = a;
			*npeak = n;
		}
		(*peak_at)[dev->id] = dev->has_peak ? dev->peak.event_index : UINT64_MAX;
	}
	return 0;
}

/* A live block's requested bytes (from pend, or the memory id's big table,
 * whose entry goes: the block is going too). */
static inline uint64_t block_requested(rp_live_t *l, const lm_entry_t *e)
{
	lm_entry_t *b;
	uint64_t req;

	if (e->pend != RP_REQ_BIG)
		return e->pend;
	b = lm_find(&l->big, e->addr);
	req = b->size;
	lm_remove(&l->big, b);
	return req;
}

/* Block e of l ends (freed, or replaced by an allocation at its address):
 * its row no longer holds it. */
static inline void block_ends(mp_functions_t *f, rp_live_t *l, lm_entry_t *e)
{
	mp_func_row_t *row = &f->rows[e->group];

	row->leak_count--;
	row->leak_bytes -= e->size;
	row->leak_requested_bytes -= block_requested(l, e);
	mp_live_drop(&l->live, e);
}

/* (mp_functions_options_t.seed) The blocks live at a window's start,
 * before its events: live in their rows (live at the peak, at the end),
 * no allocation of the window's. As charge_events' allocation, but for
 * the counts. */
static int seed_blocks(mp_functions_t *f, mp_source_t *src, int by_op, const site_t *nostack, rp_lives_t *lives,
		       const mp_solver_seed_t *seed)
{
	for (size_t i = 0; seed && i < seed->nmemories; i++) {
		const mp_solver_seed_memory_t *m = &seed->memories[i];
		rp_live_t *l = rp_lives_of(lives, m->id);
		if (!l)
			return MP_ENOMEM;
		for (size_t k = 0; k < m->nblocks; k++) {
			const mp_solver_seed_block_t *b = &m->blocks[k];
			const site_t *site = nostack;
			site_t op;
			uint64_t fp = mp_live_footprint(b->requested_bytes, b->allocated_bytes);
			uint32_t pend = b->requested_bytes < RP_REQ_BIG ? (uint32_t)b->requested_bytes : RP_REQ_BIG;
			long r;
			if (by_op && b->op) {
				const char *name = mp_source_string(src, b->op);
				if (site_of(f, &op, name, name, "", 0, MP_FRAME_UNKNOWN, NULL))
					return MP_ENOMEM;
				site = &op;
			}
			if (b->stack && b->stack <= f->nstacks) {
				if (!f->stack_site[b->stack].label && stack_site(f, b->stack, &f->stack_site[b->stack]))
					return MP_ENOMEM;
				site = &f->stack_site[b->stack];
			}
			if ((r = row_of(f, m->id, site)) < 0)
				return MP_ENOMEM;
			if (b->stack && b->stack <= f->nstacks)
				f->stack_row[b->stack] = (uint32_t)r + 1;
			/* (a seed holds one block an address) */
			if (mp_live_add(&l->live, b->address, fp, (uint32_t)r, pend) < 0 ||
			    (pend == RP_REQ_BIG && lm_insert(&l->big, b->address, b->requested_bytes, 0, 0) < 0))
				return MP_ENOMEM;
			f->rows[r].leak_count++;
			f->rows[r].leak_bytes += fp;
			f->rows[r].leak_requested_bytes += b->requested_bytes;
		}
	}
	return 0;
}

/* The pass: each allocation charged to its site's row, the live blocks
 * kept in the live-set engine (one set per memory id; a block's group is
 * its row), the rows' live figures copied at each memory id's peak event.
 * One loop, kept whole: it runs once per event. */
static int charge_events(mp_functions_t *f, mp_source_t *src, int by_op, const site_t *nostackp, rp_lives_t *lives,
			 const uint64_t *peak_at, uint32_t npeak, const mp_solver_seed_t *seed, mp_diag_t *diag)
{
	const site_t nostack = *nostackp;
	mp_event_t ev;
	int rc;
	long r;

	if ((rc = mp_source_rewind(src, diag)) < 0)
		return rc;
	if ((rc = seed_blocks(f, src, by_op, &nostack, lives, seed)) < 0)
		return oom(diag);
	while ((rc = mp_source_next(src, &ev, diag)) == 1) {
		if (ev.kind == MP_EV_ALLOC || ev.kind == MP_EV_ALLOC_FAILED) {
			const site_t *site = &nostack;
			site_t op;
			rp_live_t *l;
			lm_entry_t *e;
			uint64_t fp;
			uint32_t pend;
			int found;

			if (by_op && ev.op) { /* the source named the allocating frame */
				const char *name = mp_source_string(src, ev.op);
				if (site_of(f, &op, name, name, "", 0, MP_FRAME_UNKNOWN, NULL)) {
					rc = oom(diag);
					goto out;
				}
				site = &op;
			}
			if (ev.stack && ev.stack <= f->nstacks) {
				if (!f->stack_site[ev.stack].label && stack_site(f, ev.stack, &f->stack_site[ev.stack])) {
					rc = oom(diag);
					goto out;
				}
				site = &f->stack_site[ev.stack];
			}
			if ((r = row_of(f, ev.memory, site)) < 0) {
				rc = oom(diag);
				goto out;
			}
			if (ev.stack && ev.stack <= f->nstacks) {
				f->stack_row[ev.stack] = (uint32_t)r + 1;
				f->stack_bytes[ev.stack] += ev.requested_bytes;
			}
			if (ev.kind == MP_EV_ALLOC_FAILED) {
				f->rows[r].failed++;
				continue;
			}
			f->rows[r].allocations++;
			f->rows[r].requested_bytes += ev.requested_bytes;
			if (!(l = rp_lives_of(lives, ev.memory))) {
				rc = oom(diag);
				goto out;
			}
			fp = mp_live_footprint(ev.requested_bytes, ev.allocated_bytes);
			pend = ev.requested_bytes < RP_REQ_BIG ? (uint32_t)ev.requested_bytes : RP_REQ_BIG;
			/* e: only whether the block is live from here (NULL: no memory) */
			e = mp_live_add_new(&l->live, ev.address, fp, (uint32_t)r, pend, &found);
			if (e && found) { /* an address allocated twice: the older block is gone */
				block_ends(f, l, mp_live_alloc_replaces(&l->live, ev.address));
				if (mp_live_add(&l->live, ev.address, fp, (uint32_t)r, pend) < 0)
					e = NULL;
			}
			if (!e || (pend == RP_REQ_BIG && lm_insert(&l->big, ev.address, ev.requested_bytes, 0, 0) < 0)) {
				rc = oom(diag);
				goto out;
			}
			/* leak_* hold what is live now; at the end, what stayed */
			f->rows[r].leak_count++;
			f->rows[r].leak_bytes += fp;
			f->rows[r].leak_requested_bytes += ev.requested_bytes;
		} else if (ev.kind == MP_EV_FREE && ev.memory < lives->n) {
			rp_live_t *l = &lives->by_mem[ev.memory];
			lm_entry_t *e = mp_live_free_finds(&l->live, ev.address);
			if (e)
				block_ends(f, l, e);
		}
		if (ev.memory < npeak && ev.index == peak_at[ev.memory]) {
			size_t j;
			for (j = 0; j < f->nrows; j++) {
				if (f->rows[j].memory != ev.memory)
					continue;
				f->rows[j].peak_count = f->rows[j].leak_count;
				f->rows[j].peak_bytes = f->rows[j].leak_bytes;
				f->rows[j].peak_requested_bytes = f->rows[j].leak_requested_bytes;
			}
		}
	}
out:
	return rc < 0 ? rc : 0;
}

/* Representative stacks, then drop the rows of memory ids without
 * any stack (annotated pools, mappings): nothing to say about them. */
static int finish_rows(mp_functions_t *f, int by_op)
{
	uint32_t maxmem = 0;
	unsigned char *has_stacks;
	size_t j, k = 0;

	for (uint32_t i = 1; i <= f->nstacks; i++) {
		mp_func_row_t *row;
		if (!f->stack_row[i])
			continue;
		row = &f->rows[f->stack_row[i] - 1];
		row->stacks++;
		if (!row->stack || f->stack_bytes[i] > f->stack_bytes[row->stack])
			row->stack = i;
	}
	for (j = 0; j < f->nrows; j++)
		if (f->rows[j].memory + 1 > maxmem)
			maxmem = f->rows[j].memory + 1;
	has_stacks = calloc(maxmem ? maxmem : 1, 1);
	if (!has_stacks)
		return MP_ENOMEM;
	for (j = 0; j < f->nrows; j++)
		if (f->rows[j].stacks || by_op)
			has_stacks[f->rows[j].memory] = 1;
	for (j = 0; j < f->nrows; j++)
		if (has_stacks[f->rows[j].memory])
			f->rows[k++] = f->rows[j];
	f->nrows = k;
	if (k > 1) /* (rows is NULL when there are none: qsort wants an array) */
		qsort(f->rows, f->nrows, sizeof(*f->rows), cmp_rows);
	free(has_stacks);
	return 0;
}

static int compute(mp_functions_t **out, mp_source_t *src, const mp_solver_t *solver, int by_op,
		   const mp_functions_options_t *opts, mp_diag_t *diag)
{
	mp_capture_t *cap = by_op ? NULL : mp_capture_stacks_of(src);
	mp_functions_t *f;
	rp_lives_t lives = {NULL, 0};
	uint64_t *peak_at = NULL;
	uint32_t npeak = 0;
	site_t nostack;
	int rc;

	*out = NULL;
	if (!by_op && (!cap || mp_capture_stack_count(cap) == 0))
		return MP_ENODATA;
	if (!(f = functions_new(cap, by_op, opts)))
		return oom(diag);
	if ((!f->sym && !by_op) || !f->stack_site || !f->stack_row || !f->stack_bytes || !f->syms || !f->frames ||
	    (f->empty_name = name_id(f, "")) < 0 ||
	    site_of(f, &nostack, NO_STACK, NO_STACK, "", 0, MP_FRAME_UNKNOWN, NULL) ||
	    peak_events(solver, &peak_at, &npeak) < 0)
		rc = oom(diag);
	else if ((rc = charge_events(f, src, by_op, &nostack, &lives, peak_at, npeak, opts ? opts->seed : NULL, diag)) ==
			 0 &&
		 finish_rows(f, by_op) < 0)
		rc = oom(diag);
	free(peak_at);
	rp_lives_free(&lives);
	if (rc < 0) {
		mp_functions_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

int mp_functions_compute(mp_functions_t **out, mp_source_t *src, const mp_solver_t *solver, mp_diag_t *diag)
{
	return compute(out, src, solver, 0, NULL, diag);
}

int mp_functions_compute_opts(mp_functions_t **out, mp_source_t *src, const mp_solver_t *solver,
			      const mp_functions_options_t *opts, mp_diag_t *diag)
{
	return compute(out, src, solver, 0, opts, diag);
}

int mp_functions_compute_ops(mp_functions_t **out, mp_source_t *src, const mp_solver_t *solver, mp_diag_t *diag)
{
	return compute(out, src, solver, 1, NULL, diag);
}

void mp_functions_free(mp_functions_t *f)
{
	size_t i;

	if (!f)
		return;
	mp_symbolizer_free(f->sym);
	for (i = 0; i < f->nnames; i++)
		free(f->names[i]);
	free(f->names);
	mp_i64map_free(&f->name_index);
	free(f->rows);
	mp_i64map_free(&f->row_index);
	free(f->stack_site);
	free(f->stack_row);
	free(f->stack_bytes);
	free(f->frames);
	free(f->syms);
	free(f);
}

size_t mp_functions_count(const mp_functions_t *f)
{
	return f->nrows;
}

const mp_func_row_t *mp_functions_row(const mp_functions_t *f, size_t i)
{
	return i < f->nrows ? &f->rows[i] : NULL;
}

uint32_t mp_functions_distinct_stacks(const mp_functions_t *f)
{
	return f->nstacks;
}

const char *mp_functions_symbolizer(const mp_functions_t *f)
{
	return f->by_op ? "none" : mp_symbolizer_backend();
}

int mp_functions_frames(mp_functions_t *f, uint32_t stack, const mp_func_frame_t **frames, uint32_t *n)
{
	const uint64_t *pcs;
	uint32_t i;

	*frames = NULL;
	*n = 0;
	if (!f->cap || mp_capture_stack(f->cap, stack, &pcs, n))
		return MP_ENOTFOUND;
	for (i = 0; i < *n; i++) {
		mp_func_frame_t *fr = &f->frames[i];
		mp_symbol_t s;
		long nid = -1;
		memset(fr, 0, sizeof(*fr));
		fr->address = pcs[i];
		if (pcs[i] & MP_STACK_FRAME_TAG) { /* an interpreter frame, named by the capture */
			const char *fn, *file;
			int kind;
			if (mp_capture_frame(f->cap, pcs[i], &fn, &file, &fr->line, &kind))
				fn = RP_UNKNOWN_FRAME, kind = MP_FRAME_PYTHON;
			fr->function = fn[0] ? fn : NULL;
			fr->file = file;
			fr->kind = kind;
			continue;
		}
		mp_symbolize(f->sym, pcs[i], &s);
		if (s.function) {
			char buf[512];
			snprintf(buf, sizeof(buf), "%.*s", (int)rp_sym_len(s.function), s.function);
			nid = name_id(f, buf); /* without its version; owned by f */
		}
		fr->function = nid >= 0 ? f->names[nid] : NULL;
		fr->object = s.object;
		fr->offset = s.offset;
		fr->kind = MP_FRAME_NATIVE;
	}
	*frames = f->frames;
	return 0;
}
