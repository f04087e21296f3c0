/* test_report_golden.c - `memprof report --json` on a real TF 2.4 capture
 * (shared data) against the figures TensorBoard's own memory_profile.json.gz
 * holds for the same run: the allocator-stats path of the solver. Skips
 * when the shared data is absent. */
#include "test_common.h"

#include "json_check.h"
#include <jansson.h>
#include <math.h>
#include <sys/wait.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define RUN "xplane/tf24-gpu-e4040-2022/logs/fit/20221104-212610/train/plugins/" \
	    "profile/2022_11_04_21_26_12/instance-ecbm.xplane.pb"

#define MULTI "xplane/tf24-8gpu-multiworker/demo/plugins/profile/GPU-multi-worker/34.83.195.179_6003.xplane.pb"

static json_int_t jint(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* The JSON report of a shared-data file, or NULL (and a skip message). */
static json_t *report(const char *rel)
{
	const char *path = mp_test_shared(rel);
	char cmd[8192];
	json_t *doc;
	FILE *p;

	if (!path)
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s report --json '%s' 2>/dev/null", MEMPROF, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	doc = mp_test_json_loadf(p, 0, "report", NULL);
	if (pclose(p) != 0 || !doc) {
		json_decref(doc);
		fprintf(stderr, "skip: this memprof cannot read xplane captures\n");
		return NULL;
	}
	return doc;
}

static json_t *device(json_t *doc, const char *name)
{
	json_t *devs = json_object_get(doc, "devices");

	for (size_t i = 0; i < json_array_size(devs); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(devs, i), "name")), name))
			return json_array_get(devs, i);
	fail_msg("no memory id '%s'", name);
	return NULL;
}

static void test_tf24_gpu_summary(void **state)
{
	json_t *doc = report(RUN), *gpu, *peak, *bd;
	json_int_t sum = 0;

	(void)state;
	if (!doc) {
		skip();
		return;
	}
	gpu = device(doc, "GPU_0_bfc");
	assert_string_equal(json_string_value(json_object_get(gpu, "model")), "allocator_stats");
	/* memory_profile.json.gz: peakStats, peakStatsTimePs, memoryCapacity,
	 * peakBytesUsageLifetime (which is also the true maximum here) */
	peak = json_object_get(gpu, "peak");
	assert_int_equal(jint(peak, "bytes"), 53543168);
	assert_int_equal(jint(peak, "time_ns"), 303747097);
	assert_int_equal(jint(peak, "stack_bytes"), 0);
	assert_int_equal(jint(peak, "heap_bytes"), 53543168);
	assert_int_equal(jint(peak, "free_bytes"), 14595110784);
	assert_true(fabs(json_real_value(json_object_get(peak, "fragmentation")) - 0.00055418) < 1e-12);
	assert_int_equal(jint(gpu, "capacity_bytes"), 14648653952);
	assert_int_equal(jint(gpu, "lifetime_peak_bytes"), 107324160);
	/* the reference's 13 rows, whose sum (with its unmapped row) is heap */
	bd = json_object_get(gpu, "breakdown");
	assert_int_equal(json_array_size(bd), 13);
	for (size_t i = 0; i < json_array_size(bd); i++)
		sum += jint(json_array_get(bd, i), "total_bytes");
	assert_int_equal(sum, 53543168);
	json_decref(doc);
}

/* The reference reports GPU_4_bfc's lifetime peak as 5,006,386,688 B (the
 * last event's value); the true maximum, equal to the window peak, is
 * 6,208,853,760 B (reference notes, section 3.2). */
static void test_multiworker_lifetime_is_the_maximum(void **state)
{
	json_t *doc = report(MULTI), *gpu;

	(void)state;
	if (!doc) {
		skip();
		return;
	}
	gpu = device(doc, "GPU_4_bfc");
	assert_int_equal(jint(gpu, "lifetime_peak_bytes"), 6208853760);
	assert_int_equal(jint(json_object_get(gpu, "peak"), "bytes"), 6208853760);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tf24_gpu_summary),
		cmocka_unit_test(test_multiworker_lifetime_is_the_maximum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
