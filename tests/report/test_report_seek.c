/* test_report_seek.c - `memprof report` of a capture from a checkpoint
 * (issue 43) prints what the full replay prints, byte for byte: --peak
 * (JSON and text), --peak --leaks --oom --json, on captures written here
 * with the writer: three memory ids (the host's blocks without regions, a
 * device pool and an arena in regions added, grown and removed, so that
 * fragmentation at the peak is exact), reallocs, frees of addresses not
 * live, allocations at live addresses, failed allocations, steps and
 * marks, blocks with and without tags (op, region type, dtype, shape),
 * checkpoints every 1, 2, 3 or 7 rounds; a live set that grows to its
 * peak near the end, and one whose peak comes early (the seek then falls
 * back), and one where a memory id peaks before every checkpoint and the
 * others late (the early one is read apart, from the start, up to its
 * peak). MEMPROF_SEEK_SAY=1 makes report say when it seeks: the test
 * checks that it did where it should. A damaged checkpoint is said with
 * its offset and the seek takes the one before it. */
#include "test_common.h"

#include <memprof/capture_edit.h>
#include <memprof/format.h>
#include <memprof/writer.h>


#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"

static uint64_t rng;
static uint64_t said_block; /* the block of the checkpoint report last said it sought from */
static const char *report_env = ""; /* before the command: MEMPROF_REPLAY_THREADS=N */
static int par_segments;     /* the segments of a parallel replay report said, 0: none */
static char par_why[256];    /* why report said it replayed serially */
static int early_read;       /* ... and whether it read early peaks apart, from the start */

static uint64_t rnd(uint64_t n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (rng >> 33) % n;
}

/* n events; the live set grows (late peak) or, with early 1, shrinks
 * after the first fifth; with early 2 it grows, but the arena's peak is a
 * 64 MiB block allocated and freed in the first round (before any
 * checkpoint: a program's early mapping); a flush round every `round`
 * events; a checkpoint every `every` rounds. */
static void record(const char *path, int n, int round, const char *every, int early, int tags)
{
	mp_writer_t *w = NULL;
	mp_diag_t diag;
	uint64_t live[3][512] = {{0}}, nlive[3] = {0};
	const uint64_t base[3] = {0x7f0000000000ull, 0x200000000ull, 0x300000000ull};
	uint32_t mem[3], marks[3], ops[4];

	assert_int_equal(setenv("MEMPROF_CHECKPOINT_ROUNDS", every, 1) + setenv("MEMPROF_CHECKPOINT_RATIO", "0", 1), 0);
	if (mp_writer_open(&w, path, 1, NULL, &diag))
		fail_msg("%s", diag.text);
	assert_int_equal(unsetenv("MEMPROF_CHECKPOINT_ROUNDS") + unsetenv("MEMPROF_CHECKPOINT_RATIO"), 0);
	mem[0] = (uint32_t)mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	mem[1] = (uint32_t)mp_writer_memory(w, "cuda:0", MP_MEMORY_DEVICE, 0);
	mem[2] = (uint32_t)mp_writer_memory(w, "arena", MP_MEMORY_HOST, 0);
	for (int k = 0; k < 3; k++) {
		char name[16];
		snprintf(name, sizeof(name), "phase%d", k);
		marks[k] = mp_writer_intern(w, name);
	}
	for (int k = 0; k < 4; k++) {
		static const char *const names[] = {"matmul", "conv", "float32", "[64,64]"};
		ops[k] = mp_writer_intern(w, names[k]);
	}
	assert_int_equal(mp_writer_region_add(w, mem[1], base[1], 1u << 22), 0);
	assert_int_equal(mp_writer_region_add(w, mem[2], base[2], 1u << 20), 0);
	for (int i = 0; i < n; i++) {
		int m = (int)rnd(3), grow = early == 1 ? i < n / 5 : 1;
		if (early == 2 && i == 1)
			assert_int_equal(mp_writer_alloc(w, mem[2], base[2] + (64u << 20), 64u << 20, 64u << 20), 0);
		if (early == 2 && i == 2)
			assert_int_equal(mp_writer_free(w, mem[2], base[2] + (64u << 20)), 0);
		uint64_t c = rnd(100), size = 16 * (1 + rnd(256));
		if (i % round == round - 1)
			assert_int_equal(mp_writer_flush(w), 0);
		if (tags && rnd(8) == 0) /* a context for the next allocations, or none */
			mp_writer_set_context(w, rnd(4) ? ops[rnd(2)] : 0, (int)rnd(6), rnd(2) ? ops[2] : 0, rnd(2) ? ops[3] : 0);
		if (c < 2) {
			assert_int_equal(mp_writer_alloc_failed(w, mem[m], size << 16), 0);
		} else if (c < 3) {
			assert_int_equal(mp_writer_step(w, i / 500), 0);
		} else if (c < 4) {
			assert_int_equal(mp_writer_mark(w, marks[rnd(3)]), 0);
		} else if (c < 5) { /* the arena grows; a pool region comes and goes */
			if (m == 2)
				assert_int_equal(mp_writer_region_add(w, mem[2], base[2], (1u << 20) + 65536 * (uint64_t)(i / 64)), 0);
			else if (rnd(2))
				assert_int_equal(mp_writer_region_add(w, mem[1], base[1] + (8u << 20), 1u << 20), 0);
			else
				assert_int_equal(mp_writer_region_remove(w, mem[1], base[1] + (8u << 20)), 0);
		} else if (c < 7 && nlive[0]) { /* reallocs: the host's */
			uint64_t j = rnd(nlive[0]), to = base[0] + 16 * rnd(1u << 20);
			assert_int_equal(mp_writer_realloc(w, mem[0], live[0][j], to, size, size + 8), 0);
			live[0][j] = to;
		} else if (c < 8) {
			assert_int_equal(mp_writer_free(w, mem[m], base[m] + 8), 0); /* not live */
		} else if (c < (grow ? 45u : 60u) && nlive[m]) {
			uint64_t j = rnd(nlive[m]);
			assert_int_equal(mp_writer_free(w, mem[m], live[m][j]), 0);
			live[m][j] = live[m][--nlive[m]];
		} else {
			uint64_t a = base[m] + 16 * rnd(m ? (1u << 16) : (1u << 20)); /* some at a live address */
			assert_int_equal(mp_writer_alloc(w, mem[m], a, size, m == 1 ? 0 : size + 16), 0);
			if (nlive[m] < 512)
				live[m][nlive[m]++] = a;
		}
	}
	assert_int_equal(mp_writer_close(w), 0);
}

/* The output of `memprof report ARGS FILE` (stdout) into a malloc'd
 * string; *said: whether stderr says it sought. */
static char *report(const char *args, const char *file, int *said)
{
	char cmd[MP_TEST_CMD_MAX], *out, *err;

	snprintf(cmd, sizeof(cmd), "%s MEMPROF_SEEK_SAY=1 %s report %s %s", report_env, MEMPROF, args, file);
	assert_int_equal(mp_test_capture(cmd, &out, &err), 0);
	*said = 0;
	par_segments = 0;
	par_why[0] = 0;
	for (char *line = err, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
		const char *b, *pr, *sr;
		if ((nl = strchr(line, '\n')))
			*nl = 0;
		b = strstr(line, " (block ");
		pr = strstr(line, ": parallel replay in ");
		sr = strstr(line, ": serial replay: ");
		if (pr)
			par_segments = atoi(pr + 21);
		if (sr)
			snprintf(par_why, sizeof(par_why), "%s", sr + 17);
		*said |= strstr(line, ": seek from the checkpoint at event ") != NULL;
		if (b)
			said_block = strtoull(b + 8, NULL, 10);
		*said |= 2 * (strstr(line, ", read up to the last peak") != NULL); /* (2: stopped after it) */
		if (strstr(line, ": seek from the checkpoint at event "))
			early_read = strstr(line, "peaked before it read from the start") != NULL;
	}
	free(err);
	return out;
}

/* Seek and full replay print the same; returns whether the seek sought. */
static int same(const char *args, const char *file)
{
	char full_args[256];
	int said, said_full;
	char *a = report(args, file, &said), *b;

	snprintf(full_args, sizeof(full_args), "%s --full-replay", args);
	b = report(full_args, file, &said_full);
	assert_false(said_full);
	if (strcmp(a, b))
		fail_msg("%s: report %s differs from the full replay:\n%.2000s\n---\n%.2000s", file, args, a, b);
	free(a);
	free(b);
	return said;
}

static int par_same(const char *args, const char *file, int threads);

/* The checkpoint a seek would take is damaged: it is said with its
 * offset, the seek takes the one before it, and the output is the same;
 * the parallel replay cuts at good ones only, and prints the serial's. */
static void test_bad_checkpoint(void **state)
{
	char dir[] = "/tmp/memprof-rseekbad-XXXXXX", file[256], bad[256], cmd[MP_TEST_CMD_MAX], line[512], at[64];
	char *good_out, *bad_out;
	uint64_t index = 0, offset = 0;
	int said, said_offset = 0;
	FILE *p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/c.memprof", dir);
	snprintf(bad, sizeof(bad), "%s/bad.memprof", dir);
	rng = 77;
	record(file, 30000, 500, "1", 0, 1);
	good_out = report("--peak --json", file, &said);
	assert_int_equal(said, 3);
	mp_test_damage_checkpoint(file, bad, said_block, &index, &offset);
	bad_out = report("--peak --json", bad, &said);
	assert_int_equal(said, 3);
	assert_true(said_block < index); /* from an earlier checkpoint */
	same("--peak --json", bad);
	assert_int_equal(par_same("--oom --leaks --json", bad, 3), 3);
	/* the JSON names the file: compare past its line */
	assert_string_equal(strstr(good_out, "\"end\""), strstr(bad_out, "\"end\""));
	snprintf(cmd, sizeof(cmd), "MEMPROF_SEEK_SAY=1 %s report --peak %s 2>&1 >/dev/null", MEMPROF, bad);
	snprintf(at, sizeof(at), "block %llu at offset %llu: bad checkpoint", (unsigned long long)index,
		 (unsigned long long)offset);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		said_offset |= strstr(line, at) != NULL;
	pclose(p);
	assert_true(said_offset);
	free(good_out);
	free(bad_out);
	unlink(file);
	unlink(bad);
	rmdir(dir);
}

static void test_seek_equals_full_replay(void **state)
{
	static const struct {
		int n, round;
		const char *every;
		int early;
		int tags;
	} cases[] = {{30000, 500, "1", 0, 0}, {40000, 300, "3", 0, 0}, {30000, 200, "7", 0, 0}, {30000, 400, "1", 1, 0},
		     {30000, 300, "2", 0, 1}, {30000, 400, "1", 1, 1}, {30000, 300, "1", 2, 1}};
	char dir[] = "/tmp/memprof-rseek-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char file[256];
		int sought;
		rng = 1000 + i;
		snprintf(file, sizeof(file), "%s/c%zu.memprof", dir, i);
		record(file, cases[i].n, cases[i].round, cases[i].every, cases[i].early, cases[i].tags);
		early_read = 0;
		sought = same("--peak --json", file);
		/* the late peaks are after a checkpoint: the seek is taken,
		 * and stops after them */
		if (cases[i].early != 1)
			assert_int_equal(sought, 3);
		/* the arena's early peak read apart, from the start: said */
		assert_int_equal(early_read, cases[i].early == 2);
		assert_int_equal(same("--peak", file), sought);
		/* to the end: the leaks need it (an early peak read apart
		 * again, the end state from the checkpoint) */
		early_read = 0;
		assert_int_equal(same("--leaks --json --top 5", file), sought ? 1 : 0);
		assert_int_equal(early_read, cases[i].early == 2);
		fprintf(stderr, "%s: %d events%s, checkpoints every %s rounds: %s\n", file, cases[i].n,
			cases[i].tags ? " with tags" : "", cases[i].every,
			sought == 3 ? "seek, stopped after the peaks" : sought ? "seek to the end" : "full replay");
		same("--peak --leaks --oom --json", file);
		unlink(file);
	}
	rmdir(dir);
}

/* The full replay in `threads` segments (MEMPROF_REPLAY_THREADS) prints
 * the bytes of the serial one; returns the segments report said. */
static int par_same(const char *args, const char *file, int threads)
{
	char env[64], full_args[256], why[256];
	int said, segs;
	char *a, *b;

	snprintf(full_args, sizeof(full_args), "%s --full-replay", args);
	snprintf(env, sizeof(env), "MEMPROF_REPLAY_THREADS=%d", threads);
	report_env = env;
	a = report(full_args, file, &said);
	segs = par_segments;
	snprintf(why, sizeof(why), "%s", par_why);
	report_env = "MEMPROF_REPLAY_THREADS=1";
	b = report(full_args, file, &said);
	report_env = "";
	assert_int_equal(par_segments, 0); /* serial: no line */
	snprintf(par_why, sizeof(par_why), "%s", why);
	if (strcmp(a, b))
		fail_msg("%s: report %s in %d segments differs from the serial replay:\n%.3000s\n---\n%.3000s", file,
			 args, segs, a, b);
	free(a);
	free(b);
	return segs;
}

/* The parallel full replay (replay_par.c) against the serial one: late
 * peaks, an early peak (the live set shrinks after the first fifth: the
 * peak in the first or second segment), the arena's 64 MiB peak in the
 * first round (first segment, the others late), failed allocations on
 * both sides of every cut, regions, reallocs, marks, tags; 2, 3 and 4
 * segments; JSON (the default report, --oom, --leaks, --breakdown), CSV
 * and text. */
static void test_parallel_equals_serial(void **state)
{
	static const struct {
		int n, round;
		const char *every;
		int early, tags;
	} cases[] = {{30000, 500, "1", 0, 1}, {30000, 400, "1", 1, 1}, {30000, 300, "1", 2, 1}, {40000, 300, "3", 0, 0}};
	static const char *const args[] = {"--json", "--oom --json", "--leaks --json", "--breakdown --json",
					   "--peak --leaks --oom --csv", "--peak --leaks --oom"};
	char dir[] = "/tmp/memprof-rpar-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char file[256];
		rng = 2000 + i;
		snprintf(file, sizeof(file), "%s/c%zu.memprof", dir, i);
		record(file, cases[i].n, cases[i].round, cases[i].every, cases[i].early, cases[i].tags);
		for (int t = 2; t <= 4; t++)
			for (size_t k = 0; k < sizeof(args) / sizeof(args[0]); k++)
				if (par_same(args[k], file, t) != t)
					fail_msg("%s: report %s: %d segments asked, other said (%s)", file, args[k], t,
						 par_why);
		unlink(file);
	}
	rmdir(dir);
}

/* Ties: the host's in use reaches 8 KiB in every round (two 4 KiB blocks
 * live at once, then freed); the peak is the first time, in the first
 * round: at its second allocation, event 2 (event 0 declares the memory
 * id), however many segments the replay has. A capture of one round has
 * no checkpoint: the replay is serial, and says why. */
static void test_parallel_ties_and_fallback(void **state)
{
	char dir[] = "/tmp/memprof-rpart-XXXXXX", file[256];
	mp_writer_t *w = NULL;
	mp_diag_t diag;
	uint32_t host;
	char *out;
	int said;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/ties.memprof", dir);
	assert_int_equal(setenv("MEMPROF_CHECKPOINT_ROUNDS", "1", 1) + setenv("MEMPROF_CHECKPOINT_RATIO", "0", 1), 0);
	if (mp_writer_open(&w, file, 1, NULL, &diag))
		fail_msg("%s", diag.text);
	assert_int_equal(unsetenv("MEMPROF_CHECKPOINT_ROUNDS") + unsetenv("MEMPROF_CHECKPOINT_RATIO"), 0);
	host = (uint32_t)mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	for (int r = 0; r < 40; r++) {
		assert_int_equal(mp_writer_alloc(w, host, 0x10000, 4096, 4096), 0);
		assert_int_equal(mp_writer_alloc(w, host, 0x20000, 4096, 4096), 0);
		assert_int_equal(mp_writer_free(w, host, 0x20000), 0);
		assert_int_equal(mp_writer_free(w, host, 0x10000), 0);
		assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);
	assert_int_equal(par_same("--json", file, 4), 4);
	report_env = "MEMPROF_REPLAY_THREADS=4";
	out = report("--json --full-replay", file, &said);
	report_env = "";
	if (!strstr(out, "\"bytes\": 8192,") || !strstr(out, "\"event_index\": 2,"))
		fail_msg("the first of the tied peaks is not the peak:\n%s", out);
	free(out);
	unlink(file);

	snprintf(file, sizeof(file), "%s/one.memprof", dir);
	rng = 5;
	record(file, 2000, 100000, "1", 0, 1); /* one round: no checkpoint */
	assert_int_equal(par_same("--oom --leaks --json", file, 2), 0);
	assert_non_null(strstr(par_why, "no usable checkpoint"));
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seek_equals_full_replay),
		cmocka_unit_test(test_bad_checkpoint),
		cmocka_unit_test(test_parallel_equals_serial),
		cmocka_unit_test(test_parallel_ties_and_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
