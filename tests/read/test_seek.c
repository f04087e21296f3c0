/* test_seek.c - reading a capture from a checkpoint (memprof/checkpoint.h,
 * "Seeking"): for every checkpoint of captures recorded here (one to three
 * threads, three memory ids, reallocs, failed allocations, regions, steps,
 * a checkpoint every round), the events a seek returns are exactly the
 * full read's from the checkpoint on: the same count, and each the same
 * (index, time, kind, address, sizes, memory id, step, thread, flags).
 * Before them the full read has exactly the checkpoint's `events` events
 * (the synthetic ones aside), all earlier than its horizon; a checkpoint
 * past the last event (a round before the close) seeks to none.
 *
 * A lane's events carry the caller's times (the CUDA lane's do): a
 * capture where a lane's times run behind its hold (earlier than the
 * horizon a round has already written: the writer counts such an event in
 * the round it arrives) and another's run ahead of the clock. A seek drops
 * the events its checkpoint covers -- those the reader returns before the
 * block after the checkpoint's -- not every event earlier than its
 * horizon: the late ones after it are kept, and the seek still equals the
 * full read.
 *
 * Checkpoints of earlier 2.5 writers have no BACK (MP_CKPT_F_BACK): the
 * same capture with the flag cleared in every checkpoint seeks the old
 * way (from 6 blocks before) and still equals the full read. */
#include "test_common.h"

#include "capture_helpers.h"

#include <memprof/capture_edit.h>
#include <memprof/format.h>
#include <memprof/checkpoint.h>
#include <memprof/reader.h>
#include <memprof/writer.h>

#include <pthread.h>

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
	uint64_t addr[256] = {0}, base = (uint64_t)(j->thread + 1) << 36;

	for (int i = 0; i < 12000; i++) {
		uint64_t x = rnd(&j->seed), s = x % 256, size = 16 + (x >> 12) % 4096;
		uint32_t m = j->mem[(x >> 9) % 3];
		if (i % 500 == 499)
			assert_int_equal(mp_writer_flush(j->w), 0);
		switch ((x >> 20) % 12) {
		case 0:
			if (addr[s])
				assert_int_equal(mp_writer_realloc(j->w, j->mem[0], addr[s], addr[s] + 16 * 4096, size, 0), 0);
			addr[s] = addr[s] ? addr[s] + 16 * 4096 : 0;
			break;
		case 1:
			assert_int_equal(mp_writer_alloc_failed(j->w, m, size << 20), 0);
			break;
		case 2:
			assert_int_equal(mp_writer_region_add(j->w, m, base + (s << 24), 1u << 24), 0);
			break;
		case 3:
			assert_int_equal(mp_writer_step(j->w, i / 1000), 0);
			break;
		default:
			if (addr[s]) {
				assert_int_equal(mp_writer_free(j->w, j->mem[0], addr[s]), 0);
				addr[s] = 0;
			} else {
				addr[s] = base + (rnd(&j->seed) % (1u << 20)) * 16;
				assert_int_equal(mp_writer_alloc(j->w, j->mem[0], addr[s], size, 0), 0);
			}
		}
	}
	return NULL;
}

static void record(const char *path, int threads)
{
	mp_writer_t *w = NULL;
	mp_diag_t diag;
	job_t j[3];
	pthread_t t[3];

	assert_int_equal(setenv("MEMPROF_CHECKPOINT_ROUNDS", "1", 1) + setenv("MEMPROF_CHECKPOINT_RATIO", "0", 1), 0);
	if (mp_writer_open(&w, path, 1, NULL, &diag))
		fail_msg("%s", diag.text);
	assert_int_equal(unsetenv("MEMPROF_CHECKPOINT_ROUNDS") + unsetenv("MEMPROF_CHECKPOINT_RATIO"), 0);
	for (int i = 0; i < threads; i++) {
		j[i] = (job_t){w, {0, 0, 0}, 77 + (uint64_t)i * 7919, i};
		for (int k = 0; k < 3; k++) {
			static const char *names[] = {"host", "device", "pool"};
			j[i].mem[k] = (uint32_t)mp_writer_memory(w, names[k], k ? MP_MEMORY_DEVICE : MP_MEMORY_HOST, 0);
		}
		assert_int_equal(pthread_create(&t[i], NULL, work, &j[i]), 0);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	/* a round after the last event: its checkpoint covers every event,
	 * and a seek there returns none (a timer round of a loaded machine,
	 * between the last event and the close, once made one by chance) */
	assert_int_equal(mp_writer_flush(w), 0);
	assert_int_equal(mp_writer_close(w), 0);
}

static void same(const mp_event_t *a, const mp_event_t *b)
{
	if (a->index != b->index || a->time_ns != b->time_ns || a->kind != b->kind || a->address != b->address ||
	    a->requested_bytes != b->requested_bytes || a->allocated_bytes != b->allocated_bytes ||
	    a->memory != b->memory || a->step != b->step || a->thread != b->thread || a->flags != b->flags ||
	    a->op != b->op || a->stack != b->stack)
		fail_msg("event %llu differs from the full read's (%llu: kind %d/%d time %llu/%llu step %lld/%lld)",
			 (unsigned long long)a->index, (unsigned long long)b->index, a->kind, b->kind,
			 (unsigned long long)a->time_ns, (unsigned long long)b->time_ns, (long long)a->step,
			 (long long)b->step);
}

/* One thread's events at the writer's clock, a lane's behind it (from
 * 1 us on, 100 ns apart: behind the lane's hold, which starts at its
 * opening) and a lane's ahead of it (2 ms ahead of the clock: its events
 * wait for the clock in blocks many rounds before their horizon, where a
 * seek decodes from: the checkpoint's BACK). */
static void record_lanes(const char *path)
{
	mp_writer_t *w = NULL;
	mp_writer_lane_t *behind, *ahead;
	mp_diag_t diag;
	uint64_t tb = 1000, addr[256] = {0}, seed = 5;
	int mem;

	assert_int_equal(setenv("MEMPROF_CHECKPOINT_ROUNDS", "1", 1) + setenv("MEMPROF_CHECKPOINT_RATIO", "0", 1), 0);
	if (mp_writer_open(&w, path, 1, NULL, &diag))
		fail_msg("%s", diag.text);
	assert_int_equal(unsetenv("MEMPROF_CHECKPOINT_ROUNDS") + unsetenv("MEMPROF_CHECKPOINT_RATIO"), 0);
	mem = mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	assert_true(mem >= 0);
	assert_int_equal(mp_writer_lane_open(w, &behind), 0);
	assert_int_equal(mp_writer_lane_open(w, &ahead), 0);
	for (int i = 0; i < 30000; i++) {
		uint64_t x = rnd(&seed), s = x % 256, a = (1ull << 36) + (x % 256) * 4096;
		switch (i % 3) {
		case 0: /* the thread's */
			if (addr[s]) {
				assert_int_equal(mp_writer_free(w, (uint32_t)mem, addr[s]), 0);
				addr[s] = 0;
			} else {
				addr[s] = (2ull << 36) + s * 4096;
				assert_int_equal(mp_writer_alloc(w, (uint32_t)mem, addr[s], 64 + s, 0), 0);
			}
			break;
		case 1: /* behind */
			assert_int_equal(mp_writer_lane_event(behind, MP_EV_ALLOC, (uint32_t)mem, tb, a + (tb << 12), 32), 0);
			tb += 100;
			break;
		default: { /* ahead */
			uint64_t t = mp_writer_now(w) + 2000000;
			assert_int_equal(mp_writer_lane_event(ahead, MP_EV_ALLOC, (uint32_t)mem, t, (3ull << 36) + (uint64_t)i * 64, 48), 0);
			mp_writer_lane_hold(ahead, t);
		}
		}
		if (i % 600 == 599) {
			mp_writer_lane_hold(behind, tb);
			assert_int_equal(mp_writer_flush(w), 0);
		}
	}
	assert_int_equal(mp_writer_close(w), 0);
}

/* The checkpoints check_seeks found past every event. */
static size_t seeks_at_end;

/* Every checkpoint of path: the seek's events against full[0..n). Returns
 * the checkpoints checked. late: events earlier than a horizon may come
 * after it (lanes behind). */
static size_t check_seeks(const char *path, const mp_event_t *full, size_t n, int late)
{
	mp_capture_round_end_t *re;
	mp_capture_t *cap;
	mp_diag_t diag = {0};
	size_t nre, checked = 0;

	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	assert_int_equal(mp_capture_round_ends(cap, &re, &nre, &diag), 0);
	mp_capture_close(cap);
	assert_true(nre >= 20);
	for (size_t r = 0; r < nre; r++) {
		mp_checkpoint_t ck;
		mp_event_t *got = malloc((n + 1) * sizeof(*got)); /* (one more: a seek that returned too many) */
		size_t k = 0, m, before = 0, s, first;
		int rc;

		assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
		rc = mp_capture_checkpoint_at(cap, &re[r], &ck, &diag);
		assert_true(rc >= 0);
		if (rc == 0) { /* the final round's end holds no checkpoint */
			assert_int_equal(r, nre - 1);
			mp_capture_close(cap);
			free(got);
			continue;
		}
		assert_int_equal(ck.horizon_ns, re[r].horizon_ns);
		assert_int_equal(mp_capture_seek(cap, &ck, &diag), 0);
		/* a batch of none is full at once (it spun for ever after a seek) */
		assert_int_equal(mp_source_next_batch(mp_capture_source(cap), got, 0, &m, &diag), 1);
		assert_int_equal(m, 0);
		/* one event, then batches: both paths */
		assert_int_equal(mp_source_next(mp_capture_source(cap), &got[0], &diag), n > 0);
		for (k = 1;;) {
			rc = mp_source_next_batch(mp_capture_source(cap), got + k, n + 1 - k < 333 ? n + 1 - k : 333, &m,
						  &diag);
			assert_true(rc >= 0);
			k += m;
			if (rc == 0 || m == 0)
				break;
		}
		assert_int_equal(mp_source_end_status(mp_capture_source(cap)), MP_END_CLEAN);
		mp_capture_close(cap);
		/* the synthetic events of the full read before the first
		 * event kept come first, numbered from ck.events */
		for (s = 0; s < k && (got[s].kind == MP_EV_MEMORY || got[s].kind == MP_EV_DROPPED); s++)
			assert_int_equal(got[s].index, ck.events + s);
		/* (none kept: a checkpoint after the last event) */
		first = s < k ? got[s].index : n;
		seeks_at_end += s == k;
		if (k - s != n - first && s < k) {
			size_t nb = 0;
			for (size_t i = 0; i < n && nb < ck.events; i++)
				nb += !(full[i].kind == MP_EV_MEMORY || full[i].kind == MP_EV_DROPPED), first = i + 1;
			fprintf(stderr, "ck %zu: events %llu horizon %llu block %llu: got %zu from index %llu (time %llu), full %zu from %zu (time %llu)\n",
				r, (unsigned long long)ck.events, (unsigned long long)ck.horizon_ns, (unsigned long long)ck.block_index,
				k - s, (unsigned long long)got[s].index, (unsigned long long)got[s].time_ns, n - first, first,
				(unsigned long long)full[first].time_ns);
		}
		assert_int_equal(k - s, n - first);
		for (size_t i = 0; i < first; i++) {
			int synth = full[i].kind == MP_EV_MEMORY || full[i].kind == MP_EV_DROPPED;
			assert_true(synth || full[i].time_ns < ck.horizon_ns);
			before += !synth;
		}
		assert_int_equal(before, ck.events);
		assert_int_equal(first - before, s);
		assert_true(first == n || late || full[first].time_ns >= ck.horizon_ns);
		for (size_t i = s; i < k; i++)
			same(&got[i], &full[first + i - s]);
		checked++;
		mp_checkpoint_free(&ck);
		free(got);
	}
	free(re);
	return checked;
}

/* mp_test_edit_fn: the first checkpoint with MP_CKPT_F_BACK loses the flag
 * (its BACK field stays after the fields a reader knows: skipped) */
static int clear_back(void *ctx, uint8_t *raw, size_t len, uint64_t index)
{
	uint8_t *b = mp_test_round_section(raw, len, MP_SEC_CHECKPOINT);
	const uint8_t *p = b;

	(void)ctx;
	(void)index;
	if (!b)
		return 0;
	(void)mp_test_getv(&p); /* the body's length; the flags follow, one byte */
	if (!(*p & MP_CKPT_F_BACK))
		return 0;
	b[p - b] &= (uint8_t)~MP_CKPT_F_BACK;
	return 1;
}

/* path with no checkpoint's BACK, into old (a file beside it). */
static void without_back(const char *path, const char *old)
{
	mp_capture_round_end_t *re;
	mp_capture_t *cap;
	mp_diag_t diag = {0};
	size_t nre, nck = 0;
	char tmp[320];
	uint64_t index, offset;

	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	assert_int_equal(mp_capture_round_ends(cap, &re, &nre, &diag), 0);
	for (size_t r = 0; r < nre; r++) {
		mp_checkpoint_t ck;
		if (mp_capture_checkpoint_at(cap, &re[r], &ck, &diag) == 1) {
			assert_true(ck.flags & MP_CKPT_F_BACK);
			nck++;
			mp_checkpoint_free(&ck);
		}
	}
	mp_capture_close(cap);
	free(re);
	snprintf(tmp, sizeof(tmp), "%s.tmp", old);
	for (size_t k = 0; k < nck; k++) {
		mp_test_edit_block(k ? tmp : path, old, clear_back, NULL, "a checkpoint with BACK", &index, &offset);
		assert_int_equal(rename(old, tmp), 0);
	}
	assert_int_equal(rename(tmp, old), 0);
}

static void test_seek_equals_full_read(void **state)
{
	char dir[] = "/tmp/memprof-seek-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (int threads = 1; threads <= 3; threads++) {
		char file[256];
		mp_event_t *full;
		mp_diag_t diag = {0};
		int rc;
		size_t n, checked;

		snprintf(file, sizeof(file), "%s/t%d.memprof", dir, threads);
		record(file, threads);
		n = read_all(file, &full, &rc, &diag, NULL);
		assert_int_equal(rc, 0);
		assert_true(n >= 10000u * (size_t)threads);
		seeks_at_end = 0;
		checked = check_seeks(file, full, n, 0);
		fprintf(stderr, "%d threads: %zu events, %zu seeks equal to the full read, %zu past the last event\n",
			threads, n, checked, seeks_at_end);
		assert_true(checked >= 20);
		assert_true(seeks_at_end >= 1);
		if (threads == 3) { /* checkpoints without BACK (earlier 2.5 writers) */
			char old[300];
			snprintf(old, sizeof(old), "%s/old.memprof", dir);
			without_back(file, old);
			checked = check_seeks(old, full, n, 0);
			fprintf(stderr, "without BACK: %zu seeks equal to the full read\n", checked);
			assert_true(checked >= 20);
			unlink(old);
		}
		free(full);
		unlink(file);
	}
	rmdir(dir);
}

static void test_seek_lanes_behind_and_ahead(void **state)
{
	char dir[] = "/tmp/memprof-seek-XXXXXX", file[256];
	mp_event_t *full;
	mp_diag_t diag = {0};
	size_t n, checked;
	int rc;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/lanes.memprof", dir);
	record_lanes(file);
	n = read_all(file, &full, &rc, &diag, NULL);
	assert_int_equal(rc, 0);
	assert_true(n >= 30000);
	checked = check_seeks(file, full, n, 1);
	fprintf(stderr, "lanes: %zu events, %zu seeks equal to the full read\n", n, checked);
	assert_true(checked >= 20);
	free(full);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seek_equals_full_read),
		cmocka_unit_test(test_seek_lanes_behind_and_ahead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
