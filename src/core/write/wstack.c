/* wstack.c - call stacks for the writer: interned to ids like strings.
 *
 * A traced program that allocates in a loop repeats a handful of call
 * stacks millions of times, so each distinct stack is written once (a STACK
 * section: id, frame count, frames) and an event carries only its id (a
 * STACK record before it, docs/format.md). Lookups are lock-free: an
 * open-addressing table whose slots are published with a release store of
 * the frames pointer, as intern.c does for strings. The first sight of a
 * stack takes defs_mu, appends the definition to the pending defs and only
 * then publishes the slot, so the flusher (which takes the defs after the
 * rings) always writes a definition in the block of its first use or
 * earlier. Old tables stay in the arena until close: a concurrent lookup
 * never reads freed memory.
 */
#include <memprof/format.h>
#include <memprof/format/varint.h>

#include "writer_internal.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

static uint64_t stack_hash(const uint64_t *pcs, uint32_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
	uint32_t i;

	for (i = 0; i < n; i++) {
		h ^= pcs[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
	}
	return h | 1; /* never 0 */
}

static uint32_t stack_lookup(mp_writer_t *w, const uint64_t *pcs, uint32_t n, uint64_t hash)
{
	mp_stack_table_t *t = atomic_load_explicit(&w->stacks, memory_order_acquire);
	uint32_t i;

	if (!t)
		return 0;
	for (i = (uint32_t)hash & t->mask;; i = (i + 1) & t->mask) {
		mp_stack_slot_t *slot = &t->slots[i];
		const uint64_t *f = atomic_load_explicit(&slot->frames, memory_order_acquire);
		if (!f)
			return 0;
		if (slot->hash == hash && slot->n == n && memcmp(f, pcs, (size_t)n * sizeof(*pcs)) == 0)
			return slot->id;
	}
}

static void table_put(mp_stack_table_t *t, const uint64_t *frames, uint32_t n, uint64_t hash, uint32_t id)
{
	uint32_t i = (uint32_t)hash & t->mask;

	while (atomic_load_explicit(&t->slots[i].frames, memory_order_relaxed))
		i = (i + 1) & t->mask;
	t->slots[i].hash = hash;
	t->slots[i].n = n;
	t->slots[i].id = id;
	atomic_store_explicit(&t->slots[i].frames, frames, memory_order_release);
}

/* Caller holds defs_mu. *fresh = 1 when the stack was new. */
static int insert_locked(mp_writer_t *w, const uint64_t *pcs, uint32_t n, uint64_t hash, uint32_t *id, int *fresh)
{
	mp_stack_table_t *t = atomic_load_explicit(&w->stacks, memory_order_relaxed);
	uint8_t hdr[1 + 2 * MP_VARINT_MAX], *p;
	uint64_t *copy;
	uint32_t i, found;

	*fresh = 0;
	if ((found = stack_lookup(w, pcs, n, hash))) {
		*id = found;
		return 0;
	}
	if (!t || (w->stack_count + 1) * 2 > t->mask + 1) {
		uint32_t cap = t ? (t->mask + 1) * 2 : 1024;
		mp_stack_table_t *bigger = mp_arena_alloc(&w->arena, sizeof(*bigger) + (size_t)cap * sizeof(mp_stack_slot_t));
		if (!bigger)
			return -ENOMEM;
		bigger->mask = cap - 1;
		if (t) {
			for (i = 0; i <= t->mask; i++) {
				const uint64_t *f = atomic_load_explicit(&t->slots[i].frames, memory_order_relaxed);
				if (f)
					table_put(bigger, f, t->slots[i].n, t->slots[i].hash, t->slots[i].id);
			}
		}
		atomic_store_explicit(&w->stacks, bigger, memory_order_release);
		t = bigger;
	}
	copy = mp_arena_alloc(&w->arena, (size_t)n * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, pcs, (size_t)n * sizeof(*copy));

	/* STACK section: id, n, then the frames as varints. */
	p = hdr;
	*p++ = MP_SEC_STACK;
	p = mp_varint_put(p, w->stack_count + 1);
	p = mp_varint_put(p, n);
	if (mp_mbuf_reserve(&w->defs, (size_t)(p - hdr) + (size_t)n * MP_VARINT_MAX))
		return -ENOMEM;
	mp_mbuf_append(&w->defs, hdr, (size_t)(p - hdr));
	for (i = 0; i < n; i++) {
		uint8_t v[MP_VARINT_MAX];
		mp_mbuf_append(&w->defs, v, (size_t)(mp_varint_put(v, pcs[i]) - v));
	}
	*id = ++w->stack_count;
	table_put(t, copy, n, hash, *id);
	*fresh = 1;
	return 0;
}

/* defs_mu, but never forever. The annotation API takes it without the
 * hooks' recursion guard, so a signal handler that allocates (with a new
 * stack) while its thread is inside mp_writer_intern would wait on itself.
 * The holder only appends a few bytes: after 20 ms the stack is given up
 * (that allocation is recorded without one). */
int mp__defs_lock(mp_writer_t *w)
{
	struct timespec t0, t;
	int i;

	for (i = 0;; i++) {
		if (pthread_mutex_trylock(&w->defs_mu) == 0)
			return 0;
		if (i == 0)
			clock_gettime(CLOCK_MONOTONIC, &t0);
		else if (i % 16 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 20000000L)
				return -EDEADLK;
			sched_yield();
		}
	}
}

int mp_writer_stack(mp_writer_t *w, const uint64_t *pcs, uint32_t n, uint32_t *id)
{
	uint64_t hash;
	int rc, fresh = 0, covered = 1;

	*id = 0;
	if (!w || !pcs || n == 0 || n > MP_WRITER_STACK_MAX)
		return -EINVAL;
	hash = stack_hash(pcs, n);
	if ((*id = stack_lookup(w, pcs, n, hash)))
		return 0;
	if ((rc = mp__defs_lock(w)))
		return rc;
	rc = insert_locked(w, pcs, n, hash, id, &fresh);
	if (!rc && fresh)
		covered = mp__modules_cover_locked(w, pcs, n);
	pthread_mutex_unlock(&w->defs_mu);
	if (rc) {
		*id = 0;
		return rc;
	}
	/* New code (a dlopen since the last map): describe it now, outside
	 * defs_mu. Only on the first sight of a stack, never per event. */
	if (!covered)
		mp_writer_modules(w);
	return 0;
}

_Static_assert(MP_WRITER_STACK_MAX == MP_STACK_MAX_FRAMES, "readers accept what the writer writes");
