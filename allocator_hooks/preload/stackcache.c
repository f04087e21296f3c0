/* stackcache.c - `--stacks` with libunwind: a thread's stack id again
 * without unwinding, when its state says the unwind would give the same.
 *
 * A program that allocates in a loop calls malloc from the same place with
 * the same stack beneath it millions of times, and libunwind's walk (even
 * with its per-thread cache) plus the stack's hash and lookup were most of
 * what --stacks cost. The cache is exact, not a guess: libunwind's walk on
 * x86-64 is a function of where it starts -- the hook's caller's return
 * address (pc0), stack pointer (sp0) and frame pointer (rbp0) at the call
 * -- and of the memory it reads on the way: at each step the locations the
 * caller's rip, rsp and rbp are restored from (unw_get_save_loc; a CFA rule
 * is the unwound rsp or rbp plus an offset). Each entry keeps that start
 * and those cells with the values they held; a hit needs the same start
 * and every cell holding the same value, read inner to outer and stopping
 * at the first difference, so a cell is only read where the true walk
 * would read it. The same leaf under another outer stack differs in a
 * return-address cell; the same frames at other depths differ in sp0.
 *
 * Entries are filled from a cursor walk (unw_step, which tells the save
 * locations; dearer than unw_backtrace's) on a miss at a start seen on the
 * thread's previous miss, so a program whose stacks never repeat pays a
 * few loads a call, not the dearer walk. Nothing allocates, nothing locks:
 * the entries are the thread's own (initial-exec TLS), and a signal handler
 * that allocates while one is being filled is not recorded (the hooks'
 * recursion guard).
 *
 * Not covered (a miss, never a wrong stack): stacks deeper than the cells
 * an entry holds, a start inside this library (a hook called by a hook).
 * Assumed, as any unwinder's cache keyed by address does: the code (and
 * its unwind tables) at an address does not change while it is on a
 * thread's stack.
 */
#include "preload.h"

#ifdef MEMPROF_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "writer_internal.h"

#define SC_ENTRIES 4 /* a thread's: a loop's call sites, one site's outer stacks */
#define SC_CELLS 40  /* an entry's cells: about 20 frames */

typedef struct {
	uint64_t pc0, sp0, rbp0, writer; /* writer: mp_writer_t's id (0: empty) */
	uint32_t id, ncells;
	uint64_t cell[SC_CELLS][2]; /* address, value */
} sc_entry_t;

typedef struct {
	sc_entry_t e[SC_ENTRIES];
	uint64_t missed[SC_ENTRIES]; /* pc0 ^ sp0 of the latest misses */
	unsigned nmissed;            /* misses so far (mod 2^32) */
	unsigned next;               /* the entry to fill next, round robin */
	uint64_t hits, fills;
	unsigned filling;  /* the entry being filled, for mp__stackcache_put */
} sc_thread_t;

static __thread sc_thread_t sc __attribute__((tls_model("initial-exec")));

/* The hook's caller's state at the call, from the frame-pointer chain of
 * this library's own frames (built with -fno-omit-frame-pointer): up the
 * chain while the return address is inside the library. 0 when the chain
 * looks wrong. */
static inline __attribute__((always_inline)) int start_of(uintptr_t fp, uint64_t lo, uint64_t hi, uint64_t start[3])
{
	int i;

	for (i = 0; i < 8; i++) {
		const uintptr_t *f = (const uintptr_t *)fp;
		if (f[1] < lo || f[1] >= hi) {
			start[0] = f[1];    /* pc0 */
			start[1] = fp + 16; /* sp0 */
			start[2] = f[0];    /* rbp0 */
			return start[0] != 0;
		}
		if (f[0] <= fp || f[0] - fp > (16u << 10) || (f[0] & 7))
			return 0;
		fp = f[0];
	}
	return 0;
}

/* 1: a hit; 0: a miss, and start[0] = 0 when no entry has the start
 * either (a cell differed: the same call site under another outer stack) */
int mp__stackcache_hit(mp_writer_t *w, uint64_t lo, uint64_t hi, uint32_t *id, uint64_t start[3])
{
	int k, seen = 0;

	start[0] = 0;
	if (!w || !start_of((uintptr_t)__builtin_frame_address(0), lo, hi, start))
		return 0;
	for (k = 0; k < SC_ENTRIES; k++) {
		const sc_entry_t *e = &sc.e[k];
		uint32_t i;
		if (e->pc0 != start[0] || e->sp0 != start[1] || e->rbp0 != start[2] || e->writer != w->id)
			continue;
		seen = 1;
		for (i = 0; i < e->ncells; i++)
			if (*(const volatile uint64_t *)(uintptr_t)e->cell[i][0] != e->cell[i][1])
				break;
		if (i == e->ncells) {
			sc.hits++;
			*id = e->id;
			return 1;
		}
	}
	if (seen) /* worth an entry of its own */
		sc.missed[sc.nmissed++ % SC_ENTRIES] = start[0] ^ start[1];
	return 0;
}

/* Where the step from c's frame reads a register of the caller: a cell of
 * the caller's stack, noted with its value. Below sp0 are the registers'
 * values at the start (where libunwind keeps them), which the start holds.
 * -1: not something the entry can hold. */
static int add_cell(sc_entry_t *e, unw_cursor_t *c, int reg, uint64_t sp0)
{
	unw_save_loc_t loc;

	if (unw_get_save_loc(c, reg, &loc) < 0)
		return -1;
	if (loc.type == UNW_SLT_NONE || (loc.type == UNW_SLT_MEMORY && loc.u.addr < sp0))
		return 0;
	if (loc.type != UNW_SLT_MEMORY || e->ncells == SC_CELLS)
		return -1;
	e->cell[e->ncells][0] = loc.u.addr;
	e->cell[e->ncells][1] = *(const uint64_t *)(uintptr_t)loc.u.addr;
	e->ncells++;
	return 0;
}

/* unw_backtrace into pcs. Each walk in a frame of its own, so that the
 * cursor walk's context and cursor and this array are never on the
 * stack together: the hooks run on the program's threads, some of them
 * of 16 KiB (docs/hooks.md, "Threads with small stacks"). */
__attribute__((noinline)) int mp__stackcache_backtrace(uint64_t *pcs, int max)
{
	void *ips[MP_STACK_DEPTH + 16];
	int i, n = unw_backtrace(ips, max);

	for (i = 0; i < n; i++)
		pcs[i] = (uint64_t)(uintptr_t)ips[i];
	return n;
}

/* The cursor walk: pcs as unw_backtrace's, and the entry's cells. */
static __attribute__((noinline)) int cursor_walk(const uint64_t start[3], uint64_t *pcs, int max, int *fill)
{
	unw_context_t ctx;
	unw_cursor_t c;
	sc_entry_t *e;
	int n = 0, found = 0, ok = 1, step;

	if (unw_getcontext(&ctx) || unw_init_local(&c, &ctx) < 0)
		return 0;
	sc.filling = sc.next++ % SC_ENTRIES;
	e = &sc.e[sc.filling];
	e->writer = 0; /* empty until mp__stackcache_put */
	e->ncells = 0;
	for (;;) {
		unw_word_t ip, sp, rbp;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || unw_get_reg(&c, UNW_REG_SP, &sp) < 0) {
			ok = 0;
			break;
		}
		pcs[n++] = ip;
		if (!found && ip == start[0]) {
			/* the hook's caller: the start must be what the walk saw */
			found = 1;
			ok = unw_get_reg(&c, UNW_X86_64_RBP, &rbp) == 0 && sp == start[1] && rbp == start[2];
		}
		if (n >= max)
			break;
		if (found && ok) /* where the step reads its caller's registers */
			ok = add_cell(e, &c, UNW_X86_64_RIP, start[1]) == 0 &&
			     add_cell(e, &c, UNW_X86_64_RSP, start[1]) == 0 &&
			     add_cell(e, &c, UNW_X86_64_RBP, start[1]) == 0;
		if ((step = unw_step(&c)) <= 0) {
			ok &= step == 0; /* the end, not an error */
			break;
		}
	}
	sc.fills++;
	if (found && ok) {
		e->pc0 = start[0], e->sp0 = start[1], e->rbp0 = start[2];
		*fill = 1;
	}
	return n;
}

int mp__stackcache_walk(const uint64_t start[3], uint64_t *pcs, int max, int *fill)
{
	int k;

	*fill = 0;
	for (k = 0; k < SC_ENTRIES && start[0]; k++)
		if (sc.missed[k] == (start[0] ^ start[1]))
			break;
	/* A start not among the latest misses, or more fills than the hits
	 * pay for (a call site under more outer stacks than the entries hold):
	 * a walk without save locations. The cursor walk costs about 60
	 * unw_backtrace's (alloc_bench, every allocation so: 7-8 CPU-us a
	 * walk against 0.12, a third of it in the kernel), so after 16 fills
	 * a thread fills once per 256 hits at most, and a program whose
	 * stacks never repeat pays little more than before. */
	if (!start[0] || k == SC_ENTRIES || (sc.fills >= 16 && sc.hits < 256 * sc.fills)) {
		if (start[0])
			sc.missed[sc.nmissed++ % SC_ENTRIES] = start[0] ^ start[1];
		return mp__stackcache_backtrace(pcs, max);
	}
	sc.missed[k] = 0; /* filled: a miss again starts over */
	return cursor_walk(start, pcs, max, fill);
}

void mp__stackcache_put(mp_writer_t *w, const uint64_t start[3], int fill, uint32_t id)
{
	sc_entry_t *e = &sc.e[sc.filling];

	if (!fill || !w || e->pc0 != start[0])
		return;
	e->id = id;
	e->writer = w->id;
}
#endif
