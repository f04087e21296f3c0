/* test_hooks_heap.c - `memprof record` on victims, what the heap saw.
 *
 * Each test runs `memprof record -o DIR/cap.memprof -- victim ARGS` and
 * replays the capture with hooks_check.c (a second, independent heap
 * replay), asserting figures hand-computed from the victim's source (see
 * the comment at the top of each victim_*.c); one test also checks
 * `memprof report --json`. The driver itself may be sanitized; the victims
 * and the preload library never are. Other allocators beside glibc's
 * malloc (C++, the annotation API, jemalloc, tcmalloc) and the preload's
 * exported symbols: test_hooks_allocators.c.
 */
#include "test_common.h"

#include "json_check.h"
#include "hooks_run.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <sys/wait.h>

/* --- the known sequence, every way to end --------------------------------- */

static void check_sequence(const char *cap, int abrupt)
{
	hk_stats_t st = {0};

	hk_replay_ok(cap, &st);
	assert_int_equal(st.allocs, 6);
	assert_int_equal(st.frees, 4);
	assert_int_equal(st.reallocs, 0);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.peak, 208000);
	assert_int_equal(st.live_blocks, 2);
	assert_int_equal(st.live_bytes, 200007);
	assert_int_equal(st.unknown_frees, 0);
	assert_int_equal(st.double_allocs, 0);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.abrupt, abrupt);
	/* regions: the brk heap, and the 200000-byte mmapped chunk; every
	 * block inside one */
	assert_true(st.regions_added >= 2);
	assert_int_equal(st.outside_regions, 0);
}

static void test_hooks_sequence_exit(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"exit", NULL};

	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 0);
	check_sequence(t->cap, 0);
}

static void test_hooks_sequence__exit(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"_exit", NULL};

	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 0);
	check_sequence(t->cap, 0); /* closed cleanly by the _exit hook */
}

/* quick_exit() runs neither atexit handlers nor destructors: the capture
 * is closed by the preload's at_quick_exit handler, after the program's
 * own (whose allocation is recorded). Before, it ended abruptly and
 * empty. */
static void test_hooks_sequence_quick_exit(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"quick_exit", NULL};
	hk_stats_t st = {0};

	st.nwatch = 1;
	st.watch[0].size = 3333;
	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 0);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.abrupt, 0);
	assert_int_equal(st.allocs, 7);
	assert_int_equal(st.frees, 5);
	assert_int_equal(st.peak, 208000);
	assert_int_equal(st.live_blocks, 2);
	assert_int_equal(st.live_bytes, 200007);
	assert_int_equal(st.watch[0].allocs, 1);
	assert_int_equal(st.watch[0].frees, 1);
}

static void test_hooks_sequence_abort(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"abort", NULL};

	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 128 + SIGABRT);
	check_sequence(t->cap, 0);
}

static void test_hooks_sequence_sigkill(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"kill", NULL};
	const char *env[] = {"MEMPROF_FLUSH_MS=20", NULL};

	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, env), 128 + SIGKILL);
	check_sequence(t->cap, 1); /* no trailer, every event flushed before the kill */
}

/* A fatal signal the program sends itself closes the capture first, as
 * abort() does: complete and clean. Before, it ended abruptly, without
 * what the last flush interval held (here: everything). */
static void test_hooks_sequence_selfkill(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"selfkill", NULL};

	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 128 + SIGINT);
	check_sequence(t->cap, 0);
}

static void test_hooks_sequence_raise(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"raise", NULL};

	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 128 + SIGTERM);
	check_sequence(t->cap, 0);
}

/* A blocked one does not end the process: the capture goes on, one file. */
static void test_hooks_selfkill_blocked(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"selfkill_blocked", NULL};
	hk_stats_t st = {0};
	char names[4][600];

	st.nwatch = 1;
	st.watch[0].size = 1234;
	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 0);
	assert_int_equal(hk_other_captures(t->cap, names, 4), 0);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.abrupt, 0);
	assert_int_equal(st.allocs, 7);
	assert_int_equal(st.watch[0].allocs, 1);
}

static void test_hooks_signal_handler(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"signal", NULL};
	hk_stats_t st = {0};

	st.nwatch = 2;
	st.watch[0].size = 33;
	st.watch[1].size = 77;
	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 0);
	hk_replay_ok(t->cap, &st);
	assert_true(st.watch[0].allocs >= 200000);
	assert_int_equal(st.watch[0].allocs, st.watch[0].frees);
	/* A handler that interrupts a hook passes through unrecorded (the guard
	 * is held), its malloc and free alike; one that runs between hooks is
	 * recorded. Either way the pairs balance. */
	assert_int_equal(st.watch[1].allocs, st.watch[1].frees);
	assert_int_equal(st.unknown_frees, 0);
	assert_int_equal(st.double_allocs, 0);
	assert_int_equal(st.live_blocks, 2);
	assert_int_equal(st.live_bytes, 200007);
}

/* The solver's view of the same capture, through `memprof report --json`:
 * counts, and the peak in allocated bytes, hand-computed from glibc's
 * (x86-64) chunk rules: usable = chunk - 8 with chunks of 16-byte steps
 * (1000, 1000, 5000, 3000, 24 for 7 bytes), and the 200000-byte block is
 * an mmapped chunk of 200704 bytes, usable 200688. Peak = 200688 + 5000 +
 * 3000 = 208688, with the brk heap and the mmapped chunk as regions. */
static void test_hooks_report_agrees(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"exit", NULL};
	char cmd[700];
	json_error_t err;
	json_t *root, *dev, *peak;
	FILE *p;

	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 0);
	snprintf(cmd, sizeof(cmd), "'%s' report --json '%s' 2>/dev/null", HK_MEMPROF, t->cap);
	p = popen(cmd, "r");
	assert_non_null(p);
	root = mp_test_json_loadf(p, 0, "report", &err);
	pclose(p);
	if (!root)
		fail_msg("`memprof report --json` gave no JSON: %s", err.text);
	dev = json_array_get(json_object_get(root, "devices"), 0);
	assert_non_null(dev);
	assert_string_equal(json_string_value(json_object_get(dev, "name")), "host");
	assert_int_equal(json_integer_value(json_object_get(dev, "allocations")), 6);
	assert_int_equal(json_integer_value(json_object_get(dev, "deallocations")), 4);
	assert_int_equal(json_integer_value(json_object_get(dev, "failed_allocations")), 0);
	assert_int_equal(json_integer_value(json_object_get(dev, "unknown_frees")), 0);
	peak = json_object_get(dev, "peak");
	assert_int_equal(json_integer_value(json_object_get(peak, "bytes")), 208688);
	assert_true(json_integer_value(json_object_get(peak, "free_bytes")) > 0);
	json_decref(root);
}

/* --delay 250 --duration 300: the window opens at the first hooked call
 * after 250 ms -- the victim's allocation of 1002 bytes at 500 ms, which
 * it records -- and closes 300 ms later, when the flusher's timer goes
 * off. So of the allocations at 0, 500 and 1000 ms only the 1002-byte one
 * (and nothing of the sequence before it) is in the capture. The 200 ms
 * between the window's end and the last allocation are for the flusher's
 * wake-up on a loaded machine. */
static void test_hooks_window(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--delay", "250", "--duration", "300", NULL};
	const char *args[] = {"window", NULL};
	hk_stats_t st = {0};

	st.nwatch = 3;
	st.watch[0].size = 1001;
	st.watch[1].size = 1002;
	st.watch[2].size = 1003;
	assert_int_equal(hk_record(t->cap, opts, "victim_seq", args, NULL), 0);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.watch[0].allocs, 0);
	assert_int_equal(st.watch[1].allocs, 1);
	assert_int_equal(st.watch[2].allocs, 0);
	assert_int_equal(st.allocs, 1);
	assert_int_equal(st.abrupt, 0);
}

/* --- realloc, alignment, failures, C++ -------------------------------------- */

static void test_hooks_realloc(void **state)
{
	tmpdir_t *t = *state;
	hk_stats_t st = {0};

	assert_int_equal(hk_record(t->cap, NULL, "victim_realloc", NULL, NULL), 0);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.allocs, 4);
	assert_int_equal(st.reallocs, 2);
	assert_int_equal(st.frees, 3);
	assert_int_equal(st.peak, 5164);
	assert_int_equal(st.live_blocks, 1);
	assert_int_equal(st.live_bytes, 4000);
	assert_int_equal(st.unknown_frees, 0);
	assert_int_equal(st.nrealloc, 2);
	assert_int_equal(st.realloc_list[0].requested, 1000);
	assert_true(st.realloc_list[0].old_addr != st.realloc_list[0].new_addr); /* moved */
	assert_int_equal(st.realloc_list[1].requested, 4000);
	assert_true(st.realloc_list[1].old_addr == st.realloc_list[1].new_addr); /* in place */
}

/* A buffer grown by reallocs alone, 100 times: the capture reads back
 * whole (victim_realloc.c has the figures). */
static void test_hooks_realloc_growth(void **state)
{
	tmpdir_t *t = *state;
	static const char *const args[] = {"grow", NULL};
	hk_stats_t st = {0};

	assert_int_equal(hk_record(t->cap, NULL, "victim_realloc", args, NULL), 0);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.allocs, 100);
	assert_int_equal(st.reallocs, 99900);
	assert_int_equal(st.frees, 100);
	assert_int_equal(st.peak, 16000);
	assert_int_equal(st.live_blocks, 0);
	assert_int_equal(st.unknown_frees, 0);
	assert_int_equal(st.double_allocs, 0);
}

static void test_hooks_align(void **state)
{
	tmpdir_t *t = *state;
	static const uint64_t want[][2] = {{100, 64}, {1000, 256}, {5000, 4096}, {256, 128},
					   {50, 32},  {101, 4096}};
	hk_stats_t st = {0};
	int i;

	st.nwatch = 6;
	for (i = 0; i < 6; i++) {
		st.watch[i].size = want[i][0];
		st.watch[i].align = want[i][1];
	}
	assert_int_equal(hk_record(t->cap, NULL, "victim_align", NULL, NULL), 0);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.allocs, 7);
	assert_int_equal(st.frees, 7);
	assert_int_equal(st.failed, 0); /* EINVAL is not a failed allocation */
	assert_int_equal(st.live_blocks, 0);
	assert_int_equal(st.peak, 100 + 1000 + 5000 + 256 + 50 + 100 + 101);
	/* size 100: posix_memalign's 64-aligned block and valloc's page */
	assert_int_equal(st.watch[0].allocs, 2);
	for (i = 0; i < 6; i++) {
		if (i > 0)
			assert_int_equal(st.watch[i].allocs, 1);
		assert_int_equal(st.watch[i].misaligned, 0);
	}
}

static void test_hooks_failed(void **state)
{
	tmpdir_t *t = *state;
	hk_stats_t st = {0};

	assert_int_equal(hk_record(t->cap, NULL, "victim_fail", NULL, NULL), 0);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.failed, 4);
	assert_int_equal(st.failed_req[0], (uint64_t)1 << 50);
	assert_int_equal(st.failed_req[1], UINT64_MAX);
	assert_int_equal(st.failed_req[2], (uint64_t)1 << 50);
	assert_int_equal(st.failed_req[3], (uint64_t)1 << 50);
	assert_int_equal(st.allocs, 1);
	assert_int_equal(st.frees, 1);
	assert_int_equal(st.live_blocks, 0);
}

static void test_hooks_mmap(void **state)
{
	tmpdir_t *t = *state;
	hk_stats_t st = {0}, host = {0};
	char log[200], *out;

	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, "victim_mmap", NULL, NULL), 0);
	/* memprof record's summary gives the mappings' peak after the heap's */
	out = hk_read_text(log);
	assert_non_null(strstr(out, "live at the end: 0 blocks, 0 B; mapped by the program (host_mmap): peak "
				    "2097152 B (2.00 MiB)"));
	free(out);
	st.memory = "host_mmap";
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.allocs, 2);
	assert_int_equal(st.reallocs, 1);
	assert_int_equal(st.frees, 2);
	assert_int_equal(st.peak, 2097152);
	assert_int_equal(st.live_blocks, 0);
	assert_int_equal(st.unknown_frees, 0);
	hk_replay_ok(t->cap, &host); /* the heap saw none of it */
	assert_int_equal(host.peak < 1048576, 1);
}

/* Reserved address space (PROT_NONE) is not memory in use; the pieces made
 * usable are (victim_mmap.c, "reserve", has the sequence). Before, the
 * 64 MiB reservation itself was the peak and nothing else counted. */
static void test_hooks_mmap_reserve(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"reserve", NULL};
	hk_stats_t st = {0};

	assert_int_equal(hk_record(t->cap, NULL, "victim_mmap", args, NULL), 0);
	st.memory = "host_mmap";
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.allocs, 10);
	assert_int_equal(st.reallocs, 0);
	assert_int_equal(st.frees, 10);
	assert_int_equal(st.peak, 67108864);
	assert_int_equal(st.live_blocks, 0);
	assert_int_equal(st.live_bytes, 0);
	assert_int_equal(st.unknown_frees, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hooks_sequence_exit, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_sequence__exit, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_sequence_quick_exit, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_sequence_abort, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_sequence_sigkill, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_sequence_selfkill, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_sequence_raise, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_selfkill_blocked, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_signal_handler, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_report_agrees, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_window, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_realloc, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_realloc_growth, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_align, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_failed, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_mmap, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_mmap_reserve, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests_name("hooks_heap", tests, NULL, NULL);
}
