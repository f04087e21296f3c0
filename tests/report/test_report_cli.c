/* test_report_cli.c - `memprof report` end to end: a capture written with the
 * capture writer (figures worked out by hand), its JSON/CSV/text output, and
 * the documented exit codes with one-line errors. */
#include "test_common.h"

#include "json_check.h"
#include <memprof/capture.h>

#include <jansson.h>
#include <math.h>
#include <sys/wait.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define MIB 1048576ull
#define BASE 0x10000000ull

static char *capture;

/* pool: region 1 MiB; A [0,4K) B [8K,12K) C [1M-4K,1M) (peak 12288, gaps
 * 4096 + 1032192); a 2 MiB request fails there; then A is freed.
 * host: no regions, one 100-byte block that is never freed. */
static int write_capture(void **state)
{
	mp_writer_t *w;
	mp_diag_t d;
	uint32_t mm, cv, fl, sh;
	int pool, host;

	(void)state;
	capture = mp_test_tmpfile(".memprof");
	mp_diag_clear(&d);
	assert_int_equal(mp_writer_open(&w, capture, 0, NULL, &d), 0);
	pool = mp_writer_memory(w, "pool", MP_MEMORY_DEVICE, 0);
	host = mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	assert_true(pool >= 0 && host >= 0);
	mm = mp_writer_intern(w, "matmul");
	cv = mp_writer_intern(w, "conv");
	fl = mp_writer_intern(w, "float");
	sh = mp_writer_intern(w, "[32,32]");
	assert_int_equal(mp_writer_step(w, 0), 0);
	assert_int_equal(mp_writer_region_add(w, (uint32_t)pool, BASE, MIB), 0);
	mp_writer_set_context(w, mm, MP_REGION_TEMP, fl, sh);
	assert_int_equal(mp_writer_alloc(w, (uint32_t)pool, BASE, 4000, 4096), 0);
	assert_int_equal(mp_writer_alloc(w, (uint32_t)pool, BASE + 8192, 4000, 4096), 0);
	assert_int_equal(mp_writer_step(w, 1), 0);
	mp_writer_set_context(w, cv, MP_REGION_OUTPUT, fl, 0);
	assert_int_equal(mp_writer_alloc(w, (uint32_t)pool, BASE + MIB - 4096, 4096, 4096), 0);
	assert_int_equal(mp_writer_alloc_failed(w, (uint32_t)pool, 2 * MIB), 0);
	assert_int_equal(mp_writer_free(w, (uint32_t)pool, BASE), 0);
	mp_writer_set_context(w, 0, MP_REGION_UNKNOWN, 0, 0);
	assert_int_equal(mp_writer_alloc(w, (uint32_t)host, 0x5000, 100, 100), 0);
	assert_int_equal(mp_writer_close(w), 0);
	return 0;
}

static int remove_capture(void **state)
{
	(void)state;
	unlink(capture);
	free(capture);
	return 0;
}

/* Run memprof with args; returns the exit code, stdout in *out (caller
 * frees), the number of stderr lines in *errlines. */
static int run(const char *args, char **out, int *errlines)
{
	char cmd[MP_TEST_CMD_MAX], *err;
	int st;

	snprintf(cmd, sizeof(cmd), "%s report %s", MEMPROF, args);
	st = mp_test_capture(cmd, out, &err);
	*errlines = mp_test_lines(err);
	free(err);
	return st;
}

static json_int_t jint(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_non_null(v);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static void test_json_figures(void **state)
{
	char args[1024], *out;
	int errl;
	json_t *doc, *devs, *pool, *host, *peak, *bd, *oom, *o;
	json_int_t sum = 0;

	(void)state;
	snprintf(args, sizeof(args), "--peak --leaks --oom --timeline --json '%s'", capture);
	assert_int_equal(run(args, &out, &errl), 0);
	doc = mp_test_json_loads(out, "report");
	/* pass 2 stops at the peak; the end status is still that of pass 1 */
	assert_string_equal(json_string_value(json_object_get(doc, "end")), "clean");
	devs = json_object_get(doc, "devices");
	assert_int_equal(json_array_size(devs), 2);
	pool = json_array_get(devs, 0);
	host = json_array_get(devs, 1);
	assert_string_equal(json_string_value(json_object_get(pool, "name")), "pool");
	assert_int_equal(jint(pool, "id"), 0);
	assert_int_equal(jint(pool, "capacity_bytes"), MIB);
	assert_int_equal(jint(pool, "allocations"), 3);
	assert_int_equal(jint(pool, "deallocations"), 1);
	assert_int_equal(jint(pool, "failed_allocations"), 1);
	assert_int_equal(jint(pool, "dropped_events"), 0);
	assert_int_equal(jint(pool, "lifetime_peak_bytes"), 12288);
	peak = json_object_get(pool, "peak");
	assert_int_equal(jint(peak, "bytes"), 12288);
	assert_int_equal(jint(peak, "step"), 1);
	assert_int_equal(jint(peak, "stack_bytes"), 0);
	assert_int_equal(jint(peak, "heap_bytes"), 12288);
	assert_int_equal(jint(peak, "free_bytes"), MIB - 12288);
	assert_true(json_is_integer(json_object_get(peak, "time_ns")));
	assert_true(json_is_integer(json_object_get(peak, "event_index")));
	assert_true(fabs(json_real_value(json_object_get(peak, "fragmentation")) - 4096.0 / 1036288.0) < 1e-15);
	bd = json_object_get(pool, "breakdown");
	assert_int_equal(json_array_size(bd), 2);
	o = json_array_get(bd, 0);
	assert_string_equal(json_string_value(json_object_get(o, "op")), "matmul");
	assert_string_equal(json_string_value(json_object_get(o, "region")), "temp");
	assert_string_equal(json_string_value(json_object_get(o, "dtype")), "float");
	assert_string_equal(json_string_value(json_object_get(o, "shape")), "[32,32]");
	assert_int_equal(jint(o, "requested_bytes"), 4000);
	assert_int_equal(jint(o, "allocated_bytes"), 4096);
	assert_int_equal(jint(o, "occurrences"), 2);
	for (size_t i = 0; i < json_array_size(bd); i++)
		sum += jint(json_array_get(bd, i), "total_bytes");
	assert_int_equal(sum, 12288);
	/* leaks: B and C */
	assert_int_equal(json_array_size(json_object_get(pool, "leaks")), 2);
	assert_int_equal(jint(pool, "leak_bytes"), 8192);
	/* the failed 2 MiB request: memory full, not fragmentation */
	oom = json_array_get(json_object_get(pool, "oom"), 0);
	assert_non_null(oom);
	assert_string_equal(json_string_value(json_object_get(oom, "op")), "conv");
	assert_int_equal(jint(oom, "requested_bytes"), 2 * MIB);
	assert_int_equal(jint(oom, "heap_bytes"), 12288);
	assert_int_equal(jint(oom, "free_bytes"), MIB - 12288);
	assert_int_equal(jint(oom, "largest_free_chunk_bytes"), 1032192);
	assert_string_equal(json_string_value(json_object_get(oom, "cause")), "full");
	assert_true(json_array_size(json_object_get(oom, "top")) == 2);
	/* timeline: region, 3 allocs, failed, free = 6 points */
	assert_int_equal(json_array_size(json_object_get(pool, "timeline")), 6);
	/* host: no regions -> fragmentation null, capacity null */
	assert_true(json_is_null(json_object_get(host, "capacity_bytes")));
	assert_true(json_is_null(json_object_get(json_object_get(host, "peak"), "fragmentation")));
	assert_int_equal(jint(json_object_get(host, "peak"), "bytes"), 100);
	json_decref(doc);
	free(out);
}

static void test_device_steps_top(void **state)
{
	char args[1024], *out;
	int errl;
	json_t *doc, *devs, *bd;

	(void)state;
	/* --device by name, --steps 0:0 (before C), --top 1 */
	snprintf(args, sizeof(args), "--breakdown --device pool --steps 0:0 --top 1 --json '%s'", capture);
	assert_int_equal(run(args, &out, &errl), 0);
	doc = mp_test_json_loads(out, "report");
	devs = json_object_get(doc, "devices");
	assert_int_equal(json_array_size(devs), 1);
	assert_int_equal(jint(json_object_get(json_array_get(devs, 0), "peak"), "bytes"), 8192);
	bd = json_object_get(json_array_get(devs, 0), "breakdown");
	assert_int_equal(json_array_size(bd), 1);
	assert_int_equal(jint(json_array_get(devs, 0), "breakdown_omitted_rows"), 0);
	assert_int_equal(jint(json_object_get(doc, "steps"), "first"), 0);
	json_decref(doc);
	free(out);

	snprintf(args, sizeof(args), "--device 1 --csv '%s'", capture);
	assert_int_equal(run(args, &out, &errl), 0);
	assert_non_null(strstr(out, "section,file,device,name,model,capacity_bytes,"));
	assert_non_null(strstr(out, ",1,host,addresses,,1,0,0,0,0,100,100,"));
	assert_null(strstr(out, ",0,pool,"));
	free(out);

	/* Text: the default, highest peak first, exact bytes and a unit. */
	snprintf(args, sizeof(args), "--top 1 '%s'", capture);
	assert_int_equal(run(args, &out, &errl), 0);
	assert_non_null(strstr(out, "peak in use       12288 B (12.00 KiB)"));
	assert_non_null(strstr(out, "... 1 more rows, 4096 B (4.00 KiB)"));
	assert_true(strstr(out, "memory 0 'pool'") < strstr(out, "memory 1 'host'"));
	free(out);
}

static void test_errors(void **state)
{
	char args[1024], *out, *junk = mp_test_tmpfile(".memprof");
	FILE *f = fopen(junk, "w");
	int errl;

	(void)state;
	fputs("this is not a capture file, just some text\n", f);
	fclose(f);
	assert_int_equal(run("/nonexistent/run.memprof", &out, &errl), 3);
	assert_int_equal(errl, 1);
	free(out);
	snprintf(args, sizeof(args), "'%s'", junk);
	assert_int_equal(run(args, &out, &errl), 4);
	assert_int_equal(errl, 1);
	free(out);
	snprintf(args, sizeof(args), "--device GPU_9 '%s'", capture);
	assert_int_equal(run(args, &out, &errl), 2);
	assert_int_equal(errl, 1);
	free(out);
	snprintf(args, sizeof(args), "--device 7 '%s'", capture);
	assert_int_equal(run(args, &out, &errl), 2);
	free(out);
	snprintf(args, sizeof(args), "--steps 5:2 '%s'", capture);
	assert_int_equal(run(args, &out, &errl), 2);
	assert_int_equal(errl, 1);
	free(out);
	snprintf(args, sizeof(args), "--steps x '%s'", capture);
	assert_int_equal(run(args, &out, &errl), 2);
	free(out);
	assert_int_equal(run("", &out, &errl), 2);
	free(out);
	unlink(junk);
	free(junk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_figures),
		cmocka_unit_test(test_device_steps_top),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, write_capture, remove_capture);
}
