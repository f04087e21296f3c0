/* gpu_lane.c - a lane on the preload's writer for the GPU backend
 * (gpu_lane.h).
 *
 * The backend keeps the handle for the life of the process; the writer it
 * belongs to may not live that long (a forked child records into a new
 * capture, the capture is closed at exit). So the handle remembers its
 * writer and every call checks that it is still the one being recorded
 * into: events for a closed writer are not recorded.
 */
#include "gpu_lane.h"

#include "../annotate/backend.h"
#include "preload.h"

#include <memprof/writer.h>

#include <pthread.h>

typedef struct {
	mp_writer_t *w;
	mp_writer_lane_t *l;
} gpu_lane_t;

static gpu_lane_t lanes[4]; /* one per backend start; a process starts one */
static unsigned lane_count;
static pthread_mutex_t lane_mu = PTHREAD_MUTEX_INITIALIZER;

static mp_writer_lane_t *current(void *lane)
{
	gpu_lane_t *g = lane;
	mp_annotate_target_t t = mp__annotate_target();

	return g && t.writer && t.writer == g->w ? g->l : NULL;
}

void *mp__gpu_lane_open(void)
{
	mp_annotate_target_t t = mp__annotate_target();
	gpu_lane_t *g = NULL;
	mp_writer_lane_t *l;

	if (!t.writer)
		return NULL;
	pthread_mutex_lock(&lane_mu);
	if (lane_count < sizeof(lanes) / sizeof(lanes[0]) && mp_writer_lane_open(t.writer, &l) == 0) {
		g = &lanes[lane_count++];
		g->w = t.writer;
		g->l = l;
	}
	pthread_mutex_unlock(&lane_mu);
	return g;
}

int mp__gpu_lane_event(void *lane, int kind, int memory, uint64_t time_ns, uint64_t address, uint64_t bytes)
{
	mp_writer_lane_t *l = current(lane);

	if (!l || memory < 0)
		return -1;
	return mp_writer_lane_event(l, kind, (uint32_t)memory, time_ns, address, bytes);
}

void mp__gpu_lane_hold(void *lane, uint64_t time_ns)
{
	mp_writer_lane_t *l = current(lane);

	if (l)
		mp_writer_lane_hold(l, time_ns);
}

void mp__gpu_lane_dropped(void *lane, int memory, uint64_t n)
{
	mp_writer_lane_t *l = current(lane);

	if (l && memory >= 0)
		mp_writer_lane_dropped(l, (uint32_t)memory, n);
}

uint64_t mp__gpu_origin_ns(void)
{
	mp_annotate_target_t t = mp__annotate_target();

	return t.writer ? mp_writer_origin_ns(t.writer) : 0;
}
