/* bruteforce.h - the solver tests' reference model: live blocks in a sorted
 * array, fragmentation recomputed from scratch by walking the regions. Slow
 * on purpose and simple enough to check by eye. */
#ifndef MEMPROF_TEST_BRUTEFORCE_H
#define MEMPROF_TEST_BRUTEFORCE_H

#include "test_rand.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BF_MAXB 8192

typedef struct blk {
	uint64_t addr, size, req;
	uint32_t op, shape;
} blk_t;

typedef struct bf {
	blk_t b[BF_MAXB]; /* sorted by address */
	size_t n;
	uint64_t heap;
} bf_t;

/* xorshift64: a number below n, from the caller's state. */
static inline uint64_t bf_rand(uint64_t *state, uint64_t n)
{
	return mp_test_xorshift(state) % n;
}

/* Index of the first block at or above addr. */
static inline size_t bf_lower(const bf_t *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->b[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline int bf_overlaps(const bf_t *s, uint64_t addr, uint64_t size)
{
	size_t i = bf_lower(s, addr);

	if (i < s->n && s->b[i].addr < addr + size)
		return 1;
	return i > 0 && s->b[i - 1].addr + s->b[i - 1].size > addr;
}

static inline void bf_insert(bf_t *s, const blk_t *b)
{
	size_t i = bf_lower(s, b->addr);

	memmove(&s->b[i + 1], &s->b[i], (s->n - i) * sizeof(*b));
	s->b[i] = *b;
	s->n++;
	s->heap += b->size;
}

static inline void bf_remove_at(bf_t *s, size_t i)
{
	s->heap -= s->b[i].size;
	memmove(&s->b[i], &s->b[i + 1], (s->n - i - 1) * sizeof(s->b[0]));
	s->n--;
}

/* Largest and total free gap inside the live ones of nreg regions
 * [rb[r], rb[r] + rs[r]); a block straddling a region's end is not in it. */
static inline void bf_frag(const bf_t *s, int nreg, const uint64_t *rb, const uint64_t *rs, const int *live,
			   uint64_t *largest, uint64_t *total)
{
	*largest = *total = 0;
	for (int r = 0; r < nreg; r++) {
		uint64_t cur, end = rb[r] + rs[r];
		if (!live[r])
			continue;
		cur = rb[r];
		for (size_t i = bf_lower(s, rb[r]); i < s->n && s->b[i].addr < end; i++) {
			if (s->b[i].addr + s->b[i].size > end)
				continue;
			uint64_t g = s->b[i].addr - cur;
			*total += g;
			*largest = g > *largest ? g : *largest;
			cur = s->b[i].addr + s->b[i].size;
		}
		*total += end - cur;
		*largest = end - cur > *largest ? end - cur : *largest;
	}
}

#endif
