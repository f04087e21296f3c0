/* test_report_seek_steps.c - `memprof report --steps A:B` of a capture
 * from the last checkpoint before step A, read up to the window's end
 * (issue 43; src/cli/report_seek_steps.c), prints what the full replay
 * prints, byte for byte: JSON, text and CSV, every section. Captures
 * written here with the writer: three memory ids (the host's blocks
 * without regions, a device pool and an arena in regions added and
 * removed), reallocs, frees of addresses not live, allocations at live
 * addresses, failed allocations throughout (inside and outside every
 * window), marks, a step every 1000 events, a checkpoint every 1 or 3
 * rounds; the arena's largest block allocated and freed in step 1 (a
 * memory id peaking before most windows), the host's live set growing
 * then shrinking. Windows: from the start, inside the first checkpoint
 * interval, in the middle, at the end, open-ended, past the end.
 * MEMPROF_SEEK_SAY=1 makes report say where it read from: the test checks
 * that it sought where it should. A small capture's window figures are
 * checked against hand-computed ones. */
#include "test_common.h"

#include <memprof/writer.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"

static uint64_t rng;

static uint64_t rnd(uint64_t n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (rng >> 33) % n;
}

static mp_writer_t *open_writer(const char *path, const char *every)
{
	mp_writer_t *w = NULL;
	mp_diag_t diag;

	assert_int_equal(setenv("MEMPROF_CHECKPOINT_ROUNDS", every, 1) + setenv("MEMPROF_CHECKPOINT_RATIO", "0", 1), 0);
	if (mp_writer_open(&w, path, 1, NULL, &diag))
		fail_msg("%s", diag.text);
	assert_int_equal(unsetenv("MEMPROF_CHECKPOINT_ROUNDS") + unsetenv("MEMPROF_CHECKPOINT_RATIO"), 0);
	return w;
}

/* n events, step i / 1000 at event i, a flush round every `round`
 * events, a checkpoint every `every` rounds. */
static void record(const char *path, int n, int round, const char *every)
{
	mp_writer_t *w = open_writer(path, every);
	uint64_t live[3][512] = {{0}}, nlive[3] = {0};
	const uint64_t base[3] = {0x7f0000000000ull, 0x200000000ull, 0x300000000ull};
	uint32_t mem[3], marks[2], ops[2];

	mem[0] = (uint32_t)mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	mem[1] = (uint32_t)mp_writer_memory(w, "cuda:0", MP_MEMORY_DEVICE, 0);
	mem[2] = (uint32_t)mp_writer_memory(w, "arena", MP_MEMORY_HOST, 0);
	marks[0] = mp_writer_intern(w, "forward");
	marks[1] = mp_writer_intern(w, "backward");
	ops[0] = mp_writer_intern(w, "matmul");
	ops[1] = mp_writer_intern(w, "float32");
	assert_int_equal(mp_writer_region_add(w, mem[1], base[1], 1u << 22), 0);
	assert_int_equal(mp_writer_region_add(w, mem[2], base[2], 1u << 20), 0);
	for (int i = 0; i < n; i++) {
		int m = (int)rnd(3), grow = i < n / 2;
		uint64_t c = rnd(100), size = 16 * (1 + rnd(256));
		if (i % 1000 == 0)
			assert_int_equal(mp_writer_step(w, i / 1000), 0);
		if (i % round == round - 1)
			assert_int_equal(mp_writer_flush(w), 0);
		if (i == 1500) /* the arena's peak, in step 1 */
			assert_int_equal(mp_writer_alloc(w, mem[2], base[2] + (64u << 20), 64u << 20, 64u << 20), 0);
		if (i == 1600)
			assert_int_equal(mp_writer_free(w, mem[2], base[2] + (64u << 20)), 0);
		if (rnd(8) == 0)
			mp_writer_set_context(w, rnd(2) ? ops[0] : 0, (int)rnd(6), rnd(2) ? ops[1] : 0, 0);
		if (c < 2) {
			assert_int_equal(mp_writer_alloc_failed(w, mem[m], size << 16), 0);
		} else if (c < 3) {
			assert_int_equal(mp_writer_mark(w, marks[rnd(2)]), 0);
		} else if (c < 4) {
			if (m == 2)
				assert_int_equal(mp_writer_region_add(w, mem[2], base[2], (1u << 20) + 65536 * (uint64_t)(i / 64)), 0);
			else if (rnd(2))
				assert_int_equal(mp_writer_region_add(w, mem[1], base[1] + (8u << 20), 1u << 20), 0);
			else
				assert_int_equal(mp_writer_region_remove(w, mem[1], base[1] + (8u << 20)), 0);
		} else if (c < 6 && nlive[0]) {
			uint64_t j = rnd(nlive[0]), to = base[0] + 16 * rnd(1u << 20);
			assert_int_equal(mp_writer_realloc(w, mem[0], live[0][j], to, size, size + 8), 0);
			live[0][j] = to;
		} else if (c < 7) {
			assert_int_equal(mp_writer_free(w, mem[m], base[m] + 8), 0); /* not live */
		} else if (c < (grow ? 45u : 60u) && nlive[m]) {
			uint64_t j = rnd(nlive[m]);
			assert_int_equal(mp_writer_free(w, mem[m], live[m][j]), 0);
			live[m][j] = live[m][--nlive[m]];
		} else {
			uint64_t a = base[m] + 16 * rnd(m ? (1u << 16) : (1u << 20));
			assert_int_equal(mp_writer_alloc(w, mem[m], a, size, m == 1 ? 0 : size + 16), 0);
			if (nlive[m] < 512)
				live[m][nlive[m]++] = a;
		}
	}
	assert_int_equal(mp_writer_close(w), 0);
}

/* What report said on stderr of where it read from. */
enum { SAID_SEEK = 1, SAID_START = 2, SAID_STOP = 4, SAID_FULL = 8 };

/* The output of `memprof report ARGS FILE` (stdout), malloc'd; *said:
 * SAID_* flags, *step: the step of the checkpoint it sought from. */
static char *report(const char *args, const char *file, int *said, long *step)
{
	char cmd[MP_TEST_CMD_MAX], *out, *err;
	const char *s;

	snprintf(cmd, sizeof(cmd), "MEMPROF_SEEK_SAY=1 %s report %s %s", MEMPROF, args, file);
	assert_int_equal(mp_test_capture(cmd, &out, &err), 0);
	*said = 0;
	for (char *line = err, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
		if ((nl = strchr(line, '\n')))
			*nl = 0;
		if ((s = strstr(line, ": seek from the checkpoint at event ")) && strstr(s, "), step ")) {
			*said |= SAID_SEEK;
			*step = strtol(strstr(s, "), step ") + 8, NULL, 10);
		}
		*said |= strstr(line, ": the window from the start") ? SAID_START : 0;
		*said |= strstr(line, ", read up to the window's end") ? SAID_STOP : 0;
		*said |= strstr(line, ": full replay: ") ? SAID_FULL : 0;
	}
	free(err);
	return out;
}

/* The seek and the full replay print the same; returns what was said. */
static int same(const char *args, const char *file, long *step)
{
	char full[256];
	int said, said_full;
	long unused;
	char *a = report(args, file, &said, step), *b;

	snprintf(full, sizeof(full), "%s --full-replay", args);
	b = report(full, file, &said_full, &unused);
	assert_int_equal(said_full, 0); /* --full-replay: no seek, nothing said */
	if (strcmp(a, b))
		fail_msg("%s: report %s differs from the full replay:\n%.3000s\n---\n%.3000s", file, args, a, b);
	free(a);
	free(b);
	return said;
}

static void test_steps_seek_equals_full_replay(void **state)
{
	static const struct {
		const char *steps;
		int first, bounded, before_first_ckpt;
	} win[] = {{"0:0", 0, 1, 1}, {":1", 0, 1, 1}, {"1:2", 1, 1, 0}, {"5:7", 5, 1, 0}, {"9", 9, 1, 0},
		   {"12:", 12, 0, 0}, {"19:19", 19, 0, 0}, {"18:30", 18, 0, 0}, {"40:50", 40, 0, 0}};
	static const char *const args[] = {"--json", "", "--csv", "--peak --leaks --oom --timeline --breakdown --json",
					   "--leaks --oom --top 5"};
	static const char *const every[] = {"1", "3"};
	char dir[] = "/tmp/memprof-ssteps-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t c = 0; c < 2; c++) {
		char file[256];
		rng = 4000 + c;
		snprintf(file, sizeof(file), "%s/c%zu.memprof", dir, c);
		record(file, 20000, 250, every[c]); /* steps 0 to 19, 80 rounds */
		for (size_t i = 0; i < sizeof(win) / sizeof(win[0]); i++)
			for (size_t k = 0; k < sizeof(args) / sizeof(args[0]); k++) {
				char a[256];
				long step = -2;
				int said;
				snprintf(a, sizeof(a), "--steps %s %s", win[i].steps, args[k]);
				said = same(a, file, &step);
				/* from the start (a window whose first step is 0: the
				 * state before it is no checkpoint's), else from a
				 * checkpoint of a step below the first, at most one
				 * checkpoint interval (3 rounds: 750 events) before */
				if (win[i].before_first_ckpt) {
					assert_int_equal(said, SAID_START | SAID_STOP);
					continue;
				}
				if (!(said & SAID_SEEK))
					fail_msg("%s: report %s did not seek (%d)", file, a, said);
				assert_true(step < win[i].first);
				assert_true(win[i].first > 19 || step >= win[i].first - 1);
				/* bounded before the last step: the read stops */
				assert_int_equal((said & SAID_STOP) != 0, win[i].bounded);
			}
		unlink(file);
	}
	rmdir(dir);
}

/* A hand-made capture dir/name with a checkpoint every round and one
 * memory id, "host" (*host): its writer. */
static mp_writer_t *hand_writer(char *dir, const char *name, char *file, size_t size, uint32_t *host)
{
	mp_writer_t *w;

	assert_non_null(mkdtemp(dir));
	snprintf(file, size, "%s/%s", dir, name);
	w = open_writer(file, "1");
	*host = (uint32_t)mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	return w;
}

/* A window whose figures are known: step k (0..11) is one round; it
 * allocates a block of (k + 1) * 1000 bytes and frees step k - 2's; step
 * 2 also allocates and frees 1 MiB (the peak of the run, before the
 * windows); steps 3 and 7 have a failed allocation. A checkpoint at every
 * round. */
static void test_steps_hand_figures(void **state)
{
	char dir[] = "/tmp/memprof-sstepsh-XXXXXX", file[256];
	mp_writer_t *w;
	uint32_t host;
	long step = -2;
	int said;
	char *out;

	(void)state;
	w = hand_writer(dir, "h.memprof", file, sizeof(file), &host);
	for (int k = 0; k < 12; k++) {
		assert_int_equal(mp_writer_step(w, k), 0);
		if (k >= 2)
			assert_int_equal(mp_writer_free(w, host, 0x100000u * (uint64_t)(k - 1)), 0);
		assert_int_equal(mp_writer_alloc(w, host, 0x100000u * (uint64_t)(k + 1), 1000u * (uint64_t)(k + 1),
						 1000u * (uint64_t)(k + 1)),
				 0);
		if (k == 2) {
			assert_int_equal(mp_writer_alloc(w, host, 0x7000000, 1u << 20, 1u << 20), 0);
			assert_int_equal(mp_writer_free(w, host, 0x7000000), 0);
		}
		if (k == 3 || k == 7)
			assert_int_equal(mp_writer_alloc_failed(w, host, 1u << 30), 0);
		assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);
	/* steps 5 and 6: 2 allocations, 2 frees (step 3's and 4's blocks),
	 * no failure; the peak at step 6: 6000 + 7000; live at its end the
	 * same; the run's lifetime peak 1 MiB + 3000 + 2000; the memory id's
	 * events, the whole run's: its declaration and 26 */
	said = same("--steps 5:6 --leaks --oom --json", file, &step);
	assert_int_equal(said, SAID_SEEK | SAID_STOP);
	assert_int_equal(step, 4);
	out = report("--steps 5:6 --leaks --oom --json", file, &said, &step);
	if (!strstr(out, "\"allocations\": 2,") || !strstr(out, "\"deallocations\": 2,") ||
	    !strstr(out, "\"failed_allocations\": 0,") || !strstr(out, "\"bytes\": 13000,") ||
	    !strstr(out, "\"leak_bytes\": 13000") || !strstr(out, "\"lifetime_peak_bytes\": 1053576,") ||
	    !strstr(out, "\"events\": 27,"))
		fail_msg("steps 5:6:\n%s", out);
	free(out);
	/* steps 7 and 8: one failure, the peak 8000 + 9000 at step 8 */
	said = same("--steps 7:8 --oom --json", file, &step);
	assert_int_equal(said, SAID_SEEK | SAID_STOP);
	out = report("--steps 7:8 --oom --json", file, &said, &step);
	if (!strstr(out, "\"failed_allocations\": 1,") || !strstr(out, "\"bytes\": 17000,"))
		fail_msg("steps 7:8:\n%s", out);
	free(out);
	unlink(file);
	rmdir(dir);
}

/* Steps that go back inside one round (an epoch that restarts its step
 * numbers within a flush interval) while every round ends at a step no
 * lower than the round before's: the rounds' steps look monotone, yet
 * step 5's events come before a checkpoint of step 2. The seek from the
 * last checkpoint below step 5 would miss them: the round says its steps
 * went back (its ROUND flag), and the window replays in full. */
static void test_steps_back_within_a_round(void **state)
{
	char dir[] = "/tmp/memprof-sstepsb-XXXXXX", file[256];
	static const int steps[5][2] = {{0, 0}, {1, 1}, {5, 2}, {3, 3}, {4, 4}}; /* per round: a step, then another */
	mp_writer_t *w;
	uint32_t host;
	long step = -2;
	int said;
	char *out;

	(void)state;
	w = hand_writer(dir, "b.memprof", file, sizeof(file), &host);
	for (int r = 0; r < 5; r++) {
		for (int k = 0; k < 2; k++) {
			uint64_t a = 0x100000u * (uint64_t)(2 * r + k + 1);
			assert_int_equal(mp_writer_step(w, steps[r][k]), 0);
			assert_int_equal(mp_writer_alloc(w, host, a, 1000u * (uint64_t)(steps[r][k] + 1), 0), 0);
		}
		assert_int_equal(mp_writer_flush(w), 0);
	}
	assert_int_equal(mp_writer_close(w), 0);
	said = same("--steps 5:5 --json", file, &step);
	assert_int_equal(said & (SAID_SEEK | SAID_FULL), SAID_FULL);
	/* step 5: one allocation of 6000 B, in round 2, its peak with the
	 * four blocks before it live: 1000 + 1000 + 2000 + 2000 + 6000 */
	out = report("--steps 5:5 --json", file, &said, &step);
	if (!strstr(out, "\"allocations\": 1,") || !strstr(out, "\"bytes\": 12000,"))
		fail_msg("steps 5:5:\n%s", out);
	free(out);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_seek_equals_full_replay),
		cmocka_unit_test(test_steps_hand_figures),
		cmocka_unit_test(test_steps_back_within_a_round),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
