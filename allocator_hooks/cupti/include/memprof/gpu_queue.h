/* memprof/gpu_queue.h - GPU events put back in time order before they are
 * written.
 *
 * CUPTI hands its records over late (when a buffer is full or flushed) and
 * out of order (one buffer per thread; a legacy record's release comes
 * with its allocation). The capture wants each source's events in time
 * order, and none earlier than what the reader may already have returned.
 * So the backend pushes every translated event here and, after each forced
 * flush of CUPTI's buffers (which delivers every record of a call that
 * returned before the flush began), pops the events earlier than the
 * flush's start in time order and promises the writer that nothing earlier
 * follows (the lane's hold: memprof/writer.h). An event that still arrives
 * earlier than a released time is moved to it and counted as late.
 *
 * Pure: a binary heap, malloc'ed; one user at a time (the caller locks).
 */
#ifndef MEMPROF_GPU_QUEUE_H
#define MEMPROF_GPU_QUEUE_H

#include <memprof/cupti_translate.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_gpu_queue_item {
	mp_gpu_event_t ev;
	uint64_t seq; /* arrival order: ties keep it */
} mp_gpu_queue_item_t;

typedef struct mp_gpu_queue {
	mp_gpu_queue_item_t *heap; /* owned */
	size_t n, cap;
	uint64_t seq;
	uint64_t released; /* every event earlier than this has been popped */
	uint64_t late;     /* events that arrived earlier than `released` (moved to it) */
	uint64_t lost;     /* events not queued (out of memory) */
} mp_gpu_queue_t;

void mp_gpu_queue_init(mp_gpu_queue_t *q);
void mp_gpu_queue_free(mp_gpu_queue_t *q);

/* Queue an event. Returns 0, or -ENOMEM (then it is counted in lost). */
int mp_gpu_queue_push(mp_gpu_queue_t *q, const mp_gpu_event_t *e);

/* Every record of a completed buffer's first `valid` bytes, walked by
 * memprof's iterator (mp_cupti_next_record), translated with tr and
 * queued: what a dump's replay and its fuzz target do with each buffer.
 * Returns 0, or -ENOMEM when an event could not be queued (counted in
 * q->lost; the walk goes on). */
int mp_gpu_queue_buffer(mp_gpu_queue_t *q, mp_cupti_translator_t *tr, const uint8_t *buf, size_t valid);

/* The earliest queued event if it is earlier than cut: 1 and *out, else 0.
 * Ties come out in arrival order. */
int mp_gpu_queue_pop_before(mp_gpu_queue_t *q, uint64_t cut, mp_gpu_event_t *out);

/* Every event earlier than cut has been popped: later pushes of such
 * events are moved to cut (and counted late). Never moves backwards. */
void mp_gpu_queue_release(mp_gpu_queue_t *q, uint64_t cut);

#ifdef __cplusplus
}
#endif
#endif
