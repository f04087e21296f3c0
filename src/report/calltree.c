/* calltree.c - call trees of allocations (memprof/calltree.h).
 *
 * One pass over the source after the solver, as functions.c does: each
 * allocation is charged to its (memory id, stack) -- bytes allocated over
 * the run, bytes live now (the live-set engine's blocks, livesets.h) -- and at each memory
 * id's peak event (the solver's) the live figures are copied aside; at the
 * end they are the leaks. Only then are the stacks that hold anything
 * resolved, once each, into frames (symbolized for a capture, once per
 * distinct return address; named by the source otherwise), and each tree
 * built as a trie of frames from the outermost in, then written out in
 * depth-first order, children sorted and small ones folded. Memory: the
 * live blocks (48 to 96 B each), one record per (memory id, stack) and the
 * distinct frames; per tree, its nodes.
 */
#include <memprof/calltree.h>
#include <memprof/capture.h>

#include "calltree_impl.h"
#include "livesets.h"
#include "stackframes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *mp_tree_kind_name(int kind)
{
	switch (kind) {
#define MP__TK_NAME(name, val, str) \
	case val:                   \
		return str;
		MP_TREE_KIND_MAP(MP__TK_NAME)
#undef MP__TK_NAME
	default:
		return "?";
	}
}

int mp_tree_kind_parse(const char *name)
{
#define MP__TK_PARSE(n, val, str) \
	if (!strcmp(name, str))   \
		return val;
	MP_TREE_KIND_MAP(MP__TK_PARSE)
#undef MP__TK_PARSE
	return -1;
}

/* --- strings and frames, interned ----------------------------------------- */

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s) {
		h ^= (uint8_t)*s++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The interned copy of s (owned by t); NULL when out of memory. Keys are
 * the string's hash, then the next values where another string had it. */
const char *ct_intern(mp_calltree_t *t, const char *s)
{
	uint64_t k = str_hash(s);
	uint32_t i;

	for (; mp_i64map_get(&t->str_map, k, &i); k++)
		if (!strcmp(t->strs[i], s))
			return t->strs[i];
	if (MP_VEC_RESERVE(t->strs, t->cap_strs, t->nstrs + 1) < 0 ||
	    !(t->strs[t->nstrs] = strdup(s)))
		return NULL;
	if (mp_i64map_put(&t->str_map, k, (uint32_t)t->nstrs) < 0) {
		free(t->strs[t->nstrs]);
		return NULL;
	}
	return t->strs[t->nstrs++];
}

/* A 64-bit finalizer (MurmurHash3's): frame_id's key from its parts. */
static inline uint64_t rp_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* The id of a frame (name, file, line, kind); -1 when out of memory. */
static long frame_id(mp_calltree_t *t, const char *name, const char *file, int64_t line, int kind)
{
	const char *n = ct_intern(t, name), *f = ct_intern(t, file);
	uint64_t h;
	uint32_t i;

	if (!n || !f)
		return -1;
	h = rp_mix((uint64_t)(uintptr_t)n ^ rp_mix((uint64_t)(uintptr_t)f ^ rp_mix((uint64_t)line)) ^ (uint64_t)kind);
	for (; mp_i64map_get(&t->frame_map, h, &i); h++) {
		const ct_frame_t *x = &t->frames[i];
		if (x->name == n && x->file == f && x->line == line && x->kind == kind)
			return (long)i;
	}
	if (t->nframes >= CT_SPECIAL || MP_VEC_RESERVE(t->frames, t->cap_frames, t->nframes + 1) < 0 ||
	    mp_i64map_put(&t->frame_map, h, (uint32_t)t->nframes) < 0)
		return -1;
	t->frames[t->nframes] = (ct_frame_t){n, f, line, kind};
	return (long)t->nframes++;
}

/* --- stacks into paths of frames ------------------------------------------ */

/* A frame a source names that only shows how the memory was handed out:
 * an allocator entry point, PyTorch's unwinder and caching allocator. */
static int source_frame_dropped(const char *name)
{
	static const char *const prefixes[] = {
		"torch::unwind::", "torch::CapturedTraceback::", "torch::cuda::(anonymous namespace)::gather",
		"c10::cuda::CUDACachingAllocator::", "operator new",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return rp_is_entry_point(name);
}

/* A capture's return address as a frame, symbolized once per address:
 * *id, and *dropped when it is memprof's or an allocator entry point. A
 * value with MP_STACK_FRAME_TAG is an interpreter frame the capture names
 * (a Python function at a line). */
static int pc_frame(mp_calltree_t *t, uint64_t pc, uint32_t *id, int *dropped)
{
	char buf[1024];
	mp_symbol_t s;
	uint32_t v;
	long fid;

	if (mp_i64map_get(&t->pc_map, pc, &v)) {
		*id = v >> 1;
		*dropped = v & 1;
		return 0;
	}
	if (pc & MP_STACK_FRAME_TAG) {
		/* an interpreter frame (format 2.2): named by the capture, not symbolized */
		const char *fn, *file;
		uint32_t line;
		int kind;
		if (mp_capture_frame(t->cap, pc, &fn, &file, &line, &kind))
			fn = RP_UNKNOWN_FRAME, kind = MP_FRAME_PYTHON;
		fid = frame_id(t, fn[0] ? fn : "?", file, line, kind);
		*dropped = 0;
	} else {
		mp_symbolize(t->sym, pc, &s);
		rp_frame_name(&s, pc, buf, sizeof(buf));
		fid = frame_id(t, buf, s.object ? s.object : "", 0, MP_FRAME_NATIVE);
		*dropped = rp_in_memprof(s.object) || rp_is_entry_point(s.function);
	}
	if (fid < 0 || fid >= (1l << 30))
		return -1;
	*id = (uint32_t)fid;
	return mp_i64map_put(&t->pc_map, pc, (uint32_t)fid << 1 | (uint32_t)*dropped);
}

/* Resolve stack (1..) into t->path[..]: its frame ids from the outermost
 * to the innermost kept one -- in a capture's stack with Python frames,
 * from the outermost Python frame (mp_calltree_options_t.all_frames).
 * Stacks that cannot be read have no frames. */
static int resolve(mp_calltree_t *t, uint32_t stack)
{
	ct_stack_t *st = &t->stacks[stack];
	uint32_t n = 0, top = 0, pick = 0, i, *ids = NULL;
	int rc = 0;

	st->resolved = 1;
	if (t->cap) {
		const uint64_t *pcs;
		if (mp_capture_stack(t->cap, stack, &pcs, &n) || !n)
			return 0;
		if (!(ids = malloc(n * sizeof(*ids))))
			return -1;
		for (i = 0; i < n && rc == 0; i++) {
			int dropped;
			rc = pc_frame(t, pcs[i], &ids[i], &dropped);
			if (!dropped && !pick)
				pick = i + 1;
			if (rc == 0 && (pcs[i] & MP_STACK_FRAME_TAG) && !t->all_frames &&
			    t->frames[ids[i]].kind == MP_FRAME_PYTHON)
				top = i + 1; /* (the outermost Python frame so far) */
		}
	} else {
		const mp_source_frame_t *fr;
		if (mp_source_stack_frames(t->src, stack, &fr, &n) || !n)
			return 0;
		if (!(ids = malloc(n * sizeof(*ids))))
			return -1;
		for (i = 0; i < n && rc == 0; i++) {
			long fid = frame_id(t, fr[i].name, fr[i].file, fr[i].line, fr[i].kind);
			rc = fid < 0 ? -1 : 0;
			ids[i] = (uint32_t)fid;
			if (!pick && !source_frame_dropped(fr[i].name))
				pick = i + 1;
		}
	}
	pick = pick ? pick - 1 : 0; /* every frame an allocator's: all kept */
	if (!top || top <= pick)
		top = n; /* no Python frame (a C program, a Python's start): every frame */
	if (rc == 0 && t->npath + (top - pick) > UINT32_MAX)
		rc = -1;
	if (rc == 0 && MP_VEC_RESERVE(t->path, t->cap_path, t->npath + (top - pick)) < 0)
		rc = -1;
	if (rc == 0) {
		st->first = (uint32_t)t->npath;
		st->n = top - pick;
		for (i = top; i > pick; i--) /* outermost first */
			t->path[t->npath++] = ids[i - 1];
	}
	free(ids);
	return rc;
}

/* --- the pass --------------------------------------------------------------- */

static int oom(mp_diag_t *diag)
{
	return mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
}

/* The record of (memory, stack); -1 when out of memory. */
static long agg_of(mp_calltree_t *t, uint32_t memory, uint32_t stack)
{
	uint64_t key = (uint64_t)memory << 32 | stack;
	uint32_t i;

	if (mp_i64map_get(&t->agg_map, key, &i))
		return (long)i;
	if (t->naggs >= UINT32_MAX - 1 || MP_VEC_RESERVE(t->aggs, t->cap_aggs, t->naggs + 1) < 0 ||
	    mp_i64map_put(&t->agg_map, key, (uint32_t)t->naggs) < 0)
		return -1;
	memset(&t->aggs[t->naggs], 0, sizeof(t->aggs[0]));
	t->aggs[t->naggs].memory = memory;
	t->aggs[t->naggs].stack = stack;
	return (long)t->naggs++;
}

/* Room for stack ids up to id in t->stacks; 0 or -1. */
static int stack_slot(mp_calltree_t *t, uint32_t id)
{
	size_t old = t->nstacks_cap;

	if (id < old)
		return 0;
	if (MP_VEC_RESERVE(t->stacks, t->nstacks_cap, (size_t)id + 1) < 0)
		return -1;
	memset(t->stacks + old, 0, (t->nstacks_cap - old) * sizeof(*t->stacks));
	return 0;
}

/* Block e of l ends (freed, or replaced by an allocation at its address):
 * its aggregate no longer holds it. */
static inline void block_ends(mp_calltree_t *t, mp_live_t *l, lm_entry_t *e)
{
	t->aggs[e->group].v[CT_LIVE_B] -= e->size;
	t->aggs[e->group].v[CT_LIVE_C]--;
	mp_live_drop(l, e);
}

/* (mp_calltree_options_t.seed) The blocks live at a window's start: live
 * in their aggregates, no allocation of the window's. */
static int seed_blocks(mp_calltree_t *t, rp_lives_t *lives, const mp_solver_seed_t *seed)
{
	for (size_t i = 0; seed && i < seed->nmemories; i++) {
		const mp_solver_seed_memory_t *m = &seed->memories[i];
		rp_live_t *l = rp_lives_of(lives, m->id);
		if (!l)
			return MP_ENOMEM;
		for (size_t k = 0; k < m->nblocks; k++) {
			const mp_solver_seed_block_t *b = &m->blocks[k];
			uint64_t bytes = mp_live_footprint(b->requested_bytes, b->allocated_bytes);
			long a = agg_of(t, m->id, b->stack);
			if (a < 0 || mp_live_add(&l->live, b->address, bytes, (uint32_t)a, 0) < 0)
				return MP_ENOMEM;
			if (b->stack)
				t->any_stack = 1;
			t->aggs[a].v[CT_LIVE_B] += bytes;
			t->aggs[a].v[CT_LIVE_C]++;
		}
	}
	return 0;
}

static int pass(mp_calltree_t *t, mp_source_t *src, const uint64_t *peak_at, uint32_t npeak, const mp_solver_seed_t *seed,
		mp_diag_t *diag)
{
	rp_lives_t lives = {NULL, 0};
	mp_event_t ev;
	int rc;

	if ((rc = mp_source_rewind(src, diag)) < 0)
		goto out;
	if (seed_blocks(t, &lives, seed) < 0)
		goto nomem;
	while ((rc = mp_source_next(src, &ev, diag)) == 1) {
		if (ev.stack && (ev.kind == MP_EV_ALLOC || ev.kind == MP_EV_ALLOC_FAILED)) {
			if (stack_slot(t, ev.stack) < 0)
				goto nomem;
			if (!t->stacks[ev.stack].seen) {
				t->stacks[ev.stack].seen = 1;
				t->distinct_stacks++;
			}
		}
		if (ev.kind == MP_EV_ALLOC) {
			uint64_t bytes = mp_live_footprint(ev.requested_bytes, ev.allocated_bytes);
			long a = agg_of(t, ev.memory, ev.stack);
			rp_live_t *l = rp_lives_of(&lives, ev.memory);
			lm_entry_t *e;
			if (a < 0 || !l)
				goto nomem;
			if (ev.stack)
				t->any_stack = 1;
			if ((e = mp_live_alloc_replaces(&l->live, ev.address))) /* allocated twice: the older is gone */
				block_ends(t, &l->live, e);
			if (mp_live_add(&l->live, ev.address, bytes, (uint32_t)a, 0) < 0)
				goto nomem;
			t->aggs[a].v[CT_LIVE_B] += bytes;
			t->aggs[a].v[CT_LIVE_C]++;
			t->aggs[a].v[CT_ALLOC_B] += bytes;
			t->aggs[a].v[CT_ALLOC_C]++;
		} else if (ev.kind == MP_EV_FREE && ev.memory < lives.n) {
			mp_live_t *l = &lives.by_mem[ev.memory].live;
			lm_entry_t *e = mp_live_free_finds(l, ev.address);
			if (e)
				block_ends(t, l, e);
		}
		if (ev.memory < npeak && ev.index == peak_at[ev.memory])
			for (size_t j = 0; j < t->naggs; j++)
				if (t->aggs[j].memory == ev.memory) {
					t->aggs[j].v[CT_PEAK_B] = t->aggs[j].v[CT_LIVE_B];
					t->aggs[j].v[CT_PEAK_C] = t->aggs[j].v[CT_LIVE_C];
				}
	}
out:
	rp_lives_free(&lives);
	return rc;
nomem:
	rp_lives_free(&lives);
	return oom(diag);
}

/* Each memory id's peak event, from the solver (UINT64_MAX: none). */
static uint64_t *peak_events(const mp_solver_t *solver, uint32_t *n)
{
	uint32_t max = 0;
	uint64_t *at;

	for (size_t d = 0; d < mp_solver_device_count(solver); d++)
		if (mp_solver_device(solver, d)->id + 1 > max)
			max = mp_solver_device(solver, d)->id + 1;
	if (!(at = malloc((max ? max : 1) * sizeof(*at))))
		return NULL;
	for (uint32_t i = 0; i < max; i++)
		at[i] = UINT64_MAX;
	for (size_t d = 0; d < mp_solver_device_count(solver); d++) {
		const mp_solver_device_t *dev = mp_solver_device(solver, d);
		at[dev->id] = dev->has_peak ? dev->peak.event_index : UINT64_MAX;
	}
	*n = max;
	return at;
}

int mp_calltree_compute(mp_calltree_t **out, mp_source_t *src, const mp_solver_t *solver,
			const mp_calltree_options_t *opts, mp_diag_t *diag)
{
	mp_capture_t *cap = src->ops->stack_frames ? NULL : mp_capture_stacks_of(src);
	mp_calltree_t *t;
	uint64_t *peak_at = NULL;
	uint32_t npeak = 0;
	int rc;

	*out = NULL;
	if (!src->ops->stack_frames && (!cap || mp_capture_stack_count(cap) == 0))
		return MP_ENODATA;
	if (!(t = calloc(1, sizeof(*t))))
		return oom(diag);
	t->src = src;
	t->cap = cap;
	t->min_percent = opts ? opts->min_percent : MP_CALLTREE_MIN_PERCENT_DEFAULT;
	if (!(t->min_percent >= 0) || t->min_percent > 100) /* NaN too */
		t->min_percent = MP_CALLTREE_MIN_PERCENT_DEFAULT;
	t->kinds = opts && opts->kinds ? opts->kinds : (1u << (MP_TREE_KIND_MAX + 1)) - 1;
	t->all_frames = opts && opts->all_frames;
	if ((cap && !(t->sym = mp_symbolizer_new(cap))) || !(peak_at = peak_events(solver, &npeak))) {
		rc = oom(diag);
		goto fail;
	}
	if ((rc = pass(t, src, peak_at, npeak, opts ? opts->seed : NULL, diag)) < 0)
		goto fail;
	free(peak_at);
	peak_at = NULL;
	if (!t->any_stack) {
		rc = MP_ENODATA;
		goto fail;
	}
	if ((rc = ct_build_all(t, ct_resolve_needed)) < 0) {
		rc = oom(diag);
		goto fail;
	}
	*out = t;
	return 0;
fail:
	free(peak_at);
	mp_calltree_free(t);
	return rc;
}

/* For ct_build_all: the stack's path, resolved on first use. */
int ct_resolve_needed(mp_calltree_t *t, uint32_t stack, const uint32_t **path, uint32_t *n)
{
	*path = NULL;
	*n = 0;
	if (!stack || stack >= t->nstacks_cap)
		return 0;
	if (!t->stacks[stack].resolved && resolve(t, stack) < 0)
		return -1;
	*path = t->path + t->stacks[stack].first;
	*n = t->stacks[stack].n;
	return 0;
}

void mp_calltree_free(mp_calltree_t *t)
{
	if (!t)
		return;
	mp_symbolizer_free(t->sym);
	for (size_t i = 0; i < t->nstrs; i++)
		free(t->strs[i]);
	free(t->strs);
	mp_i64map_free(&t->str_map);
	mp_i64map_free(&t->frame_map);
	mp_i64map_free(&t->pc_map);
	mp_i64map_free(&t->agg_map);
	free(t->frames);
	free(t->stacks);
	free(t->path);
	free(t->aggs);
	for (size_t i = 0; i < t->ntrees; i++)
		free((void *)(uintptr_t)t->trees[i].nodes); /* ours: const to readers */
	free(t->trees);
	free(t);
}

size_t mp_calltree_count(const mp_calltree_t *t)
{
	return t->ntrees;
}

const mp_tree_t *mp_calltree_tree(const mp_calltree_t *t, size_t i)
{
	return i < t->ntrees ? &t->trees[i] : NULL;
}

const mp_tree_t *mp_calltree_find(const mp_calltree_t *t, uint32_t memory, int kind)
{
	for (size_t i = 0; i < t->ntrees; i++)
		if (t->trees[i].memory == memory && t->trees[i].kind == kind)
			return &t->trees[i];
	return NULL;
}

uint32_t mp_calltree_distinct_stacks(const mp_calltree_t *t)
{
	return t->distinct_stacks;
}

const char *mp_calltree_symbolizer(const mp_calltree_t *t)
{
	return t->cap ? mp_symbolizer_backend() : "source";
}

double mp_calltree_min_percent(const mp_calltree_t *t)
{
	return t->min_percent;
}
