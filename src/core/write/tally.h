/* tally.h - the flusher's running figures of the capture, per memory id
 * (internal): what `memprof report` would count replaying the events, kept
 * while recording and written at the end of every round as a SUMMARY
 * section (format 2.1), so that `memprof record`'s closing line needs no
 * read-back of the capture (memprof/capsummary.h reads it).
 *
 * To be exact the tally must see the events in the order a reader returns
 * them: by time, ties by thread index, each thread's own order kept
 * (merge.c). tally_round.c does that in every flush round, for the
 * records earlier than the round's horizon (the reader returns those
 * before it reads the next round); later ones wait in their ring for the
 * next round (their space is not handed back until they are tallied).
 *
 * The rules are the solver's (src/solver/solver.c) for the address model:
 * an allocation at an address that is live drops the block there first
 * (report's duplicate_allocations), a free of an address that is not live
 * changes nothing (unknown_frees); a block counts its allocated size, or
 * its requested size when the allocated one is 0; the peak is the first
 * event at the maximum; each event of a memory id but steps and marks
 * (allocations, frees, failed allocations, region changes) is a moment the
 * peak is looked for, the first one setting it. A realloc is a free and an
 * allocation (report counts both) that this tally also counts apart
 * (MP_SUMF_REALLOCS). The same figures are kept for requested sizes.
 *
 * Nothing here calls malloc (the writer runs inside traced programs): the
 * live blocks' table and the per-id figures are mmap'ed, the table grows by
 * mapping a twice larger one.
 */
#ifndef MP_TALLY_H
#define MP_TALLY_H

#include <memprof/format.h>
#include <memprof/format/mbuf.h>

#include <errno.h>
#include <stdint.h>

#define MP_TALLY_MEMS 1024 /* memory ids a writer declares (mp_writer_memory's limit) */

typedef struct mp_tally_mem {
	uint64_t v[MP_SUMF_COUNT];
	int has_peak;
	int kind;             /* declared kind */
	const char *name;     /* declared name (the writer's arena), NULL: not declared */
	uint32_t name_len;
} mp_tally_mem_t;

/* A live block: open addressing, linear probing, deleted by backward
 * shift (no tombstones: a long run's churn does not slow the probes). */
typedef struct mp_tally_slot {
	uint64_t addr, req, fp;
	uint32_t mem;
	uint32_t home1; /* 1 + the slot its hash points at (deletion need not hash again); 0: empty */
} mp_tally_slot_t;

typedef struct mp_tally {
	mp_tally_mem_t *mem;   /* MP_TALLY_MEMS entries, mapped at first need; NULL before */
	uint32_t nmem;         /* 1 + the highest id declared or met */
	mp_tally_slot_t *slot; /* mask + 1 slots; NULL before the first block */
	uint64_t mask, n;
	unsigned shift;        /* 64 - log2(slots) */
	uint64_t events;       /* events tallied (a realloc counts 2) */
	uint64_t stacks;       /* call stacks defined in the blocks so far (flush.c sets it) */
	int failed;            /* out of memory once: the figures are no longer exact */
	mp_mbuf_t body;        /* the SUMMARY section being built */
	mp_mbuf_t cursors;     /* tally_round.c's per-thread cursors */
} mp_tally_t;

/* tally.c */
/* Map t->mem if it is not (0 or -ENOMEM). */
int mp__tally_ready(mp_tally_t *t);
/* A memory id declared (mp_writer_memory, defs_mu held): its name is
 * copied into arena memory by the caller and borrowed here. */
void mp__tally_declare(mp_tally_t *t, uint32_t id, const char *name, uint32_t len, int kind);
/* Twice the slots (or the first ones); 0 or -ENOMEM. */
int mp__tally_grow(mp_tally_t *t);
/* The SUMMARY section of the figures so far, covering the events before
 * horizon, appended to b (tag included). 0 or -ENOMEM. */
int mp__tally_put_summary(mp_tally_t *t, mp_mbuf_t *b, uint64_t horizon);
void mp__tally_release(mp_tally_t *t);

/* --- the events, inline: tally_round.c calls them for every record --- */

static inline uint64_t mp__tally_hash(uint64_t addr, uint32_t mem)
{
	return ((addr >> 4) ^ ((uint64_t)mem << 48)) * 0x9E3779B97F4A7C15ull;
}

/* The slot holding (addr, mem), or the empty one where it would go
 * (*found says which; *home1 is 1 + the slot the hash points at). The
 * table has at least one empty slot. */
static inline mp_tally_slot_t *mp__tally_find(const mp_tally_t *t, uint64_t addr, uint32_t mem, int *found,
					      uint32_t *home1)
{
	uint64_t i = mp__tally_hash(addr, mem) >> t->shift;

	*home1 = (uint32_t)i + 1;
	for (;; i = (i + 1) & t->mask) {
		mp_tally_slot_t *s = &t->slot[i];
		if (!s->home1) {
			*found = 0;
			return s;
		}
		if (s->addr == addr && s->mem == mem) {
			*found = 1;
			return s;
		}
	}
}

/* Remove slot s, shifting back the entries of its run that may move. */
static inline void mp__tally_remove(mp_tally_t *t, mp_tally_slot_t *s)
{
	uint64_t i = (uint64_t)(s - t->slot), j = i, home;

	for (;;) {
		j = (j + 1) & t->mask;
		if (!t->slot[j].home1)
			break;
		home = t->slot[j].home1 - 1;
		/* the entry at j may fill the hole at i when i lies on its
		 * probe path, [home, j] cyclically */
		if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
			t->slot[i] = t->slot[j];
			i = j;
		}
	}
	t->slot[i].home1 = 0;
	t->n--;
}

/* A moment the solver looks for a peak at (see the top of this file). */
static inline void mp__tally_sample(mp_tally_mem_t *m, uint64_t ns)
{
	if (!m->has_peak || m->v[MP_SUMF_LIVE] > m->v[MP_SUMF_PEAK]) {
		m->v[MP_SUMF_PEAK] = m->v[MP_SUMF_LIVE];
		m->v[MP_SUMF_PEAK_NS] = ns;
	}
	if (!m->has_peak || m->v[MP_SUMF_LIVE_REQ] > m->v[MP_SUMF_PEAK_REQ]) {
		m->v[MP_SUMF_PEAK_REQ] = m->v[MP_SUMF_LIVE_REQ];
		m->v[MP_SUMF_PEAK_REQ_NS] = ns;
	}
	m->has_peak = 1;
}

static inline mp_tally_mem_t *mp__tally_mem(mp_tally_t *t, uint32_t mem)
{
	if (mem >= t->nmem)
		t->nmem = mem + 1;
	return &t->mem[mem];
}

/* The allocation half of a realloc when is_realloc. mem < MP_TALLY_MEMS,
 * t->mem mapped. 0 or -ENOMEM. */
static inline int mp__tally_alloc(mp_tally_t *t, uint32_t mem, uint64_t ns, uint64_t addr, uint64_t req,
				  uint64_t alloc, int is_realloc)
{
	mp_tally_mem_t *m = mp__tally_mem(t, mem);
	uint64_t fp = alloc ? alloc : req;
	mp_tally_slot_t *s;
	uint32_t home1;
	int found;

	/* at most half full: a quarter full gave probes that stop at the
	 * first slot more often, but a table twice the size, which the
	 * flusher's other data pushes out of the caches (alloc_bench: 4096
	 * live blocks, 512 KiB) */
	if (__builtin_expect((t->n + 1) * 2 > t->mask + 1 || !t->slot, 0) && mp__tally_grow(t))
		return -ENOMEM;
	s = mp__tally_find(t, addr, mem, &found, &home1);
	if (found) { /* the solver drops the block that was there */
		m->v[MP_SUMF_LIVE] -= s->fp;
		m->v[MP_SUMF_LIVE_REQ] -= s->req;
		m->v[MP_SUMF_LIVE_BLOCKS]--;
	} else {
		s->addr = addr;
		s->mem = mem;
		s->home1 = home1;
		t->n++;
	}
	s->req = req;
	s->fp = fp;
	m->v[MP_SUMF_LIVE] += fp;
	m->v[MP_SUMF_LIVE_REQ] += req;
	m->v[MP_SUMF_LIVE_BLOCKS]++;
	m->v[is_realloc ? MP_SUMF_REALLOCS : MP_SUMF_ALLOCS]++;
	mp__tally_sample(m, ns);
	return 0;
}

/* The free half of a realloc when is_realloc (then not counted as a free). */
static inline void mp__tally_free(mp_tally_t *t, uint32_t mem, uint64_t ns, uint64_t addr, int is_realloc)
{
	mp_tally_mem_t *m = mp__tally_mem(t, mem);
	mp_tally_slot_t *s;
	uint32_t home1;
	int found = 0;

	if (t->slot) {
		s = mp__tally_find(t, addr, mem, &found, &home1);
		if (found) {
			m->v[MP_SUMF_LIVE] -= s->fp;
			m->v[MP_SUMF_LIVE_REQ] -= s->req;
			m->v[MP_SUMF_LIVE_BLOCKS]--;
			mp__tally_remove(t, s);
		}
	}
	m->v[MP_SUMF_FREES] += !is_realloc;
	mp__tally_sample(m, ns);
}

/* A failed allocation, or a region declared or removed (failed = 0). */
static inline void mp__tally_other(mp_tally_t *t, uint32_t mem, uint64_t ns, int failed)
{
	mp_tally_mem_t *m = mp__tally_mem(t, mem);

	m->v[MP_SUMF_FAILED] += (uint64_t)failed;
	mp__tally_sample(m, ns);
}

#endif
