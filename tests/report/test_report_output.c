/* test_report_output.c - the report writers on hand-made streams: every
 * documented JSON field is present with the right value and type, unknowns
 * are null, several inputs nest under "files", CSV quoting, text tables. */
#include "test_common.h"

#include "json_check.h"
#include "ev.h"

#include <memprof/array_source.h>
#include <memprof/report.h>
#include <memprof/solver.h>

#include <math.h>

typedef struct fixture {
	mp_source_t *src;
	mp_solver_t *s;
	mp_report_input_t in;
} fixture_t;

static const char *const strings[] = {"", "matmul", "float", "[2,\"x\"]", "oom,op", "INVALID"};

static void load(fixture_t *f, const mp_event_t *ev, size_t n, const char *path)
{
	mp_memory_info_t mem[2] = {{"GPU_0_bfc", 1 << 20, MP_MEMORY_DEVICE, NULL}, {"host", 0, MP_MEMORY_HOST, NULL}};
	mp_diag_t d;

	assert_int_equal(mp_array_source_new(&f->src, ev, n, strings, 6, mem, 2, path), 0);
	f->s = mp_solver_new(NULL);
	mp_diag_clear(&d);
	assert_int_equal(mp_solver_run(f->s, f->src, &d), 0);
	memset(&f->in, 0, sizeof(f->in));
	f->in.path = path;
	f->in.solver = f->s;
	f->in.source = f->src;
}

static void unload(fixture_t *f)
{
	mp_solver_free(f->s);
	mp_source_close(f->src);
}

/* GPU_0_bfc: declared capacity 1 MiB, region of 64 KiB, two matmul blocks
 * of 1 KiB at +0 and +2 KiB (peak 2048, gaps 1024 + 62464), a failed
 * 100 KiB request by op "oom,op"; host: one block, no regions. */
static size_t sample(mp_event_t *ev)
{
	size_t n = 0;

	ev[n++] = ev_region(0, 1000, 0x100000, 65536);
	ev[n] = ev_alloc(0, 2000, 0x100000, 1000, 1024);
	ev[n].op = 1, ev[n].dtype = 2, ev[n].shape = 3, ev[n].region = MP_REGION_PERSIST;
	n++;
	ev[n] = ev_alloc(0, 3000, 0x100800, 1000, 1024);
	ev[n].op = 1, ev[n].dtype = 2, ev[n].shape = 3, ev[n].region = MP_REGION_PERSIST, ev[n].step = 4;
	n++;
	ev[n++] = ev_failed(0, 4000, 102400, 4);
	ev[n++] = ev_alloc(1, 5000, 0x42, 7, 0);
	return n;
}

static void test_json_contract(void **state)
{
	mp_event_t ev[8];
	size_t n = sample(ev);
	fixture_t f;
	mp_report_options_t o = {0};
	json_t *doc, *dev, *peak, *row, *oom, *host;
	static const char *const dev_keys[] = {"id", "capacity_bytes", "allocations", "deallocations", "failed_allocations",
					       "dropped_events", "lifetime_peak_bytes", "peak", "breakdown", "timeline",
					       "leaks", "oom"};
	static const char *const peak_keys[] = {"bytes", "time_ns", "step", "event_index", "stack_bytes",
						"heap_bytes", "free_bytes", "fragmentation"};
	static const char *const row_keys[] = {"op", "region", "dtype", "shape", "requested_bytes", "allocated_bytes",
					       "occurrences"};
	static const char *const oom_keys[] = {"time_ns", "step", "op", "requested_bytes", "heap_bytes", "free_bytes",
					       "largest_free_chunk_bytes", "fragmentation", "top"};

	(void)state;
	load(&f, ev, n, "a.memprof");
	o.sections = MP_REPORT_PEAK | MP_REPORT_TIMELINE | MP_REPORT_LEAKS | MP_REPORT_OOM;
	doc = mp_report_json_input(&f.in, &o);
	mp_test_json_valid(doc, "report", NULL);
	assert_string_equal(json_string_value(json_object_get(doc, "file")), "a.memprof");
	assert_int_equal(json_array_size(json_object_get(doc, "devices")), 2);
	dev = json_array_get(json_object_get(doc, "devices"), 0);
	for (size_t i = 0; i < sizeof(dev_keys) / sizeof(*dev_keys); i++)
		assert_non_null(json_object_get(dev, dev_keys[i]));
	peak = json_object_get(dev, "peak");
	for (size_t i = 0; i < sizeof(peak_keys) / sizeof(*peak_keys); i++)
		assert_non_null(json_object_get(peak, peak_keys[i]));
	assert_int_equal(json_integer_value(json_object_get(dev, "capacity_bytes")), 1 << 20);
	assert_int_equal(json_integer_value(json_object_get(peak, "bytes")), 2048);
	assert_int_equal(json_integer_value(json_object_get(peak, "time_ns")), 3000);
	assert_int_equal(json_integer_value(json_object_get(peak, "step")), 4);
	assert_int_equal(json_integer_value(json_object_get(peak, "event_index")), 2);
	assert_int_equal(json_integer_value(json_object_get(peak, "free_bytes")), (1 << 20) - 2048);
	assert_int_equal(json_integer_value(json_object_get(peak, "largest_free_chunk_bytes")), 62464);
	assert_int_equal(json_integer_value(json_object_get(peak, "region_free_bytes")), 63488);
	assert_true(json_real_value(json_object_get(peak, "fragmentation")) == 1.0 - 62464.0 / 63488.0);
	row = json_array_get(json_object_get(dev, "breakdown"), 0);
	for (size_t i = 0; i < sizeof(row_keys) / sizeof(*row_keys); i++)
		assert_non_null(json_object_get(row, row_keys[i]));
	assert_string_equal(json_string_value(json_object_get(row, "op")), "matmul");
	assert_string_equal(json_string_value(json_object_get(row, "region")), "persist");
	assert_string_equal(json_string_value(json_object_get(row, "dtype")), "float");
	assert_string_equal(json_string_value(json_object_get(row, "shape")), "[2,\"x\"]");
	assert_int_equal(json_integer_value(json_object_get(row, "occurrences")), 2);
	assert_int_equal(json_integer_value(json_object_get(row, "total_bytes")), 2048);
	oom = json_array_get(json_object_get(dev, "oom"), 0);
	for (size_t i = 0; i < sizeof(oom_keys) / sizeof(*oom_keys); i++)
		assert_non_null(json_object_get(oom, oom_keys[i]));
	assert_string_equal(json_string_value(json_object_get(oom, "op")), "oom,op");
	assert_int_equal(json_integer_value(json_object_get(oom, "largest_free_chunk_bytes")), 62464);
	/* 100 KiB > the 62464 B free in the region: full, although the declared
	 * capacity has room (the pool has not grown) */
	assert_string_equal(json_string_value(json_object_get(oom, "cause")), "full");
	assert_int_equal(json_array_size(json_object_get(dev, "timeline")), 4);
	host = json_array_get(json_object_get(doc, "devices"), 1);
	assert_true(json_is_null(json_object_get(host, "capacity_bytes")));
	assert_true(json_is_null(json_object_get(json_object_get(host, "peak"), "fragmentation")));
	assert_true(json_is_null(json_object_get(json_object_get(host, "peak"), "free_bytes")));
	assert_true(json_is_null(json_object_get(json_object_get(host, "peak"), "step")) == 0); /* step 0 */
	assert_string_equal(json_string_value(json_object_get(json_object_get(host, "peak"), "fragmentation_unknown_reason")),
			    "no regions declared for this memory id");
	assert_int_equal(json_integer_value(json_object_get(host, "leak_bytes")), 7);
	json_decref(doc);

	/* --breakdown alone: no timeline / leaks / oom keys */
	o.sections = MP_REPORT_BREAKDOWN;
	doc = mp_report_json_input(&f.in, &o);
	mp_test_json_valid(doc, "report", NULL);
	dev = json_array_get(json_object_get(doc, "devices"), 0);
	assert_non_null(json_object_get(dev, "breakdown"));
	assert_null(json_object_get(dev, "timeline"));
	assert_null(json_object_get(dev, "oom"));
	json_decref(doc);
	unload(&f);
}

static char *capture_output(int (*fn)(FILE *, const mp_report_input_t *, size_t, const mp_report_options_t *),
			    const mp_report_input_t *in, size_t n, const mp_report_options_t *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(fn(m, in, n, o), 0);
	fclose(m);
	return buf;
}

static void test_several_files_and_csv(void **state)
{
	mp_event_t ev[8];
	size_t n = sample(ev);
	fixture_t f[2];
	mp_report_input_t in[2];
	mp_report_options_t o = {0};
	json_t *doc;
	char *out;

	(void)state;
	load(&f[0], ev, n, "a.memprof");
	load(&f[1], ev, 2, "b,c.memprof");
	in[0] = f[0].in;
	in[1] = f[1].in;
	out = capture_output(mp_report_json, in, 2, &o);
	doc = mp_test_json_loads(out, "report");
	assert_int_equal(json_array_size(json_object_get(doc, "files")), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "files"), 1), "file")),
			    "b,c.memprof");
	json_decref(doc);
	free(out);

	o.sections = MP_REPORT_OOM;
	out = capture_output(mp_report_csv, in, 2, &o);
	assert_non_null(strstr(out, "section,file,device,oom,time_ns,step,op,requested_bytes,heap_bytes,free_bytes,"
				    "largest_free_chunk_bytes,fragmentation,cause\n"));
	assert_non_null(strstr(out, "oom,a.memprof,0,0,4000,0,\"oom,op\",102400,2048,1046528,62464,"));
	assert_non_null(strstr(out, "oom_top,a.memprof,0,0,matmul,persist,float,\"[2,\"\"x\"\"]\",1000,1024,2,2048,0,\n"));
	free(out);

	o.sections = MP_REPORT_PEAK;
	o.top = 1;
	out = capture_output(mp_report_text, in, 2, &o);
	assert_non_null(strstr(out, "a.memprof: 5 events, capture ended cleanly\n"));
	assert_non_null(strstr(out, "memory 0 'GPU_0_bfc' (device, tracked addresses)"));
	assert_non_null(strstr(out, "peak in use       2048 B (2.00 KiB) at 0.003000 ms, step 4, event 2"));
	assert_non_null(strstr(out, "fragmentation   1.61% (largest free chunk 62464 B (61.00 KiB) of 63488 B (62.00 KiB) free in regions)"));
	assert_non_null(strstr(out, "fragmentation   n/a (no regions declared for this memory id)"));
	assert_non_null(strstr(out, "b,c.memprof: 2 events"));
	free(out);
	unload(&f[0]);
	unload(&f[1]);
}

/* A dtype "INVALID" (TensorFlow's DataType 0: JAX's allocations) is no
 * dtype: the text shows "-" as for none; the JSON keeps the source's word. */
static void test_invalid_dtype(void **state)
{
	mp_event_t ev[8];
	size_t n = sample(ev);
	fixture_t f;
	mp_report_options_t o = {0};
	char *out;

	(void)state;
	ev[1].dtype = ev[2].dtype = 5;
	load(&f, ev, n, "jax.xplane.pb");
	o.sections = MP_REPORT_PEAK;
	out = capture_output(mp_report_text, &f.in, 1, &o);
	assert_null(strstr(out, "INVALID"));
	assert_non_null(strstr(out, " persist  -  "));
	free(out);
	out = capture_output(mp_report_json, &f.in, 1, &o);
	assert_non_null(strstr(out, "\"dtype\": \"INVALID\""));
	free(out);
	unload(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_contract),
		cmocka_unit_test(test_several_files_and_csv),
		cmocka_unit_test(test_invalid_dtype),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
