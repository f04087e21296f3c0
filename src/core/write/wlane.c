/* wlane.c - lanes: events whose time the caller knows better than "now".
 *
 * A source that learns of events after they happened (CUPTI hands its
 * records over in buffers, late and by thread) cannot use the event path:
 * it stamps the time of the call. A lane is a ring like a thread's, owned
 * by no thread, whose records carry the caller's times in ns since the
 * capture's origin (the flusher encodes them through the identity instead
 * of the TSC line: flush.c). Two rules keep the reader's merge right
 * (writer_internal.h explains the horizon):
 *
 *   - a lane's events come in time order (the encoder moves an earlier one
 *     up to the previous one's time, as for threads);
 *   - the lane's hold says that every event earlier than it is in the ring;
 *     a round's horizon never passes it, so no event the lane writes later
 *     lands behind a horizon the reader has already acted on.
 *
 * The caller serialises its calls on a lane (one writer of the ring).
 */
#include <memprof/format.h>

#include "clock.h"
#include "wthread_path.h"

#include <errno.h>
#include <string.h>

struct mp_writer_lane {
	mp_writer_t *w;
	mp_wthread_t *t;
};

int mp_writer_lane_open(mp_writer_t *w, mp_writer_lane_t **out)
{
	mp_writer_lane_t *l;
	mp_wthread_t *t;

	*out = NULL;
	if (!w)
		return MP_EUSAGE;
	if (atomic_load_explicit(&w->error, memory_order_relaxed) ||
	    atomic_load_explicit(&w->closing, memory_order_relaxed))
		return MP_ECLOSED;
	pthread_mutex_lock(&w->reg_mu);
	l = mp_arena_alloc(&w->arena, sizeof(*l));
	t = l ? mp_arena_alloc(&w->arena, sizeof(*t)) : NULL;
	if (t && !(t->ring = mp_map_pages((uint64_t)w->ring_bytes + MP_RING_SLACK)))
		t = NULL;
	if (!t) {
		pthread_mutex_unlock(&w->reg_mu);
		return MP_ENOMEM;
	}
	t->ring_mask = w->ring_bytes - 1;
	t->index = w->thread_count++;
	t->tid = 0; /* no OS thread */
	t->lane = 1;
	/* Nothing earlier than now comes: the caller opens the lane before
	 * its source starts. */
	atomic_store_explicit(&t->hold, mp__capclock_read(&w->clock), memory_order_relaxed);
	t->flushed.v[MP_ST_TIME] = atomic_load_explicit(&w->last_horizon, memory_order_relaxed);
	t->next = atomic_load_explicit(&w->threads, memory_order_relaxed);
	atomic_store_explicit(&w->threads, t, memory_order_release);
	pthread_mutex_unlock(&w->reg_mu);
	l->w = w;
	l->t = t;
	*out = l;
	return 0;
}

uint64_t mp_writer_origin_ns(const mp_writer_t *w)
{
	return w->clock.origin_ns;
}

uint64_t mp_writer_now(const mp_writer_t *w)
{
	return mp__capclock_read(&w->clock);
}

int mp_writer_lane_event(mp_writer_lane_t *l, int kind, uint32_t memory, uint64_t time_ns, uint64_t address,
			 uint64_t bytes)
{
	mp_writer_t *w = l->w;
	mp_wthread_t *t = l->t;
	uint64_t *r;
	unsigned k;
	int wide = 0;

	if (memory > MP_RING_MAX_MEMORY || kind < MP_EV_ALLOC || kind > MP_EV_REGION_REMOVE)
		return MP_EUSAGE;
	if (atomic_load_explicit(&w->closing, memory_order_relaxed) ||
	    atomic_load_explicit(&w->error, memory_order_relaxed))
		return MP_ECLOSED;
	if (!(r = mp__rec_begin(w, t, memory, 1)))
		return -ENOBUFS; /* counted as dropped by the slow path */
	r[1] = time_ns;
	switch (kind) {
	case MP_EV_ALLOC:
		r[0] = mp__rec_word0(MP_REC_ALLOC, memory, bytes, bytes, &wide);
		r[2] = address, r[3] = bytes, k = 4;
		break;
	case MP_EV_FREE:
		r[0] = MP_REC_FREE, r[2] = address, k = 3;
		break;
	case MP_EV_ALLOC_FAILED:
		r[0] = MP_REC_ALLOC_FAILED, r[2] = bytes, k = 3;
		break;
	case MP_EV_REGION_ADD:
		r[0] = MP_REC_REGION_ADD, r[2] = address, r[3] = bytes, k = 4;
		break;
	default: /* MP_EV_REGION_REMOVE (the kind was checked above) */
		r[0] = MP_REC_REGION_REMOVE, r[2] = address, k = 3;
		break;
	}
	if (kind != MP_EV_ALLOC)
		r[0] |= (uint64_t)memory << 16;
	mp__rec_commit(w, t, k, 1);
	return 0;
}

void mp_writer_lane_hold(mp_writer_lane_t *l, uint64_t time_ns)
{
	/* release: the records written before are visible to the round that
	 * reads this hold (it reads the hold before the ring) */
	if (time_ns > atomic_load_explicit(&l->t->hold, memory_order_relaxed))
		atomic_store_explicit(&l->t->hold, time_ns, memory_order_release);
}

void mp_writer_lane_dropped(mp_writer_lane_t *l, uint32_t memory, uint64_t n)
{
	uint32_t slot = memory < MP_DROP_SLOTS - 1 ? memory : MP_DROP_SLOTS - 1;

	atomic_fetch_add_explicit(&l->t->dropped[slot], n, memory_order_relaxed);
}
