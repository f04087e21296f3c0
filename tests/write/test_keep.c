/* test_keep.c - the flight recorder (MEMPROF_KEEP_BYTES, `record --keep`;
 * wkeep.c, keep.c): a run of ROUNDS rounds, each allocating PER blocks of
 * 64 B at (round << 20) + 16 i and freeing those of two rounds before,
 * with one 10,000,000 B block allocated and freed in round SPIKE. By hand:
 * the whole run's peak is 3 * PER * 64 + 10,000,000 = 10,192,000 B, in
 * round SPIKE; at the end 2 * PER blocks (128,000 B) are live. Segments of
 * SEG bytes within a bound of BOUND: the spike's segment is long deleted,
 * yet the whole-run file still says its peak; the run (segments and
 * whole-run file) never passes BOUND + SEG after a round; the window,
 * started from its first checkpoint and replayed, ends with exactly the 2 * PER live blocks, every
 * free finding its block (no event lost or doubled at a segment's seam).
 * Then kills at each point, simulated on copies: the newest segment cut
 * mid-block, a newer segment cut inside its first block (mid-rotation,
 * mid-checkpoint), a segment missing (a gap), the whole-run file cut. */
#include "test_common.h"

#include <memprof/capsummary.h>
#include <memprof/checkpoint.h>
#include <memprof/keep.h>
#include <memprof/reader.h>
#include <memprof/writer.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>

#define ROUNDS 240
#define PER 1000
#define SPIKE 37
#define SPIKE_BYTES 10000000ull
#define SEG (32u << 10)
#define BOUND (128u << 10)

static char dir[64], path[128], segdir[160];
/* test_keep_run_lagging_lane: a lane (as the CUDA one, whose records come
 * late) holds every round's horizon back to the round before's start, so
 * each round's events are written before they are counted */
static int lag;

static uint64_t addr_of(uint64_t r, uint64_t i)
{
	return (r + 1) << 20 | i << 4;
}

/* Bytes of the segments (and of the whole-run file) now. */
static uint64_t run_bytes(int with_whole)
{
	DIR *d = opendir(segdir);
	struct dirent *de;
	uint64_t sum = 0;
	char p[512];
	struct stat sb;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (strncmp(de->d_name, "seg-", 4) == 0) {
			snprintf(p, sizeof(p), "%s/%s", segdir, de->d_name);
			if (stat(p, &sb) == 0)
				sum += (uint64_t)sb.st_size;
		}
	closedir(d);
	if (with_whole && stat(path, &sb) == 0)
		sum += (uint64_t)sb.st_size;
	return sum;
}

static void write_run(void)
{
	mp_writer_t *w;
	mp_writer_lane_t *lane = NULL;
	mp_diag_t diag;
	uint64_t r, i, max = 0, prev = 0, start;

	snprintf(dir, sizeof(dir), "/tmp/memprof-keep-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/1.memprof", dir);
	snprintf(segdir, sizeof(segdir), "%s.d", path);
	setenv("MEMPROF_KEEP_BYTES", "131072", 1);
	setenv("MEMPROF_KEEP_SEGMENT_BYTES", "32768", 1);
	assert_int_equal(mp_writer_open(&w, path, 0, NULL, &diag), 0);
	unsetenv("MEMPROF_KEEP_BYTES");
	unsetenv("MEMPROF_KEEP_SEGMENT_BYTES");
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	if (lag)
		assert_int_equal(mp_writer_lane_open(w, &lane), 0);
	for (r = 0; r < ROUNDS; r++) {
		start = mp_writer_now(w);
		for (i = 0; i < PER; i++)
			assert_int_equal(mp_writer_alloc(w, 0, addr_of(r, i), 64, 64), 0);
		if (r == SPIKE) {
			assert_int_equal(mp_writer_alloc(w, 0, 0x7f0000000000ull, SPIKE_BYTES, SPIKE_BYTES), 0);
			assert_int_equal(mp_writer_free(w, 0, 0x7f0000000000ull), 0);
		}
		if (r >= 2)
			for (i = 0; i < PER; i++)
				assert_int_equal(mp_writer_free(w, 0, addr_of(r - 2, i)), 0);
		if (lane)
			mp_writer_lane_hold(lane, prev);
		prev = start;
		assert_int_equal(mp_writer_flush(w), 0);
		if (run_bytes(1) > max)
			max = run_bytes(1);
	}
	assert_int_equal(mp_writer_close(w), 0);
	fprintf(stderr, "keep: the run (segments and whole-run file) at most %llu B (bound %u + segment %u)\n",
		(unsigned long long)max, BOUND, SEG);
	assert_true(max <= BOUND + SEG);
	assert_true(max > BOUND / 2); /* it did fill up to its bound */
}

/* Replay the window from its first checkpoint: *live blocks at its end,
 * *unknown frees (of no live block), *events read; the read's rc. */
static int replay_window(const char *p, uint64_t *live, uint64_t *live_bytes, uint64_t *unknown, uint64_t *events)
{
	uint8_t *set = calloc(ROUNDS * PER, 1);
	mp_keep_run_t *k;
	mp_capture_t *cap;
	mp_checkpoint_t ck;
	mp_event_t ev;
	mp_diag_t diag;
	size_t i, nseg_window;
	int rc, c;

	assert_non_null(set);
	*live = *live_bytes = *unknown = *events = 0;
	assert_int_equal(mp_keep_open(&k, p, &diag), 0);
	c = mp_keep_window_checkpoint(k, &ck, &diag);
	assert_true(c == 0 || c == 1);
	if (c == 0) {
		assert_true(ck.nmemories <= 1);
		for (i = 0; i < ck.nblocks; i++) {
			uint64_t a = ck.blocks[i].address;
			set[((a >> 20) - 1) * PER + ((a & 0xfffff) >> 4)] = 1;
			(*live)++;
		}
		mp_checkpoint_free(&ck);
	}
	assert_int_equal(mp_keep_window_open(k, &cap, &diag), 0);
	nseg_window = k->nsegments;
	mp_keep_close(k);
	while ((rc = mp_source_next(mp_capture_source(cap), &ev, &diag)) == 1) {
		uint64_t a = ev.address, x;
		if (ev.kind != MP_EV_ALLOC && ev.kind != MP_EV_FREE)
			continue;
		(*events)++;
		if (a == 0x7f0000000000ull)
			continue;
		x = ((a >> 20) - 1) * PER + ((a & 0xfffff) >> 4);
		if (ev.kind == MP_EV_ALLOC) {
			assert_int_equal(set[x], 0);
			set[x] = 1;
			(*live)++;
		} else if (set[x]) {
			set[x] = 0;
			(*live)--;
		} else {
			(*unknown)++;
		}
	}
	/* every segment's start checkpoint read, none disagreeing with its
	 * summary (the joined stream keeps each with its round's figures) */
	assert_int_equal(mp_capture_checkpoints_bad(cap, NULL), 0);
	assert_true(mp_capture_checkpoints_seen(cap) >= nseg_window - (c == 1));
	mp_capture_close(cap);
	*live_bytes = *live * 64;
	free(set);
	return rc;
}

static void cp(const char *from, const char *to)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s' '%s'", to, from, to);
	assert_int_equal(system(cmd), 0);
}

static void test_keep_run(void **state)
{
	mp_keep_run_t *k;
	mp_diag_t diag;
	const mp_summary_memory_t *host;
	uint64_t live, bytes, unknown, events, first, nseg, total_blocks = 0;
	char p2[200], d2[256], seg[512];
	size_t i;

	(void)state;
	write_run();
	assert_int_equal(mp_keep_is_run(path), 1);
	assert_int_equal(mp_keep_is_run(segdir), 1);
	assert_int_equal(mp_keep_open(&k, path, &diag), 0);
	/* the whole run's figures: the spike, though its segment is gone */
	assert_int_equal(k->whole_ok, 1);
	assert_non_null(host = mp_capture_summary_find(&k->whole, "host"));
	assert_int_equal(host->peak_bytes, 3 * PER * 64 + SPIKE_BYTES);
	assert_int_equal(host->allocations, ROUNDS * PER + 1);
	assert_int_equal(host->live_bytes, 2 * PER * 64);
	assert_int_equal(k->whole.events, 2 * ROUNDS * PER - 2 * PER + 2);
	assert_true(k->nsegments >= 3);
	assert_true(k->segments[0].number > 2);
	assert_int_equal(k->skipped, 0);
	first = k->segments[0].number;
	nseg = k->nsegments;
	for (i = 0; i < k->nsegments; i++) {
		mp_capture_t *cap;
		mp_event_t ev;
		int rc;
		assert_int_equal(k->segments[i].closed, 1);
		assert_int_equal(k->segments[i].number, first + i);
		total_blocks += k->segments[i].blocks;
		/* each segment reads alone */
		assert_int_equal(mp_capture_open(&cap, k->segments[i].path, &diag), 0);
		while ((rc = mp_source_next(mp_capture_source(cap), &ev, &diag)) == 1)
			;
		assert_int_equal(rc, 0);
		assert_int_equal(mp_source_end_status(mp_capture_source(cap)), MP_END_CLEAN);
		mp_capture_close(cap);
	}
	mp_keep_close(k);
	assert_int_equal(replay_window(path, &live, &bytes, &unknown, &events), 0);
	assert_int_equal(live, 2 * PER);
	assert_int_equal(bytes, 2 * PER * 64);
	assert_int_equal(unknown, 0);
	assert_true(events < 2 * ROUNDS * PER / 2); /* a window, not the run */
	fprintf(stderr, "keep: window of %llu segments (from %llu), %llu events, %llu blocks\n",
		(unsigned long long)nseg, (unsigned long long)first, (unsigned long long)events,
		(unsigned long long)total_blocks);

	snprintf(p2, sizeof(p2), "%s/2.memprof", dir);
	snprintf(d2, sizeof(d2), "%s.d", p2);
	/* 1. killed mid-round: the newest segment cut inside its last block */
	cp(path, p2);
	cp(segdir, d2);
	snprintf(seg, sizeof(seg), "%s/seg-%06llu.memprof", d2, (unsigned long long)(first + nseg - 1));
	{
		struct stat sb;
		assert_int_equal(stat(seg, &sb), 0);
		assert_int_equal(truncate(seg, sb.st_size - 40), 0); /* the trailer and a part of the last block */
	}
	assert_int_equal(mp_keep_open(&k, p2, &diag), 0);
	assert_int_equal(k->nsegments, nseg);
	assert_int_equal(k->segments[nseg - 1].closed, 0);
	mp_keep_close(k);
	assert_int_equal(replay_window(p2, &live, &bytes, &unknown, &events), 0);
	assert_int_equal(unknown, 0);
	assert_true(live >= PER && live <= 3 * PER); /* some round's state, not the end's */

	/* 2. killed mid-rotation, mid-checkpoint: a newer segment whose first
	 * block (definitions and checkpoint) is cut: skipped, the window is
	 * the segments before it, whole */
	cp(segdir, d2);
	{
		char next[512], cmd[1200];
		snprintf(next, sizeof(next), "%s/seg-%06llu.memprof", d2, (unsigned long long)(first + nseg));
		snprintf(seg, sizeof(seg), "%s/seg-%06llu.memprof", d2, (unsigned long long)(first + nseg - 1));
		/* its header and 200 bytes of its first block */
		mp_keep_run_t *k0;
		assert_int_equal(mp_keep_open(&k0, p2, &diag), 0);
		snprintf(cmd, sizeof(cmd), "head -c %llu '%s' > '%s'",
			 (unsigned long long)(k0->segments[nseg - 1].header_len + 200), seg, next);
		mp_keep_close(k0);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(mp_keep_open(&k, p2, &diag), 0);
	assert_int_equal(k->nsegments, nseg);
	assert_int_equal(k->skipped, 1);
	mp_keep_close(k);
	{
		/* ... and one cut inside its header: the same */
		char next[512];
		snprintf(next, sizeof(next), "%s/seg-%06llu.memprof", d2, (unsigned long long)(first + nseg));
		assert_int_equal(truncate(next, 10), 0);
		assert_int_equal(mp_keep_open(&k, p2, &diag), 0);
		assert_int_equal(k->nsegments, nseg);
		assert_int_equal(k->skipped, 1);
		mp_keep_close(k);
	}
	assert_int_equal(replay_window(p2, &live, &bytes, &unknown, &events), 0);
	assert_int_equal(live, 2 * PER);
	assert_int_equal(unknown, 0);

	/* 3. a gap (a segment lost): the window starts after it, at that
	 * segment's checkpoint, and still ends exact */
	cp(segdir, d2);
	snprintf(seg, sizeof(seg), "%s/seg-%06llu.memprof", d2, (unsigned long long)(first + 1));
	assert_int_equal(unlink(seg), 0);
	assert_int_equal(mp_keep_open(&k, p2, &diag), 0);
	assert_int_equal(k->nsegments, nseg - 2);
	assert_int_equal(k->segments[0].number, first + 2);
	mp_keep_close(k);
	assert_int_equal(replay_window(p2, &live, &bytes, &unknown, &events), 0);
	assert_int_equal(live, 2 * PER);
	assert_int_equal(unknown, 0);

	/* 4. the whole-run file cut inside its last block: the figures of the
	 * round before, the spike's peak among them */
	{
		struct stat sb;
		assert_int_equal(stat(p2, &sb), 0);
		assert_int_equal(truncate(p2, sb.st_size - 30), 0);
	}
	assert_int_equal(mp_keep_open(&k, p2, &diag), 0);
	assert_int_equal(k->whole_ok, 1);
	assert_non_null(host = mp_capture_summary_find(&k->whole, "host"));
	assert_int_equal(host->peak_bytes, 3 * PER * 64 + SPIKE_BYTES);
	assert_int_equal(k->whole.ended_cleanly, 0);
	mp_keep_close(k);

	snprintf(seg, sizeof(seg), "rm -rf '%s'", dir);
	assert_int_equal(system(seg), 0);
}

/* Threads recording while the flusher runs its own rounds (every 2 ms):
 * records past a round's horizon are common, and a segment must not lose
 * nor repeat them. 4 threads, each ROUNDS2 rounds of PER2 blocks freed two
 * rounds later: replayed from the window's checkpoint, no allocation finds
 * its address live, every free finds its block, and 4 * 2 * PER2 blocks are
 * live at the end. */
#define THREADS 4
#define ROUNDS2 300
#define PER2 400
#define HSET (1u << 20)

static mp_writer_t *tw;

static uint64_t taddr(uint64_t th, uint64_t r, uint64_t i)
{
	return (th + 1) << 40 | (r + 1) << 20 | i << 4;
}

static void *thread_main(void *arg)
{
	uint64_t th = (uint64_t)(uintptr_t)arg, r, i;
	struct timespec pause = {0, 500000}; /* so that the flusher's rounds fall between */

	for (r = 0; r < ROUNDS2; r++) {
		nanosleep(&pause, NULL);
		for (i = 0; i < PER2; i++)
			mp_writer_alloc(tw, 0, taddr(th, r, i), 64, 64);
		if (r >= 2)
			for (i = 0; i < PER2; i++)
				mp_writer_free(tw, 0, taddr(th, r - 2, i));
	}
	return NULL;
}

/* An open-addressing set of addresses: 1 when x was added (0: there). */
static int hset_put(uint64_t *h, uint64_t x)
{
	uint64_t j = (x * 0x9E3779B97F4A7C15ull) >> 44;

	while (h[j & (HSET - 1)] && h[j & (HSET - 1)] != x)
		j++;
	if (h[j & (HSET - 1)] == x)
		return 0;
	h[j & (HSET - 1)] = x;
	return 1;
}

/* 1 when x was there (removed: backward-shift deletion) */
static int hset_del(uint64_t *h, uint64_t x)
{
	uint64_t j = (x * 0x9E3779B97F4A7C15ull) >> 44, k;

	while (h[j & (HSET - 1)] && h[j & (HSET - 1)] != x)
		j++;
	if (!h[j & (HSET - 1)])
		return 0;
	h[j & (HSET - 1)] = 0;
	for (k = j + 1; h[k & (HSET - 1)]; k++) {
		uint64_t y = h[k & (HSET - 1)], home = (y * 0x9E3779B97F4A7C15ull) >> 44;
		/* y moves to the hole when its home is not in (j, k] */
		if (((k - home) & (HSET - 1)) >= ((k - j) & (HSET - 1))) {
			h[j & (HSET - 1)] = y;
			h[k & (HSET - 1)] = 0;
			j = k;
		}
	}
	return 1;
}

static void test_keep_threads(void **state)
{
	mp_writer_options_t o = {0};
	pthread_t tid[THREADS];
	uint64_t *set = calloc(HSET, sizeof(uint64_t)), live = 0, doubled = 0, unknown = 0;
	mp_keep_run_t *k;
	mp_capture_t *cap;
	mp_checkpoint_t ck;
	mp_event_t ev;
	mp_diag_t diag;
	size_t i;
	int rc;

	(void)state;
	assert_non_null(set);
	snprintf(dir, sizeof(dir), "/tmp/memprof-keep-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/2.memprof", dir);
	setenv("MEMPROF_KEEP_BYTES", "262144", 1);
	setenv("MEMPROF_KEEP_SEGMENT_BYTES", "32768", 1);
	o.flush_interval_ms = 2;
	assert_int_equal(mp_writer_open(&tw, path, 0, &o, &diag), 0);
	unsetenv("MEMPROF_KEEP_BYTES");
	unsetenv("MEMPROF_KEEP_SEGMENT_BYTES");
	assert_int_equal(mp_writer_memory(tw, "host", MP_MEMORY_HOST, 0), 0);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&tid[i], NULL, thread_main, (void *)(uintptr_t)i), 0);
	for (i = 0; i < THREADS; i++)
		pthread_join(tid[i], NULL);
	assert_int_equal(mp_writer_close(tw), 0);

	assert_int_equal(mp_keep_open(&k, path, &diag), 0);
	assert_true(k->segments[0].number > 0);
	fprintf(stderr, "keep: threads: window of %zu segments from %llu\n", k->nsegments,
		(unsigned long long)k->segments[0].number);
	assert_int_equal(mp_keep_window_checkpoint(k, &ck, &diag), 0);
	for (i = 0; i < ck.nblocks; i++, live++)
		assert_int_equal(hset_put(set, ck.blocks[i].address), 1);
	mp_checkpoint_free(&ck);
	assert_int_equal(mp_keep_window_open(k, &cap, &diag), 0);
	mp_keep_close(k);
	while ((rc = mp_source_next(mp_capture_source(cap), &ev, &diag)) == 1) {
		if (ev.kind == MP_EV_ALLOC) {
			if (hset_put(set, ev.address))
				live++;
			else
				doubled++;
		} else if (ev.kind == MP_EV_FREE) {
			if (hset_del(set, ev.address))
				live--;
			else
				unknown++;
		}
	}
	assert_int_equal(rc, 0);
	mp_capture_close(cap);
	assert_int_equal(doubled, 0);
	assert_int_equal(unknown, 0);
	assert_int_equal(live, THREADS * 2 * PER2);
	free(set);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/* The same run with a lane holding the horizon back (a `record --gpu
 * --keep`'s CUDA lane): at a rotation, events the old segment holds but
 * the tally has not counted yet would be in neither the new segment's
 * checkpoint nor its events -- the window then lost a round's frees. */
static void test_keep_run_lagging_lane(void **state)
{
	lag = 1;
	test_keep_run(state);
	lag = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep_run),
		cmocka_unit_test(test_keep_run_lagging_lane),
		cmocka_unit_test(test_keep_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
