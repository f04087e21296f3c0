/* merge.c - per-thread chunk queues, and the k-way merge that yields events
 * in global timestamp order; records are decoded in decode.c, and chunks
 * come from and go back to chunks.c (see reader_internal.h). */
#include <memprof/format.h>
#include <memprof/format/columns.h>
#include <memprof/format/varint.h>

#include "reader_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void mp__merge_init(mp_merge_t *m)
{
	memset(m, 0, sizeof(*m));
}

static void free_chunks(mp_rthread_t *t)
{
	mp_chunk_t *c = t->head;

	while (c) {
		mp_chunk_t *next = c->next;
		mp__chunk_free(c);
		c = next;
	}
	t->head = t->tail = NULL;
}

void mp__merge_release(mp_merge_t *m)
{
	uint32_t i;

	for (i = 0; i < m->nthreads; i++)
		free_chunks(&m->threads[i]);
	for (i = 0; i < m->nspare; i++)
		mp__chunk_free(m->spare[i]);
	free(m->threads);
	free(m->heap);
	memset(m, 0, sizeof(*m));
}

/* Writers hand out thread indices in sequence and announce each (THREAD)
 * before its first chunk, a round's new threads together: an index far
 * past those announced is corrupt, and must not make the reader allocate
 * a slot for every index below it (a few bytes of input asking for
 * gigabytes). */
#define THREAD_SLACK 65536

int mp__merge_ensure_thread(mp_merge_t *m, uint32_t thread)
{
	if (thread >= (1u << 24) || thread >= m->announced + THREAD_SLACK)
		return MP_ELIMIT;
	if (thread >= m->cap) { /* threads [cap, new cap) zeroed; the heap as long */
		size_t cap = m->cap, hcap = m->cap;

		m->threads = mp_vec_grow(m->threads, &cap, (size_t)thread + 1, sizeof(*m->threads));
		if (cap <= thread)
			return -ENOMEM;
		memset(m->threads + m->cap, 0, (cap - m->cap) * sizeof(*m->threads));
		if (MP_VEC_RESERVE(m->heap, hcap, cap) < 0)
			return -ENOMEM;
		m->cap = (uint32_t)cap;
	}
	if (thread >= m->nthreads)
		m->nthreads = thread + 1;
	return 0;
}

/* --- a binary min-heap of threads keyed by (pending time, thread index) --- */

static int heap_less(const mp_merge_t *m, uint32_t a, uint32_t b)
{
	uint64_t ta = m->threads[a].pending.time_ns, tb = m->threads[b].pending.time_ns;

	return ta < tb || (ta == tb && a < b);
}

static void heap_push(mp_merge_t *m, uint32_t t)
{
	uint32_t i = m->heap_len++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!heap_less(m, t, m->heap[parent]))
			break;
		m->heap[i] = m->heap[parent];
		i = parent;
	}
	m->heap[i] = t;
	m->threads[t].in_heap = 1;
}

/* Put thread t at the root's place and sift it down (heap_len >= 1). */
static void heap_sift_down(mp_merge_t *m, uint32_t t)
{
	uint32_t i = 0;

	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, min = l;
		if (l >= m->heap_len)
			break;
		if (r < m->heap_len && heap_less(m, m->heap[r], m->heap[l]))
			min = r;
		if (!heap_less(m, m->heap[min], t))
			break;
		m->heap[i] = m->heap[min];
		i = min;
	}
	m->heap[i] = t;
}

static void heap_pop(mp_merge_t *m)
{
	uint32_t last = m->heap[--m->heap_len];

	m->threads[m->heap[0]].in_heap = 0;
	if (m->heap_len)
		heap_sift_down(m, last);
}

int mp__merge_add_chunk(mp_capture_t *cap, uint32_t thread, mp_chunk_t *c, mp_diag_t *diag)
{
	mp_merge_t *m = &cap->merge;
	mp_rthread_t *t;
	int rc;

	if ((rc = mp__merge_ensure_thread(m, thread))) {
		uint64_t bi = c->block_index, bo = c->block_offset;
		mp__chunk_release(&cap->merge, c);
		return mp_diag_set(diag, rc, (int64_t)bo, (int64_t)bi, "block %llu: thread index %u out of range",
				   (unsigned long long)bi, thread);
	}
	t = &m->threads[thread];
	if (t->carry_stack) {
		c->stack = t->carry_stack;
		t->carry_stack = 0;
	}
	c->next = NULL;
	if (t->tail)
		t->tail->next = c;
	else
		t->head = c;
	t->tail = c;
	m->buffered_bytes += c->len;
	if (m->buffered_bytes > m->peak_buffered)
		m->peak_buffered = m->buffered_bytes;
	if (!t->has_pending) {
		rc = mp__decode_next(cap, thread, &t->pending, diag);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			t->has_pending = 1;
			heap_push(m, thread);
		}
	}
	return 0;
}


int mp__merge_next(mp_capture_t *cap, uint64_t limit, mp_event_t *ev, mp_diag_t *diag)
{
	mp_merge_t *m = &cap->merge;
	uint32_t ti;
	int rc;

	if (!m->heap_len)
		return 0;
	ti = m->heap[0];
	if (m->threads[ti].pending.time_ns >= limit)
		return 0;
	*ev = m->threads[ti].pending;
	rc = mp__decode_next(cap, ti, &m->threads[ti].pending, diag);
	if (rc > 0) { /* the thread stays, with a later event: one sift instead of a pop and a push */
		if (m->heap_len > 1)
			heap_sift_down(m, m->heap[0]); /* the root's key grew */
		return 1;
	}
	m->threads[ti].has_pending = 0;
	heap_pop(m);
	return rc < 0 ? rc : 1;
}

size_t mp__merge_run(mp_capture_t *cap, uint64_t limit, mp_event_t *ev, size_t max, int *rc, mp_diag_t *diag)
{
	mp_merge_t *m = &cap->merge;
	mp_rthread_t *t;
	uint32_t ti;
	size_t k = 0;

	*rc = 0;
	if (m->heap_len != 1 || !max)
		return 0;
	ti = m->heap[0];
	t = &m->threads[ti];
	if (t->pending.time_ns >= limit)
		return 0;
	ev[k++] = t->pending;
	{
		size_t got = 0;
		int r = mp__decode_many(cap, ti, ev + k, max - k, limit, &got, diag);
		k += got;
		if (r == 2) {
			t->pending = ev[k]; /* stays pending: the next horizon lets it out */
			return k;
		}
		if (r == 1) /* full: the thread needs a pending event again */
			r = mp__decode_next(cap, ti, &t->pending, diag);
		if (r <= 0) {
			t->has_pending = 0;
			heap_pop(m);
			*rc = r;
		}
	}
	return k;
}
