/* test_reader_batch.c - the reader's batch path (mp_source_next_batch: the
 * single-thread fast decoder, mp__merge_run) returns exactly the events of
 * the one-at-a-time path (mp_source_next), field by field, on a capture
 * with every record kind: allocations of every size encoding, frees of
 * recent blocks (aged) and old ones, reused addresses, reallocs, failed
 * allocations, regions, steps, marks, context changes, two memory ids, one
 * thread and then three at once (the k-way merge), with batches of 1, 7
 * and 1024 events. The figures are checked against what was written too. */
#include "test_common.h"

#include <memprof/capture.h>

#include <pthread.h>

#define N1 60000 /* events of the main thread alone */
#define NW 20000 /* events per worker, three workers at once */

typedef struct wk {
	mp_writer_t *w;
	uint32_t mem[2], op[3];
	uint64_t base, seed, n;
	uint64_t allocs, frees; /* written */
} wk_t;

static uint64_t rnd(uint64_t *s, uint64_t n)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s % n;
}

/* A random mix on one thread; live blocks in a small table so frees hit
 * recent (aged) and old blocks, and freed addresses come back (reused). */
static void *churn(void *arg)
{
	wk_t *k = arg;
	uint64_t live[256] = {0}, nlive = 0;

	for (uint64_t i = 0; i < k->n; i++) {
		uint64_t r = rnd(&k->seed, 1000), m = k->mem[rnd(&k->seed, 10) == 0];
		if (r < 5) {
			mp_writer_set_context(k->w, k->op[rnd(&k->seed, 3)], (int)rnd(&k->seed, 6), 0, (uint32_t)rnd(&k->seed, 2));
		} else if (r < 8) {
			mp_writer_alloc_failed(k->w, (uint32_t)m, 1 + rnd(&k->seed, 1 << 20));
		} else if (r < 10) {
			mp_writer_step(k->w, (int64_t)(i / 1000));
		} else if (r < 11) {
			mp_writer_mark(k->w, k->op[0]);
		} else if (r < 13) {
			uint64_t b = k->base + (1ull << 30) + 65536 * rnd(&k->seed, 4);
			if (rnd(&k->seed, 2))
				mp_writer_region_add(k->w, (uint32_t)m, b, 65536);
			else
				mp_writer_region_remove(k->w, (uint32_t)m, b);
		} else if (r < 30 && nlive) {
			uint64_t j = rnd(&k->seed, nlive), na = k->base + 16 * rnd(&k->seed, 1 << 16);
			mp_writer_realloc(k->w, (uint32_t)m, live[j], na, 100 + rnd(&k->seed, 100), 112 + rnd(&k->seed, 100));
			live[j] = na;
			k->allocs++;
			k->frees++;
		} else if (nlive && (nlive == 256 || r < 500)) {
			uint64_t j = rnd(&k->seed, 4) ? nlive - 1 - rnd(&k->seed, nlive < 8 ? nlive : 8) : rnd(&k->seed, nlive);
			mp_writer_free(k->w, (uint32_t)m, live[j]);
			live[j] = live[--nlive];
			k->frees++;
		} else {
			uint64_t a = k->base + 16 * rnd(&k->seed, 1 << 16), req = 1 + rnd(&k->seed, 5000), al;
			switch (rnd(&k->seed, 3)) {
			case 0:
				al = req;
				break;
			case 1:
				al = (req + 23 < 32 ? 32 : (req + 23) & ~15ull) - 8; /* glibc's usable size */
				break;
			default:
				al = req + rnd(&k->seed, 300);
			}
			mp_writer_alloc(k->w, (uint32_t)m, a, req, al);
			live[nlive++] = a;
			k->allocs++;
		}
	}
	return NULL;
}

static void same_event(const mp_event_t *a, const mp_event_t *b)
{
	assert_int_equal(a->time_ns, b->time_ns);
	assert_int_equal(a->index, b->index);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->address, b->address);
	assert_int_equal(a->requested_bytes, b->requested_bytes);
	assert_int_equal(a->allocated_bytes, b->allocated_bytes);
	assert_int_equal(a->step, b->step);
	assert_int_equal(a->memory, b->memory);
	assert_int_equal(a->thread, b->thread);
	assert_int_equal(a->op, b->op);
	assert_int_equal(a->dtype, b->dtype);
	assert_int_equal(a->shape, b->shape);
	assert_int_equal(a->label, b->label);
	assert_int_equal(a->stack, b->stack);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->region, b->region);
}

static void test_batch_equals_single(void **state)
{
	char *path = mp_test_tmpfile("reader_batch.memprof");
	static mp_event_t one[2 * (N1 + 3 * NW)], batch[1024];
	wk_t k[4];
	mp_writer_options_t wo;
	mp_writer_t *w;
	mp_source_t *src;
	mp_diag_t diag;
	pthread_t th[3];
	size_t n = 0, allocs = 0, frees = 0;
	uint64_t want_allocs = 0, want_frees = 0;
	int rc;

	(void)state;
	assert_non_null(path);
	memset(&wo, 0, sizeof(wo));
	wo.full_policy = MP_WRITER_WAIT;
	wo.command_line = "test_reader_batch";
	assert_int_equal(mp_writer_open(&w, path, 1, &wo, &diag), 0);
	memset(k, 0, sizeof(k));
	for (int i = 0; i < 4; i++) {
		k[i].w = w;
		k[i].mem[0] = (uint32_t)mp_writer_memory(w, "pool", MP_MEMORY_DEVICE, 1 << 30);
		k[i].mem[1] = (uint32_t)mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
		k[i].op[0] = mp_writer_intern(w, "matmul");
		k[i].op[1] = mp_writer_intern(w, "conv");
		k[i].op[2] = mp_writer_intern(w, "relu");
		k[i].base = (uint64_t)(i + 1) << 36;
		k[i].seed = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
		k[i].n = i ? NW : N1;
	}
	churn(&k[0]); /* one thread: the fast path */
	assert_int_equal(mp_writer_flush(w), 0);
	for (int i = 0; i < 3; i++) /* three at once: the merge */
		assert_int_equal(pthread_create(&th[i], NULL, churn, &k[i + 1]), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(mp_writer_close(w), 0);
	for (int i = 0; i < 4; i++) {
		want_allocs += k[i].allocs;
		want_frees += k[i].frees;
	}

	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	while ((rc = mp_source_next(src, &one[n], &diag)) == 1) {
		allocs += one[n].kind == MP_EV_ALLOC;
		frees += one[n].kind == MP_EV_FREE;
		n++;
		assert_true(n < sizeof(one) / sizeof(one[0]));
	}
	assert_int_equal(rc, 0);
	mp_source_close(src);
	assert_int_equal(allocs, want_allocs);
	assert_int_equal(frees, want_frees);
	assert_true(n > N1 + 3 * NW - 1000);

	static const size_t sizes[] = {1, 7, 1024};
	for (size_t s = 0; s < 3; s++) {
		size_t got, at = 0;
		assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
		do {
			rc = mp_source_next_batch(src, batch, sizes[s], &got, &diag);
			assert_true(got <= sizes[s]);
			assert_true(rc != 1 || got == sizes[s]);
			for (size_t i = 0; i < got; i++, at++) {
				assert_true(at < n);
				same_event(&one[at], &batch[i]);
			}
		} while (rc == 1);
		assert_int_equal(rc, 0);
		assert_int_equal(at, n);
		assert_int_equal(mp_source_end_status(src), MP_END_CLEAN);
		mp_source_close(src);
	}
	remove(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_equals_single),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
