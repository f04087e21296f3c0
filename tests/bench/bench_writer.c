/* bench_writer.c - capture writer throughput and bytes/event.
 *
 * The event trace follows ../shared/bench/alloc_bench.c: each thread picks a
 * random slot of 4096; an empty slot gets a malloc of the alloc_bench "mixed"
 * size distribution, a full one is freed (1/16 of them realloc'ed). The
 * addresses are those real malloc calls returned (the trace is made with
 * real malloc/free before timing), the allocated size is malloc_usable_size,
 * and the op context changes every 10,000 events, the step every 100,000.
 * Only the writer is timed: replaying the prepared trace into it, then
 * closing (so the time includes compressing and writing everything).
 *
 * usage: bench_writer [-t threads] [-n events_per_thread] [-o file]
 * Environment: RING_MB, FLUSH_MS, SHED=1 and LEVEL (the writer's
 * compression_level: 0/1 its own Huffman coding, 2-9 zlib) set the
 * writer's options of those names.
 */
#include <memprof/capture.h>

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
	uint8_t kind; /* 0 alloc, 1 free, 2 realloc */
	uint64_t addr, addr2, req, alloc;
} tev_t;

typedef struct {
	mp_writer_t *w;
	tev_t *trace;
	size_t n;
	uint32_t ops[8];
	int idx;
	double cpu_s; /* CPU time of the replay (the recording thread's own cost) */
} worker_t;

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static size_t draw_size(uint64_t *rng)
{
	uint64_t r = xorshift(rng);
	uint32_t p = (uint32_t)(r % 10000);
	uint64_t u = r >> 20;

	if (p < 7000)
		return 16 + u % 241;
	if (p < 9500)
		return 256 + u % (16384 - 256 + 1);
	if (p < 9990)
		return 16384 + u % (131072 - 16384);
	return 131072 + u % (1048576 - 131072 + 1);
}

static tev_t *make_trace(size_t n, uint64_t seed)
{
	tev_t *t = malloc(n * sizeof(*t));
	void **slot = calloc(4096, sizeof(void *));
	size_t *slot_size = calloc(4096, sizeof(size_t));
	uint64_t rng = seed;
	size_t i = 0;

	while (i < n) {
		uint64_t r = xorshift(&rng);
		int s = (int)(r % 4096);
		if (!slot[s]) {
			size_t sz = draw_size(&rng);
			slot[s] = malloc(sz);
			slot_size[s] = sz;
			t[i++] = (tev_t){0, (uint64_t)(uintptr_t)slot[s], 0, sz, malloc_usable_size(slot[s])};
		} else if (((r >> 44) % 16) == 0) {
			size_t sz = draw_size(&rng);
			uint64_t old = (uint64_t)(uintptr_t)slot[s];
			slot[s] = realloc(slot[s], sz);
			t[i++] = (tev_t){2, old, (uint64_t)(uintptr_t)slot[s], sz, malloc_usable_size(slot[s])};
		} else {
			t[i++] = (tev_t){1, (uint64_t)(uintptr_t)slot[s], 0, 0, 0};
			free(slot[s]);
			slot[s] = NULL;
		}
	}
	for (i = 0; i < 4096; i++)
		free(slot[i]);
	free(slot);
	free(slot_size);
	return t;
}

static double cpu_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *replay(void *arg)
{
	worker_t *k = arg;
	size_t i, ctx_left = 0, step_left = 0, ctx = 0;
	int64_t step = 0;
	double c0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);

	for (i = 0; i < k->n; i++) {
		const tev_t *e = &k->trace[i];
		/* counters, not i % N: the harness must not cost more than the writer */
		if (ctx_left-- == 0) {
			ctx_left = 9999;
			mp_writer_set_context(k->w, k->ops[ctx & 7], (int)(ctx % 5), 0, 0);
			ctx++;
		}
		if (k->idx == 0 && step_left-- == 0) {
			step_left = 99999;
			mp_writer_step(k->w, step++);
		}
		switch (e->kind) {
		case 0:
			mp_writer_alloc(k->w, 0, e->addr, e->req, e->alloc);
			break;
		case 1:
			mp_writer_free(k->w, 0, e->addr);
			break;
		default:
			mp_writer_realloc(k->w, 0, e->addr, e->addr2, e->req, e->alloc);
			break;
		}
	}
	k->cpu_s = cpu_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int threads = 1, c, i;
	size_t n = 20000000;
	const char *out = "/tmp/bench_writer.memprof";
	worker_t k[16];
	pthread_t tid[16];
	mp_writer_t *w;
	mp_diag_t diag;
	struct stat st;
	double t0, t1, p0, rec_cpu = 0;
	uint64_t events;

	while ((c = getopt(argc, argv, "t:n:o:")) != -1) {
		if (c == 't')
			threads = atoi(optarg);
		else if (c == 'n')
			n = strtoull(optarg, NULL, 0);
		else if (c == 'o')
			out = optarg;
		else
			return 2;
	}
	if (threads < 1 || threads > 16)
		return 2;
	for (i = 0; i < threads; i++) {
		k[i].trace = make_trace(n, 1 + (uint64_t)i * 7919);
		k[i].n = n;
		k[i].idx = i;
	}
	unlink(out);
	mp_writer_options_t o = {0};
	o.ring_bytes = getenv("RING_MB") ? (uint32_t)atoi(getenv("RING_MB")) << 20 : 0;
	o.flush_interval_ms = getenv("FLUSH_MS") ? (uint32_t)atoi(getenv("FLUSH_MS")) : 0;
	o.shed = getenv("SHED") && atoi(getenv("SHED"));
	o.compression_level = getenv("LEVEL") ? atoi(getenv("LEVEL")) : 0;
	if (mp_writer_open(&w, out, 1, &o, &diag)) {
		fprintf(stderr, "bench_writer: %s\n", diag.text);
		return 1;
	}
	mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	for (i = 0; i < threads; i++) {
		char name[32];
		int j;
		k[i].w = w;
		for (j = 0; j < 8; j++) {
			snprintf(name, sizeof(name), "op_%d_%d", i, j);
			k[i].ops[j] = mp_writer_intern(w, name);
		}
	}
	t0 = now_s();
	p0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
	for (i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, replay, &k[i]);
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	events = mp_writer_event_count(w);
	t1 = now_s();
	printf("threads=%d dropped=%llu ", threads, (unsigned long long)mp_writer_dropped_count(w));
	if (mp_writer_close(w)) {
		fprintf(stderr, "bench_writer: close failed\n");
		return 1;
	}
	{
		double t2 = now_s();
		/* Everything else the process spent since t0 is the flusher's (the
		 * main thread only waits): per event, what each side costs on a
		 * core of its own, whatever else loads the machine. */
		for (i = 0; i < threads; i++)
			rec_cpu += k[i].cpu_s;
		printf("record_cpu_ns_per_event=%.1f flush_cpu_ns_per_event=%.1f ", rec_cpu * 1e9 / (double)events,
		       (cpu_s(CLOCK_PROCESS_CPUTIME_ID) - p0 - rec_cpu) * 1e9 / (double)events);
		stat(out, &st);
		printf("events=%llu record_s=%.3f events_per_s=%.3g total_s=%.3f total_events_per_s=%.3g "
		       "file_bytes=%lld bytes_per_event=%.3f\n",
		       (unsigned long long)events, t1 - t0, (double)events / (t1 - t0), t2 - t0,
		       (double)events / (t2 - t0), (long long)st.st_size, (double)st.st_size / (double)events);
	}
	for (i = 0; i < threads; i++)
		free(k[i].trace);
	return 0;
}
