/* test_xplane_contract.c - one JSON contract for both reports: `memprof
 * report --json` and `--compat=xprof --json` of the same TF captures
 * (shared data) name the same quantity the same way. Both documents pass
 * the schema (docs/schema/report.schema.json); the compat document uses
 * no name of the default one for something else -- every name they share,
 * at the top, per memory, at the peak and in a row, holds the same value
 * or, for the tables, the same kind of row -- and adds only what xprof
 * alone defines: "xprof" (top and per memory), peak.time_ps (= time_ns *
 * 1000) and a row's "special". */
#include "test_common.h"

#include "json_check.h"

#include <jansson.h>
#include <sys/wait.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define FIT "xplane/tf24-gpu-e4040-2022/logs/fit/"

static const char *const captures[] = {
	FIT "20221104-212610/train/plugins/profile/2022_11_04_21_26_12/instance-ecbm.xplane.pb",
	FIT "20221104-213654/train/plugins/profile/2022_11_04_21_36_56/instance-ecbm.xplane.pb",
	FIT "20221104-214934/train/plugins/profile/2022_11_04_21_49_36/instance-ecbm.xplane.pb",
	FIT "20221104-215722/train/plugins/profile/2022_11_04_21_57_24/instance-ecbm.xplane.pb",
	"xplane/tf24-8gpu-multiworker/demo/plugins/profile/GPU-multi-worker/34.83.195.179_6003.xplane.pb",
};

/* `memprof report ARGS --json PATH`, validated against the schema. */
static json_t *report(const char *args, const char *path)
{
	char cmd[8192];
	json_error_t err;
	json_t *doc;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s report %s --json '%s' 2>/dev/null", MEMPROF, args, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	doc = mp_test_json_loadf(p, 0, "report", &err);
	assert_int_equal(pclose(p), 0);
	if (!doc)
		fail_msg("%s: %s", cmd, err.text);
	return doc;
}

/* Every name of `compat` but those in `added` is a name of `def` with the
 * same value (skip: names whose values are compared elsewhere); every
 * name in `added` is compat's alone. Returns how many names they share. */
static size_t same_names(const char *where, json_t *compat, json_t *def, const char *const *added,
			 const char *const *skip)
{
	const char *k;
	json_t *v;
	size_t shared = 0;

	json_object_foreach(compat, k, v) {
		int is_added = 0, is_skipped = 0;
		for (size_t i = 0; added[i]; i++)
			is_added |= !strcmp(k, added[i]);
		for (size_t i = 0; skip[i]; i++)
			is_skipped |= !strcmp(k, skip[i]);
		if (is_added) {
			if (json_object_get(def, k))
				fail_msg("%s: '%s' is compat-only but the default report has it too", where, k);
			continue;
		}
		if (!json_object_get(def, k))
			fail_msg("%s: '%s' of --compat=xprof is not a name of the default report", where, k);
		if (!is_skipped && !json_equal(v, json_object_get(def, k))) {
			char *a = json_dumps(v, JSON_ENCODE_ANY), *b = json_dumps(json_object_get(def, k), JSON_ENCODE_ANY);
			fail_msg("%s: '%s' is %s with --compat=xprof, %s without", where, k, a, b);
		}
		shared++;
	}
	return shared;
}

static json_t *device_named(json_t *doc, const char *name)
{
	json_t *devs = json_object_get(doc, "devices");

	for (size_t i = 0; i < json_array_size(devs); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(devs, i), "name")), name))
			return json_array_get(devs, i);
	fail_msg("no memory '%s' in the default report", name);
	return NULL;
}

/* A row of xprof's table that is an allocation (not "special") is a row
 * of the default breakdown: the same op, region, dtype, shape, requested
 * and allocated bytes, at least as many occurrences (the default lists
 * everything live at the peak, xprof the peak step's). */
static void row_in_default(const char *where, json_t *row, json_t *breakdown)
{
	static const char *const key[] = {"op", "dtype", "shape", "requested_bytes", "allocated_bytes"};
	const char *region = json_string_value(json_object_get(row, "region"));

	for (size_t i = 0; i < json_array_size(breakdown); i++) {
		json_t *d = json_array_get(breakdown, i);
		size_t k = 0;
		while (k < 5 && json_equal(json_object_get(row, key[k]), json_object_get(d, key[k])))
			k++;
		/* the region TF did not give: "" in xprof's table, "unknown" in memprof's */
		if (k < 5 || strcmp(region[0] ? region : "unknown", json_string_value(json_object_get(d, "region"))))
			continue;
		assert_true(json_integer_value(json_object_get(row, "occurrences")) <=
			    json_integer_value(json_object_get(d, "occurrences")));
		return;
	}
	fail_msg("%s: the row of '%s' is not in the default breakdown", where,
		 json_string_value(json_object_get(row, "op")));
}

static void compare(const char *rel, const char *compat_arg)
{
	static const char *const top_added[] = {"xprof", NULL}, *const top_skip[] = {"compat", "devices", NULL};
	static const char *const dev_added[] = {"xprof", NULL}, *const dev_skip[] = {"peak", "breakdown", NULL};
	static const char *const peak_added[] = {"time_ps", NULL}, *const none[] = {NULL};
	const char *path = mp_test_shared(rel);
	json_t *c, *d, *devs;
	size_t rows = 0;

	if (!path)
		skip();
	c = report(compat_arg, path);
	d = report("--peak", path);
	assert_true(json_is_null(json_object_get(d, "compat")));
	assert_string_equal(json_string_value(json_object_get(c, "compat")), compat_arg + strlen("--compat="));
	/* format, version, file: the same */
	assert_int_equal(same_names("top", c, d, top_added, top_skip), 5);
	devs = json_object_get(c, "devices");
	assert_true(json_array_size(devs) > 0);
	assert_int_equal(json_array_size(json_object_get(json_object_get(c, "xprof"), "memory_ids")), json_array_size(devs));
	for (size_t i = 0; i < json_array_size(devs); i++) {
		json_t *cd = json_array_get(devs, i), *cp = json_object_get(cd, "peak"), *cb = json_object_get(cd, "breakdown");
		const char *name = json_string_value(json_object_get(cd, "name"));
		json_t *dd = device_named(d, name), *dp = json_object_get(dd, "peak"), *row;
		char where[200];
		size_t r;

		assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(c, "xprof"), "memory_ids"), i)),
				    name);
		snprintf(where, sizeof(where), "%s %s", rel, name);
		/* id, name, kind, model, capacity_bytes, events, allocations,
		 * deallocations, lifetime_peak_bytes, peak, breakdown */
		assert_int_equal(same_names(where, cd, dd, dev_added, dev_skip), 11);
		/* bytes, time_ns, step, stack_bytes, heap_bytes, free_bytes, fragmentation */
		assert_int_equal(same_names(where, cp, dp, peak_added, none), 7);
		assert_int_equal(json_integer_value(json_object_get(cp, "time_ps")),
				 json_integer_value(json_object_get(cp, "time_ns")) * 1000);
		json_array_foreach(cb, r, row) {
			json_t *any = json_array_get(json_object_get(dd, "breakdown"), 0);
			const char *k;
			json_t *v;
			/* the same names as the default's rows, and "special" */
			json_object_foreach(row, k, v) {
				if (strcmp(k, "special") && !json_object_get(any, k))
					fail_msg("%s: row name '%s' is not one of the default report's", where, k);
			}
			json_object_foreach(any, k, v) {
				if (!json_object_get(row, k))
					fail_msg("%s: the default report's row name '%s' is missing", where, k);
			}
			assert_int_equal(json_integer_value(json_object_get(row, "total_bytes")),
					 json_integer_value(json_object_get(row, "allocated_bytes")) *
						 json_integer_value(json_object_get(row, "occurrences")));
			if (!json_is_true(json_object_get(row, "special")))
				row_in_default(where, row, json_object_get(dd, "breakdown"));
			else
				assert_true(json_is_true(json_object_get(row, "unknown_origin")) ==
					    !strcmp(json_string_value(json_object_get(row, "region")), "persist/dynamic"));
			rows++;
		}
	}
	assert_true(rows > 0);
	json_decref(c);
	json_decref(d);
}

static void tf24_runs(void **state)
{
	(void)state;
	for (size_t i = 0; i < 4; i++)
		compare(captures[i], "--compat=xprof");
}

static void tf24_multiworker(void **state)
{
	(void)state;
	compare(captures[4], "--compat=xprof");
}

/* current xprof's row names change the name of a row, not of a field */
static void xprof_v1_names(void **state)
{
	(void)state;
	compare(captures[0], "--compat=xprof-v1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tf24_runs),
		cmocka_unit_test(tf24_multiworker),
		cmocka_unit_test(xprof_v1_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
