/* test_hooks_summary.c - the figures the writer keeps while recording
 * (memprof/capsummary.h), which `memprof record`'s closing line prints,
 * against `memprof report --json` on the same capture: per memory id the
 * allocations and frees (report counts a realloc as one of each), failed
 * and dropped events, the peak (bytes and time), and what is live at the
 * end (report --leaks). And against hooks_check.c's independent replay
 * (requested bytes). Victims with one thread and many, reallocs, failed
 * allocations, mappings, and a capture killed mid-run: its figures are
 * those of its last complete flush round, which a solver fed the events
 * before that round's horizon finds too.
 */
#include "test_common.h"

#include "json_check.h"
#include "hooks_run.h"

#include <memprof/capsummary.h>
#include <memprof/capture.h>
#include <memprof/solver.h>

#include <jansson.h>
#include <signal.h>

static uint64_t jget(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!json_is_integer(v))
		fail_msg("report JSON: no integer \"%s\"", k);
	return (uint64_t)json_integer_value(v);
}

/* Every memory id of the summary against report's device of that name. */
static void check_against_report(const char *cap, const mp_capture_summary_t *s)
{
	char cmd[900];
	json_error_t err;
	json_t *root, *devs, *dev;
	size_t i, k;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' report --json --peak --leaks --top 1000000 '%s' 2>/dev/null", HK_MEMPROF, cap);
	p = popen(cmd, "r");
	assert_non_null(p);
	root = mp_test_json_loadf(p, 0, "report", &err);
	pclose(p);
	if (!root)
		fail_msg("`memprof report --json` gave no JSON: %s", err.text);
	devs = json_object_get(root, "devices");
	assert_int_equal(json_array_size(devs), s->nmemories);
	json_array_foreach(devs, i, dev)
	{
		const char *name = json_string_value(json_object_get(dev, "name"));
		const mp_summary_memory_t *m = mp_capture_summary_find(s, name);
		json_t *peak = json_object_get(dev, "peak"), *leaks = json_object_get(dev, "leaks"), *row;
		uint64_t blocks = 0, requested = 0;
		assert_non_null(m);
		assert_int_equal(jget(dev, "allocations"), m->allocations + m->reallocs);
		assert_int_equal(jget(dev, "deallocations"), m->frees + m->reallocs);
		assert_int_equal(jget(dev, "failed_allocations"), m->failed);
		assert_int_equal(jget(dev, "dropped_events"), m->dropped);
		assert_int_equal(json_is_null(peak), !m->has_peak);
		if (m->has_peak) {
			assert_int_equal(jget(peak, "bytes"), m->peak_bytes);
			assert_int_equal(jget(peak, "time_ns"), m->peak_time_ns);
		}
		assert_int_equal(jget(dev, "leaks_omitted_rows"), 0);
		json_array_foreach(leaks, k, row)
		{
			blocks += jget(row, "occurrences");
			requested += jget(row, "occurrences") * jget(row, "requested_bytes");
		}
		assert_int_equal(blocks, m->live_blocks);
		assert_int_equal(jget(dev, "leak_bytes"), m->live_bytes);
		assert_int_equal(requested, m->live_requested);
	}
	json_decref(root);
}

/* The summary of cap, checked against report and the replay of `memory`;
 * returns that memory's figures in *out (and the summary in *s). */
static const mp_summary_memory_t *check(const char *cap, const char *memory, mp_capture_summary_t *s)
{
	hk_stats_t st = {0};
	const mp_summary_memory_t *m;
	mp_diag_t diag;

	if (mp_capture_summary_read(cap, s, &diag) != 0)
		fail_msg("%s", diag.text);
	assert_true(s->available);
	assert_true(s->ended_cleanly);
	check_against_report(cap, s);
	st.memory = memory;
	hk_replay_ok(cap, &st);
	assert_non_null(m = mp_capture_summary_find(s, memory));
	assert_int_equal(m->allocations, st.allocs);
	assert_int_equal(m->frees, st.frees);
	assert_int_equal(m->reallocs, st.reallocs);
	assert_int_equal(m->failed, st.failed);
	assert_int_equal(m->peak_requested, st.peak);
	assert_int_equal(m->live_blocks, st.live_blocks);
	assert_int_equal(m->live_requested, st.live_bytes);
	return m;
}

static void test_summary_sequence(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"exit", NULL};
	const mp_summary_memory_t *m;
	mp_capture_summary_t s;

	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, NULL), 0);
	m = check(t->cap, "host", &s);
	/* victim_seq.c's figures (and test_hooks_heap.c's report check) */
	assert_int_equal(m->allocations, 6);
	assert_int_equal(m->frees, 4);
	assert_int_equal(m->peak_requested, 208000);
	assert_int_equal(m->peak_bytes, 208688);
	assert_int_equal(m->live_requested, 200007);
	mp_capture_summary_free(&s);
}

/* 8 threads, every block freed by another thread (victim_threads.c) */
static void test_summary_threads(void **state)
{
	tmpdir_t *t = *state;
	const mp_summary_memory_t *m;
	mp_capture_summary_t s;

	assert_int_equal(hk_record(t->cap, NULL, "victim_threads", NULL, NULL), 0);
	m = check(t->cap, "host", &s);
	assert_true(m->allocations >= 800000);
	mp_capture_summary_free(&s);
}

static void test_summary_churn(void **state)
{
	tmpdir_t *t = *state;
	mp_capture_summary_t s;

	assert_int_equal(hk_record(t->cap, NULL, "victim_churn", NULL, NULL), 0);
	(void)check(t->cap, "host", &s);
	mp_capture_summary_free(&s);
}

static void test_summary_realloc(void **state)
{
	tmpdir_t *t = *state;
	const mp_summary_memory_t *m;
	mp_capture_summary_t s;

	assert_int_equal(hk_record(t->cap, NULL, "victim_realloc", NULL, NULL), 0);
	m = check(t->cap, "host", &s);
	assert_true(m->reallocs > 0);
	mp_capture_summary_free(&s);
}

static void test_summary_failed(void **state)
{
	tmpdir_t *t = *state;
	const mp_summary_memory_t *m;
	mp_capture_summary_t s;

	assert_int_equal(hk_record(t->cap, NULL, "victim_fail", NULL, NULL), 0);
	m = check(t->cap, "host", &s);
	assert_true(m->failed > 0);
	mp_capture_summary_free(&s);
}

static void test_summary_mmap(void **state)
{
	tmpdir_t *t = *state;
	const mp_summary_memory_t *m;
	mp_capture_summary_t s;

	assert_int_equal(hk_record(t->cap, NULL, "victim_mmap", NULL, NULL), 0);
	m = check(t->cap, "host_mmap", &s);
	assert_true(m->allocations > 0);
	mp_capture_summary_free(&s);
}

/* Killed (SIGKILL) mid-run: the summary of the last complete round, which
 * is what the solver finds from the events before that round's horizon. */
static void test_summary_killed(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"kill", NULL};
	const char *env[] = {"MEMPROF_FLUSH_MS=20", NULL};
	mp_capture_summary_t s;
	const mp_summary_memory_t *m;
	const mp_solver_device_t *d;
	mp_solver_options_t o;
	mp_solver_t *solver;
	mp_capture_t *cap;
	mp_diag_t diag;
	mp_event_t ev;
	uint64_t events = 0;
	size_t i;

	assert_int_equal(hk_record(t->cap, NULL, "victim_seq", args, env), 128 + SIGKILL);
	assert_int_equal(mp_capture_summary_read(t->cap, &s, &diag), 0);
	assert_true(s.available);
	assert_false(s.ended_cleanly);
	assert_true(s.horizon_ns < UINT64_MAX);
	mp_solver_options_init(&o);
	assert_non_null(solver = mp_solver_new(&o));
	assert_int_equal(mp_capture_open(&cap, t->cap, &diag), 0);
	while (mp_source_next(mp_capture_source(cap), &ev, &diag) == 1) {
		if (ev.kind == MP_EV_MEMORY || ev.kind == MP_EV_DROPPED || ev.time_ns < s.horizon_ns) {
			events += ev.kind != MP_EV_MEMORY && ev.kind != MP_EV_DROPPED;
			assert_int_equal(mp_solver_feed(solver, &ev, &diag), 0);
		}
	}
	assert_int_equal(mp_solver_finish(solver), 0);
	assert_int_equal(events, s.events);
	for (i = 0; i < s.nmemories; i++) {
		m = &s.memories[i];
		assert_non_null(d = mp_solver_find(solver, m->id));
		assert_int_equal(d->allocations, m->allocations + m->reallocs);
		assert_int_equal(d->deallocations, m->frees + m->reallocs);
		assert_int_equal(d->has_peak, m->has_peak);
		assert_int_equal(d->peak_bytes, m->peak_bytes);
		if (m->has_peak)
			assert_int_equal(d->peak.time_ns, m->peak_time_ns);
		assert_int_equal(d->leak_bytes, m->live_bytes);
	}
	m = mp_capture_summary_find(&s, "host");
	assert_non_null(m);
	assert_int_equal(m->allocations, 6); /* every event was flushed before the kill */
	mp_solver_free(solver);
	mp_capture_close(cap);
	mp_capture_summary_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_summary_sequence, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_summary_threads, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_summary_churn, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_summary_realloc, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_summary_failed, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_summary_mmap, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_summary_killed, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
