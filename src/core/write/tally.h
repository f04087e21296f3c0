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
 * The rules are the live-set engine's (memprof/live.h), which the solver
 * calls, for the address model (tests/solver/test_live_equiv.c checks
 * this copy against the engine on the same streams):
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

/* (3.0) a span of rounds, folded together for a kept run's whole-run file
 * (tally_rounds.c, wkeep.c): the least and most live bytes over the span
 * (first times), the step at the most, the span's first and last moments,
 * its live regions' most, its failed allocations and the first one's time
 * and request. rounds 0: empty (the mapped pages' zeros). */
typedef struct mp_tally_span {
	uint64_t rounds;
	int moment; /* a round of the span had a moment of this memory id */
	uint64_t min, min_ns, max, max_ns, first_ns, last_ns;
	int64_t max_step;
	uint64_t rsv_max, rsv_max_ns;
	uint64_t failed, failed_ns, failed_req;
} mp_tally_span_t;

typedef struct mp_tally_mem {
	uint64_t v[MP_SUMF_COUNT];
	/* (2.5) this round's figures for its ROUND section (tally_rounds.c):
	 * live bytes' least and most since the round's start (the live bytes
	 * then included, at the round's start time), their first times and
	 * the step at the most, the times of the first and last moments (last
	 * UINT64_MAX: none this round), the live regions' bytes and their
	 * most in the round, the round's failed allocations and the first
	 * one's time and request. */
	uint64_t r_min, r_min_ns, r_max, r_max_ns, r_first_ns, r_last_ns;
	int64_t r_max_step;
	uint64_t rsv_max, rsv_max_ns;
	uint64_t r_failed, r_failed_ns, r_failed_req;
	int has_peak;
	uint64_t reserved;    /* (2.5) bytes of its live regions (v[MP_SUMF_RESERVED_PEAK]: their peak;
	                       * rsv_max: their most this round) */
	mp_tally_span_t span; /* (3.0) the rounds since the whole-run file's last ROUND */
	int kind;             /* declared kind */
	const char *name;     /* declared name (the writer's arena), NULL: not declared */
	uint32_t name_len;
} mp_tally_mem_t;

/* The live blocks' table: two-choice hashing, in buckets of two slots,
 * one cache line each. A block lives in one of the two buckets its hash
 * picks (an allocation goes into the less full one), or, when both are
 * full and none of their blocks can move to its other bucket, in a small
 * stash (with at most three blocks for four buckets, both are full a few
 * times in a thousand). Looking a block up is two lines, fetched early
 * (tally_round.c), and the four slots compared without a branch on what
 * they hold: when the table was probed slot by slot, that branch, which a
 * predictor cannot follow, cost more than the rest of an event. The far
 * path (tally.c) is for the rare rest: a stash in use, a free of an
 * address not live, an allocation that finds both buckets full. */
#define MP_TALLY_STASH 32

/* A block's key: its address and memory id in one word, so that a slot is
 * compared with one load and one compare (the tally's cost is its
 * instructions). Below 2^53 (every address a process maps, and every
 * device or pool offset seen) the key is the address with mem + 1 in the
 * 11 bits above it: one to one, never 0 (0 marks a free slot), so that no
 * two live blocks share a hash, nor both buckets at every table size (no
 * larger table would part them). Higher addresses get a key with all
 * those bits set, which no lower one has, the id and the address's low 43
 * bits below: it is not one to one, so their slots are told apart by the
 * whole address too (mp__tally_is), and tally_round.c leaves them to
 * mp__tally_apply. (Only blocks alike in those 43 bits share both
 * buckets: 37 such live at once would fail the table, tally.c.) */
#define MP_TALLY_KEY_BITS 53
#define MP_TALLY_HIGH (0x7ffull << MP_TALLY_KEY_BITS)

static inline uint64_t mp__tally_key(uint64_t addr, uint32_t mem)
{
	if (__builtin_expect(addr >> MP_TALLY_KEY_BITS, 0))
		return MP_TALLY_HIGH | (uint64_t)mem << 43 | (addr & ((1ull << 43) - 1));
	return addr ^ (uint64_t)(mem + 1) << MP_TALLY_KEY_BITS;
}

/* The key's hash: one to one (a rotation, then an odd multiplier). The
 * second bucket is picked by the hash's low bits, and a product's low bits
 * are its factors' low bits alone: without the rotation every block of a
 * 16-byte-aligned allocator (glibc's: all of them) had a second bucket
 * among one in sixteen, whose overflow filled the stash, and each full
 * stash grew the table. A Python process growing to 260,000 blocks of 1040
 * bytes had its table regrown again and again, up to 32 MiB, and one of
 * its rounds spent 335 ms in the tally. */
static inline uint64_t mp__tally_hash(uint64_t key)
{
	return (key >> 4 | key << 60) * 0x9E3779B97F4A7C15ull;
}

typedef struct mp_tally_slot {
	uint64_t key; /* 0: free */
	uint64_t fp, req;
	/* below MP_TALLY_HIGH the key holds the address: this word holds the
	 * block's tag (2.5, tally_tags.c; 0: none); above, the address (the
	 * block's tag is lost: mp_tally_t.tags_lost) */
	uint64_t addr;
} mp_tally_slot_t;

typedef struct mp_tally_bucket {
	mp_tally_slot_t lane[2];
} mp_tally_bucket_t;

/* One event as the tally takes it (tally_round.c decodes them from the
 * rings; a REALLOC gives two, its free half then its allocation half).
 * op: MP_TALLY_ALLOC or MP_TALLY_FREE (the common case, without a branch
 * between them), MP_TALLY_FAILED or MP_TALLY_MOMENT (a region added or
 * removed: a moment the peak is looked for, nothing more). Allocations,
 * frees and reallocs are counted as they are decoded (their number does
 * not depend on the table). */
enum { MP_TALLY_ALLOC = 0, MP_TALLY_FREE = 1, MP_TALLY_FAILED = 2, MP_TALLY_MOMENT = 3 };
/* (2.4) what the checkpoints need beside the blocks, kept by
 * tally_regions.c: regions added and removed (moments too: addr the base,
 * fp the size) and steps (not moments: fp the step's zigzag). */
enum { MP_TALLY_REGION_ADD = 4, MP_TALLY_REGION_REMOVE = 5, MP_TALLY_STEP = 6 };
/* (2.5) a mark (fp: its label), for the checkpoints' last mark: not a moment */
enum { MP_TALLY_MARK = 7 };

/* A live region of a memory id: [base, end). */
typedef struct mp_tally_region {
	uint64_t mem, base, end;
} mp_tally_region_t;

typedef struct mp_tally_ev {
	uint64_t ns;
	uint64_t key; /* mp__tally_key(addr, mem) */
	uint64_t fp;  /* the footprint: allocated size, or requested when that is 0 */
	uint64_t req;
	uint64_t addr;
	uint32_t mem; /* < MP_TALLY_MEMS */
	uint32_t op;
	uint32_t tag; /* (2.5) an allocation's tag (tally_tags.c), 0: none */
} mp_tally_ev_t;

static inline mp_tally_ev_t mp__tally_event(uint64_t ns, uint64_t addr, uint64_t fp, uint64_t req, uint32_t mem,
					    uint32_t op)
{
	return (mp_tally_ev_t){ns, mp__tally_key(addr, mem), fp, req, addr, mem, op, 0};
}

/* (2.5) what an allocation carries (its thread's CONTEXT and STACK) */
typedef struct mp_tally_tag {
	uint32_t op, region, dtype, shape, stack;
} mp_tally_tag_t;

/* The slot word of an allocation (mp_tally_slot_t.addr) */
static inline uint64_t mp__tally_word(const mp_tally_ev_t *e)
{
	return e->key < MP_TALLY_HIGH ? e->tag : e->addr;
}

/* The table where tally_round.c's loops keep it: in registers, not read
 * through the tally (whose stores to slots might alias it) on every
 * event; taken again after anything that may grow the table. */
typedef struct mp_tally_tab {
	mp_tally_bucket_t *bucket;
	uint64_t mask;
	unsigned shift;
	uint32_t nstash;
} mp_tally_tab_t;

typedef struct mp_tally {
	mp_tally_mem_t *mem;       /* MP_TALLY_MEMS entries, mapped at first need; NULL before */
	uint32_t nmem;             /* 1 + the highest id declared or met */
	mp_tally_bucket_t *bucket; /* mask + 1 buckets; NULL before the first block */
	uint64_t mask;
	uint64_t n;                /* live blocks: at most 3 for 4 buckets */
	unsigned shift;            /* 64 - log2(buckets) */
	uint32_t nstash;
	mp_tally_slot_t stash[MP_TALLY_STASH];
	uint64_t events;           /* events tallied (a realloc counts 2) */
	uint64_t stacks;           /* call stacks defined in the blocks so far (flush.c sets it) */
	int failed;                /* out of memory once: the figures are no longer exact */
	mp_mbuf_t body;            /* the SUMMARY section being built */
	mp_mbuf_t cursors;         /* tally_round.c's per-thread cursors */
	/* checkpoints (format 2.4, tally_ckpt.c): one when ckpt_rounds_every
	 * rounds or ckpt_bytes_every bytes of file have passed since the last */
	uint32_t ckpt_rounds_every; /* 0: none */
	uint32_t ckpt_rounds;       /* rounds since the last one */
	uint64_t ckpt_bytes_every;
	uint64_t ckpt_off;          /* the file's size at the last one */
	uint64_t ckpt_events;       /* events tallied at the last one */
	uint64_t ckpt_per_block;    /* and at least that many events a live block since */
	mp_tally_region_t *reg;     /* live regions, by memory id then base (mapped) */
	uint64_t nreg, capreg;
	int64_t step;               /* the last step (-1 before the first, as the reader) */
	uint8_t step_back[2];       /* (3.0) a step went back since the last ROUND [0], the last span's
				       [1]: its MP_ROUND_F_STEP_BACK */
	uint64_t round_start;       /* (2.5) the previous round's horizon (0 before the first) */
	int span_on;                /* (3.0) --keep: each round folded into the span too */
	uint64_t span_start;        /* (3.0) the whole-run file's last horizon (0 before the first) */
	uint32_t last_mark;         /* (2.5) the label of the last mark, 0: none */
	int tagged;                 /* (2.5) a CONTEXT or STACK record was met: blocks may carry tags */
	/* (2.5) the tags allocations carried, interned (tally_tags.c):
	 * tag[id - 1], a hash of ids (0 empty) to find them; mapped */
	mp_tally_tag_t *tag;
	uint32_t ntag, captag;
	uint32_t *tag_hash;
	int tags_lost;              /* a tag could not be kept (too many, no room, an address above 2^53) */
} mp_tally_t;

static inline mp_tally_tab_t mp__tally_tab(const mp_tally_t *t)
{
	return (mp_tally_tab_t){t->bucket, t->mask, t->shift, t->nstash};
}

/* tally.c */
/* Map t->mem if it is not (0 or -ENOMEM). */
int mp__tally_ready(mp_tally_t *t);
/* A memory id declared (mp_writer_memory, defs_mu held): its name is
 * copied into arena memory by the caller and borrowed here. */
void mp__tally_declare(mp_tally_t *t, uint32_t id, const char *name, uint32_t len, int kind);
/* Room in the table for `more` blocks beyond the live ones, at most 3 for
 * 4 buckets, and the stash empty: the first table, one twice larger (or
 * more), or, when the stash holds blocks, one of the same size built
 * again (twice larger if they do not all find a bucket). 0 or -ENOMEM. */
int mp__tally_reserve(mp_tally_t *t, uint64_t more);
struct mp_tally_figs;
/* mp__tally_apply's far path (e->op ALLOC or FREE), f holding the
 * figures (of e's memory id, and t->n). 0 or -ENOMEM. */
int mp__tally_apply_far(mp_tally_t *t, struct mp_tally_figs *f, const mp_tally_ev_t *e);
/* The SUMMARY section of the figures so far, covering the events before
 * horizon, appended to b (tag included). 0 or -ENOMEM. */
int mp__tally_put_summary(mp_tally_t *t, mp_mbuf_t *b, uint64_t horizon);
void mp__tally_release(mp_tally_t *t);
/* tally_ckpt.c: the interval, from MEMPROF_CHECKPOINT_MB (default 64; 0:
 * no checkpoints), MEMPROF_CHECKPOINT_ROUNDS (default 16) and
 * MEMPROF_CHECKPOINT_RATIO (events a live block between two, default 32;
 * 0: no such bound), read once at the writer's open. */
void mp__tally_ckpt_config(mp_tally_t *t);
/* At the end of a round (file_off: the file's size): when one is due, the
 * CHECKPOINT section of the live blocks, covering the events before
 * horizon, appended to b (tag included). Nothing when none is due, the
 * figures failed or the section would pass MP_CKPT_BODY_MAX. 0 or -ENOMEM. */
int mp__tally_put_checkpoint(mp_tally_t *t, mp_mbuf_t *b, uint64_t horizon, uint64_t file_off, uint32_t back);
/* tally_tags.c: the id (1 ..) of tag x, interned; 0 when it is none (all
 * zero) or cannot be kept (t->tags_lost set). */
uint32_t mp__tally_tag(mp_tally_t *t, const mp_tally_tag_t *x);
void mp__tally_tags_release(mp_tally_t *t);
void mp__tally_tags_release_maps(mp_tally_t *t); /* (the maps only) */
/* tally_regions.c: a region added or removed, or a step (e->op
 * MP_TALLY_REGION_ADD, _REMOVE, MP_TALLY_STEP), by the live-set engine's
 * rules (mp_live_region_add/remove). 0 or -ENOMEM (t->failed set). */
int mp__tally_other(mp_tally_t *t, const mp_tally_ev_t *e);
/* tally_rounds.c (2.5): the ROUND section of the round that ends at
 * horizon (the memory ids with moments in it), appended to b (tag
 * included), then the round's figures started again from the live bytes
 * at horizon. Nothing when the figures failed. 0 or -ENOMEM. */
int mp__tally_put_round(mp_tally_t *t, mp_mbuf_t *b, uint64_t horizon);
/* (3.0) the ROUND section of the span of rounds since the last call (or
 * the first round), ending at horizon, appended to b, the span started
 * again; a kept run's whole-run file writes one every few rounds
 * (wkeep.c). Nothing when the tally keeps no span or has failed. */
int mp__tally_put_span(mp_tally_t *t, mp_mbuf_t *b, uint64_t horizon);
/* The round's figures of every memory id below t->nmem started again. */
void mp__tally_round_reset(mp_tally_t *t);
/* t->nmem raised to n, the new ids' round figures started (as though
 * they had been reset with the others: no moment yet). */
void mp__tally_round_ids(mp_tally_t *t, uint32_t n);

/* --- the events, inline: mp__tally_apply and its parts (tally_round.c's
 * fast path shares mp__tally_lanes and keeps the same rules) --- */

/* The two buckets of a hash: its top bits, and its low bits (at most 2^31
 * buckets: twice 31 bits). */
static inline mp_tally_bucket_t *mp__tally_b1(mp_tally_tab_t tab, uint64_t h)
{
	return &tab.bucket[h >> tab.shift];
}

static inline mp_tally_bucket_t *mp__tally_b2(mp_tally_tab_t tab, uint64_t h)
{
	return &tab.bucket[h & tab.mask];
}

/* The figures an event changes: one memory id's live and peak figures,
 * and the table's live blocks. They are taken out of the tally into a
 * local copy and put back: tally_round.c keeps that copy in registers
 * across a batch (store-load chains between events cost more than their
 * adds), mp__tally_apply around one event. */
typedef struct mp_tally_figs {
	uint32_t mem;
	int has_peak;
	uint64_t live, live_req, peak, peak_ns, peak_req, peak_req_ns;
	uint64_t r_min, r_min_ns, r_max, r_max_ns, r_first_ns, r_last_ns; /* (2.5) the round's, mp_tally_mem_t */
	int64_t step, r_max_step; /* the step in force (the tally's: taken again after each side event), at r_max */
	uint64_t dblocks; /* live blocks gained since taken, of the id and of the table (mp_tally_t.n) */
	uint64_t memhi; /* mem + 1, the top bits of the id's keys, once the id has
			 * a peak and while the stash is empty (tally_round.c's
			 * fast path); else a value no key has */
} mp_tally_figs_t;

static inline void mp__tally_figs_load(mp_tally_figs_t *f, const mp_tally_t *t, uint32_t mem)
{
	const mp_tally_mem_t *m = &t->mem[mem];

	f->mem = mem;
	f->has_peak = m->has_peak;
	f->live = m->v[MP_SUMF_LIVE];
	f->live_req = m->v[MP_SUMF_LIVE_REQ];
	f->peak = m->v[MP_SUMF_PEAK];
	f->peak_ns = m->v[MP_SUMF_PEAK_NS];
	f->peak_req = m->v[MP_SUMF_PEAK_REQ];
	f->peak_req_ns = m->v[MP_SUMF_PEAK_REQ_NS];
	f->r_min = m->r_min;
	f->r_min_ns = m->r_min_ns;
	f->r_max = m->r_max;
	f->r_max_ns = m->r_max_ns;
	f->r_first_ns = m->r_first_ns;
	f->step = t->step;
	f->r_max_step = m->r_max_step;
	f->r_last_ns = m->r_last_ns;
	f->dblocks = 0;
	f->memhi = m->has_peak && !t->nstash ? (uint64_t)mem + 1 : UINT64_MAX;
}

/* f's live blocks gained into the tally (its id's and the table's) */
static inline void mp__tally_figs_blocks(mp_tally_figs_t *f, mp_tally_t *t)
{
	t->mem[f->mem].v[MP_SUMF_LIVE_BLOCKS] += f->dblocks;
	t->n += f->dblocks;
	f->dblocks = 0;
}

static inline void mp__tally_figs_store(mp_tally_figs_t *f, mp_tally_t *t)
{
	mp_tally_mem_t *m = &t->mem[f->mem];

	m->has_peak = f->has_peak;
	m->v[MP_SUMF_LIVE] = f->live;
	m->v[MP_SUMF_LIVE_REQ] = f->live_req;
	m->v[MP_SUMF_PEAK] = f->peak;
	m->v[MP_SUMF_PEAK_NS] = f->peak_ns;
	m->v[MP_SUMF_PEAK_REQ] = f->peak_req;
	m->v[MP_SUMF_PEAK_REQ_NS] = f->peak_req_ns;
	m->r_min = f->r_min;
	m->r_min_ns = f->r_min_ns;
	m->r_max = f->r_max;
	m->r_max_ns = f->r_max_ns;
	m->r_first_ns = f->r_first_ns;
	m->r_max_step = f->r_max_step;
	m->r_last_ns = f->r_last_ns;
	mp__tally_figs_blocks(f, t);
}

/* A moment the solver looks for a peak at (see the top of this file). */
static inline void mp__tally_sample(mp_tally_figs_t *f, uint64_t ns)
{
	if (__builtin_expect(!f->has_peak || f->live > f->peak, 0)) {
		f->peak = f->live;
		f->peak_ns = ns;
	}
	if (__builtin_expect(!f->has_peak || f->live_req > f->peak_req, 0)) {
		f->peak_req = f->live_req;
		f->peak_req_ns = ns;
	}
	f->has_peak = 1;
	/* (2.5) the round's least and most (first times), its first and
	 * last moments */
	if (__builtin_expect(f->live < f->r_min, 0)) {
		f->r_min = f->live;
		f->r_min_ns = ns;
	}
	if (__builtin_expect(f->live > f->r_max, 0)) {
		f->r_max = f->live;
		f->r_max_ns = ns;
		f->r_max_step = f->step;
	}
	f->r_first_ns = f->r_last_ns == UINT64_MAX ? ns : f->r_first_ns;
	f->r_last_ns = ns;
}

static inline mp_tally_mem_t *mp__tally_mem(mp_tally_t *t, uint32_t mem)
{
	if (__builtin_expect(mem >= t->nmem, 0))
		mp__tally_round_ids(t, mem + 1);
	return &t->mem[mem];
}

/* 1 if slot x holds the live block of e's address (any key) */
static inline uint64_t mp__tally_is(const mp_tally_slot_t *x, const mp_tally_ev_t *e)
{
	return x->key == e->key && (e->key < MP_TALLY_HIGH || x->addr == e->addr);
}

/* What an allocation (is_alloc 1: footprint fp, requested req) or a free
 * (0: fp and req not counted) of f's memory id changes in f, once the
 * slot s is known: live says whether s holds the block that was at the
 * address. */
static inline void mp__tally_account(mp_tally_figs_t *f, uint64_t is_alloc, uint64_t fp, uint64_t req,
				     const mp_tally_slot_t *s, uint64_t live)
{
	f->live += (fp & -is_alloc) - (s->fp & -live);
	f->live_req += (req & -is_alloc) - (s->req & -live);
	f->dblocks += is_alloc - live;
}

/* The four slots of key's buckets compared at once, without a branch on
 * what they hold: the slot of its block (*found = 1), else the free slot
 * of the less full bucket (*full = 1: none, and the slot returned is not
 * free). key: below MP_TALLY_HIGH (one compare tells its slot). */
static inline mp_tally_slot_t *mp__tally_lanes(mp_tally_tab_t tab, uint64_t key, uint64_t *found, uint64_t *full)
{
	uint64_t h = mp__tally_hash(key);
	mp_tally_bucket_t *b1 = mp__tally_b1(tab, h), *b2 = mp__tally_b2(tab, h), *bf;
	uint64_t k0 = b1->lane[0].key == key, k1 = b1->lane[1].key == key;
	uint64_t k2 = b2->lane[0].key == key, k3 = b2->lane[1].key == key;
	uint64_t c1 = (uint64_t)(b1->lane[0].key != 0) + (b1->lane[1].key != 0);
	uint64_t c2 = (uint64_t)(b2->lane[0].key != 0) + (b2->lane[1].key != 0);
	mp_tally_slot_t *s;

	bf = c2 < c1 ? b2 : b1; /* the less full */
	s = &bf->lane[bf->lane[0].key != 0];
	s = k3 ? &b2->lane[1] : s;
	s = k2 ? &b2->lane[0] : s;
	s = k1 ? &b1->lane[1] : s;
	s = k0 ? &b1->lane[0] : s;
	*found = k0 | k1 | k2 | k3;
	*full = (c1 & c2) >> 1;
	return s;
}

/* The slot of e's block (*found = 1), or a free one for an allocation
 * (*found = 0) (mp__tally_lanes); NULL when the far path must look
 * (tally.c: it may be in the stash, a free of an address not live has
 * nothing to take off, an allocation may find no room). e: an ALLOC or a
 * FREE, its key below MP_TALLY_HIGH. */
static inline mp_tally_slot_t *mp__tally_find(mp_tally_tab_t tab, const mp_tally_ev_t *e, uint64_t *found)
{
	uint64_t full, is_alloc = e->op == MP_TALLY_ALLOC;
	mp_tally_slot_t *s = mp__tally_lanes(tab, e->key, found, &full);

	if (__builtin_expect((*found ^ 1) & ((tab.nstash != 0) | (is_alloc ^ 1) | full), 0))
		return NULL;
	return s;
}

/* Slot s after an allocation (its block) or a free (a free slot; the
 * other words are written too, and not read). */
static inline void mp__tally_put(mp_tally_slot_t *s, uint64_t is_alloc, uint64_t key, uint64_t fp, uint64_t req,
				 uint64_t addr)
{
	s->key = key & -is_alloc;
	s->fp = fp;
	s->req = req;
	s->addr = addr;
}

/* Event e into the tally (t->mem mapped, room reserved for it:
 * mp__tally_reserve); 0 or -ENOMEM. tally_round.c takes nearly every event
 * its own way (the same rules, its figures in registers); this is for the
 * others, and for tests. */
static inline int mp__tally_apply(mp_tally_t *t, const mp_tally_ev_t *e)
{
	mp_tally_figs_t f;
	mp_tally_slot_t *s;
	uint64_t found;
	int rc = 0;

	mp__tally_figs_load(&f, t, e->mem);
	if (e->op > MP_TALLY_FREE) {
		if (e->op >= MP_TALLY_REGION_ADD &&
		    (rc = mp__tally_other(t, e), e->op == MP_TALLY_STEP || e->op == MP_TALLY_MARK))
			return rc; /* a step or a mark is no moment of a memory id */
		if (e->op == MP_TALLY_FAILED) {
			mp_tally_mem_t *m = &t->mem[e->mem];
			m->v[MP_SUMF_FAILED]++;
			if (!m->r_failed++) { /* (2.5) the round's first */
				m->r_failed_ns = e->ns;
				m->r_failed_req = e->req;
			}
		}
		mp__tally_sample(&f, e->ns);
	} else if (e->key < MP_TALLY_HIGH && (s = mp__tally_find(mp__tally_tab(t), e, &found))) {
		uint64_t is_alloc = e->op == MP_TALLY_ALLOC;
		mp__tally_account(&f, is_alloc, e->fp, e->req, s, found);
		mp__tally_put(s, is_alloc, e->key, e->fp, e->req, e->tag);
		mp__tally_sample(&f, e->ns);
	} else {
		rc = mp__tally_apply_far(t, &f, e);
	}
	mp__tally_figs_store(&f, t);
	return rc;
}

#endif
