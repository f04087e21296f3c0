/* test_tally.c - the writer's running figures (src/core/write/tally*.c) and
 * their SUMMARY sections, read back with mp_capture_summary_read.
 *
 * Figures are hand-computed from each sequence (the comments walk through
 * them); times come from the events the reader returns; the live blocks'
 * table is checked against a plain list kept by the test.
 */
#include "test_common.h"

#include "capture_helpers.h"
#include "tally.h"
#include "tally_test.h"

#include <memprof/capsummary.h>
#include <memprof/capture.h>
#include <memprof/format/varint.h>

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/wait.h>

/* The time of the index-th event of that kind (and memory) the reader
 * returns, and the trailer's event count. */
static uint64_t event_time(const char *path, int kind, uint32_t memory, int index, uint64_t *events)
{
	mp_capture_t *cap;
	mp_diag_t diag;
	mp_event_t ev;
	uint64_t t = UINT64_MAX;
	int k = 0;

	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	while (mp_source_next(mp_capture_source(cap), &ev, &diag) == 1)
		if ((int)ev.kind == kind && ev.memory == memory && k++ == index)
			t = ev.time_ns;
	if (events)
		*events = mp_capture_trailer(cap) ? mp_capture_trailer(cap)->events : 0;
	mp_capture_close(cap);
	return t;
}

/* One thread, every rule: host (id 0) and a second memory id at the same
 * addresses, kept apart. */
static void test_tally_sequence(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_t *w = open_writer(path, 0);
	mp_capture_summary_t s;
	const mp_summary_memory_t *h, *d;
	uint64_t events;
	int host, dev;

	(void)state;
	host = mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	dev = mp_writer_memory(w, "gpu0", MP_MEMORY_DEVICE, 1 << 30);
	assert_int_equal(host, 0);
	assert_int_equal(dev, 1);
	/* live (allocated / requested) after each:                      */
	mp_writer_alloc(w, 0, 0x1000, 100, 112);          /* 112 / 100            */
	mp_writer_alloc(w, 0, 0x2000, 50, 0);             /* 162 / 150: no allocated size: 50 */
	mp_writer_free(w, 0, 0x9999);                     /* unknown: no change, a free all the same */
	mp_writer_realloc(w, 0, 0x1000, 0x3000, 300, 304);/* 354 / 350: the peak (both) */
	mp_writer_alloc(w, 0, 0x2000, 10, 16);            /* at a live address: 0x2000's 50 dropped: 320 / 310 */
	mp_writer_alloc_failed(w, 0, 1ull << 40);         /* failed */
	mp_writer_free(w, 0, 0x3000);                     /* 16 / 10 */
	mp_writer_realloc(w, 0, 0x2000, 0x2000, 20, 32);  /* in place: 32 / 20 */
	mp_writer_alloc(w, 1, 0x1000, 1000, 1000);        /* gpu0: 1000 */
	mp_writer_free(w, 1, 0x1000);                     /* gpu0: 0 */
	assert_int_equal(mp_writer_close(w), 0);

	read_summary(path, &s);
	assert_true(s.available);
	assert_true(s.ended_cleanly);
	assert_int_equal(s.version_major, 3);
	assert_int_equal(s.version_minor, 0);
	assert_true(s.horizon_ns == UINT64_MAX);
	assert_int_equal(s.events, 12); /* 8 records + 2 reallocs' second halves + 2 on gpu0 */
	assert_int_equal(s.nmemories, 2);
	assert_non_null(h = mp_capture_summary_find(&s, "host"));
	assert_non_null(d = mp_capture_summary_find(&s, "gpu0"));
	assert_int_equal(h->kind, MP_MEMORY_HOST);
	assert_int_equal(d->kind, MP_MEMORY_DEVICE);
	assert_int_equal(h->allocations, 3);
	assert_int_equal(h->frees, 2);
	assert_int_equal(h->reallocs, 2);
	assert_int_equal(h->failed, 1);
	assert_int_equal(h->dropped, 0);
	assert_int_equal(h->peak_bytes, 354);
	assert_int_equal(h->peak_requested, 350);
	/* the peak is the first realloc's allocation half */
	assert_int_equal(h->peak_time_ns, event_time(path, MP_EV_ALLOC, 0, 2, &events));
	assert_int_equal(h->peak_requested_time_ns, h->peak_time_ns);
	assert_int_equal(s.events, events);
	assert_int_equal(h->live_blocks, 1);
	assert_int_equal(h->live_bytes, 32);
	assert_int_equal(h->live_requested, 20);
	assert_int_equal(d->allocations, 1);
	assert_int_equal(d->frees, 1);
	assert_int_equal(d->peak_bytes, 1000);
	assert_int_equal(d->peak_time_ns, event_time(path, MP_EV_ALLOC, 1, 0, NULL));
	assert_int_equal(d->live_blocks, 0);
	assert_int_equal(d->live_bytes, 0);
	assert_null(mp_capture_summary_find(&s, "nope"));
	mp_capture_summary_free(&s);
	unlink(path);
	free(path);
}

/* --- two threads taking turns: a known global order ---------------------- */

static struct {
	mp_writer_t *w;
	sem_t turn[2];
} duo;

/* Step k of the sequence is thread k % 2's; each step's events are
 * recorded before the other thread is let go, so times follow steps. */
static void take_turn(int me, int step)
{
	(void)step;
	sem_wait(&duo.turn[me]);
}

static void give_turn(int other)
{
	sem_post(&duo.turn[other]);
}

static void *thread_one(void *arg)
{
	(void)arg;
	take_turn(1, 1);
	mp_writer_alloc(duo.w, 0, 0xb000, 500, 512); /* 2: 1536 */
	mp_writer_flush(duo.w);                       /* a round between the steps */
	give_turn(0);
	take_turn(1, 3);
	mp_writer_alloc(duo.w, 0, 0xc000, 2000, 2048); /* 4: 2048 + 1024 = 3072, the peak */
	give_turn(0);
	take_turn(1, 5);
	mp_writer_free(duo.w, 0, 0xc000); /* 6: 0 */
	give_turn(0);
	return NULL;
}

static void test_tally_threads(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_capture_summary_t s;
	const mp_summary_memory_t *h;
	pthread_t t;

	(void)state;
	duo.w = open_writer(path, 5); /* rounds every 5 ms, between and across the steps */
	assert_int_equal(mp_writer_memory(duo.w, "host", MP_MEMORY_HOST, 0), 0);
	sem_init(&duo.turn[0], 0, 0);
	sem_init(&duo.turn[1], 0, 0);
	assert_int_equal(pthread_create(&t, NULL, thread_one, NULL), 0);
	mp_writer_alloc(duo.w, 0, 0xa000, 1000, 1024); /* 1: 1024 */
	give_turn(1);
	take_turn(0, 2);
	mp_writer_free(duo.w, 0, 0xb000); /* 3: thread one's block: 1024 */
	give_turn(1);
	take_turn(0, 4);
	mp_writer_free(duo.w, 0, 0xa000); /* 5: 2048 */
	give_turn(1);
	pthread_join(t, NULL);
	mp_writer_alloc(duo.w, 0, 0xd000, 700, 704); /* 7: 704 */
	assert_int_equal(mp_writer_close(duo.w), 0);

	read_summary(path, &s);
	assert_non_null(h = mp_capture_summary_find(&s, "host"));
	assert_int_equal(s.events, 7);
	assert_int_equal(h->allocations, 4);
	assert_int_equal(h->frees, 3);
	assert_int_equal(h->peak_bytes, 3072);
	assert_int_equal(h->peak_requested, 3000);
	assert_int_equal(h->peak_time_ns, event_time(path, MP_EV_ALLOC, 0, 2, NULL));
	assert_int_equal(h->live_blocks, 1);
	assert_int_equal(h->live_bytes, 704);
	assert_int_equal(h->live_requested, 700);
	mp_capture_summary_free(&s);
	sem_destroy(&duo.turn[0]);
	sem_destroy(&duo.turn[1]);
	unlink(path);
	free(path);
}

/* --- the live blocks' table against a plain list ------------------------- */

#define POOL 3000 /* addresses: 3 memory ids x 1000, so the table grows */

typedef struct {
	uint64_t req, fp;
	int live;
} ref_t;

static void test_tally_table(void **state)
{
	static ref_t ref[3][POOL];
	mp_tally_t t;
	uint64_t rng = 12345, live[3] = {0}, blocks[3] = {0}, peak[3] = {0}, i;
	mp_tally_ev_t ev;
	uint32_t m;

	(void)state;
	memset(&t, 0, sizeof(t));
	memset(ref, 0, sizeof(ref));
	assert_int_equal(mp__tally_ready(&t), 0);
	for (i = 0; i < 400000; i++) {
		uint64_t a, req;
		unsigned op;
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		m = (uint32_t)(rng >> 60) % 3;
		a = (rng >> 20) % POOL;
		req = (rng >> 40) % 5000;
		op = (unsigned)(rng >> 33) % 8;
		if (op < 4) { /* an allocation, at a live address one time in ... */
			if (ref[m][a].live) { /* ... as often as it comes: the old block dropped */
				live[m] -= ref[m][a].fp;
				blocks[m]--;
			}
			ref[m][a].req = req;
			ref[m][a].fp = op == 0 ? req : req + 16; /* op 0: no allocated size given */
			ref[m][a].live = 1;
			live[m] += ref[m][a].fp;
			blocks[m]++;
			if (live[m] > peak[m])
				peak[m] = live[m];
			ev = mp__tally_event(i, 0x10000 + a * 16, ref[m][a].fp, req, m, MP_TALLY_ALLOC);
			assert_int_equal(mp__tally_reserve(&t, 1), 0);
			assert_int_equal(mp__tally_apply(&t, &ev), 0);
		} else { /* a free, of an address that may not be live */
			if (ref[m][a].live) {
				live[m] -= ref[m][a].fp;
				blocks[m]--;
				ref[m][a].live = 0;
			}
			ev = mp__tally_event(i, 0x10000 + a * 16, 0, 0, m, MP_TALLY_FREE);
			assert_int_equal(mp__tally_reserve(&t, 1), 0);
			assert_int_equal(mp__tally_apply(&t, &ev), 0);
		}
		if (i % 9973 == 0 || i == 399999) {
			for (m = 0; m < 3; m++) {
				assert_int_equal(t.mem[m].v[MP_SUMF_LIVE], live[m]);
				assert_int_equal(t.mem[m].v[MP_SUMF_LIVE_BLOCKS], blocks[m]);
				assert_int_equal(t.mem[m].v[MP_SUMF_PEAK], peak[m]);
			}
			assert_int_equal(t.n, blocks[0] + blocks[1] + blocks[2]);
		}
	}
	assert_true(4 * t.n <= 3 * (t.mask + 1));
	mp__tally_release(&t);
}

/* Blocks whose two buckets are the first two of the first table (2048
 * buckets), one each: four fit there, the rest go to the stash (no
 * block of theirs can move out: their other buckets are those two too),
 * and the 33rd past the stash makes the table larger. Their frees,
 * a duplicate allocation and a free of an address not live go down the
 * far path, in the stash and out of it. Figures against hand counts: block
 * k is 100 + k bytes (requested 90 + k). */
#define CROWD 40

static void test_tally_crowd(void **state)
{
	uint64_t addr[CROWD], a, live = 0;
	mp_tally_ev_t ev;
	mp_tally_t t;
	int k = 0, i;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(mp__tally_ready(&t), 0);
	assert_int_equal(mp__tally_reserve(&t, 1), 0);
	assert_int_equal(t.mask + 1, 2048);
	for (a = 0x1000; k < CROWD; a += 16) {
		uint64_t h = mp__tally_hash(mp__tally_key(a, 0));
		if ((mp__tally_b1(mp__tally_tab(&t), h) - t.bucket) + (mp__tally_b2(mp__tally_tab(&t), h) - t.bucket) ==
		    1) /* 0 and 1 */
			addr[k++] = a;
	}
	for (i = 0; i < CROWD; i++) {
		ev = mp__tally_event((uint64_t)i, addr[i], 100 + (uint64_t)i, 90 + (uint64_t)i, 0, MP_TALLY_ALLOC);
		assert_int_equal(mp__tally_apply(&t, &ev), 0);
		live += 100 + (uint64_t)i;
		if (i == 4)
			assert_int_equal(t.nstash, 1); /* the fifth: both its buckets full */
	}
	/* the stash overflowed: a larger table (the crowd's hashes share
	 * their top bits, so more than twice), its stash emptied */
	assert_true(t.mask + 1 >= 4096);
	assert_int_equal(t.nstash, 0);
	assert_int_equal(t.n, CROWD);
	assert_int_equal(t.mem[0].v[MP_SUMF_LIVE], live);
	assert_int_equal(t.mem[0].v[MP_SUMF_LIVE_BLOCKS], CROWD);
	assert_int_equal(t.mem[0].v[MP_SUMF_PEAK], live);
	/* put the crowd back into a table of 2048 buckets, through the stash */
	mp__tally_release(&t);
	memset(&t, 0, sizeof(t));
	assert_int_equal(mp__tally_ready(&t), 0);
	assert_int_equal(mp__tally_reserve(&t, 1), 0);
	live = 0;
	for (i = 0; i < 20; i++) {
		ev = mp__tally_event((uint64_t)i, addr[i], 100 + (uint64_t)i, 90 + (uint64_t)i, 0, MP_TALLY_ALLOC);
		assert_int_equal(mp__tally_apply(&t, &ev), 0);
		live += 100 + (uint64_t)i;
	}
	assert_int_equal(t.nstash, 16);
	/* a duplicate in the stash (block 10, 110 bytes, becomes 500) and one
	 * in a bucket (block 0: 100 becomes 7) */
	ev = mp__tally_event(20, addr[10], 500, 500, 0, MP_TALLY_ALLOC);
	assert_int_equal(mp__tally_apply(&t, &ev), 0);
	ev = mp__tally_event(21, addr[0], 7, 7, 0, MP_TALLY_ALLOC);
	assert_int_equal(mp__tally_apply(&t, &ev), 0);
	/* 20 blocks: 2000 + 190 bytes (1800 + 190 requested); block 10 then
	 * 2190 - 110 + 500 = 2580 (the peak), block 0 then 2580 - 100 + 7 */
	assert_int_equal(live, 2190);
	live = 2487;
	assert_int_equal(t.mem[0].v[MP_SUMF_LIVE], 2487);
	assert_int_equal(t.mem[0].v[MP_SUMF_LIVE_REQ], 1990 - 100 + 500 - 90 + 7);
	assert_int_equal(t.mem[0].v[MP_SUMF_PEAK], 2580);
	assert_int_equal(t.n, 20);
	/* a free of an address not live: nothing */
	ev = mp__tally_event(22, addr[30], 0, 0, 0, MP_TALLY_FREE);
	assert_int_equal(mp__tally_apply(&t, &ev), 0);
	assert_int_equal(t.mem[0].v[MP_SUMF_LIVE], live);
	/* every block freed, last first: the stash empties, then the buckets */
	for (i = 19; i >= 0; i--) {
		ev = mp__tally_event(30 + (uint64_t)i, addr[i], 0, 0, 0, MP_TALLY_FREE);
		assert_int_equal(mp__tally_apply(&t, &ev), 0);
	}
	assert_int_equal(t.nstash, 0);
	assert_int_equal(t.n, 0);
	assert_int_equal(t.mem[0].v[MP_SUMF_LIVE], 0);
	assert_int_equal(t.mem[0].v[MP_SUMF_LIVE_REQ], 0);
	assert_int_equal(t.mem[0].v[MP_SUMF_LIVE_BLOCKS], 0);
	assert_int_equal(t.mem[0].v[MP_SUMF_PEAK], 2580);
	mp__tally_release(&t);
}

/* --- captures cut off ------------------------------------------------------ */

/* Three allocations, a round (flushed), two more and a free: the second
 * round is the final one. Returns the size the file had after the first. */
static uint64_t two_rounds(const char *path)
{
	mp_writer_t *w = open_writer(path, 60000); /* no round but those asked for */
	struct stat st;

	mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	mp_writer_alloc(w, 0, 0x1000, 10, 10);
	mp_writer_alloc(w, 0, 0x2000, 20, 20);
	mp_writer_alloc(w, 0, 0x3000, 30, 30); /* 60 */
	assert_int_equal(mp_writer_flush(w), 0);
	assert_int_equal(stat(path, &st), 0);
	mp_writer_alloc(w, 0, 0x4000, 40, 40); /* 100 */
	mp_writer_free(w, 0, 0x1000);          /* 90 */
	mp_writer_alloc(w, 0, 0x5000, 50, 50); /* 140 */
	assert_int_equal(mp_writer_close(w), 0);
	return (uint64_t)st.st_size;
}

/* The file of path, whole, in memory (*size its length). */
static uint8_t *slurp(const char *path, uint64_t *size)
{
	struct stat st;
	uint8_t *data;
	FILE *f;

	assert_int_equal(stat(path, &st), 0);
	*size = (uint64_t)st.st_size;
	assert_non_null(data = malloc(*size));
	assert_non_null(f = fopen(path, "rb"));
	assert_int_equal(fread(data, 1, *size, f), *size);
	fclose(f);
	return data;
}

static void test_tally_cut(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	uint64_t first = two_rounds(path), size, len, cut_in_figures = 0;
	mp_capture_summary_t s;
	const mp_summary_memory_t *h;
	uint8_t *data;

	(void)state;
	data = slurp(path, &size);
	/* Every length from the first round's end on: inside the second
	 * round's blocks the figures are the first round's; from its end (the
	 * trailer cut off or not) the final ones. A round is two blocks,
	 * its chunks and then its figures (flush.c): cut inside the second
	 * round's second block, the first round's figures are found one block
	 * back. */
	for (len = first; len <= size; len++) {
		mp_diag_t diag;
		assert_int_equal(mp_capture_summary_read_memory(data, len, "cut", &s, &diag), 0);
		assert_true(s.available);
		assert_non_null(h = mp_capture_summary_find(&s, "host"));
		assert_int_equal(s.ended_cleanly, len == size);
		if (s.horizon_ns == UINT64_MAX) {
			assert_int_equal(s.events, 6);
			assert_int_equal(h->allocations, 5);
			assert_int_equal(h->frees, 1);
			assert_int_equal(h->peak_bytes, 140);
			assert_int_equal(h->live_bytes, 140);
			assert_int_equal(h->live_blocks, 4);
			assert_true(len > size - 64); /* only the trailer's bytes are missing */
			/* the end: the trailer's, else not known (the horizon is no time) */
			assert_true(len == size ? s.end_time_ns > 0 && s.end_time_ns < UINT64_MAX : s.end_time_ns == 0);
		} else {
			assert_int_equal(s.events, 3);
			assert_int_equal(h->allocations, 3);
			assert_int_equal(h->frees, 0);
			assert_int_equal(h->peak_bytes, 60);
			assert_int_equal(h->live_blocks, 3);
			assert_int_equal(s.end_time_ns, s.horizon_ns);
			assert_true(s.blocks == 2 || s.blocks == 3);
			cut_in_figures += s.blocks == 3;
		}
		mp_capture_summary_free(&s);
	}
	assert_true(cut_in_figures > 0);
	/* before the first round's end: no summary at all (its chunks' block
	 * only) */
	assert_int_equal(mp_capture_summary_read_memory(data, first - 1, "cut", &s, NULL), 0);
	assert_false(s.available);
	assert_int_equal(s.blocks, 1);
	mp_capture_summary_free(&s);
	/* damage is named */
	data[first - 5] ^= 0x40; /* the first round's figures' block's payload */
	{
		mp_diag_t diag;
		assert_int_equal(mp_capture_summary_read_memory(data, first, "cut", &s, &diag), MP_ECHECKSUM);
		assert_non_null(strstr(diag.text, "block 1 at offset"));
		mp_capture_summary_free(&s);
	}
	assert_int_equal(mp_capture_summary_read_memory("MEMPROX", 8, "x", &s, NULL), MP_EFORMAT);
	free(data);
	unlink(path);
	free(path);
}

/* The summary of data[0..len) with its final figures (two_rounds'). */
static void expect_final(const uint8_t *data, uint64_t len)
{
	mp_capture_summary_t s;
	const mp_summary_memory_t *h;
	mp_diag_t diag;

	assert_int_equal(mp_capture_summary_read_memory(data, len, "end", &s, &diag), 0);
	assert_true(s.available && s.ended_cleanly);
	assert_int_equal(s.horizon_ns, UINT64_MAX);
	assert_int_equal(s.blocks, 4); /* each round's chunks and its figures */
	assert_int_equal(s.events, 6);
	assert_non_null(h = mp_capture_summary_find(&s, "host"));
	assert_int_equal(h->allocations, 5);
	assert_int_equal(h->frees, 1);
	assert_int_equal(h->peak_bytes, 140);
	assert_int_equal(h->live_blocks, 4);
	mp_capture_summary_free(&s);
}

/* data[0..len) gives error code, naming what (a piece of the message). */
static void expect_error(const uint8_t *data, uint64_t len, int code, const char *what)
{
	mp_capture_summary_t s;
	mp_diag_t diag;

	assert_int_equal(mp_capture_summary_read_memory(data, len, "end", &s, &diag), code);
	if (!strstr(diag.text, what))
		fail_msg("expected \"%s\" in \"%s\"", what, diag.text);
	mp_capture_summary_free(&s);
}

/* A closed capture is read from its end: its trailer and last block give
 * the figures, and the blocks before are not looked at (damage there is
 * left to `memprof report`; the same bytes without the trailer are walked
 * and the damage named). Damage at the end is named by the walk the read
 * falls back to. */
static void test_tally_from_end(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	uint64_t size, first_frame, trailer;
	uint8_t *data;

	(void)state;
	two_rounds(path);
	data = slurp(path, &size);
	first_frame = MP_FILE_PREFIX_LEN + mp_get_u32le(data + 12) + 4;
	for (trailer = size - 16; memcmp(data + trailer, "MPTR", 4) != 0; trailer--)
		assert_true(trailer > first_frame);
	expect_final(data, size);

	data[first_frame] ^= 0x01; /* block 0's magic */
	expect_final(data, size);
	expect_error(data, size - 1, MP_ECORRUPT, "block 0 at offset");
	data[first_frame] ^= 0x01;

	data[size - 1] ^= 0x01; /* the trailer's checksum */
	expect_error(data, size, MP_ECHECKSUM, "trailer at offset");
	data[size - 1] ^= 0x01;

	data[trailer - 1] ^= 0x01; /* the last block's payload */
	expect_error(data, size, MP_ECHECKSUM, "block 3 at offset");
	data[trailer - 1] ^= 0x01;

	expect_final(data, size);
	free(data);
	unlink(path);
	free(path);
}

/* A process killed (SIGKILL) after one round: the figures of that round. */
static void test_tally_killed(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_capture_summary_t s;
	const mp_summary_memory_t *h;
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	if (pid == 0) {
		mp_writer_t *w = open_writer(path, 60000);
		mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
		mp_writer_alloc(w, 0, 0x1000, 1000, 1008);
		mp_writer_alloc(w, 0, 0x2000, 2000, 2008);
		mp_writer_free(w, 0, 0x1000);
		if (mp_writer_flush(w))
			_exit(2);
		mp_writer_alloc(w, 0, 0x3000, 3000, 3008); /* in the ring only: lost */
		raise(SIGKILL);
		_exit(3);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	read_summary(path, &s);
	assert_true(s.available);
	assert_false(s.ended_cleanly);
	assert_non_null(h = mp_capture_summary_find(&s, "host"));
	assert_int_equal(s.events, 3);
	assert_int_equal(h->allocations, 2);
	assert_int_equal(h->frees, 1);
	assert_int_equal(h->peak_bytes, 3016);
	assert_int_equal(h->peak_requested, 3000);
	assert_int_equal(h->live_blocks, 1);
	assert_int_equal(h->live_bytes, 2008);
	mp_capture_summary_free(&s);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tally_sequence), cmocka_unit_test(test_tally_threads),
		cmocka_unit_test(test_tally_table),    cmocka_unit_test(test_tally_crowd),    cmocka_unit_test(test_tally_cut),
		cmocka_unit_test(test_tally_from_end), cmocka_unit_test(test_tally_killed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
