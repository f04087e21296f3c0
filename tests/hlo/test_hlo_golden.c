/* test_hlo_golden.c - memprof hlo against the reference figures in
 * shared/data/hlo/{xprof-unit-vectors,maxtext-h100,tpu-inference}/
 * golden_memviewer_ref.json (an independent restatement of xprof's Memory
 * Viewer): every module and colour listed, compat and default modes, from the
 * .hlo.pb / .hlo_proto.pb files and from the xplane.pb that embeds them. */
#include "test_common.h"

#include <memprof/hlo.h>

#include <jansson.h>
#include <math.h>

static void expect_mib(double got_mib, json_t *g, const char *key, const char *where)
{
	json_t *v = json_object_get(g, key);
	double want;

	if (!v) {
		fail_msg("%s: golden key %s missing", where, key);
		return;
	}
	want = json_number_value(v);
	if (fabs(got_mib - want) > 1e-9 * fmax(1.0, fabs(want)))
		fail_msg("%s: %s = %.12f, want %.12f", where, key, got_mib, want);
}

static void expect_int(int64_t got, json_t *g, const char *key, const char *where)
{
	json_t *v = json_object_get(g, key);

	if (!v || json_integer_value(v) != got)
		fail_msg("%s: %s = %lld, want %lld", where, key, (long long)got,
			 v ? (long long)json_integer_value(v) : -999LL);
}

#define MIB(b) ((double)(b) / 1048576.0)

/* Compare one (module, colour) against its golden entry. */
static void check_colour(const mp_hlo_module_t *mod, int64_t color, json_t *g, const char *where)
{
	mp_hlo_options_t opt;
	mp_hlo_result_t *r = NULL, *rd = NULL;
	mp_diag_t diag;
	json_t *top3, *order;
	size_t n;

	mp_hlo_options_init(&opt);
	opt.color = color;
	opt.compat = 1;
	opt.small_buffer_size = json_integer_value(json_object_get(g, "small_buffer_size"));
	if (mp_hlo_analyze(mod, &opt, &r, &diag) < 0)
		fail_msg("%s: analyze failed: %s", where, diag.text);
	expect_int(r->trace_id, g, "trace_id", where);
	expect_int((int64_t)r->n_events, g, "events", where);
	expect_mib(MIB(r->peak_heap_bytes), g, "peak_heap_mib", where);
	expect_mib(MIB(r->peak_unpadded_heap_bytes), g, "peak_unpadded_heap_mib", where);
	expect_int(r->peak_position, g, "peak_heap_size_position", where);
	expect_mib(MIB(r->indefinite_bytes), g, "indefinite_added_mib", where);
	expect_mib(MIB(r->total_allocation_bytes), g, "total_buffer_allocation_mib", where);
	expect_mib(MIB(r->indefinite_allocation_bytes), g, "indefinite_buffer_allocation_mib", where);
	expect_mib(MIB(r->entry_parameter_bytes), g, "entry_computation_parameters_mib", where);
	expect_mib(MIB(r->maybe_live_out_bytes), g, "maybe_live_out_mib", where);
	expect_int((int64_t)r->n_buffers, g, "n_heap_objects", where);
	expect_int(r->small_total_bytes, g, "small_total_bytes", where);
	expect_int((int64_t)r->n_points, g, "heap_sizes_len", where);

	top3 = json_object_get(g, "top3_by_size");
	n = json_array_size(top3);
	if (n > r->n_buffers)
		fail_msg("%s: %zu buffers, golden top3 has %zu", where, r->n_buffers, n);
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(top3, i);
		const mp_hlo_buffer_t *b = &r->buffers[r->by_size[i]];

		if (strcmp(b->instruction_name, json_string_value(json_array_get(e, 0))) != 0 ||
		    b->size != json_integer_value(json_array_get(e, 1)) ||
		    b->unpadded_size != json_integer_value(json_array_get(e, 2)))
			fail_msg("%s: by size #%zu is %s %lld/%lld, want %s %lld/%lld", where, i, b->instruction_name,
				 (long long)b->size, (long long)b->unpadded_size,
				 json_string_value(json_array_get(e, 0)),
				 (long long)json_integer_value(json_array_get(e, 1)),
				 (long long)json_integer_value(json_array_get(e, 2)));
	}
	order = json_object_get(g, "first10_program_order");
	for (size_t i = 0; i < json_array_size(order); i++)
		if (i >= r->n_buffers ||
		    strcmp(r->buffers[i].instruction_name, json_string_value(json_array_get(order, i))) != 0)
			fail_msg("%s: program order #%zu is %s, want %s", where, i,
				 i < r->n_buffers ? r->buffers[i].instruction_name : "(none)",
				 json_string_value(json_array_get(order, i)));

	/* Default mode: same peak and position, unpadded from the full shape index. */
	opt.compat = 0;
	if (mp_hlo_analyze(mod, &opt, &rd, &diag) < 0)
		fail_msg("%s: analyze (default mode) failed: %s", where, diag.text);
	expect_mib(MIB(rd->peak_heap_bytes), g, "peak_heap_mib", where);
	expect_int(rd->peak_position, g, "peak_heap_size_position", where);
	expect_mib(MIB(rd->peak_unpadded_heap_bytes), g, "peak_unpadded_heap_mib_full_shape_index", where);
	if (color == 0)
		expect_int((int64_t)rd->n_buffers, g, "n_heap_objects", where);
	mp_hlo_result_free(rd);
	mp_hlo_result_free(r);
}

static void check_module(const mp_hlo_module_t *mod, json_t *colours, const char *name)
{
	const char *key;
	json_t *g;
	char where[512];

	json_object_foreach(colours, key, g) {
		int64_t color = strtoll(key + strlen("color"), NULL, 10);

		snprintf(where, sizeof(where), "%s %s", name, key);
		check_colour(mod, color, g, where);
	}
}

static json_t *load_golden(const char *dir)
{
	char rel[256];
	const char *path;
	json_error_t err;
	json_t *root;

	snprintf(rel, sizeof(rel), "hlo/%s/golden_memviewer_ref.json", dir);
	if (!(path = mp_test_shared(rel)))
		return NULL;
	root = json_load_file(path, 0, &err);
	if (!root)
		fail_msg("%s: %s", path, err.text);
	return root;
}

/* Every file listed in a golden JSON, read directly. Returns modules checked. */
static int check_dir(const char *dir)
{
	json_t *root = load_golden(dir), *colours;
	const char *file;
	int n = 0;

	if (!root)
		return -1;
	json_object_foreach(root, file, colours) {
		char rel[512];
		const char *path;
		mp_hlo_file_t *f = NULL;
		mp_hlo_module_t *mod = NULL;
		mp_diag_t diag;

		snprintf(rel, sizeof(rel), "hlo/%s/%s", dir, file);
		path = mp_test_shared(rel);
		assert_non_null(path);
		if (mp_hlo_file_open(path, &f, &diag) < 0)
			fail_msg("%s: %s", file, diag.text);
		assert_int_equal(mp_hlo_file_module_count(f), 1);
		assert_false(mp_hlo_file_is_xspace(f));
		if (mp_hlo_module_load(f, 0, &mod, &diag) < 0)
			fail_msg("%s: %s", file, diag.text);
		mp_hlo_file_close(f);
		check_module(mod, colours, file);
		mp_hlo_module_free(mod);
		n++;
	}
	json_decref(root);
	return n;
}

static void test_unit_vectors(void **state)
{
	(void)state;
	int n = check_dir("xprof-unit-vectors");

	if (n < 0)
		skip();
	assert_int_equal(n, 4);
}

static void test_maxtext(void **state)
{
	(void)state;
	int n = check_dir("maxtext-h100");

	if (n < 0)
		skip();
	assert_int_equal(n, 13);
}

static void test_tpu_files(void **state)
{
	(void)state;
	int n = check_dir("tpu-inference");

	if (n < 0)
		skip();
	assert_int_equal(n, 4);
}

/* The same four TPU modules, found in the xplane.pb's /host:metadata plane. */
static void test_tpu_xplane(void **state)
{
	json_t *root = load_golden("tpu-inference");
	const char *path = mp_test_shared("hlo/tpu-inference/tpu_inference_2.xplane.pb");
	mp_hlo_file_t *f = NULL;
	mp_diag_t diag;
	size_t n;
	int matched = 0;

	(void)state;
	if (!root || !path)
		skip();
	if (mp_hlo_file_open(path, &f, &diag) < 0)
		fail_msg("xplane: %s", diag.text);
	assert_true(mp_hlo_file_is_xspace(f));
	n = mp_hlo_file_module_count(f);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++) {
		const mp_hlo_module_info_t *info = mp_hlo_file_module(f, i);
		char key[512];
		json_t *colours;
		mp_hlo_module_t *mod = NULL;
		size_t idx = 99;

		/* golden keys are "<module>.<program id>.hlo_proto.pb" */
		snprintf(key, sizeof(key), "%s.%llu.hlo_proto.pb", info->name, (unsigned long long)info->program_id);
		colours = json_object_get(root, key);
		if (!colours)
			fail_msg("xplane module %s (%s) not in the golden file", info->display, key);
		assert_int_equal(mp_hlo_file_find(f, info->display, &idx, &diag), 0);
		assert_int_equal(idx, i);
		if (mp_hlo_module_load(f, i, &mod, &diag) < 0)
			fail_msg("%s: %s", key, diag.text);
		check_module(mod, colours, key);
		mp_hlo_module_free(mod);
		matched++;
	}
	assert_int_equal(matched, 4);
	mp_hlo_file_close(f);
	json_decref(root);
}

/* A before_optimizations dump has no buffer assignment: a clear error. */
static void test_before_optimizations(void **state)
{
	const char *path = mp_test_shared(
		"hlo/maxtext-h100/module_0016.jit_train_step.before_optimizations.hlo.pb");
	mp_hlo_file_t *f = NULL;
	mp_hlo_module_t *mod = NULL;
	mp_diag_t diag;

	(void)state;
	if (!path)
		skip();
	assert_int_equal(mp_hlo_file_open(path, &f, &diag), 0);
	assert_string_equal(mp_hlo_file_module(f, 0)->name, "jit_train_step");
	assert_int_equal(mp_hlo_module_load(f, 0, &mod, &diag), MP_EHLO);
	assert_null(mod);
	assert_non_null(strstr(diag.text, "no buffer assignment"));
	assert_non_null(strstr(diag.text, "after_optimizations"));
	mp_hlo_file_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_vectors),
		cmocka_unit_test(test_maxtext),
		cmocka_unit_test(test_tpu_files),
		cmocka_unit_test(test_tpu_xplane),
		cmocka_unit_test(test_before_optimizations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
