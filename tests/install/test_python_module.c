/* test_python_module.c - the memprof Python module (python/memprof, from
 * the build tree: PYTHONPATH=<build>/python) recorded, not recorded, and
 * writing on its own through libmemprof.so. The figures are train.py's,
 * worked out in its docstring from what CPython asks malloc for. */
#include "test_common.h"

#include "install_run.h"

#include <jansson.h>

static char dir[64];

static int make_dir(void **state)
{
	(void)state;
	if (!IT_HAVE_PYTHON) {
		fprintf(stderr, "skip: no python3 was found when this build was configured\n");
		return 0;
	}
	return it_mkdir(dir);
}

static int remove_dir(void **state)
{
	(void)state;
	if (IT_HAVE_PYTHON)
		it_rmdir(dir);
	return 0;
}

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define PYENV "PYTHONPATH='" MEMPROF_BINARY_DIR "/python' PYTHONDONTWRITEBYTECODE=1"
#define TRAIN MEMPROF_SOURCE_DIR "/tests/install/train.py"
#define TRAINED "trained: 3000001 + 15000009 + 7000005 bytes\n"

/* Under `memprof record`: the buffers carry their scope's op, region,
 * dtype and shape, and steps place the peak. */
static void test_recorded(void **state)
{
	char cap[128], *out;
	json_t *doc;
	const json_t *host, *peak;

	(void)state;
	if (!IT_HAVE_PYTHON)
		skip();
	snprintf(cap, sizeof(cap), "%s/train.memprof", dir);
	out = it_sh_out(dir, PYENV " PYTHONMALLOC=malloc '" MEMPROF "' record -o '%s' -- '%s' '" TRAIN "'", cap,
			IT_PYTHON);
	assert_string_equal(out, TRAINED);
	free(out);

	doc = it_report(dir, MEMPROF, "", cap);
	host = it_device(doc, "host");
	peak = json_object_get(host, "peak");
	assert_int_equal(it_int(peak, "step"), 2);
	/* bytearray(N): N + 1 bytes for the data, 56 for the object */
	it_row_is(it_row(host, "breakdown", "embed", 3000002), "persist", "float32", "[1000,64]", 1);
	it_row_is(it_row(host, "breakdown", "embed", 56), "persist", "float32", "[1000,64]", 1);
	it_row_is(it_row(host, "breakdown", "attention", 5000004), "temp", "float32", "[8,2048]", 3);
	it_row_is(it_row(host, "breakdown", "attention", 56), "temp", "float32", "[8,2048]", 3);
	assert_null(it_row(host, "breakdown", "mlp", 7000006)); /* not yet allocated */
	/* the peak holds at least these 18 MB, and the interpreter's own heap */
	assert_true(it_int(peak, "bytes") > 3000002 + 3 * 5000004);
	json_decref(doc);

	doc = it_report(dir, MEMPROF, "--steps 3:3", cap);
	host = it_device(doc, "host");
	assert_int_equal(it_int(json_object_get(host, "peak"), "step"), 3);
	it_row_is(it_row(host, "breakdown", "mlp", 7000006), "unknown", "", "", 1);
	it_row_is(it_row(host, "breakdown", "mlp", 56), "unknown", "", "", 1);
	it_row_is(it_row(host, "breakdown", "embed", 3000002), "persist", "float32", "[1000,64]", 1);
	assert_null(it_row(host, "breakdown", "attention", 5000004)); /* freed in step 2 */
	json_decref(doc);

	out = it_sh_out(dir, "'" MEMPROF "' dump '%s' | grep -c ' step=3 mark label=\"done\"'", cap);
	assert_string_equal(out, "1\n");
	free(out);
}

/* Without memprof: the same script, the same output; and the module
 * loads nothing and gives back shared no-op objects (noop_check.py). */
static void test_not_recorded(void **state)
{
	char *out;

	(void)state;
	if (!IT_HAVE_PYTHON)
		skip();
	out = it_sh_out(dir, "env -u MEMPROF_OUTPUT -u LD_PRELOAD " PYENV " '%s' '" TRAIN "'", IT_PYTHON);
	assert_string_equal(out, TRAINED);
	free(out);
	out = it_sh_out(dir, "env -u MEMPROF_OUTPUT -u LD_PRELOAD " PYENV " '%s' '" MEMPROF_SOURCE_DIR
			     "/tests/install/noop_check.py'",
			IT_PYTHON);
	assert_string_equal(out, "ok\n");
	free(out);
	/* the source tree's copy too (no _location.py there) */
	out = it_sh_out(dir, "env -u MEMPROF_OUTPUT -u LD_PRELOAD PYTHONDONTWRITEBYTECODE=1 PYTHONPATH='"
			     MEMPROF_SOURCE_DIR "/python' '%s' '" MEMPROF_SOURCE_DIR "/tests/install/noop_check.py'",
			IT_PYTHON);
	assert_string_equal(out, "ok\n");
	free(out);
}

/* MEMPROF_OUTPUT without `memprof record`: libmemprof.so (found through
 * the build tree's _location.py) writes the steps and marks. */
static void test_standalone_output(void **state)
{
	char cap[128], *out;

	(void)state;
	if (!IT_HAVE_PYTHON)
		skip();
	snprintf(cap, sizeof(cap), "%s/alone.memprof", dir);
	out = it_sh_out(dir,
			"env -u LD_PRELOAD MEMPROF_OUTPUT='%s' " PYENV " '%s' -c 'import memprof\n"
			"memprof.step(5)\nmemprof.mark(\"hello\")\nprint(memprof.enabled(), memprof._lib._name)'",
			cap, IT_PYTHON);
	assert_string_equal(out, "True " MEMPROF_BINARY_DIR "/allocator_hooks/libmemprof.so.0\n");
	free(out);
	out = it_sh_out(dir, "'" MEMPROF "' dump '%s' | grep -c ' step=5 mark label=\"hello\"'", cap);
	assert_string_equal(out, "1\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded),
		cmocka_unit_test(test_not_recorded),
		cmocka_unit_test(test_standalone_output),
	};
	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
