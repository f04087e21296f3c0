/* test_keep_window.c - a kept run's window reports exactly what a full
 * capture of the same stream reports over the same window (issue 43;
 * src/cli/report_window.c). One stream, its times the test's own (a lane
 * each), written twice: to a kept run (MEMPROF_KEEP_BYTES 128 KiB in
 * 32 KiB segments) and to a full capture. ROUNDS rounds, each allocating
 * PER blocks of 64 B at (round + 1 << 20) + 16 i (in a region declared
 * first, as the spike's) and freeing those of two rounds before; in round SPIKE (late: in the window) a 5,000,000 B block
 * allocated and freed, and in round FAIL an allocation of 1 TiB that
 * fails; first, a block of 4096 B never freed. By hand: the window's
 * peak is at the spike, 3 * PER * 64 + 5,000,000 + 4096 = 5,196,096 B
 * (the old block counts: it is live); at the end 2 * PER blocks (128,000 B) and the old one are
 * live. `memprof report --json` of the kept run and `memprof report
 * --json --from-event N` of the full capture, N the window's first
 * checkpoint's events, are equal byte for byte but for "file" (the path);
 * so are --oom and --leaks, and the memory map at the window's peak (`plot
 * --chart map`, SVG: the blocks born before the window drawn, from the
 * checkpoint). Every free in the window finds its block (0
 * unknown frees: those born before come from the checkpoint), and the
 * window's allocations are the events after N, by hand. */
#include "test_common.h"

#include <memprof/checkpoint.h>
#include <memprof/keep.h>
#include <memprof/writer.h>

#define ROUNDS 240
#define PER 1000
#define SPIKE 230
#define FAIL 235
#define SPIKE_BYTES 5000000ull
#define OLD_ADDR 0x7f0000400000ull /* a block born first and never freed */
#define OLD_BYTES 4096ull

static char dir[64], kept[128], full[128];
/* test_keep_window_lagging_lane: the lanes hold each round's horizon back
 * to the round before's start (the CUDA lane's records come late), so a
 * round's events are written a round before they are counted */
static int lag;

static uint64_t addr_of(uint64_t r, uint64_t i)
{
	return (r + 1) << 20 | i << 4;
}

/* Event e of the stream (the same to both writers), at time t. */
static void ev2(mp_writer_lane_t **l, int kind, uint64_t t, uint64_t a, uint64_t bytes)
{
	for (int k = 0; k < 2; k++)
		assert_int_equal(mp_writer_lane_event(l[k], kind, 0, t, a, bytes), 0);
}

static void write_both(void)
{
	mp_writer_t *w[2];
	mp_writer_lane_t *l[2];
	mp_diag_t diag;
	uint64_t r, i, t = 1000, tprev = 1000;
	char args[300];

	snprintf(dir, sizeof(dir), "/tmp/memprof-keepwin-XXXXXX");
	assert_non_null(mkdtemp(dir));
	/* (one name in two directories: a picture's title names the file) */
	snprintf(kept, sizeof(kept), "%s/k/run.memprof", dir);
	snprintf(full, sizeof(full), "%s/f/run.memprof", dir);
	snprintf(args, sizeof(args), "mkdir '%s/k' '%s/f'", dir, dir);
	assert_int_equal(system(args), 0);
	setenv("MEMPROF_KEEP_BYTES", "131072", 1);
	setenv("MEMPROF_KEEP_SEGMENT_BYTES", "32768", 1);
	assert_int_equal(mp_writer_open(&w[0], kept, 0, NULL, &diag), 0);
	unsetenv("MEMPROF_KEEP_BYTES");
	unsetenv("MEMPROF_KEEP_SEGMENT_BYTES");
	assert_int_equal(mp_writer_open(&w[1], full, 0, NULL, &diag), 0);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(mp_writer_memory(w[k], "host", MP_MEMORY_HOST, 0), 0);
		assert_int_equal(mp_writer_lane_open(w[k], &l[k]), 0);
	}
	if (lag) { /* times past both lanes' opening holds */
		t = mp_writer_now(w[1]) + 1000;
		tprev = t;
	}
	/* the regions the map draws, declared before the window: its
	 * checkpoint carries them */
	ev2(l, MP_EV_REGION_ADD, t++, addr_of(0, 0), (uint64_t)ROUNDS << 20);
	ev2(l, MP_EV_REGION_ADD, t++, 0x7f0000000000ull, 8ull << 20);
	ev2(l, MP_EV_ALLOC, t++, OLD_ADDR, OLD_BYTES); /* never freed */
	for (r = 0; r < ROUNDS; r++) {
		uint64_t t0 = t;
		for (i = 0; i < PER; i++)
			ev2(l, MP_EV_ALLOC, t++, addr_of(r, i), 64);
		if (r == SPIKE) {
			ev2(l, MP_EV_ALLOC, t++, 0x7f0000000000ull, SPIKE_BYTES);
			ev2(l, MP_EV_FREE, t++, 0x7f0000000000ull, 0);
		}
		if (r == FAIL)
			ev2(l, MP_EV_ALLOC_FAILED, t++, 0, 1ull << 40);
		if (r >= 2)
			for (i = 0; i < PER; i++)
				ev2(l, MP_EV_FREE, t++, addr_of(r - 2, i), 0);
		for (int k = 0; k < 2; k++) {
			mp_writer_lane_hold(l[k], lag ? tprev : t);
			assert_int_equal(mp_writer_flush(w[k]), 0);
		}
		tprev = t0;
	}
	for (int k = 0; k < 2; k++)
		assert_int_equal(mp_writer_close(w[k]), 0);
}

/* The file at p as a string (owned). */
static char *slurp(const char *p)
{
	FILE *fp = fopen(p, "r");
	char *buf = calloc(1, 1 << 22);
	size_t n;

	assert_non_null(fp);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 22) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return buf;
}

/* `memprof report --json ARGS path` into a string (owned), "file" cut out. */
static char *report(const char *args, const char *path)
{
	char cmd[1024], out[200], *buf, *f, *e;

	snprintf(out, sizeof(out), "%s/report.json", dir);
	snprintf(cmd, sizeof(cmd), "MEMPROF_SEEK_SAY=0 '%s' report --json %s '%s' > '%s'", MP_MEMPROF_BIN, args, path, out);
	assert_int_equal(system(cmd), 0);
	buf = slurp(out);
	/* "file": "...", the only field naming the file */
	assert_non_null(f = strstr(buf, "\"file\": \""));
	assert_non_null(e = strchr(f + 9, '"'));
	memmove(f, e + 1, strlen(e + 1) + 1);
	return buf;
}

static uint64_t field(const char *json, const char *key)
{
	char k[80];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	assert_non_null(p = strstr(json, k));
	return strtoull(p + strlen(k), NULL, 10);
}

/* `memprof plot --chart map ARGS path` into dir/name; its bytes (owned). */
static char *map_of(const char *args, const char *path, const char *name)
{
	char cmd[1024], out[200];

	snprintf(out, sizeof(out), "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "'%s' plot --chart map %s -o '%s' '%s' 2>/dev/null", MP_MEMPROF_BIN, args, out, path);
	assert_int_equal(system(cmd), 0);
	return slurp(out);
}

static void test_keep_window(void **state)
{
	mp_keep_run_t *k;
	mp_checkpoint_t ck;
	mp_diag_t diag;
	char args[400], *a, *b;
	uint64_t n, rounds_before, window_allocs;
	const char *modes[] = {"", "--oom", "--leaks", "--breakdown"};

	(void)state;
	write_both();
	/* the window starts after the process's start, at a checkpoint */
	assert_int_equal(mp_keep_open(&k, kept, &diag), 0);
	assert_true(k->segments[0].number >= 1);
	assert_int_equal(mp_keep_window_checkpoint(k, &ck, &diag), 0);
	n = ck.events;
	fprintf(stderr, "keep window: its checkpoint's horizon %llu ns, block %llu\n", (unsigned long long)ck.horizon_ns,
		(unsigned long long)ck.block_index);
	mp_checkpoint_free(&ck);
	mp_keep_close(k);
	fprintf(stderr, "keep window: from event %llu\n", (unsigned long long)n);
	assert_true(n > 0 && n < 2ull * ROUNDS * PER);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		a = report(modes[m], kept);
		snprintf(args, sizeof(args), "%s --from-event %llu", modes[m], (unsigned long long)n);
		b = report(args, full);
		if (strcmp(a, b))
			fprintf(stderr, "--- kept %s\n%s\n--- full %s\n%s\n", modes[m], a, args, b);
		assert_string_equal(a, b);
		assert_int_equal(field(a, "window_from_event"), n);
		if (m == 0) {
			/* the window's figures, by hand: its peak the spike's; every
			 * free finds its block; its allocations those after n (a
			 * round is PER allocations then, from round 2, PER frees;
			 * the window starts at a round's end, SPIKE after it) */
			assert_int_equal(field(a, "lifetime_peak_bytes"), 3 * PER * 64 + SPIKE_BYTES + OLD_BYTES);
			assert_int_equal(field(strstr(a, "\"peak\": {"), "bytes"), 3 * PER * 64 + SPIKE_BYTES + OLD_BYTES);
			assert_int_equal(field(a, "unknown_frees"), 0);
			rounds_before = (n + 2 * PER) / (2 * PER); /* rounds 0, 1 have no frees */
			assert_int_equal(n, rounds_before * 2 * PER - 2 * PER + 3); /* (3: the regions, the old block) */
			window_allocs = (ROUNDS - rounds_before) * PER + 1;
			assert_int_equal(field(a, "allocations"), window_allocs);
		}
		free(a);
		free(b);
	}
	/* the memory map at the window's peak: the full capture's window's,
	 * byte for byte, with the blocks born before the window (the two
	 * rounds live at the spike: 2 * PER blocks, from the checkpoint) */
	snprintf(args, sizeof(args), "--from-event %llu", (unsigned long long)n);
	a = map_of("", kept, "kept.svg");
	b = map_of(args, full, "full.svg");
	assert_string_equal(a, b);
	free(a);
	free(b);
	/* (the page's hover details name the regions and blocks: the old
	 * block, born before the window, is drawn) */
	a = map_of("", kept, "kept.html");
	b = map_of(args, full, "full.html");
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "0x7f0000400000 to 0x7f0000401000"));
	free(a);
	free(b);
	/* --from-event N of the full capture starts its state at its last
	 * checkpoint at or before N, not at its first event: the same bytes
	 * as the replay of the whole prefix (--full-replay), at N and between
	 * checkpoints */
	for (int j = 0; j < 2; j++) {
		uint64_t at = n + (j ? 12345 : 0);
		snprintf(args, sizeof(args), "--from-event %llu", (unsigned long long)at);
		a = report(args, full);
		snprintf(args, sizeof(args), "--full-replay --from-event %llu", (unsigned long long)at);
		b = report(args, full);
		assert_string_equal(a, b);
		free(a);
		free(b);
		snprintf(args, sizeof(args), "MEMPROF_SEEK_SAY=1 '%s' report --from-event %llu '%s' 2>&1 >/dev/null | grep -c "
			 "\"the window's state from the checkpoint at event\"", MP_MEMPROF_BIN, (unsigned long long)at, full);
		assert_int_equal(system(args), 0);
	}
	/* the text says where the window starts and what its figures cover */
	snprintf(args, sizeof(args), "'%s' report '%s' > '%s/report.txt'", MP_MEMPROF_BIN, kept, dir);
	assert_int_equal(system(args), 0);
	snprintf(args, sizeof(args), "%s/report.txt", dir);
	a = slurp(args);
	snprintf(args, sizeof(args), "after the run's first %llu events", (unsigned long long)n);
	assert_non_null(strstr(a, args));
	assert_null(strstr(a, "until report starts"));
	free(a);
	/* --from-event: of a full capture, within its events (2: usage) */
	snprintf(args, sizeof(args), "'%s' report --from-event 5 '%s' > /dev/null 2>&1", MP_MEMPROF_BIN, kept);
	assert_int_equal(WEXITSTATUS(system(args)), 2);
	snprintf(args, sizeof(args), "'%s' report --from-event 478007 '%s' > /dev/null 2>&1", MP_MEMPROF_BIN, full);
	assert_int_equal(WEXITSTATUS(system(args)), 2);
	/* the window's report is not the whole capture's */
	a = report("", full);
	assert_int_equal(field(a, "allocations"), ROUNDS * PER + 2); /* (the spike, the old block) */
	free(a);
	snprintf(args, sizeof(args), "rm -rf '%s'", dir);
	assert_int_equal(system(args), 0);
}

/* ---- call stacks in the window (record --stacks): a kept run's
 * --by-function and --tree equal the full capture's --from-event N, and
 * count the blocks born before the window. One thread's events (the
 * writer's clock: times differ between the two files, so "_ns" lines are
 * cut), Python frames named by the test: first OLD blocks of 1000 B
 * allocated at old_site (app.py:10) and never freed (after a mark
 * "warmup" and step 7, which the window's peak names), then ROUNDS_S
 * rounds as above at new_site (app.py:20). By hand: at the window's peak
 * old_site holds OLD * 1000 = 8000 B in OLD blocks and made no
 * allocation of the window's. ---- */
#define OLD 8
#define ROUNDS_S 120

static void write_stacks(const char *kpath, const char *fpath)
{
	mp_writer_t *w[2];
	mp_diag_t diag;
	uint32_t so[2], sn[2];

	setenv("MEMPROF_KEEP_BYTES", "131072", 1);
	setenv("MEMPROF_KEEP_SEGMENT_BYTES", "32768", 1);
	assert_int_equal(mp_writer_open(&w[0], kpath, 0, NULL, &diag), 0);
	unsetenv("MEMPROF_KEEP_BYTES");
	unsetenv("MEMPROF_KEEP_SEGMENT_BYTES");
	assert_int_equal(mp_writer_open(&w[1], fpath, 0, NULL, &diag), 0);
	for (int k = 0; k < 2; k++) {
		uint32_t file = mp_writer_intern(w[k], "/tmp/app.py");
		uint64_t fo = mp_writer_frame(w[k], mp_writer_intern(w[k], "old_site"), file, 10, MP_FRAME_PYTHON);
		uint64_t fn = mp_writer_frame(w[k], mp_writer_intern(w[k], "new_site"), file, 20, MP_FRAME_PYTHON);
		assert_int_equal(mp_writer_memory(w[k], "host", MP_MEMORY_HOST, 0), 0);
		assert_int_equal(mp_writer_stack(w[k], &fo, 1, &so[k]), 0);
		assert_int_equal(mp_writer_stack(w[k], &fn, 1, &sn[k]), 0);
		/* (the window's state holds the last mark and the step) */
		assert_int_equal(mp_writer_mark(w[k], mp_writer_intern(w[k], "warmup")), 0);
		assert_int_equal(mp_writer_step(w[k], 7), 0);
	}
	for (uint64_t i = 0; i < OLD; i++)
		for (int k = 0; k < 2; k++) {
			assert_int_equal(mp_writer_next_stack(w[k], so[k]), 0);
			assert_int_equal(mp_writer_alloc(w[k], 0, 0x7f0000000000ull + i * 4096, 1000, 1000), 0);
		}
	for (uint64_t r = 0; r < ROUNDS_S; r++) {
		for (int k = 0; k < 2; k++) {
			for (uint64_t i = 0; i < PER; i++) {
				assert_int_equal(mp_writer_next_stack(w[k], sn[k]), 0);
				assert_int_equal(mp_writer_alloc(w[k], 0, addr_of(r, i), 64, 64), 0);
			}
			for (uint64_t i = 0; r >= 2 && i < PER; i++)
				assert_int_equal(mp_writer_free(w[k], 0, addr_of(r - 2, i)), 0);
			assert_int_equal(mp_writer_flush(w[k]), 0);
		}
	}
	for (int k = 0; k < 2; k++)
		assert_int_equal(mp_writer_close(w[k]), 0);
}

/* report(args, path) without the lines of times ("..._ns": ...). */
static char *report_untimed(const char *args, const char *path)
{
	char *b = report(args, path), *in = b, *out = b;

	while (*in) {
		char *nl = strchr(in, '\n');
		size_t n = nl ? (size_t)(nl - in) + 1 : strlen(in);
		char save = in[n - (nl ? 1 : 0)];
		in[n - (nl ? 1 : 0)] = '\0';
		int timed = strstr(in, "_ns\": ") != NULL;
		in[n - (nl ? 1 : 0)] = save;
		if (!timed) {
			memmove(out, in, n);
			out += n;
		}
		in += n;
	}
	*out = '\0';
	return b;
}

static void test_keep_window_stacks(void **state)
{
	char kpath[160], fpath[160], args[400], *a, *b, *row;
	mp_keep_run_t *k;
	mp_checkpoint_t ck;
	mp_diag_t diag;
	uint64_t n;
	const char *modes[] = {"--by-function", "--tree", "--leaks"};

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/memprof-keepwin-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(args, sizeof(args), "mkdir '%s/k' '%s/f'", dir, dir);
	assert_int_equal(system(args), 0);
	snprintf(kpath, sizeof(kpath), "%s/k/run.memprof", dir);
	snprintf(fpath, sizeof(fpath), "%s/f/run.memprof", dir);
	write_stacks(kpath, fpath);
	assert_int_equal(mp_keep_open(&k, kpath, &diag), 0);
	assert_true(k->segments[0].number >= 1);
	assert_int_equal(mp_keep_window_checkpoint(k, &ck, &diag), 0);
	n = ck.events;
	mp_checkpoint_free(&ck);
	mp_keep_close(k);
	fprintf(stderr, "keep window with stacks: from event %llu\n", (unsigned long long)n);
	assert_true(n > OLD);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		a = report_untimed(modes[m], kpath);
		snprintf(args, sizeof(args), "%s --from-event %llu", modes[m], (unsigned long long)n);
		b = report_untimed(args, fpath);
		if (strcmp(a, b))
			fprintf(stderr, "--- kept %s\n%s\n--- full %s\n%s\n", modes[m], a, args, b);
		assert_string_equal(a, b);
		if (m == 0) { /* old_site: its blocks live at the peak, none allocated in the window */
			assert_non_null(row = strstr(a, "\"function\": \"old_site\""));
			assert_int_equal(field(row, "allocations"), 0);
			assert_int_equal(field(row, "peak_bytes"), OLD * 1000);
			assert_int_equal(field(row, "peak_count"), OLD);
			assert_int_equal(field(row, "leak_bytes"), OLD * 1000);
			/* the mark and the step set before the window: its peak's */
			assert_non_null(strstr(a, "\"after_mark\": \"warmup\""));
			assert_int_equal(field(strstr(a, "\"peak\": {"), "step"), 7);
		}
		free(a);
		free(b);
	}
	snprintf(args, sizeof(args), "rm -rf '%s'", dir);
	assert_int_equal(system(args), 0);
}

/* The same stream with the horizon held back a round: at each rotation
 * the old segment holds a round of events the tally has not counted, and
 * the kept run's window must still be the full capture's (before the
 * rotation waited for the tally, that round was in neither the new
 * segment's checkpoint nor its events: the window's peak 64,000 B high,
 * a round's frees missing). */
static void test_keep_window_lagging_lane(void **state)
{
	lag = 1;
	test_keep_window(state);
	lag = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep_window),
		cmocka_unit_test(test_keep_window_lagging_lane),
		cmocka_unit_test(test_keep_window_stacks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
