/* pystack_cache.c - the thread's Python stack cache (docs/hooks.md, "The
 * thread's Python stack cache").
 *
 * A loop allocates from the same Python stack over and over, and the walk
 * (pystack.c's mp__py_walk: a frame-cache lookup per frame) and the
 * stack's interning (mp_writer_stack: a hash and a lookup) come out the
 * same each time. What the walk gives is a function of each frame's raw
 * fields -- its owner, its code object, its instruction pointer, 3.11's
 * is_entry -- and of the code objects' co_qualname, co_filename and
 * co_firstlineno (what the frame cache checks, so that a code object
 * freed and another made at its address is never taken for the old one).
 * Each thread keeps its last stacks as those fields, frame by frame, with
 * the stack's id; a hit compares them in place while following the chain
 * (nothing hashed, nothing copied): a few loads and compares a frame.
 * Exact: the fill walks, skips and stops where mp__py_walk does (shim
 * frames are compared by their owner alone, as the walk reads nothing
 * else of them), a stack whose walk stopped at the chain's end hits only
 * where the chain ends there too, and an entry is the capture's (writer
 * id and generation). Not cached: a frame whose executable is not a code
 * object (3.13), more than PC_LEVELS frames, a stack one of whose frames
 * got no value.
 *
 * Entries are picked by the innermost frame (its code object and
 * instruction): two ways per set, the one not hit last replaced. They
 * live in a static table of slots, one claimed per thread on its first
 * stack and released by a key destructor at its exit (as quiesce.c's), so
 * that a thread's TLS holds one pointer (threads with 16 KiB stacks
 * exist); a thread beyond the table walks every time.
 */
#include "preload.h"
#include "pystack.h"
#include "writer_internal.h"

#include <pthread.h>
#include <string.h>

/* 128 entries: tests/bench/py_loop.py's steady state allocates from some
 * 40 stacks, which 16 entries thrashed (one stack in ten walked) and 32
 * still did (one in twenty). Four ways a set: stacks whose innermost frame
 * is the same (a line called from several places) share a set, and 64
 * sets of two still walked 2.3 % of py_loop's stacks. 100 KiB a thread. */
#define PC_SET_BITS 5
#define PC_SETS (1 << PC_SET_BITS)
#define PC_WAYS 4
#define PC_LEVELS 24 /* frames, shims included; deeper stacks are not cached */
#define PC_THREADS 64

typedef struct {
	uint64_t code, instr; /* f_code (3.13: f_executable), the instruction pointer */
	uint64_t name, file;  /* the code's co_qualname, co_filename */
	int32_t first;        /* its co_firstlineno */
	signed char owner;    /* the frame's owner (a shim: nothing else is compared) */
	unsigned char entry;  /* 3.11's is_entry */
} pc_level_t;

typedef struct {
	uint64_t writer; /* the mp_writer_t's id (0: empty) */
	uint32_t gen, m, id, end; /* m levels; end: the chain ended after them */
	uint64_t frees;  /* mp__py_code_frees when the code objects were last read */
	uint64_t k_code, k_instr; /* the innermost frame's raw code and instruction: a quick no */
	pc_level_t l[PC_LEVELS];
} pc_entry_t;

typedef struct {
	pc_entry_t e[PC_WAYS * PC_SETS];
	uint32_t ord[PC_SETS]; /* per set its ways, a byte each, most recently used first */
	_Atomic int owned;
} pc_thread_t;

static pc_thread_t pc_table[PC_THREADS];
static __thread pc_thread_t *pc_mine __attribute__((tls_model("initial-exec")));
static pthread_key_t pc_key;
static pthread_once_t pc_once = PTHREAD_ONCE_INIT;
static int pc_key_ok;
#define PC_NONE ((pc_thread_t *)(uintptr_t)1) /* no slot for this thread */

static void pc_release(void *arg)
{
	pc_thread_t *c = arg;

	memset(c->e, 0, sizeof(c->e));
	atomic_store(&c->owned, 0);
	pc_mine = NULL; /* a later stack on this thread claims again */
}

static void pc_make_key(void)
{
	pc_key_ok = pthread_key_create(&pc_key, pc_release) == 0;
}

static __attribute__((noinline)) pc_thread_t *pc_claim(void)
{
	int i, expect;

	pthread_once(&pc_once, pc_make_key);
	for (i = 0; pc_key_ok && i < PC_THREADS; i++) {
		expect = 0;
		if (atomic_load_explicit(&pc_table[i].owned, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&pc_table[i].owned, &expect, 1)) {
			int k;
			for (k = 0; k < PC_SETS; k++)
				pc_table[i].ord[k] = 0x03020100u;
			pthread_setspecific(pc_key, &pc_table[i]);
			return pc_mine = &pc_table[i];
		}
	}
	return pc_mine = PC_NONE;
}

void mp__py_reset_child(void)
{
	int i;

	/* only the forking thread lives on */
	for (i = 0; i < PC_THREADS; i++)
		atomic_store(&pc_table[i].owned, 0);
	pc_mine = NULL;
}

static inline uint64_t rd(uintptr_t a)
{
	return *(const uint64_t *)a;
}

static inline int32_t rd32(uintptr_t a)
{
	return *(const int32_t *)a;
}

static inline unsigned pc_set(uint64_t code, uint64_t instr)
{
	return (unsigned)((((code >> 4) ^ instr) * 0x9E3779B97F4A7C15ull) >> (64 - PC_SET_BITS));
}

/* ord with its kth way moved to the front (the most recently used). */
static inline uint32_t pc_touch(uint32_t ord, unsigned k)
{
	uint32_t way = (ord >> (8 * k)) & 0xff;
	uint64_t below = ((uint64_t)1 << (8 * k)) - 1, upto = ((uint64_t)1 << (8 * (k + 1))) - 1;

	return (uint32_t)(((uint64_t)ord & ~upto) | (((uint64_t)ord & below) << 8) | way);
}

/* The offsets a hit reads. Passed as constants for the layouts of the
 * table (pyoffsets.c: 3.11's, and 3.12's which 3.13's shares), so that the
 * loop's loads take immediate displacements and nothing spills. */
typedef struct {
	int prev, owner, code, instr, otype, qual, fname, first, cstack, entry;
} pc_offs_t;

#define PC_O311 ((pc_offs_t){48, 69, 32, 56, 8, 128, 112, 72, -1, 68})
#define PC_O312 ((pc_offs_t){8, 70, 0, 56, 8, 128, 112, 68, 3, -1})

static _Atomic int pc_layout; /* 11, 12: the running Python's offsets are PC_O311's, PC_O312's; 0: neither */

static pc_offs_t pc_offs(void)
{
	const mp_pyoffsets_t *o = &mp__py_O;

	return (pc_offs_t){o->fr_previous, o->fr_owner, o->fr_code, o->fr_instr, o->ob_type,
			   o->co_qualname, o->co_filename, o->co_firstlineno, o->owner_cstack, o->fr_is_entry};
}

static int pc_same(pc_offs_t a, pc_offs_t b)
{
	return a.prev == b.prev && a.owner == b.owner && a.code == b.code && a.instr == b.instr &&
	       a.otype == b.otype && a.qual == b.qual && a.fname == b.fname && a.first == b.first &&
	       a.cstack == b.cstack && a.entry == b.entry;
}

/* Whether the chain from f reads as e's levels, frame for frame; codes: 0
 * when no code object died since e's were read (each is the same live
 * object, its names read-only: pystack.c's watch_code_frees), so that
 * only the frames' own fields are compared. */
static inline __attribute__((always_inline)) int pc_match_at(const pc_entry_t *e, uintptr_t f, const pc_offs_t o,
							      const int codes)
{
	const uintptr_t ctype = mp__py_code_type;
	uint32_t i;

	for (i = 0; i < e->m; i++, f = (uintptr_t)rd(f + (uintptr_t)o.prev)) {
		const pc_level_t *l = &e->l[i];
		uintptr_t code;

		if (!f || *(const signed char *)(f + (uintptr_t)o.owner) != l->owner)
			return 0;
		if (l->owner == o.cstack)
			continue;
		code = (uintptr_t)rd(f + (uintptr_t)o.code);
		if (code != l->code || rd(f + (uintptr_t)o.instr) != l->instr)
			return 0;
		if (codes && (rd(code + (uintptr_t)o.otype) != ctype || rd(code + (uintptr_t)o.qual) != l->name ||
			      rd(code + (uintptr_t)o.fname) != l->file || rd32(code + (uintptr_t)o.first) != l->first))
			return 0;
		if (o.entry >= 0 && *(const unsigned char *)(f + (uintptr_t)o.entry) != l->entry)
			return 0;
	}
	return !e->end || !f;
}

static inline __attribute__((always_inline)) int pc_match_codes(const pc_entry_t *e, uintptr_t f, const int codes)
{
	int layout = atomic_load_explicit(&pc_layout, memory_order_relaxed);

	if (layout == 12)
		return pc_match_at(e, f, PC_O312, codes);
	if (layout == 11)
		return pc_match_at(e, f, PC_O311, codes);
	return pc_match_at(e, f, pc_offs(), codes);
}

/* frees: mp__py_code_frees now, read before the chain (a code object's
 * death on this thread comes after; on another, under the GIL this
 * thread took since). An entry whose code objects are read again in full
 * and match takes the count: it is as good as filled now. */
static inline int pc_match(pc_entry_t *e, uintptr_t f, uint64_t writer, uint32_t g, uint64_t frees)
{
	if (e->writer != writer || e->gen != g)
		return 0;
	if (e->frees == frees && mp__py_code_watched)
		return pc_match_codes(e, f, 0);
	if (!pc_match_codes(e, f, 1))
		return 0;
	e->frees = frees;
	return 1;
}

/* Fill e with the frames from f as mp__py_walk(.., max, ..) walks them:
 * the number of values that walk gives when every frame gets one, or -1
 * when the stack is not cached. */
static int pc_fill(pc_entry_t *e, uintptr_t f, int max)
{
	const uintptr_t prev = (uintptr_t)mp__py_O.fr_previous, fowner = (uintptr_t)mp__py_O.fr_owner;
	const uintptr_t fcode = (uintptr_t)mp__py_O.fr_code, finstr = (uintptr_t)mp__py_O.fr_instr;
	const uintptr_t otype = (uintptr_t)mp__py_O.ob_type, qual = (uintptr_t)mp__py_O.co_qualname;
	const uintptr_t fname = (uintptr_t)mp__py_O.co_filename, firstline = (uintptr_t)mp__py_O.co_firstlineno;
	const uintptr_t adaptive = (uintptr_t)mp__py_O.co_code_adaptive;
	const uintptr_t traceable = (uintptr_t)mp__py_O.co_firsttraceable;
	const int cstack = mp__py_O.owner_cstack, gen_owner = mp__py_O.owner_generator, entry = mp__py_O.fr_is_entry;
	const uintptr_t ctype = mp__py_code_type;
	uint32_t m = 0;
	int n = 0, ng = 0;

	for (; f && n < max && ng < max; f = (uintptr_t)rd(f + prev)) {
		int owner = *(const signed char *)(f + fowner);
		pc_level_t *l;
		uintptr_t code, instr;

		if (m == PC_LEVELS)
			return -1;
		l = &e->l[m++];
		l->owner = (signed char)owner;
		if (owner == cstack) {
			ng++;
			continue;
		}
		code = (uintptr_t)rd(f + fcode);
		if (!code || (uintptr_t)rd(code + otype) != ctype)
			return -1; /* (an object that is not code could become one at its address) */
		instr = (uintptr_t)rd(f + finstr);
		l->code = code;
		l->instr = instr;
		l->name = rd(code + qual);
		l->file = rd(code + fname);
		l->first = rd32(code + firstline);
		l->entry = entry >= 0 ? *(const unsigned char *)(f + (uintptr_t)entry) : 0;
		/* a value unless incomplete, as the walk decides */
		if (!(owner != gen_owner && instr < code + adaptive + 2 * (uintptr_t)rd32(code + traceable)))
			n++;
		if (l->entry)
			ng++;
	}
	e->m = m;
	e->end = !f;
	return n;
}

/* A stack not in the thread's cache: walked, interned, and put in e (the
 * set's least recently used way; NULL: no cache) when every frame got its
 * value. Out of line: the hit's frame holds no walk buffers. */
static __attribute__((noinline)) int pc_miss(mp_writer_t *w, pc_thread_t *c, pc_entry_t *e, unsigned set,
					     uintptr_t f, int max, uint32_t *id)
{
	const uint32_t g = atomic_load_explicit(&mp__py_gen, memory_order_relaxed);
	const uint64_t frees = atomic_load_explicit(&mp__py_code_frees, memory_order_acquire);
	uint64_t py[MP_STACK_DEPTH];
	uint8_t groups[MP_STACK_DEPTH];
	int np, ng;

	np = mp__py_walk(w, py, max, groups, &ng);
	if (np <= 0)
		return 0;
	if (mp_writer_stack(w, py, (uint32_t)np, id) != 0)
		return -1;
	if (e) {
		e->writer = 0;
		if (pc_fill(e, f, max) == np) { /* every frame got its value: cacheable */
			e->k_code = rd(f + (uintptr_t)mp__py_O.fr_code);
			e->k_instr = rd(f + (uintptr_t)mp__py_O.fr_instr);
			e->writer = w->id;
			e->gen = g;
			e->frees = frees;
			e->id = *id;
			c->ord[set] = pc_touch(c->ord[set], PC_WAYS - 1);
		}
	}
	return 1;
}

int mp__py_stack(mp_writer_t *w, int max, uint32_t *id)
{
	pc_thread_t *c = pc_mine;
	uintptr_t f = mp__py_top_frame_fast();
	pc_entry_t *e = NULL;
	unsigned set = 0;

	if (!f)
		return 0;
	if (__builtin_expect(!c, 0)) {
		c = pc_claim();
		atomic_store_explicit(&pc_layout, pc_same(pc_offs(), PC_O312) ? 12 : pc_same(pc_offs(), PC_O311) ? 11 : 0,
				      memory_order_relaxed);
	}
	if (c != PC_NONE) {
		const uint64_t c0 = rd(f + (uintptr_t)mp__py_O.fr_code), i0 = rd(f + (uintptr_t)mp__py_O.fr_instr);
		const uint32_t g = atomic_load_explicit(&mp__py_gen, memory_order_relaxed);
		const uint64_t frees = atomic_load_explicit(&mp__py_code_frees, memory_order_acquire);
		pc_entry_t *s;
		uint32_t ord;
		unsigned k;
		set = pc_set(c0, i0);
		s = &c->e[PC_WAYS * set];
		ord = c->ord[set];
		for (k = 0; k < PC_WAYS; k++) {
			pc_entry_t *x = &s[(ord >> (8 * k)) & 0xff];
			if (x->k_code == c0 && x->k_instr == i0 && pc_match(x, f, w->id, g, frees)) {
				if (k)
					c->ord[set] = pc_touch(ord, k);
				*id = x->id;
				return 1;
			}
		}
		e = &s[ord >> 24]; /* the least recently used way */
	}
	return pc_miss(w, c, e, set, f, max, id);
}
