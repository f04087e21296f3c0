/* test_keep_bound.c - the flight recorder's bound at every moment
 * (wkeep.c: the run's bytes never pass SIZE plus one segment, whatever the
 * round's size), sampled at every write through the writer's test hook.
 *
 * A run of ROUNDS rounds, each far larger than a segment: PER allocations
 * of SIZE(i) bytes at scattered addresses (a round's chunks are several
 * segments' worth), then all of them freed but the first KEEPN, and the
 * KEEPN kept two rounds before freed. Segments of SEG bytes, a bound of
 * BOUND. After every write to the run (a segment's block, header or
 * trailer, a whole-run block), the hook:
 *   - sums the run's files on disk (P and P.d/seg-*): at most BOUND + SEG,
 *     rotations included (a new segment's header and first block while the
 *     closed one is still there);
 *   - opens the kept run as a kill at that moment would leave it, and
 *     replays its window from its first checkpoint: it reads, no free
 *     misses its block and no allocation finds its address live.
 * By hand (the figures below are the model's sums, not the writer's): the
 * whole run's peak is 2 * KEPT + ALL, where ALL is the sum of SIZE(i) over
 * a round and KEPT over its first KEEPN (two rounds' kept blocks live when
 * a round's PER are all allocated); at the end 2 * KEEPN blocks, 2 * KEPT
 * bytes, are live.
 *
 * A second run with a bound of less than a round: a segment alone then
 * passes the bound plus a segment, and the run holds no more than what the
 * writer must keep for a kill's window (P, the newest segment, and in a
 * rotation the one before it), every window still exact.
 *
 * On the writer that trimmed only at a round's end (before this test), the
 * first round after a trim wrote its chunks on top of a full run: the
 * largest sample of the first run was 329,238 B, 150 samples over. */
#include "test_common.h"

#include <memprof/capsummary.h>
#include <memprof/checkpoint.h>
#include <memprof/keep.h>
#include <memprof/reader.h>
#include <memprof/writer.h>

#include "writer_internal.h"

#include <dirent.h>

#define ROUNDS 60
#define PER 12000
#define KEEPN 8
#define SEG (32u << 10)
#define BOUND (256u << 10)
#define SLOTS (1u << 16)

static char dir[64], path[128], segdir[160];
static uint8_t *seen; /* a bit per (round, slot) */

static uint64_t size_of(uint64_t i)
{
	return 16 + ((i * 2654435761u) >> 9) % 2000;
}

/* a bijection of 0..SLOTS-1 (odd multiplier): scattered addresses */
static uint64_t addr_of(uint64_t r, uint64_t i)
{
	return (r + 1) << 24 | ((i * 40503u) % SLOTS) << 4;
}

/* the size allocated at a (30599: 40503's inverse mod SLOTS) */
static uint64_t size_at(uint64_t a)
{
	return size_of(((a >> 4) & (SLOTS - 1)) * 30599u % SLOTS);
}

/* The run's bytes on disk (P and P.d/seg-*); *floor: what the writer never
 * unlinks -- P, the newest segment and, in a rotation, the one before it. */
static uint64_t run_bytes(int rotating, uint64_t *floor)
{
	DIR *d = opendir(segdir);
	struct dirent *de;
	uint64_t sum = 0, n1 = 0, n2 = 0, b1 = 0, b2 = 0; /* the two newest: numbers + 1, bytes */
	char p[512];
	struct stat sb;

	if (d) {
		while ((de = readdir(d)))
			if (strncmp(de->d_name, "seg-", 4) == 0) {
				uint64_t n = strtoull(de->d_name + 4, NULL, 10) + 1;
				snprintf(p, sizeof(p), "%s/%s", segdir, de->d_name);
				if (stat(p, &sb) != 0)
					continue;
				sum += (uint64_t)sb.st_size;
				if (n > n1) {
					n2 = n1, b2 = b1;
					n1 = n, b1 = (uint64_t)sb.st_size;
				} else if (n > n2) {
					n2 = n, b2 = (uint64_t)sb.st_size;
				}
			}
		closedir(d);
	}
	*floor = b1 + (rotating ? b2 : 0);
	if (stat(path, &sb) == 0) {
		sum += (uint64_t)sb.st_size;
		*floor += (uint64_t)sb.st_size;
	}
	return sum;
}

typedef struct samples {
	uint64_t n, rotating, max, max_rotating, over, over_floor, unreadable, inexact;
} samples_t;

static uint64_t bound, seg; /* the run's */

/* The window as a kill now leaves it, replayed from its first checkpoint:
 * 0 exact; 1 a free without its block or an allocation over a live one;
 * -1 it does not read. *first: the window's first segment. */
static int check_window(uint64_t *live, uint64_t *live_bytes, uint64_t *first)
{
	mp_keep_run_t *k;
	mp_capture_t *cap;
	mp_checkpoint_t ck;
	mp_event_t ev;
	mp_diag_t diag;
	size_t i;
	int rc, c, bad = 0;

	*live = *live_bytes = 0;
	memset(seen, 0, ROUNDS * SLOTS / 8);
	if (mp_keep_open(&k, path, &diag))
		return -1;
	*first = k->nsegments ? k->segments[0].number : 0;
	c = mp_keep_window_checkpoint(k, &ck, &diag);
	if (c < 0) {
		mp_keep_close(k);
		return -1;
	}
	if (c == 0) {
		for (i = 0; i < ck.nblocks; i++) {
			uint64_t a = ck.blocks[i].address, x = ((a >> 24) - 1) * SLOTS + ((a >> 4) & (SLOTS - 1));
			seen[x / 8] |= (uint8_t)(1u << (x % 8));
			(*live)++;
			bad |= ck.blocks[i].bytes != size_at(a);
			*live_bytes += size_at(a);
		}
		mp_checkpoint_free(&ck);
	}
	rc = mp_keep_window_open(k, &cap, &diag);
	mp_keep_close(k);
	if (rc)
		return -1;
	while ((rc = mp_source_next(mp_capture_source(cap), &ev, &diag)) == 1) {
		uint64_t a = ev.address, x;
		uint8_t bit;
		if (ev.kind != MP_EV_ALLOC && ev.kind != MP_EV_FREE)
			continue;
		x = ((a >> 24) - 1) * SLOTS + ((a >> 4) & (SLOTS - 1));
		bit = (uint8_t)(1u << (x % 8));
		if (ev.kind == MP_EV_ALLOC) {
			bad |= (seen[x / 8] & bit) != 0;
			seen[x / 8] |= bit;
			(*live)++;
			*live_bytes += size_at(a);
		} else if (seen[x / 8] & bit) {
			seen[x / 8] &= (uint8_t)~bit;
			(*live)--;
			*live_bytes -= size_at(a);
		} else {
			bad = 1;
		}
	}
	mp_capture_close(cap);
	return rc ? -1 : bad;
}

static void hook(void *arg, int rotating)
{
	samples_t *s = arg;
	uint64_t floor, b = run_bytes(rotating, &floor), live, bytes, first;
	int c;

	s->n++;
	s->rotating += rotating;
	if (b > s->max)
		s->max = b;
	if (rotating && b > s->max_rotating)
		s->max_rotating = b;
	s->over += b > bound + seg;
	/* where the newest segments alone pass it: no more than they */
	s->over_floor += b > bound + seg && b > floor;
	c = check_window(&live, &bytes, &first);
	s->unreadable += c < 0;
	s->inexact += c > 0;
}

/* Record the run with the bound b and segments of sg; *s: its samples. */
static void run(uint64_t b, uint64_t sg, samples_t *s)
{
	mp_writer_t *w;
	mp_diag_t diag;
	mp_keep_run_t *k;
	const mp_summary_memory_t *host;
	uint64_t r, i, all = 0, kept = 0, live, bytes, first;
	char env[32];

	for (i = 0; i < PER; i++) {
		all += size_of(i);
		kept += i < KEEPN ? size_of(i) : 0;
	}
	bound = b;
	seg = sg;
	memset(s, 0, sizeof(*s));
	assert_non_null(seen = calloc(ROUNDS * SLOTS / 8, 1));
	snprintf(dir, sizeof(dir), "/tmp/memprof-keepb-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/1.memprof", dir);
	snprintf(segdir, sizeof(segdir), "%s.d", path);
	snprintf(env, sizeof(env), "%llu", (unsigned long long)b);
	setenv("MEMPROF_KEEP_BYTES", env, 1);
	snprintf(env, sizeof(env), "%llu", (unsigned long long)sg);
	setenv("MEMPROF_KEEP_SEGMENT_BYTES", env, 1);
	assert_int_equal(mp_writer_open(&w, path, 0, NULL, &diag), 0);
	unsetenv("MEMPROF_KEEP_BYTES");
	unsetenv("MEMPROF_KEEP_SEGMENT_BYTES");
	mp__keep_test_arg = s;
	mp__keep_test_hook = hook;
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < PER; i++)
			assert_int_equal(mp_writer_alloc(w, 0, addr_of(r, i), size_of(i), size_of(i)), 0);
		for (i = KEEPN; i < PER; i++)
			assert_int_equal(mp_writer_free(w, 0, addr_of(r, i)), 0);
		if (r >= 2)
			for (i = 0; i < KEEPN; i++)
				assert_int_equal(mp_writer_free(w, 0, addr_of(r - 2, i)), 0);
		assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);
	mp__keep_test_hook = NULL;
	fprintf(stderr,
		"keep bound: %llu samples (%llu in a rotation): the run at most %llu B (%llu B in a rotation), "
		"bound %llu + segment %llu = %llu B; %llu over (%llu over the newest segments), "
		"%llu windows unreadable, %llu inexact\n",
		(unsigned long long)s->n, (unsigned long long)s->rotating, (unsigned long long)s->max,
		(unsigned long long)s->max_rotating, (unsigned long long)b, (unsigned long long)sg,
		(unsigned long long)(b + sg), (unsigned long long)s->over, (unsigned long long)s->over_floor,
		(unsigned long long)s->unreadable, (unsigned long long)s->inexact);
	assert_true(s->n > 3 * ROUNDS);
	/* a segment ends every other round here (the round that finds it full
	 * is the last in it): samples at a new segment's header and first block */
	assert_true(s->rotating >= ROUNDS / 2);
	assert_int_equal(s->over_floor, 0);
	assert_int_equal(s->unreadable, 0);
	assert_int_equal(s->inexact, 0);

	/* the whole run's figures, by hand; the window's end, exact */
	assert_int_equal(mp_keep_open(&k, path, &diag), 0);
	assert_int_equal(k->whole_ok, 1);
	assert_non_null(host = mp_capture_summary_find(&k->whole, "host"));
	assert_int_equal(host->peak_bytes, 2 * kept + all);
	assert_int_equal(host->allocations, ROUNDS * PER);
	assert_int_equal(host->live_bytes, 2 * kept);
	assert_int_equal(k->skipped, 0);
	assert_true(k->segments[0].number > 2);
	mp_keep_close(k);
	assert_int_equal(check_window(&live, &bytes, &first), 0);
	assert_true(first > 2);
	assert_int_equal(live, 2 * KEEPN);
	assert_int_equal(bytes, 2 * kept);
	free(seen);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/* Rounds of about 54 KB, segments of 32 KiB within 256 KiB: never over. */
static void test_keep_bound(void **state)
{
	samples_t s;

	(void)state;
	run(BOUND, SEG, &s);
	assert_int_equal(s.over, 0);
	assert_true(s.max <= BOUND + SEG);
	assert_true(s.max > BOUND); /* it did fill up to its bound */
}

/* A bound of one segment, 32 KiB, under one round: a segment (the round
 * that filled it and the one that found it full) passes the bound plus a
 * segment alone, even where the flusher's own rounds (every 90 ms) split
 * the test's in two. Then the run
 * is only that segment (and, in a rotation, the one before it) and P: the
 * window a kill leaves is never given up for the bound (docs/format.md). */
static void test_keep_bound_floor(void **state)
{
	samples_t s;

	(void)state;
	run(SEG, SEG, &s);
	assert_true(s.over > 0); /* the case happened */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep_bound),
		cmocka_unit_test(test_keep_bound_floor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
