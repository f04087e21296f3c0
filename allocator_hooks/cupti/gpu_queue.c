/* gpu_queue.c - GPU events put back in time order (memprof/gpu_queue.h). */
#include <memprof/gpu_queue.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void mp_gpu_queue_init(mp_gpu_queue_t *q)
{
	memset(q, 0, sizeof *q);
}

void mp_gpu_queue_free(mp_gpu_queue_t *q)
{
	free(q->heap);
	mp_gpu_queue_init(q);
}

static int before(const mp_gpu_queue_item_t *a, const mp_gpu_queue_item_t *b)
{
	return a->ev.time_ns != b->ev.time_ns ? a->ev.time_ns < b->ev.time_ns : a->seq < b->seq;
}

int mp_gpu_queue_push(mp_gpu_queue_t *q, const mp_gpu_event_t *e)
{
	mp_gpu_queue_item_t it;
	size_t i;

	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		mp_gpu_queue_item_t *h = realloc(q->heap, cap * sizeof *h);
		if (!h) {
			q->lost++;
			return -ENOMEM;
		}
		q->heap = h, q->cap = cap;
	}
	it.ev = *e;
	it.seq = q->seq++;
	if (it.ev.time_ns < q->released) {
		it.ev.time_ns = q->released;
		q->late++;
	}
	for (i = q->n++; i > 0 && before(&it, &q->heap[(i - 1) / 2]); i = (i - 1) / 2)
		q->heap[i] = q->heap[(i - 1) / 2];
	q->heap[i] = it;
	return 0;
}

int mp_gpu_queue_pop_before(mp_gpu_queue_t *q, uint64_t cut, mp_gpu_event_t *out)
{
	mp_gpu_queue_item_t last;
	size_t i, c;

	if (!q->n || q->heap[0].ev.time_ns >= cut)
		return 0;
	*out = q->heap[0].ev;
	last = q->heap[--q->n];
	for (i = 0; (c = 2 * i + 1) < q->n; i = c) {
		if (c + 1 < q->n && before(&q->heap[c + 1], &q->heap[c]))
			c++;
		if (!before(&q->heap[c], &last))
			break;
		q->heap[i] = q->heap[c];
	}
	if (q->n)
		q->heap[i] = last;
	return 1;
}

void mp_gpu_queue_release(mp_gpu_queue_t *q, uint64_t cut)
{
	if (cut > q->released)
		q->released = cut;
}

int mp_gpu_queue_buffer(mp_gpu_queue_t *q, mp_cupti_translator_t *tr, const uint8_t *buf, size_t valid)
{
	size_t pos = 0, len;
	const uint8_t *rec;
	int rc = 0;

	while (mp_cupti_next_record(tr, buf, valid, &pos, &rec, &len)) {
		mp_gpu_event_t ev[MP_CUPTI_MAX_OUT];
		int i, n = mp_cupti_translate(tr, rec, len, ev);
		for (i = 0; i < n; i++)
			if (mp_gpu_queue_push(q, &ev[i]))
				rc = -ENOMEM;
	}
	return rc;
}
