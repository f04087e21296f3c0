/* test_hlo_cli.c - `memprof hlo` end to end: exit codes, --json on a real
 * module, module selection in an xplane.pb. */
#include "test_common.h"

#include "json_check.h"
#include <jansson.h>
#include <sys/wait.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"

/* Run a command line, capture stdout into a malloc'd string; returns the exit code. */
static int run(const char *args, char **out)
{
	char cmd[16384];
	FILE *p;
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	int st;

	snprintf(cmd, sizeof(cmd), "%s hlo %s 2>/dev/null", MEMPROF, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(buf);
	for (size_t n; (n = fread(buf + len, 1, cap - len - 1, p)) > 0;) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	st = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_json_real_module(void **state)
{
	const char *path = mp_test_shared("hlo/maxtext-h100/module_0003.jit__unnamed_wrapped_function_."
					  "sm_9.0_gpu_after_optimizations.hlo.pb");
	char args[8192], *out;
	json_t *doc;

	(void)state;
	if (!path)
		skip();
	snprintf(args, sizeof(args), "--json --compat=xprof '%s'", path);
	assert_int_equal(run(args, &out), 0);
	doc = mp_test_json_loads(out, "hlo");
	/* golden: peak 1914.6391792297363 MiB at position 34, 100 events, 28 heap objects */
	assert_int_equal(json_integer_value(json_object_get(doc, "peak_heap_bytes")), 2007644692);
	assert_int_equal(json_integer_value(json_object_get(doc, "peak_position")), 34);
	assert_int_equal(json_array_size(json_object_get(doc, "heap_sizes")), 101);
	assert_int_equal(json_array_size(json_object_get(doc, "buffers_by_order")), 28);
	assert_string_equal(json_string_value(json_object_get(doc, "mode")), "xprof");
	json_decref(doc);
	free(out);
}

static void test_exit_codes(void **state)
{
	const char *before = mp_test_shared("hlo/maxtext-h100/module_0000.jit_convert_element_type."
					    "before_optimizations.hlo.pb");
	char args[8192], *out;

	(void)state;
	assert_int_equal(run("--bogus x", NULL), 2);
	assert_int_equal(run("/nonexistent/file.hlo.pb", NULL), 3);
	if (!before)
		skip();
	snprintf(args, sizeof(args), "'%s'", before);
	assert_int_equal(run(args, NULL), 4); /* no buffer assignment: a format error */
	{
		const char *x = mp_test_shared("hlo/tpu-inference/tpu_inference_2.xplane.pb");

		if (!x)
			skip();
		snprintf(args, sizeof(args), "'%s'", x);
		assert_int_equal(run(args, &out), 2); /* several modules: lists them, asks for --module */
		assert_non_null(strstr(out, "jit_broadcast_in_dim"));
		free(out);
		snprintf(args, sizeof(args), "--module jit_f --color 2 '%s'", x);
		assert_int_equal(run(args, &out), 0);
		assert_non_null(strstr(out, "at event 2"));
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_real_module),
		cmocka_unit_test(test_exit_codes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
