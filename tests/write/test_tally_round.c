/* test_tally_round.c - the writer's SUMMARY figures through its flush
 * rounds (src/core/write/tally_round.c, tally_decode.c): the ways the
 * round's loops leave their fast path (addresses of 2^53 and up, a block
 * in the stash), and random events of one, two and five threads against
 * the reader's replay.
 */
#include "test_common.h"

#include "tally.h"
#include "tally_test.h"

#include <memprof/capture.h>

#include <pthread.h>

/* Addresses of 2^53 and up (keys not one to one: tally.h): two memory ids
 * at one such address, and a second address with the same key, kept
 * apart from each other and from a low address with the same low bits. */
static void test_tally_high(void **state)
{
	const uint64_t a = 0x00ff000000001000ull, b = 0x01ff000000001000ull;
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_t *w = open_writer(path, 0);
	mp_capture_summary_t s;
	const mp_summary_memory_t *h, *d;

	(void)state;
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	assert_int_equal(mp_writer_memory(w, "gpu0", MP_MEMORY_DEVICE, 0), 1);
	assert_int_equal(mp__tally_key(a, 0), mp__tally_key(b, 0));
	/* host live after each:                                       */
	mp_writer_alloc(w, 0, a, 100, 112);    /* 112                  */
	mp_writer_alloc(w, 1, a, 200, 200);    /* (gpu0: 200)          */
	mp_writer_alloc(w, 0, b, 300, 304);    /* 416                  */
	mp_writer_alloc(w, 0, 0x1000, 400, 0); /* 816: the peak        */
	mp_writer_free(w, 0, a);               /* 704                  */
	mp_writer_free(w, 0, a);               /* not live: 704        */
	mp_writer_free(w, 1, a);               /* (gpu0: 0)            */
	mp_writer_free(w, 0, b);               /* 400                  */
	assert_int_equal(mp_writer_close(w), 0);

	read_summary(path, &s);
	assert_true(s.available);
	assert_non_null(h = mp_capture_summary_find(&s, "host"));
	assert_non_null(d = mp_capture_summary_find(&s, "gpu0"));
	assert_int_equal(h->allocations, 3);
	assert_int_equal(h->frees, 3);
	assert_int_equal(h->peak_bytes, 816);
	assert_int_equal(h->peak_requested, 800);
	assert_int_equal(h->live_blocks, 1);
	assert_int_equal(h->live_bytes, 400);
	assert_int_equal(d->allocations, 1);
	assert_int_equal(d->frees, 1);
	assert_int_equal(d->peak_bytes, 200);
	assert_int_equal(d->live_blocks, 0);
	assert_int_equal(d->live_bytes, 0);
	mp_capture_summary_free(&s);
	unlink(path);
	free(path);
}

/* The stash through a flush round (tally_round.c's loops, not
 * mp__tally_apply alone): five blocks whose buckets are the same two of
 * the first table (2048 buckets), the fifth in the stash; the first freed,
 * which makes room in the buckets; the fifth allocated again. While the
 * stash holds a block no event may take the fast way: this one would put
 * a second block in the buckets and count the stash's too. */
static void test_tally_stash_round(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_t *w = open_writer(path, 0);
	mp_capture_summary_t s;
	const mp_summary_memory_t *h;
	uint64_t addr[5], a;
	int k = 0;

	(void)state;
	for (a = 0x1000; k < 5; a += 16) {
		uint64_t x = mp__tally_hash(mp__tally_key(a, 0));
		if ((x >> 53) + (x & 2047) == 1) /* buckets 0 and 1 */
			addr[k++] = a;
	}
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	for (k = 0; k < 5; k++)
		mp_writer_alloc(w, 0, addr[k], 100, 100); /* 500 */
	mp_writer_free(w, 0, addr[0]);                    /* 400 */
	mp_writer_alloc(w, 0, addr[4], 7, 7);             /* 100 dropped: 307 */
	assert_int_equal(mp_writer_close(w), 0);
	read_summary(path, &s);
	assert_non_null(h = mp_capture_summary_find(&s, "host"));
	assert_int_equal(h->peak_bytes, 500);
	assert_int_equal(h->live_blocks, 4);
	assert_int_equal(h->live_bytes, 307);
	mp_capture_summary_free(&s);
	unlink(path);
	free(path);
}

/* --- random events against the reader's replay ---------------------------- */

/* Each thread's events: allocations, frees, reallocs and failed
 * allocations over three memory ids, at addresses of its own and of a pool
 * all threads share (duplicates, frees of addresses not live, a block
 * freed by another thread), some at 2^53 and up (tally.h's keys), some
 * without an allocated size or with one 2^32 beyond the request (WIDE
 * ring records); flushes now and then. */
typedef struct {
	mp_writer_t *w;
	uint64_t seed;
	int n;
} rnd_arg_t;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t rnd_addr(uint64_t *s, int me)
{
	uint64_t x = rnd(s), a = 0x10000 + (x % 64) * 16;

	if (x >> 60 < 12) /* 3/4 its own */
		a += (uint64_t)(me + 1) << 32;
	if ((x >> 20) % 16 == 0) /* and 1/16 high */
		a |= (x >> 40) % 2 ? 1ull << 53 : 0x7full << 56;
	return a;
}

static void *rnd_thread(void *p)
{
	rnd_arg_t *a = p;
	uint64_t s = a->seed;
	int i, me = (int)(a->seed % 8);

	for (i = 0; i < a->n; i++) {
		uint64_t x = rnd(&s), req = 1 + (x >> 8) % 5000, alloc = (x >> 24) % 4 ? req + (x >> 30) % 32 : 0;
		uint32_t mem = (uint32_t)((x >> 36) % 3);
		if ((x >> 40) % 100 == 0)
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
			mp_writer_alloc_failed(a->w, mem, req);
			break;
		case 14:
			if ((x >> 50) % 64 == 0)
				mp_writer_flush(a->w);
			break;
		default:
			break;
		}
	}
	return NULL;
}

static void check_memory(const mp_summary_memory_t *m, const mp_summary_memory_t *r)
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

/* 1, 2 and 5 threads (the tally's three ways of merging), their writer's
 * figures against mp_capture_summary_replay's (the reader's events by the
 * solver's rules: code the tally shares nothing with). */
static void test_tally_random(void **state)
{
	static const int threads[] = {1, 2, 5};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(threads) / sizeof(threads[0]); k++) {
		char *path = mp_test_tmpfile(".memprof");
		mp_writer_t *w = open_writer(path, 1);
		pthread_t tid[8];
		rnd_arg_t arg[8];
		mp_capture_summary_t s, r;
		mp_diag_t diag;
		int i, n = threads[k];
		uint32_t j;

		assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
		assert_int_equal(mp_writer_memory(w, "gpu0", MP_MEMORY_DEVICE, 0), 1);
		assert_int_equal(mp_writer_memory(w, "pool", MP_MEMORY_DEVICE, 0), 2);
		for (i = 0; i < n; i++) {
			arg[i] = (rnd_arg_t){w, 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1) + (uint64_t)i, 40000};
			assert_int_equal(pthread_create(&tid[i], NULL, rnd_thread, &arg[i]), 0);
		}
		for (i = 0; i < n; i++)
			pthread_join(tid[i], NULL);
		assert_int_equal(mp_writer_close(w), 0);
		read_summary(path, &s);
		assert_true(s.available);
		assert_int_equal(mp_capture_summary_replay(path, &r, &diag), 0);
		assert_int_equal(s.events, r.events);
		assert_int_equal(s.nmemories, r.nmemories);
		for (j = 0; j < s.nmemories; j++)
			check_memory(&s.memories[j], &r.memories[j]);
		/* (something to compare: every kind of event happened) */
		assert_true(s.memories[0].allocations > 1000 && s.memories[0].frees > 1000);
		assert_true(s.memories[0].reallocs > 500 && s.memories[0].failed > 500);
		assert_true(s.memories[0].live_blocks > 0);
		mp_capture_summary_free(&s);
		mp_capture_summary_free(&r);
		unlink(path);
		free(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tally_high),
		cmocka_unit_test(test_tally_stash_round),
		cmocka_unit_test(test_tally_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
