/* test_xplane_golden.c - xplane.pb files of real TF 2.4 runs against the
 * memory_profile.json.gz that the same TF process wrote (shared data):
 * every allocator's summary and, with --compat=xprof semantics, every row
 * of the breakdown table. Also the summary through memprof's solver. */
#include "test_common.h"

#include <memprof/solver.h>
#include <memprof/xplane.h>
#include <memprof/xprof_compat.h>

#include <jansson.h>
#include <math.h>
#include <zlib.h>

#define E4040 "xplane/tf24-gpu-e4040-2022/logs/fit/"

static const char *const runs[] = {
	"20221104-212610/train/plugins/profile/2022_11_04_21_26_12/instance-ecbm",
	"20221104-213654/train/plugins/profile/2022_11_04_21_36_56/instance-ecbm",
	"20221104-214934/train/plugins/profile/2022_11_04_21_49_36/instance-ecbm",
	"20221104-215722/train/plugins/profile/2022_11_04_21_57_24/instance-ecbm",
};

static json_t *load_json_gz(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	json_error_t err;
	json_t *j;
	int n;

	assert_non_null(gz);
	for (;;) {
		if (len + 65536 > cap) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		n = gzread(gz, buf + len, 65536);
		assert_true(n >= 0);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	gzclose(gz);
	j = json_loadb(buf, len, 0, &err);
	free(buf);
	assert_non_null(j);
	return j;
}

/* int64 fields are strings in proto3 JSON; absent means 0 */
static uint64_t jnum(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (json_is_string(v))
		return strtoull(json_string_value(v), NULL, 10);
	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	fail_msg("%s is not a number", key);
	return 0;
}

static double jdouble(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return v ? json_number_value(v) : 0.0;
}

static const char *jstr(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return v && json_is_string(v) ? json_string_value(v) : "";
}

static void check_run(const char *rel)
{
	char xp[4200], js[4200], rel_x[1024], rel_j[1024];
	const char *p;
	mp_source_t *src = NULL;
	mp_diag_t diag;
	mp_xprof_profile_t *prof = NULL;
	mp_solver_t *solver;
	json_t *root, *ids, *per;
	size_t i, r;

	snprintf(rel_x, sizeof(rel_x), E4040 "%s.xplane.pb", rel);
	snprintf(rel_j, sizeof(rel_j), E4040 "%s.memory_profile.json.gz", rel);
	p = mp_test_shared(rel_x);
	if (!p)
		skip();
	snprintf(xp, sizeof(xp), "%s", p);
	p = mp_test_shared(rel_j);
	assert_non_null(p);
	snprintf(js, sizeof(js), "%s", p);
	assert_int_equal(mp_xplane_open_source(&src, (const char *const[]){xp}, 1, NULL, &diag), 0);
	assert_int_equal(mp_xplane_memory_event_count(src), 160);
	assert_int_equal(mp_xprof_compute(src, NULL, &prof, &diag), 0);
	solver = mp_solver_new(NULL);
	assert_non_null(solver);
	assert_int_equal(mp_source_rewind(src, &diag), 0);
	assert_int_equal(mp_solver_run(solver, src, &diag), 0);

	root = load_json_gz(js);
	ids = json_object_get(root, "memoryIds");
	per = json_object_get(root, "memoryProfilePerAllocator");
	assert_int_equal(json_array_size(ids), prof->n);
	assert_int_equal(mp_source_memory_count(src), prof->n);
	for (i = 0; i < prof->n; i++) {
		const mp_xprof_memory_t *m = &prof->mems[i];
		const mp_solver_device_t *d = mp_solver_find(solver, m->id);
		json_t *a, *sum, *ps, *snaps, *act, *spec;

		assert_string_equal(m->name, json_string_value(json_array_get(ids, i)));
		assert_string_equal(mp_source_memory(src, m->id)->name, m->name);
		a = json_object_get(per, m->name);
		assert_non_null(a);
		sum = json_object_get(a, "profileSummary");
		ps = json_object_get(sum, "peakStats");
		assert_int_equal(m->lifetime_peak_xprof, jnum(sum, "peakBytesUsageLifetime"));
		assert_int_equal(m->peak_bytes, jnum(ps, "peakBytesInUse"));
		assert_int_equal(m->stack_bytes, jnum(ps, "stackReservedBytes"));
		assert_int_equal(m->heap_bytes, jnum(ps, "heapAllocatedBytes"));
		assert_int_equal(m->free_bytes, jnum(ps, "freeMemoryBytes"));
		assert_true(m->fragmentation == jdouble(ps, "fragmentation"));
		assert_int_equal(m->peak_time_ns * 1000, jnum(sum, "peakStatsTimePs"));
		assert_int_equal(m->capacity_bytes, jnum(sum, "memoryCapacity"));
		assert_int_equal(mp_source_memory(src, m->id)->capacity_bytes, jnum(sum, "memoryCapacity"));

		/* the same figures through memprof's solver */
		assert_non_null(d);
		assert_true(d->stats_model);
		assert_int_equal(d->peak_bytes, jnum(ps, "peakBytesInUse"));
		assert_int_equal(d->peak.stack_bytes, jnum(ps, "stackReservedBytes"));
		assert_int_equal(d->peak.heap_bytes, jnum(ps, "heapAllocatedBytes"));
		assert_int_equal(d->peak.free_bytes, jnum(ps, "freeMemoryBytes"));
		assert_int_equal(d->capacity_bytes, jnum(sum, "memoryCapacity"));
		assert_true(d->peak.fragmentation == jdouble(ps, "fragmentation"));
		if (d->peak.time_ns * 1000 != jnum(sum, "peakStatsTimePs"))
			print_message("note: %s %s: solver peak time %llu ps, xprof %llu ps\n", rel, m->name,
				      (unsigned long long)d->peak.time_ns * 1000,
				      (unsigned long long)jnum(sum, "peakStatsTimePs"));

		/* breakdown rows, in order */
		snaps = json_object_get(a, "memoryProfileSnapshots");
		act = json_object_get(a, "activeAllocations");
		spec = json_object_get(a, "specialAllocations");
		assert_int_equal(json_array_size(act), m->nrows);
		for (r = 0; r < m->nrows; r++) {
			json_t *row = json_array_get(act, r), *md;
			int64_t si = (int64_t)strtoll(jstr(row, "snapshotIndex"), NULL, 10);

			if (si >= 0)
				md = json_object_get(json_array_get(snaps, (size_t)si), "activityMetadata");
			else
				md = json_array_get(spec, (size_t)(-si - 1));
			assert_non_null(md);
			assert_string_equal(m->rows[r].op, jstr(md, "tfOpName"));
			assert_int_equal(m->rows[r].allocation_bytes, jnum(md, "allocationBytes"));
			assert_int_equal(m->rows[r].requested_bytes, jnum(md, "requestedBytes"));
			assert_string_equal(m->rows[r].region, jstr(md, "regionType"));
			assert_string_equal(m->rows[r].dtype, jstr(md, "dataType"));
			assert_string_equal(m->rows[r].shape, jstr(md, "tensorShape"));
			assert_int_equal(m->rows[r].occurrences, jnum(row, "numOccurrences"));
		}
	}
	json_decref(root);
	mp_solver_free(solver);
	mp_xprof_free(prof);
	mp_source_close(src);
}

static void golden_run0(void **state) { (void)state; check_run(runs[0]); }
static void golden_run1(void **state) { (void)state; check_run(runs[1]); }
static void golden_run2(void **state) { (void)state; check_run(runs[2]); }
static void golden_run3(void **state) { (void)state; check_run(runs[3]); }

/* The macOS CPU-only run: no memory events, and its JSON has no allocator. */
static void cpu_run_has_no_memory_events(void **state)
{
	const char *p = mp_test_shared(E4040 "20221031-190907/train/plugins/profile/2022_10_31_19_09_08/"
				       "gaoyihaodeMacBook-Pro.local.xplane.pb");
	mp_source_t *src = NULL;
	mp_event_t ev;
	mp_diag_t diag;

	(void)state;
	if (!p)
		skip();
	assert_int_equal(mp_xplane_open_source(&src, &p, 1, NULL, &diag), 0);
	assert_int_equal(mp_xplane_memory_event_count(src), 0);
	assert_int_equal(mp_source_memory_count(src), 0);
	assert_int_equal(mp_source_next(src, &ev, &diag), 0);
	mp_source_close(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(golden_run0),
		cmocka_unit_test(golden_run1),
		cmocka_unit_test(golden_run2),
		cmocka_unit_test(golden_run3),
		cmocka_unit_test(cpu_run_has_no_memory_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
