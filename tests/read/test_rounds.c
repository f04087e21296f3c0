/* test_rounds.c - ROUND sections (format 2.5) and their reader
 * (memprof/rounds.h), issue 43:
 *  - known: a capture recorded with a known pattern per round (flush
 *    rounds made by hand, the flusher's own interval a minute), its
 *    rounds' figures against those computed by hand;
 *  - engine: random captures (two threads, three memory ids, regions,
 *    reallocs, frees of unknown addresses, failed allocations, steps),
 *    every round's figures against those of the live-set engine
 *    (memprof/live.h) replaying the events of its window (the events the
 *    round's SUMMARY counts, past the previous one's);
 *  - damaged: a ROUND whose live bytes disagree with its SUMMARY is said
 *    with its block and offset, and ignored;
 *  - chart: `memprof plot --chart timeline` from the rounds labels the
 *    same peak as the full replay (--replay), and an old capture (2.0,
 *    no rounds) is drawn by the replay with one line on stderr saying so.
 */
#include "test_common.h"

#include "capture_helpers.h"
#include "test_rounds.h"

#include <memprof/format.h>
#include <memprof/live.h>
#include <memprof/rounds.h>
#include <memprof/writer.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

static const mp_round_memory_t *find(const mp_capture_rounds_t *c, size_t r, uint32_t id)
{
	return mp_round_memory(c, &c->rounds[r], id);
}

/* ----------------------------------------------------------- known */

/* Round i (0..4) of memory "dev": step i; a region of 1 MiB more; three
 * blocks of 1 KiB (1000 B asked), two of them freed; a failed request
 * of 7 MiB. Memory "host": 100 B allocated in round 1, freed in round 3.
 * Each round ended by hand (mp_writer_flush). */
void record_known(const char *path, uint32_t *dev, uint32_t *host)
{
	mp_writer_options_t o;
	mp_writer_t *w = NULL;
	mp_diag_t diag;

	memset(&o, 0, sizeof(o));
	o.flush_interval_ms = 60000;
	if (mp_writer_open(&w, path, 1, &o, &diag))
		fail_msg("%s", diag.text);
	*dev = (uint32_t)mp_writer_memory(w, "dev", MP_MEMORY_DEVICE, 0);
	*host = (uint32_t)mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	for (uint64_t i = 0; i < 5; i++) {
		uint64_t a = 0x10000000ull + i * 0x10000;
		assert_int_equal(mp_writer_step(w, (int64_t)i), 0);
		assert_int_equal(mp_writer_region_add(w, *dev, 0x40000000ull + i * 2 * MiB, MiB), 0);
		for (uint64_t k = 0; k < 3; k++)
			assert_int_equal(mp_writer_alloc(w, *dev, a + k * KiB, 1000, KiB), 0);
		assert_int_equal(mp_writer_free(w, *dev, a), 0);
		assert_int_equal(mp_writer_free(w, *dev, a + KiB), 0);
		assert_int_equal(mp_writer_alloc_failed(w, *dev, 7 * MiB), 0);
		if (i == 1)
			assert_int_equal(mp_writer_alloc(w, *host, 0x7000, 100, 0), 0);
		if (i == 3)
			assert_int_equal(mp_writer_free(w, *host, 0x7000), 0);
		assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);
}

static void test_known(void **state)
{
	char path[] = "/tmp/memprof-rounds-XXXXXX";
	mp_capture_rounds_t c;
	mp_diag_t diag;
	uint32_t dev, host;
	size_t seen = 0;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	record_known(path, &dev, &host);
	if (mp_capture_rounds_read(path, &c, &diag))
		fail_msg("%s", diag.text);
	assert_int_equal(c.bad, 0);
	for (size_t r = 0; r < c.nrounds; r++) {
		const mp_round_memory_t *m = find(&c, r, dev), *h = find(&c, r, host);
		uint64_t i = seen;
		if (!m) {
			assert_null(h);
			continue;
		}
		seen++;
		assert_true(c.rounds[r].horizon_ns > c.rounds[r].start_ns);
		assert_int_equal(c.rounds[r].step, (int64_t)i);
		assert_int_equal(m->live, (i + 1) * KiB);
		assert_int_equal(m->min, i * KiB); /* the start's level: it never went lower */
		assert_int_equal(m->min_ns, c.rounds[r].start_ns);
		assert_int_equal(m->max, i * KiB + 3 * KiB);
		assert_int_equal(m->max_step, (int64_t)i);
		assert_true(m->first_ns <= m->max_ns && m->max_ns <= m->last_ns && m->last_ns < c.rounds[r].horizon_ns);
		assert_int_equal(m->reserved, (i + 1) * MiB);
		assert_int_equal(m->reserved_max, (i + 1) * MiB);
		assert_int_equal(m->failed, 1);
		assert_int_equal(m->failed_req, 7 * MiB);
		assert_true(m->failed_ns > m->max_ns && m->failed_ns <= m->last_ns);
		if (i == 1 || i == 3) {
			assert_non_null(h);
			assert_int_equal(h->live, i == 1 ? 100 : 0);
			assert_int_equal(h->min, 0);
			assert_int_equal(h->max, 100);
			/* round 3: 100 B held from its start, then freed */
			assert_int_equal(i == 3 ? h->max_ns : h->min_ns, c.rounds[r].start_ns);
		} else {
			assert_null(h);
		}
	}
	assert_int_equal(seen, 5);
	assert_int_equal(c.summary.memories[dev].peak_bytes, 7 * KiB);
	mp_capture_rounds_free(&c);
	unlink(path);
}

/* ---------------------------------------------------------- engine */

typedef struct {
	mp_writer_t *w;
	uint32_t mem[3];
	uint64_t seed;
	int thread;
} job_t;

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static void *work(void *arg)
{
	job_t *j = arg;
	enum { SLOTS = 256 };
	uint64_t addr[SLOTS] = {0}, base = (uint64_t)(j->thread + 1) << 36;
	uint32_t memof[SLOTS] = {0};

	for (int i = 0; i < 12000; i++) {
		uint64_t x = rnd(&j->seed), s = x % SLOTS, size = 16 + (x >> 12) % 4096;
		uint32_t m = j->mem[(x >> 9) % 3];
		if (i % 700 == 699)
			assert_int_equal(mp_writer_flush(j->w), 0);
		switch ((x >> 20) % 16) {
		case 0:
			assert_int_equal(mp_writer_free(j->w, m, base + 0x100000000ull + (x & 0xfff0)), 0);
			break;
		case 1:
			if (addr[s]) {
				uint64_t to = base + (rnd(&j->seed) % (1u << 24)) * 16;
				assert_int_equal(mp_writer_realloc(j->w, memof[s], addr[s], to, size, size + 8), 0);
				addr[s] = to;
			}
			break;
		case 2:
			assert_int_equal(mp_writer_alloc_failed(j->w, m, size << 20), 0);
			break;
		case 3:
			assert_int_equal(mp_writer_region_add(j->w, m, base + 0x200000000ull + (s << 20), (1u + (x & 1)) << 20),
					 0);
			break;
		case 4:
			assert_int_equal(mp_writer_region_remove(j->w, m, base + 0x200000000ull + (s << 20)), 0);
			break;
		case 5:
			assert_int_equal(mp_writer_step(j->w, i / 1000), 0);
			break;
		default:
			if (addr[s]) {
				assert_int_equal(mp_writer_free(j->w, memof[s], addr[s]), 0);
				addr[s] = 0;
			} else {
				addr[s] = (x & 7) == 0 ? base + ((x >> 3) % 64) * 16 : base + (rnd(&j->seed) % (1u << 24)) * 16;
				memof[s] = m;
				assert_int_equal(mp_writer_alloc(j->w, m, addr[s], size, (x & 2) ? 0 : size + 16), 0);
			}
		}
	}
	return NULL;
}

static void record_random(const char *path, uint64_t seed)
{
	mp_writer_t *w = NULL;
	mp_diag_t diag;
	job_t j[2];
	pthread_t t[2];

	if (mp_writer_open(&w, path, 1, NULL, &diag))
		fail_msg("%s", diag.text);
	for (int i = 0; i < 3; i++) {
		static const char *names[] = {"host", "device", "pool"};
		j[0].mem[i] = j[1].mem[i] = (uint32_t)mp_writer_memory(w, names[i], i ? MP_MEMORY_DEVICE : MP_MEMORY_HOST, 0);
	}
	for (int i = 0; i < 2; i++) {
		j[i].w = w;
		j[i].seed = seed + (uint64_t)i * 7919;
		j[i].thread = i;
		assert_int_equal(pthread_create(&t[i], NULL, work, &j[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(mp_writer_close(w), 0);
}

/* One memory id's figures over a window, by the engine. */
typedef struct {
	mp_live_t live;
	mp_live_regions_t reg;
	int moved;
	mp_round_memory_t f;
} ref_t;

#define NMEM 3

static void window_start(ref_t *r, uint64_t start)
{
	for (int i = 0; i < NMEM; i++) {
		memset(&r[i].f, 0, sizeof(r[i].f));
		r[i].moved = 0;
		r[i].f.min = r[i].f.max = r[i].live.bytes;
		r[i].f.min_ns = r[i].f.max_ns = start;
		r[i].f.reserved_max = r[i].reg.bytes;
		r[i].f.reserved_max_ns = start;
	}
}

static void apply(ref_t *refs, const mp_event_t *ev, int64_t *step)
{
	ref_t *r;
	mp_round_memory_t *f;
	uint64_t end;
	size_t pos;

	if (ev->kind == MP_EV_STEP)
		*step = ev->step;
	if (ev->memory >= NMEM || ev->kind == MP_EV_STEP || ev->kind == MP_EV_MARK)
		return;
	r = &refs[ev->memory];
	f = &r->f;
	switch (ev->kind) {
	case MP_EV_ALLOC:
		assert_int_equal(mp_live_alloc(&r->live, ev->address,
					       mp_live_footprint(ev->requested_bytes, ev->allocated_bytes), 0, 0),
				 0);
		break;
	case MP_EV_FREE:
		mp_live_free(&r->live, ev->address);
		break;
	case MP_EV_ALLOC_FAILED:
		if (!f->failed++) {
			f->failed_ns = ev->time_ns;
			f->failed_req = ev->requested_bytes;
		}
		break;
	case MP_EV_REGION_ADD:
		assert_true(mp_live_region_add(&r->reg, ev->address, ev->requested_bytes, &pos, &end) >= 0);
		break;
	case MP_EV_REGION_REMOVE:
		mp_live_region_remove(&r->reg, ev->address, &end);
		break;
	default:
		return;
	}
	/* a moment of the memory id */
	if (!r->moved)
		f->first_ns = ev->time_ns;
	r->moved = 1;
	f->last_ns = ev->time_ns;
	if (r->live.bytes < f->min) {
		f->min = r->live.bytes;
		f->min_ns = ev->time_ns;
	}
	if (r->live.bytes > f->max) {
		f->max = r->live.bytes;
		f->max_ns = ev->time_ns;
		f->max_step = *step;
	}
	if (r->reg.bytes > f->reserved_max) {
		f->reserved_max = r->reg.bytes;
		f->reserved_max_ns = ev->time_ns;
	}
}

static size_t check_engine(const char *path)
{
	static ref_t refs[NMEM];
	mp_capture_rounds_t c;
	mp_diag_t diag;
	mp_event_t *ev;
	size_t n, at = 0, compared = 0;
	int64_t step = -1, step0 = -1;
	int rc, back;
	size_t backs = 0;

	if (mp_capture_rounds_read(path, &c, &diag))
		fail_msg("%s", diag.text);
	assert_int_equal(c.bad, 0);
	assert_true(c.nrounds > 10);
	n = read_all(path, &ev, &rc, &diag, NULL);
	assert_int_equal(rc, 0);
	for (int i = 0; i < NMEM; i++) {
		mp_live_init(&refs[i].live);
		mp_live_regions_init(&refs[i].reg);
	}
	uint64_t counted = 0; /* events the SUMMARY counts (not MEMORY or DROPPED) */
	for (size_t r = 0; r < c.nrounds; r++) {
		const mp_round_t *rd = &c.rounds[r];
		window_start(refs, rd->start_ns);
		for (int i = 0; i < NMEM; i++)
			refs[i].f.max_step = step;
		step0 = step;
		back = 0;
		for (; at < n && counted < rd->events; at++) {
			if (ev[at].kind == MP_EV_MEMORY || ev[at].kind == MP_EV_DROPPED)
				continue;
			back |= ev[at].kind == MP_EV_STEP && ev[at].step < step;
			apply(refs, &ev[at], &step);
			counted++;
		}
		assert_int_equal(counted, rd->events);
		assert_int_equal(rd->step, step);
		/* (the threads' steps interleave: some rounds go back inside) */
		assert_int_equal(rd->step_back, back);
		backs += back;
		for (uint32_t id = 0; id < NMEM; id++) {
			const mp_round_memory_t *m = mp_round_memory(&c, rd, id);
			const mp_round_memory_t *f = &refs[id].f;
			if (!refs[id].moved) {
				if (m)
					fail_msg("%s: round %zu lists memory %u, which had no moment", path, r, id);
				continue;
			}
			if (!m)
				fail_msg("%s: round %zu lacks memory %u", path, r, id);
			if (m->live != refs[id].live.bytes || m->min != f->min || m->min_ns != f->min_ns || m->max != f->max ||
			    m->max_ns != f->max_ns || m->max_step != f->max_step || m->first_ns != f->first_ns ||
			    m->last_ns != f->last_ns || m->reserved != refs[id].reg.bytes ||
			    m->reserved_max != f->reserved_max || m->reserved_max_ns != f->reserved_max_ns ||
			    m->failed != f->failed || m->failed_ns != f->failed_ns || m->failed_req != f->failed_req)
				fail_msg("%s: round %zu memory %u: live %llu min %llu@%llu max %llu@%llu step %lld reserved "
					 "%llu/%llu failed %llu; the engine: live %llu min %llu@%llu max %llu@%llu step %lld "
					 "reserved %llu/%llu failed %llu",
					 path, r, id, (unsigned long long)m->live, (unsigned long long)m->min,
					 (unsigned long long)m->min_ns, (unsigned long long)m->max, (unsigned long long)m->max_ns,
					 (long long)m->max_step, (unsigned long long)m->reserved,
					 (unsigned long long)m->reserved_max, (unsigned long long)m->failed,
					 (unsigned long long)refs[id].live.bytes, (unsigned long long)f->min,
					 (unsigned long long)f->min_ns, (unsigned long long)f->max, (unsigned long long)f->max_ns,
					 (long long)f->max_step, (unsigned long long)refs[id].reg.bytes,
					 (unsigned long long)f->reserved_max, (unsigned long long)f->failed);
			compared++;
		}
	}
	(void)step0;
	printf("%s: %zu of %zu rounds with a step going back inside\n", path, backs, c.nrounds);
	/* the rounds end where the events do: the final round covers them all */
	assert_int_equal(counted, c.summary.events);
	for (int i = 0; i < NMEM; i++) {
		mp_live_destroy(&refs[i].live);
		mp_live_regions_destroy(&refs[i].reg);
	}
	free(ev);
	mp_capture_rounds_free(&c);
	return compared;
}

static void test_engine(void **state)
{
	char path[] = "/tmp/memprof-rounds-XXXXXX";
	size_t total = 0;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		record_random(path, seed * 1000003);
		total += check_engine(path);
	}
	printf("rounds' memory ids compared with the engine: %zu\n", total);
	assert_true(total > 60);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known),
		cmocka_unit_test(test_engine),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_chart),
		cmocka_unit_test(test_versions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
