/* bench_solver.c - solver throughput without any file: synthetic events in
 * declared regions fed straight to mp_solver_feed, the same
 * pattern as memprof_gen_capture. Prints events/s and peak RSS. Run by
 * scripts/bench_report.sh; not a test.
 *
 *   memprof_bench_solver [--events N] [--live L] [--regions R]
 */
#include <memprof/solver.h>

#include "test_rand.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define SLOT 1024u

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(uint64_t n)
{
	return mp_test_xorshift(&rng) % n;
}

static double clk(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Wall time, and CPU time of this process (fairer on a busy machine). */
static double now(void)
{
	return clk(CLOCK_MONOTONIC);
}

static double cpu(void)
{
	return clk(CLOCK_PROCESS_CPUTIME_ID);
}

typedef struct gen {
	uint64_t events, live, regions, per_region, nslots, nfree, nlive, written;
	uint32_t *freeslot, *liveslot;
} gen_t;

static void gen_init(gen_t *g)
{
	g->per_region = (2 * g->live + g->regions - 1) / g->regions + 1;
	g->nslots = g->per_region * g->regions;
	g->freeslot = malloc(g->nslots * sizeof(uint32_t));
	g->liveslot = malloc((g->live + 1) * sizeof(uint32_t));
	if (!g->freeslot || !g->liveslot)
		exit(1);
	for (uint64_t i = 0; i < g->nslots; i++)
		g->freeslot[i] = (uint32_t)(g->nslots - 1 - i);
	g->nfree = g->nslots;
	g->nlive = 0;
	g->written = 0;
	rng = 0x2545F4914F6CDD1Dull;
}

static uint64_t slot_addr(const gen_t *g, uint32_t slot)
{
	return ((uint64_t)slot / g->per_region + 1) << 40 | (slot % g->per_region) * SLOT;
}

/* The next event; 0 at the end. */
static int gen_next(gen_t *g, mp_event_t *e)
{
	if (g->written >= g->events)
		return 0;
	memset(e, 0, sizeof(*e));
	e->index = g->written;
	e->time_ns = g->written * 10;
	e->step = (int64_t)(g->written * 10 / g->events);
	if (g->written < g->regions) {
		e->kind = MP_EV_REGION_ADD;
		e->address = (g->written + 1) << 40;
		e->requested_bytes = g->per_region * SLOT;
	} else if (g->nlive >= g->live) {
		uint64_t k = rnd(g->nlive);
		uint32_t slot = g->liveslot[k];
		g->liveslot[k] = g->liveslot[--g->nlive];
		g->freeslot[g->nfree++] = slot;
		e->kind = MP_EV_FREE;
		e->address = slot_addr(g, slot);
	} else {
		uint64_t k = rnd(g->nfree), req = 16 * (1 + rnd(SLOT / 16));
		uint32_t slot = g->freeslot[k];
		g->freeslot[k] = g->freeslot[--g->nfree];
		g->liveslot[g->nlive++] = slot;
		e->kind = MP_EV_ALLOC;
		e->address = slot_addr(g, slot);
		e->requested_bytes = req;
		e->allocated_bytes = (req + 255) & ~255ull;
		e->op = 1 + (uint32_t)rnd(8);
		e->region = (uint8_t)(1 + e->op % 4);
	}
	g->written++;
	return 1;
}

int main(int argc, char **argv)
{
	gen_t g = {.events = 100000000, .live = 10000, .regions = 4};
	mp_solver_t *s;
	mp_event_t e;
	mp_diag_t d;
	double t0, t1, tg = 0, c0, c1, cg;
	struct rusage ru;

	for (int i = 1; i + 1 < argc; i += 2) {
		uint64_t v = strtoull(argv[i + 1], NULL, 10);
		if (!strcmp(argv[i], "--events"))
			g.events = v;
		else if (!strcmp(argv[i], "--live"))
			g.live = v;
		else if (!strcmp(argv[i], "--regions"))
			g.regions = v ? v : 1;
	}
	/* The cost of generating the events alone, to subtract. */
	gen_init(&g);
	t0 = now();
	c0 = cpu();
	while (gen_next(&g, &e))
		;
	tg = now() - t0;
	cg = cpu() - c0;
	free(g.freeslot);
	free(g.liveslot);

	{
		mp_solver_options_t o; /* as `memprof report --peak`: no timeline */
		mp_solver_options_init(&o);
		o.timeline = 0;
		s = mp_solver_new(&o);
	}
	gen_init(&g);
	t0 = now();
	c0 = cpu();
	for (;;) { /* batches, as mp_solver_run feeds them */
		mp_event_t batch[32];
		size_t n = 0;
		while (n < 32 && gen_next(&g, &batch[n]))
			n++;
		if (!n)
			break;
		if (mp_solver_feed_many(s, batch, n, &d) < 0)
			return fprintf(stderr, "feed: %s\n", d.text), 1;
	}
	mp_solver_finish(s);
	t1 = now();
	c1 = cpu();
	getrusage(RUSAGE_SELF, &ru);
	{
		const mp_solver_device_t *dv = mp_solver_device(s, 0);
		printf("solver-only: %" PRIu64 " events, live %" PRIu64 ", regions %" PRIu64 "\n", g.events, g.live, g.regions);
		printf("  generation alone  %.2f s wall, %.2f s cpu\n", tg, cg);
		printf("  one pass          %.2f s wall  %.1f M events/s; cpu %.2f s, generation subtracted: %.1f M events/s\n",
		       t1 - t0, (double)g.events / (t1 - t0) / 1e6, c1 - c0, (double)g.events / (c1 - c0 - cg) / 1e6);
		printf("  peak %" PRIu64 " B at event %" PRIu64 ", fragmentation %.4f, %zu breakdown rows\n", dv->peak_bytes,
		       dv->peak.event_index, dv->peak.fragmentation, dv->breakdown_count);
		printf("  solver memory %.1f MB, peak RSS %.1f MB\n", (double)mp_solver_memory_bytes(s) / 1e6,
		       (double)ru.ru_maxrss / 1024.0);
	}
	mp_solver_free(s);
	return 0;
}
