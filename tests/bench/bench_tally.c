/* bench_tally.c - the flusher's tally (src/core/write/tally_round.c) on its
 * own: two threads' ring records of ../shared/bench/alloc_bench.c's kind
 * (4096 slots a thread, an allocation into an empty one or a free of a full
 * one, LIFO reuse of freed addresses as a thread cache gives, 70% small
 * sizes), built in memory and tallied round after round as the writer's
 * flusher would (a round every ROUND records a thread, its horizon the
 * earlier thread's time there). Prints the best of REPS passes in ns an
 * event, and the figures, which must not change from build to build.
 *
 * usage: bench_tally [EVENTS_PER_THREAD (4000000)] [REPS (5)] [ROUND (300000)]
 */
#include "tally.h"
#include "writer_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define THREADS 2
#define SLOTS 4096

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

typedef struct {
	mp_wthread_t t;
	uint64_t n;           /* records */
	uint64_t *time, *end; /* each record's time, and the ring bytes up to its end */
} thread_t;

/* n records of thread k into th (its ring sized for them: no wrap) */
static int build(thread_t *th, int k, uint64_t n)
{
	uint64_t size = 1, pos = 0, t = 1000 + (uint64_t)k * 7, s = 88172645463325252ull + (uint64_t)k, nfree = 0;
	uint64_t bump = 0x7f0000000000ull + ((uint64_t)k << 32), *slot, *freed;
	uint64_t i;

	while (size < n * 32)
		size <<= 1;
	th->t.ring = calloc(1, size + MP_RING_SLACK);
	th->time = malloc(n * sizeof(uint64_t));
	th->end = malloc(n * sizeof(uint64_t));
	slot = calloc(SLOTS, sizeof(uint64_t));
	freed = malloc(n * sizeof(uint64_t));
	if (!th->t.ring || !th->time || !th->end || !slot || !freed)
		return -1;
	for (i = 0; i < n; i++) {
		uint64_t *r = (uint64_t *)(void *)(th->t.ring + pos), x = next(&s);
		unsigned j = (unsigned)(x % SLOTS);
		t += 40 + (x >> 40) % 30;
		if (slot[j]) {
			r[0] = MP_REC_FREE, r[1] = t, r[2] = slot[j];
			freed[nfree++] = slot[j];
			slot[j] = 0;
			pos += 24;
		} else {
			uint64_t req = (x >> 50) % 10 < 7 ? 16 + (x >> 20) % 240 : 256 + (x >> 12) % 16000;
			uint64_t alloc = ((req + 8 + 15) & ~15ull) - 8;
			slot[j] = nfree ? freed[--nfree] : (bump += 16384);
			r[0] = MP_REC_ALLOC | (uint64_t)(uint32_t)(alloc - req) << 32, r[1] = t, r[2] = slot[j], r[3] = req;
			pos += 32;
		}
		th->time[i] = t;
		th->end[i] = pos;
	}
	th->t.ring_mask = size - 1;
	th->t.index = (uint32_t)k;
	th->t.encoded = UINT64_MAX; /* (ring space goes back up to what is tallied) */
	th->n = n;
	free(slot);
	free(freed);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 4000000;
	int reps = argc > 2 ? atoi(argv[2]) : 5, k, rep;
	uint64_t round = argc > 3 ? strtoull(argv[3], NULL, 10) : 300000;
	static thread_t th[THREADS];
	mp_writer_t *w = calloc(1, sizeof(*w)); /* its clock zeroed: times as they are */
	const mp_tally_mem_t *m;
	double best = 1e30;

	if (!w || n < 2 || round < 1 || reps < 1) {
		fprintf(stderr, "usage: bench_tally [EVENTS_PER_THREAD >= 2] [REPS >= 1] [ROUND >= 1]\n");
		return 2;
	}
	for (k = 0; k < THREADS; k++)
		if (build(&th[k], k, n)) {
			fprintf(stderr, "bench_tally: out of memory\n");
			return 1;
		}
	for (rep = 0; rep < reps; rep++) {
		double t0;
		uint64_t r0;
		mp__tally_release(&w->tally);
		if (mp__tally_ready(&w->tally))
			return 1;
		for (k = 0; k < THREADS; k++) {
			th[k].t.tallied = th[k].t.tally_time = 0;
			atomic_store(&th[k].t.tail, 0);
		}
		t0 = now_s();
		for (r0 = round;; r0 += round) {
			mp_tally_src_t src[THREADS];
			uint64_t horizon = UINT64_MAX;
			int last = 1;
			for (k = 0; k < THREADS; k++) {
				uint64_t j = r0 < th[k].n ? r0 : th[k].n - 1;
				last &= r0 >= th[k].n;
				src[k] = (mp_tally_src_t){&th[k].t, th[k].end[j]};
				if (th[k].time[j] < horizon)
					horizon = th[k].time[j];
			}
			if (mp__tally_round(w, src, THREADS, last ? UINT64_MAX : horizon))
				return 1;
			if (last)
				break;
		}
		if (now_s() - t0 < best)
			best = now_s() - t0;
	}
	m = &w->tally.mem[0];
	printf("tally: %.2f ns/event (best of %d), events=%llu allocs=%llu frees=%llu peak=%llu peak_ns=%llu live=%llu "
	       "blocks=%llu\n",
	       best * 1e9 / (double)w->tally.events, reps, (unsigned long long)w->tally.events,
	       (unsigned long long)m->v[MP_SUMF_ALLOCS], (unsigned long long)m->v[MP_SUMF_FREES],
	       (unsigned long long)m->v[MP_SUMF_PEAK], (unsigned long long)m->v[MP_SUMF_PEAK_NS],
	       (unsigned long long)m->v[MP_SUMF_LIVE], (unsigned long long)m->v[MP_SUMF_LIVE_BLOCKS]);
	return 0;
}
