/* tally_test.h - what the tally's tests share: a writer on a file, its
 * SUMMARY read back, threads of random events to compare against the
 * reader's replay (test_tally_round.c, test_help.c). */
#ifndef MP_TALLY_TEST_H
#define MP_TALLY_TEST_H

#include "test_common.h"

#include <memprof/capsummary.h>
#include <memprof/writer.h>

#include <pthread.h>
#include <stdint.h>

static inline mp_writer_t *open_writer(const char *path, uint32_t flush_ms)
{
	mp_writer_options_t o = {0};
	mp_writer_t *w;
	mp_diag_t diag;

	o.flush_interval_ms = flush_ms;
	assert_int_equal(mp_writer_open(&w, path, 0, &o, &diag), 0);
	return w;
}

static inline void read_summary(const char *path, mp_capture_summary_t *s)
{
	mp_diag_t diag;
	int rc = mp_capture_summary_read(path, s, &diag);

	if (rc)
		fprintf(stderr, "%s\n", diag.text);
	assert_int_equal(rc, 0);
}

/* Each thread's events: allocations, frees, reallocs and failed
 * allocations over three memory ids, at addresses of its own and of a pool
 * all threads share (duplicates, frees of addresses not live, a block
 * freed by another thread), some at 2^53 and up (tally.h's keys), some
 * without an allocated size or with one 2^32 beyond the request (WIDE
 * ring records); flushes now and then. Without asks, neither flushes nor
 * the events that ask the flusher for a round of their own (failed
 * allocations, blocks of 4 MiB or more: the WIDE ones), so that every
 * round but the last is the writer's own choice. */
typedef struct {
	mp_writer_t *w;
	uint64_t seed;
	int n;
	int asks; /* 0: no mp_writer_flush, nor events that ask for a round (above) */
} rnd_arg_t;

static inline uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline uint64_t rnd_addr(uint64_t *s, int me)
{
	uint64_t x = rnd(s), a = 0x10000 + (x % 64) * 16;

	if (x >> 60 < 12) /* 3/4 its own */
		a += (uint64_t)(me + 1) << 32;
	if ((x >> 20) % 16 == 0) /* and 1/16 high */
		a |= (x >> 40) % 2 ? 1ull << 53 : 0x7full << 56;
	return a;
}

static inline void *rnd_thread(void *p)
{
	rnd_arg_t *a = p;
	uint64_t s = a->seed;
	int i, me = (int)(a->seed % 8);

	for (i = 0; i < a->n; i++) {
		uint64_t x = rnd(&s), req = 1 + (x >> 8) % 5000, alloc = (x >> 24) % 4 ? req + (x >> 30) % 32 : 0;
		uint32_t mem = (uint32_t)((x >> 36) % 3);
		if ((x >> 40) % 100 == 0 && a->asks)
			alloc = req + (1ull << 32);
		switch (x % 16) {
		case 0:
		case 1:
		case 2:
		case 3:
		case 4:
		case 5:
			mp_writer_alloc(a->w, mem, rnd_addr(&s, me), req, alloc);
			break;
		case 6:
		case 7:
		case 8:
		case 9:
		case 10:
			mp_writer_free(a->w, mem, rnd_addr(&s, me));
			break;
		case 11:
		case 12:
			mp_writer_realloc(a->w, mem, rnd_addr(&s, me), rnd_addr(&s, me), req, alloc);
			break;
		case 13:
			if (a->asks)
				mp_writer_alloc_failed(a->w, mem, req);
			break;
		case 14:
			if ((x >> 50) % 64 == 0 && a->asks)
				mp_writer_flush(a->w);
			break;
		default:
			break;
		}
	}
	return NULL;
}

static inline void check_memory(const mp_summary_memory_t *m, const mp_summary_memory_t *r)
{
	assert_string_equal(m->name, r->name);
	assert_int_equal(m->has_peak, r->has_peak);
	assert_int_equal(m->allocations, r->allocations);
	assert_int_equal(m->frees, r->frees);
	assert_int_equal(m->reallocs, r->reallocs);
	assert_int_equal(m->failed, r->failed);
	assert_int_equal(m->peak_bytes, r->peak_bytes);
	assert_int_equal(m->peak_time_ns, r->peak_time_ns);
	assert_int_equal(m->peak_requested, r->peak_requested);
	assert_int_equal(m->peak_requested_time_ns, r->peak_requested_time_ns);
	assert_int_equal(m->live_blocks, r->live_blocks);
	assert_int_equal(m->live_bytes, r->live_bytes);
	assert_int_equal(m->live_requested, r->live_requested);
}

/* n threads of rnd_thread (40000 draws each, seeds seed * (i + 1) + i;
 * asks: whether they call mp_writer_flush now and then and make events
 * that ask for a round of their own) on w, with its
 * three memory ids declared first; joined. */
static inline void rnd_run(mp_writer_t *w, int n, uint64_t seed, int asks)
{
	pthread_t tid[8];
	rnd_arg_t arg[8];
	int i;

	assert_true(n <= 8);
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	assert_int_equal(mp_writer_memory(w, "gpu0", MP_MEMORY_DEVICE, 0), 1);
	assert_int_equal(mp_writer_memory(w, "pool", MP_MEMORY_DEVICE, 0), 2);
	for (i = 0; i < n; i++) {
		arg[i] = (rnd_arg_t){w, seed * (uint64_t)(i + 1) + (uint64_t)i, 40000, asks};
		assert_int_equal(pthread_create(&tid[i], NULL, rnd_thread, &arg[i]), 0);
	}
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
}

/* The capture's SUMMARY (into *s, available) against
 * mp_capture_summary_replay's figures (the reader's events by the
 * solver's rules: code the tally shares nothing with), every figure. */
static inline void check_against_replay(const char *path, mp_capture_summary_t *s)
{
	mp_capture_summary_t r;
	mp_diag_t diag;
	uint32_t j;

	read_summary(path, s);
	assert_true(s->available);
	assert_int_equal(mp_capture_summary_replay(path, &r, &diag), 0);
	assert_int_equal(s->events, r.events);
	assert_int_equal(s->nmemories, r.nmemories);
	for (j = 0; j < s->nmemories; j++)
		check_memory(&s->memories[j], &r.memories[j]);
	mp_capture_summary_free(&r);
}

#endif
