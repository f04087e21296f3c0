/* test_torch_snapshots.c - PyTorch memory snapshots through the source and
 * the solver, against the figures that gen_snapshots.py computes with its
 * own model of the caching allocator (expected.json), plus hand-computed
 * figures for the first scenarios. The fixtures are generated at test time
 * into the build tree (python3's pickle module, protocols 2, 4 and 5, and
 * gzip). */
#include "test_common.h"
#include "torch_test.h"

#include <memprof/solver.h>
#include <memprof/torch.h>

#include "../../src/sources/torch/torch_impl.h" /* tr_src_t.unknown_lines */

#include <jansson.h>
#include <errno.h>
#include <math.h>

#define OUT MEMPROF_BINARY_DIR "/tests/torch/fixtures"

static json_t *expected;

/* A note that must be there. */
static const mp_source_note_t *note(const mp_source_t *src, uint32_t memory, const char *key)
{
	const mp_source_note_t *n = mp_test_note(src, memory, key);

	if (!n)
		fail_msg("no note '%s'", key);
	return n;
}

static int setup(void **state)
{
	(void)state;
	expected = mp_test_gen_snapshots(OUT);
	return expected ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(expected);
	return 0;
}

typedef struct run {
	mp_source_t *src;
	mp_solver_t *solver;
} run_t;

static void open_run(run_t *r, const char *file, int all_frames)
{
	char path[512];
	mp_torch_options_t opts = {all_frames, NULL};
	mp_solver_options_t so;
	mp_diag_t diag;
	int rc;

	snprintf(path, sizeof(path), OUT "/%s", file);
	mp_diag_clear(&diag);
	rc = mp_torch_open_source(&r->src, path, &opts, &diag);
	if (rc != 0)
		fprintf(stderr, "%s: %s\n", path, diag.text);
	assert_int_equal(rc, 0);
	assert_true(mp_torch_is_source(r->src));
	mp_solver_options_init(&so);
	so.timeline_points = 10000000; /* a point per event */
	so.top = 50;
	r->solver = mp_solver_new(&so);
	assert_non_null(r->solver);
	assert_int_equal(mp_solver_run(r->solver, r->src, &diag), 0);
}

static void close_run(run_t *r)
{
	mp_solver_free(r->solver);
	mp_source_close(r->src);
}

static const mp_solver_device_t *device_named(const run_t *r, const char *name)
{
	for (size_t i = 0; i < mp_solver_device_count(r->solver); i++) {
		const mp_solver_device_t *d = mp_solver_device(r->solver, i);
		const mp_memory_info_t *m = mp_source_memory(r->src, d->id);
		if (m && !strcmp(m->name, name))
			return d;
	}
	fail_msg("no memory '%s'", name);
	return NULL;
}

/* The last timeline point at time t (the state after every entry at t). */
static const mp_solver_point_t *point_at(const mp_solver_device_t *d, uint64_t t)
{
	const mp_solver_point_t *found = NULL;

	for (size_t i = 0; i < d->timeline_count; i++)
		if (d->timeline[i].time_ns == t)
			found = &d->timeline[i];
	return found;
}

static uint64_t jint(const json_t *a, size_t i)
{
	return (uint64_t)json_integer_value(json_array_get(a, i));
}

/* Every figure of expected.json's scenario `name` against file. */
static void check_scenario(const char *name, const char *file)
{
	const json_t *devs = json_object_get(expected, name), *dv;
	size_t k;
	run_t r;

	assert_non_null(devs);
	open_run(&r, file, 0);
	json_array_foreach(devs, k, dv) {
		char mem[32], res[48];
		const mp_solver_device_t *d, *rd;
		const json_t *states = json_object_get(dv, "states"), *st, *ooms = json_object_get(dv, "ooms"), *o;
		size_t j;
		int dev = (int)json_integer_value(json_object_get(dv, "device"));

		snprintf(mem, sizeof(mem), "cuda:%d", dev);
		snprintf(res, sizeof(res), "cuda:%d reserved", dev);
		d = device_named(&r, mem);
		rd = device_named(&r, res);
		assert_int_equal(d->peak_bytes, json_integer_value(json_object_get(dv, "peak_allocated")));
		assert_int_equal(d->peak.time_ns, json_integer_value(json_object_get(dv, "peak_time_ns")));
		assert_int_equal(rd->peak_bytes, json_integer_value(json_object_get(dv, "peak_reserved")));
		json_array_foreach(states, j, st) {
			const mp_solver_point_t *p = point_at(d, jint(st, 0));
			uint64_t free_b = jint(st, 2), largest = jint(st, 3);
			if (!p) { /* no event of cuda:N then (a free_requested): nothing changed */
				const json_t *prev = json_array_get(states, j - 1);
				if (j == 0 || jint(prev, 1) != jint(st, 1) || jint(prev, 2) != free_b)
					fail_msg("%s device %d: no point at %llu ns", name, dev,
						 (unsigned long long)jint(st, 0));
				continue;
			}
			assert_int_equal(p->heap_bytes, jint(st, 1));
			assert_true(p->has_largest);
			assert_int_equal(p->region_free_bytes, free_b);
			assert_int_equal(p->largest_free_bytes, largest);
			if (free_b)
				assert_true(fabs(p->fragmentation - (1.0 - (double)largest / (double)free_b)) < 1e-9);
		}
		assert_int_equal(d->oom_count, json_array_size(ooms));
		json_array_foreach(ooms, j, o) {
			const mp_solver_oom_t *f = &d->oom[j];
			char want[64];
			assert_int_equal(f->requested_bytes, jint(o, 0));
			assert_int_equal(f->at.region_free_bytes, jint(o, 1));
			assert_int_equal(f->at.largest_free_bytes, jint(o, 2));
			assert_string_equal(mp_solver_oom_cause(f), json_string_value(json_array_get(o, 3)));
			snprintf(want, sizeof(want), "device free %llu B", (unsigned long long)jint(o, 4));
			assert_non_null(strstr(mp_source_string(r.src, f->op), want));
		}
	}
	close_run(&r);
}

static void test_blocks(void **state)
{
	const mp_solver_device_t *d;
	run_t r;

	(void)state;
	check_scenario("blocks", "blocks.pickle");
	/* by hand: 4 MiB + 1024 (1000 B rounded) + 6 MiB, 1024 freed, + 2 MiB
	 * = 12 MiB at 1050 us (50 us after the first entry); free inside the
	 * 20 MiB segment: the 1024 B hole and 8 MiB - 1024 at its end */
	open_run(&r, "blocks.pickle", 0);
	d = device_named(&r, "cuda:0");
	assert_int_equal(d->peak_bytes, 12582912);
	assert_int_equal(d->peak.time_ns, 50000);
	assert_int_equal(d->peak.largest_free_bytes, 8388608 - 1024);
	assert_int_equal(d->peak.region_free_bytes, 8388608);
	assert_int_equal(d->capacity_bytes, 20971520);
	/* attribution: the first frame outside torch/ and the standard library */
	assert_int_equal(d->breakdown_count, 3);
	assert_string_equal(mp_source_string(r.src, d->breakdown[0].op), "backward (/home/u/model.py:17)");
	assert_string_equal(mp_source_string(r.src, d->breakdown[1].op), "forward (/home/u/train.py:42)");
	assert_string_equal(mp_source_string(r.src, d->breakdown[2].op), "step (/home/u/optim.py:5)");
	/* a stack with only torch and stdlib frames: its innermost frame */
	assert_int_equal(d->leak_count, 3);
	close_run(&r);
	open_run(&r, "blocks.pickle", 1); /* --all-frames */
	d = device_named(&r, "cuda:0");
	assert_string_equal(mp_source_string(r.src, d->breakdown[1].op),
			    "_alloc (/usr/lib/python3/dist-packages/torch/cuda/memory.py:120)");
	close_run(&r);
}

static void test_ring(void **state)
{
	static const char *const files[] = {"ring.pickle", "ring.p2.pickle", "ring.p5.pickle", "ring.pickle.gz"};
	mp_torch_info_t info;
	const mp_solver_device_t *d;
	run_t r;

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		check_scenario("ring", files[i]);
	/* by hand: the last 5 entries start with the free_completed of the
	 * 2 MiB block at +8 MiB; the 8 MiB block at +0 is freed in the trace,
	 * the 1 MiB one at +10 MiB never: 3 blocks before the trace, 11 MiB;
	 * then -2 MiB, +4 MiB = 13 MiB at the second entry (10 us) */
	open_run(&r, "ring.pickle", 0);
	mp_torch_info(r.src, &info);
	assert_int_equal(info.before_trace, 3);
	assert_int_equal(info.trace_entries, 5);
	assert_int_equal(info.segments, 1);
	d = device_named(&r, "cuda:0");
	assert_int_equal(d->peak_bytes, 13 * 1048576);
	assert_int_equal(d->peak.time_ns, 10000);
	assert_string_equal(mp_source_string(r.src, d->breakdown[0].op), "(before the trace)");
	assert_int_equal(d->breakdown[0].total_bytes, 8 * 1048576);
	close_run(&r);
}

static void test_expandable(void **state)
{
	(void)state;
	check_scenario("expandable", "expandable.pickle");
}

static void test_oom(void **state)
{
	const mp_solver_device_t *d;
	run_t r;

	(void)state;
	check_scenario("oom", "oom.pickle");
	/* by hand: four 5 MiB blocks fill the 20 MiB segment, two are freed:
	 * 10 MiB cached in two 5 MiB chunks; 8 MiB fits the bytes, not a chunk */
	open_run(&r, "oom.pickle", 0);
	d = device_named(&r, "cuda:0");
	assert_int_equal(d->oom_count, 2);
	assert_string_equal(mp_solver_oom_cause(&d->oom[0]), "fragmented");
	assert_int_equal(d->oom[0].at.largest_free_bytes, 5 * 1048576);
	assert_string_equal(mp_solver_oom_cause(&d->oom[1]), "full");
	close_run(&r);
}

static void test_streams(void **state)
{
	mp_torch_info_t info;
	run_t r;

	(void)state;
	check_scenario("streams", "streams.pickle");
	open_run(&r, "streams.pickle", 0);
	mp_torch_info(r.src, &info);
	assert_int_equal(info.pending_frees, 1); /* the other free completes at once */
	/* by hand: allocated bytes (memory_allocated()) drop at the free's
	 * request: 512 KiB + 256 KiB at 20 us is the peak; 256 KiB + 512 KiB
	 * at 40 us equals it, later. The first block waits for stream 9 from
	 * 30 us to 50 us: 512 KiB in the awaiting memory id, in the segment
	 * still (the 512 KiB block at +768 KiB was carved after it) */
	{
		const mp_solver_device_t *d = device_named(&r, "cuda:0");
		const mp_solver_device_t *w = device_named(&r, "cuda:0 awaiting another stream");
		assert_int_equal(d->peak_bytes, 786432);
		assert_int_equal(d->peak.time_ns, 20000);
		assert_int_equal(w->peak_bytes, 524288);
		assert_int_equal(w->peak.time_ns, 30000);
		assert_int_equal(w->breakdown_count, 1);
		assert_string_equal(mp_source_string(r.src, w->breakdown[0].op),
				    "awaiting another stream: forward (/home/u/train.py:42)");
		assert_int_equal(w->leak_count, 0);
		/* memory_viz's active view keeps the first block to 50 us:
		 * 512 + 256 + 512 KiB requested at 40 us */
		assert_int_equal(note(r.src, d->id, "requested_peak_bytes_memory_viz")->value, 1310720);
		assert_int_equal(note(r.src, d->id, "awaiting_peak_bytes")->value, 524288);
	}
	close_run(&r);
}

static void test_devices(void **state)
{
	mp_torch_info_t info;
	run_t r;

	(void)state;
	check_scenario("devices", "devices.pickle");
	open_run(&r, "devices.pickle", 0);
	mp_torch_info(r.src, &info);
	assert_int_equal(info.devices, 2);
	assert_int_equal(mp_source_memory_count(r.src), 4);
	close_run(&r);
}

/* user_metadata and annotate entries change no figure (their own checks:
 * test_torch_metadata.c) */
static void test_metadata(void **state)
{
	(void)state;
	check_scenario("metadata", "metadata.pickle");
}

/* The live rows at the end name each block's allocated bytes. */
static uint64_t live_block_bytes(const run_t *r, const mp_solver_device_t *d, uint64_t requested)
{
	for (size_t i = 0; i < d->leak_count; i++)
		if (d->leaks[i].requested_bytes == requested)
			return d->leaks[i].allocated_bytes;
	(void)r;
	fail_msg("no live block of %llu B asked", (unsigned long long)requested);
	return 0;
}

static void test_unsplit(void **state)
{
	const mp_solver_device_t *d;
	run_t r;

	(void)state;
	check_scenario("unsplit", "unsplit.pickle");
	/* by hand: 19.5 MiB asked in a 20 MiB segment is a 20 MiB block (0.5
	 * MiB would remain: the large pool splits above 1 MiB only); 9.5 MiB
	 * on a 10 MiB rest is 10 MiB (freed before the dump); the small
	 * pool's 1 MiB blocks are 1 MiB; 4 MiB on the 10 MiB rest is split:
	 * 20 + 10 + 1 + 1 + 4 MiB live at the end, 42 MiB at the peak */
	open_run(&r, "unsplit.pickle", 0);
	d = device_named(&r, "cuda:0");
	assert_int_equal(live_block_bytes(&r, d, 19 * 1048576 + 524288), 20 * 1048576);
	assert_int_equal(live_block_bytes(&r, d, 4 * 1048576), 4 * 1048576);
	assert_int_equal(d->peak_bytes, 42 * 1048576);
	assert_int_equal(d->leak_bytes, 36 * 1048576);
	assert_int_equal(note(r.src, d->id, "dump_check")->value, 1);
	assert_int_equal(note(r.src, d->id, "allocated_peak_bytes")->value, 42 * 1048576);
	/* entries from 0: seg, alloc, seg, alloc, alloc, seg, alloc, then the alloc that fills the small segment */
	assert_int_equal(note(r.src, d->id, "allocated_peak_entry")->value, 7);
	close_run(&r);
}

static void test_divisions(void **state)
{
	const mp_solver_device_t *d;
	run_t r;

	(void)state;
	check_scenario("divisions", "divisions.pickle");
	/* by hand: 4 divisions from 2 to 4 MiB round 2.29 MiB up to 2.5 MiB;
	 * 8 from 16 to 32 MiB round 17 MiB up to 18 MiB; 5 MiB + 1000 B,
	 * where none is set, to 512 B: 5 MiB + 1024 */
	open_run(&r, "divisions.pickle", 0);
	d = device_named(&r, "cuda:0");
	assert_int_equal(live_block_bytes(&r, d, 2 * 1048576 + 300 * 1024), 2621440);
	assert_int_equal(live_block_bytes(&r, d, 17 * 1048576), 18 * 1048576);
	assert_int_equal(live_block_bytes(&r, d, 5 * 1048576 + 1000), 5 * 1048576 + 1024);
	assert_int_equal(note(r.src, d->id, "dump_check")->value, 1);
	close_run(&r);
}

static void test_older(void **state)
{
	const mp_solver_device_t *d;
	run_t r;

	(void)state;
	check_scenario("older", "older.pickle");
	/* by hand: three blocks older than the trace, freed in it. 19.5 MiB
	 * in a 20 MiB segment: pinned at 20 MiB. 4 MiB with 20 MiB up to the
	 * next block, and 8 MiB with 8 MiB up to the segment's end: each
	 * split off (a free rest over 1 MiB), or up to 1 MiB larger (a rest
	 * of 1 MiB or less is not split off) with a gap still over 1 MiB: at
	 * start 32 MiB, or up to 34 MiB; the end: 2 MiB, exact */
	open_run(&r, "older.pickle", 0);
	d = device_named(&r, "cuda:0");
	assert_int_equal(d->peak_bytes, 32 * 1048576);
	assert_int_equal(note(r.src, d->id, "allocated_peak_bytes")->value, 32 * 1048576);
	assert_int_equal(note(r.src, d->id, "allocated_peak_bytes_max")->value, 34 * 1048576);
	assert_int_equal(note(r.src, d->id, "allocated_final_bytes")->value, 2 * 1048576);
	assert_non_null(strstr(note(r.src, d->id, "allocated_peak_bytes")->text, "2 blocks older than the trace"));
	assert_int_equal(note(r.src, d->id, "dump_check")->value, 1);
	close_run(&r);
}

static void test_no_time(void **state)
{
	const mp_solver_device_t *d;
	run_t r;

	(void)state;
	check_scenario("no_time", "no_time.pickle"); /* its times are entry indexes */
	open_run(&r, "no_time.pickle", 0);
	assert_string_equal(mp_source_time_unit(r.src), "trace entry");
	assert_non_null(strstr(note(r.src, MP_NOTE_INPUT, "time_axis")->text, "trace entry indexes"));
	d = device_named(&r, "cuda:0");
	assert_int_equal(d->peak.time_ns, 2); /* the second alloc, entry 2 */
	close_run(&r);
}

static void test_phases(void **state)
{
	const json_t *dv = json_array_get(json_object_get(expected, "phases"), 0);
	const mp_solver_device_t *d;
	run_t r;

	(void)state;
	check_scenario("phases", "phases.pickle");
	open_run(&r, "phases.pickle", 0);
	d = device_named(&r, "cuda:0");
	assert_string_equal(mp_source_string(r.src, d->peak_phase), json_string_value(json_object_get(dv, "peak_phase")));
	assert_string_equal(mp_source_string(r.src, d->peak_phase), "Optimizer.step#AdamW.step");
	assert_null(mp_source_time_unit(r.src));
	close_run(&r);
}

/* The dump disagrees with the trace: said, with how far. */
static void test_broken_dump(void **state)
{
	const json_t *e = json_object_get(expected, "_broken_dump");
	const mp_source_note_t *n;
	const mp_solver_device_t *d;
	char want[160];
	run_t r;

	(void)state;
	open_run(&r, "broken_dump.pickle", 0);
	d = device_named(&r, "cuda:0");
	n = note(r.src, d->id, "dump_check");
	assert_int_equal(n->value, 0);
	assert_true(n->warning);
	snprintf(want, sizeof(want), "allocated %llu B", (unsigned long long)json_integer_value(json_object_get(e, "allocated_replayed")));
	assert_non_null(strstr(n->text, want));
	snprintf(want, sizeof(want), "%llu B", (unsigned long long)json_integer_value(json_object_get(e, "allocated_dump")));
	assert_non_null(strstr(n->text, want));
	assert_non_null(strstr(n->text, "1 differ"));
	n = note(r.src, d->id, "dump_check_first_block");
	assert_int_equal(n->value, json_integer_value(json_object_get(e, "address")));
	assert_true(n->warning);
	close_run(&r);
}

static void expect_error(const char *file)
{
	const json_t *e = json_object_get(json_object_get(expected, "_errors"), file);
	const char *code = json_string_value(json_object_get(e, "code"));
	char path[512];
	mp_source_t *src = NULL;
	mp_diag_t diag;
	int rc;

	snprintf(path, sizeof(path), OUT "/%s", file);
	mp_diag_clear(&diag);
	rc = mp_torch_open_source(&src, path, NULL, &diag);
	assert_null(src);
	assert_string_equal(mp_err_name(rc), code);
	assert_int_equal(diag.offset, json_integer_value(json_object_get(e, "offset")));
	assert_non_null(strstr(diag.text, json_string_value(json_object_get(e, "says"))));
	assert_non_null(strstr(diag.file, file));
}

static void test_errors(void **state)
{
	mp_source_t *src = NULL;
	mp_diag_t diag;

	(void)state;
	expect_error("global.pickle");
	expect_error("truncated.pickle");
	/* a pickle of something else: names what is missing */
	assert_int_equal(mp_torch_open_source(&src, OUT "/expected.json", NULL, &diag), MP_EFORMAT);
	assert_int_equal(mp_torch_open_source(&src, OUT "/absent.pickle", NULL, &diag), -ENOENT);
	assert_true(mp_torch_path_is_candidate(OUT "/ring.pickle.gz"));
	assert_false(mp_torch_path_is_candidate(OUT "/expected.json"));
}

/* Frame lines that are not lines (gen_snapshots.py, unknown_line_fixtures):
 * 2**64-1 (Python 3.13 PyTorch's "no line"), 2**70 and -3 read as unknown,
 * the op "name (file:?)". unknown_lines counts such frames once per frame
 * dict in the pickle -- a dict the pickle refers back to through its memo
 * (PyTorch shares identical frames) is one frame, an equal dict of its own
 * another -- which is how the reader interns frames: the generator counts
 * the distinct dict objects. */
static void test_unknown_lines(void **state)
{
	const json_t *e = json_object_get(expected, "_unknown_line"), *ops, *op;
	const mp_solver_device_t *d;
	const tr_src_t *ts;
	size_t k, seen[16] = {0};
	mp_event_t ev;
	mp_diag_t diag;
	run_t r;

	(void)state;
	assert_non_null(e);
	ops = json_object_get(e, "alloc_ops");
	assert_true(json_array_size(ops) <= 16);
	check_scenario("unknown_line", "unknown_line.pickle");
	open_run(&r, "unknown_line.pickle", 0);
	d = device_named(&r, "cuda:0");
	/* every allocation's op is one of the generator's, and each of those is some allocation's */
	assert_int_equal(mp_source_rewind(r.src, &diag), 0);
	while (mp_source_next(r.src, &ev, &diag) > 0) {
		const char *text = mp_source_string(r.src, ev.op);
		if (ev.kind != MP_EV_ALLOC || ev.memory != d->id)
			continue;
		json_array_foreach(ops, k, op)
			if (!strcmp(text, json_string_value(op)))
				break;
		if (k == json_array_size(ops))
			fail_msg("an allocation's op '%s' is not the generator's", text);
		seen[k]++;
	}
	json_array_foreach(ops, k, op)
		if (!seen[k])
			fail_msg("no allocation with the op '%s'", json_string_value(op));
	ts = (const tr_src_t *)r.src;
	assert_int_equal(ts->unknown_lines, json_integer_value(json_object_get(e, "unknown_lines")));
	/* and the report says it once, as a warning with the first such frame */
	assert_int_equal(note(r.src, MP_NOTE_INPUT, "unknown_lines")->value, ts->unknown_lines);
	assert_true(note(r.src, MP_NOTE_INPUT, "unknown_lines")->warning);
	assert_non_null(strstr(note(r.src, MP_NOTE_INPUT, "unknown_lines")->text, ts->unknown_line_example));
	assert_string_equal(ts->unknown_line_example, json_string_value(json_object_get(e, "example")));
	close_run(&r);
	/* a size of 2**64 cannot be placed: an error naming the field */
	expect_error("size_too_big.pickle");
}

/* The Python 3.13 snapshot of ../shared/data/torch (README.txt there): its
 * frame lines of 2**64-1 no longer stop the reader. Figures from
 * expected.json there (an independent reading); one frame dict carries
 * such a line (init_gpu_context in torch/_subclasses/fake_tensor.py,
 * shared through the memo by 4 entries: Python's pickle module says so). */
static void test_py313_shared(void **state)
{
	const char *path = mp_test_shared("torch/cs336_ctx128_forward_py313.pickle");
	mp_torch_info_t info;
	mp_solver_options_t so;
	const tr_src_t *ts;
	run_t r;
	mp_diag_t diag;

	(void)state;
	if (!path)
		skip();
	mp_diag_clear(&diag);
	if (mp_torch_open_source(&r.src, path, NULL, &diag) != 0)
		fail_msg("%s: %s", path, diag.text);
	mp_torch_info(r.src, &info);
	assert_int_equal(info.trace_entries, 8227);
	assert_int_equal(info.devices, 1);
	ts = (const tr_src_t *)r.src;
	assert_int_equal(ts->unknown_lines, 1);
	assert_non_null(strstr(ts->unknown_line_example, "init_gpu_context ("));
	assert_non_null(strstr(ts->unknown_line_example, "fake_tensor.py): line 18446744073709551615"));
	mp_solver_options_init(&so);
	r.solver = mp_solver_new(&so);
	assert_non_null(r.solver);
	if (mp_solver_run(r.solver, r.src, &diag) != 0)
		fail_msg("solver: %s", diag.text);
	assert_int_equal(device_named(&r, "cuda:0 reserved")->peak_bytes, 17878220800ULL);
	close_run(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocks),  cmocka_unit_test(test_ring),    cmocka_unit_test(test_expandable),
		cmocka_unit_test(test_oom),     cmocka_unit_test(test_streams), cmocka_unit_test(test_devices),
		cmocka_unit_test(test_metadata), cmocka_unit_test(test_errors), cmocka_unit_test(test_unsplit),
		cmocka_unit_test(test_older),   cmocka_unit_test(test_no_time), cmocka_unit_test(test_phases),
		cmocka_unit_test(test_broken_dump), cmocka_unit_test(test_unknown_lines), cmocka_unit_test(test_divisions),
		cmocka_unit_test(test_py313_shared),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
