/* test_gpu_report.c - reserved vs allocated: a GPU capture as the backend
 * and a framework's annotations leave it (segments from CUPTI as regions of
 * "GPU:0", tensors annotated inside them, a failed allocation), solved and
 * reported. Every figure is worked out by hand below. */
#include "test_common.h"

#include "json_check.h"

#include <memprof/capture.h>
#include <memprof/solver.h>

#include <jansson.h>
#include <math.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define A 0x10000000ull /* segment A: 20 MiB */
#define B 0x20000000ull /* segment B: 2 MiB */

static char *capture;

/*  t   event                          reserved  heap
 * 100  segment A (20 MiB)               20 MiB     0
 * 200  segment B (2 MiB)                22 MiB     0   <- reserved peak
 * 300  tensor A+0      8 MiB            22 MiB   8 MiB
 * 400  tensor A+8MiB   4 MiB            22 MiB  12 MiB <- in-use peak
 * 500  free A+0                         22 MiB   4 MiB
 * 600  tensor B+0      1 MiB            22 MiB   5 MiB
 * 700  cudaMalloc(10 MiB) fails: free inside the segments 17 MiB (A: 8 + 8,
 *      B: 1), largest chunk 8 MiB: fragmentation 1 - 8/17, cause fragmented;
 *      capacity 80 GiB - reserved 22 MiB not reserved.
 */
static int write_capture(void **state)
{
	mp_writer_t *w;
	mp_writer_lane_t *l;
	mp_diag_t d;
	int gpu;

	(void)state;
	capture = mp_test_tmpfile(".memprof");
	assert_int_equal(mp_writer_open(&w, capture, 0, NULL, &d), 0);
	gpu = mp_writer_memory(w, "GPU:0", MP_MEMORY_DEVICE, 80 * GiB);
	assert_true(gpu >= 0);
	assert_int_equal(mp_writer_lane_open(w, &l), 0);
	assert_int_equal(mp_writer_lane_event(l, MP_EV_REGION_ADD, (uint32_t)gpu, 100, A, 20 * MiB), 0);
	assert_int_equal(mp_writer_lane_event(l, MP_EV_REGION_ADD, (uint32_t)gpu, 200, B, 2 * MiB), 0);
	assert_int_equal(mp_writer_lane_event(l, MP_EV_ALLOC, (uint32_t)gpu, 300, A, 8 * MiB), 0);
	assert_int_equal(mp_writer_lane_event(l, MP_EV_ALLOC, (uint32_t)gpu, 400, A + 8 * MiB, 4 * MiB), 0);
	assert_int_equal(mp_writer_lane_event(l, MP_EV_FREE, (uint32_t)gpu, 500, A, 0), 0);
	assert_int_equal(mp_writer_lane_event(l, MP_EV_ALLOC, (uint32_t)gpu, 600, B, 1 * MiB), 0);
	assert_int_equal(mp_writer_lane_event(l, MP_EV_ALLOC_FAILED, (uint32_t)gpu, 700, 0, 10 * MiB), 0);
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

static void test_solver_two_levels(void **state)
{
	mp_solver_options_t o;
	mp_solver_t *s;
	mp_source_t *src;
	const mp_solver_device_t *dev = NULL;
	mp_diag_t d;
	size_t i;

	(void)state;
	mp_solver_options_init(&o);
	assert_non_null(s = mp_solver_new(&o));
	assert_int_equal(mp_capture_open_source(&src, capture, &d), 0);
	assert_int_equal(mp_solver_run(s, src, &d), 0);
	for (i = 0; i < mp_solver_device_count(s); i++)
		if (!strcmp(mp_source_memory(src, mp_solver_device(s, i)->id)->name, "GPU:0"))
			dev = mp_solver_device(s, i);
	assert_non_null(dev);
	assert_int_equal(dev->has_reserved_peak, 1);
	assert_int_equal(dev->reserved_peak_bytes, 22 * MiB);
	assert_int_equal(dev->reserved_peak_time_ns, 200);
	assert_int_equal(dev->peak_bytes, 12 * MiB);
	assert_int_equal(dev->peak.time_ns, 400);
	assert_int_equal(dev->peak.reserved_bytes, 22 * MiB);
	assert_int_equal(dev->peak.has_reserved, 1);
	assert_int_equal(dev->capacity_bytes, 80 * GiB);
	assert_int_equal(dev->oom_count, 1);
	assert_int_equal(dev->oom[0].requested_bytes, 10 * MiB);
	assert_int_equal(dev->oom[0].at.heap_bytes, 5 * MiB);
	assert_int_equal(dev->oom[0].at.reserved_bytes, 22 * MiB);
	assert_int_equal(dev->oom[0].at.region_free_bytes, 17 * MiB);
	assert_int_equal(dev->oom[0].at.largest_free_bytes, 8 * MiB);
	assert_true(fabs(dev->oom[0].at.fragmentation - (1.0 - 8.0 / 17.0)) < 1e-12);
	assert_string_equal(mp_solver_oom_cause(&dev->oom[0]), "fragmented");
	mp_source_close(src);
	mp_solver_free(s);
}

/* Run memprof report ARGS; stdout into a malloc'ed string. */
static char *report(const char *args)
{
	char cmd[4096];
	FILE *p;
	size_t cap = 1 << 16, n = 0;
	char *out = malloc(cap);
	int c;

	snprintf(cmd, sizeof(cmd), "%s report %s %s", MEMPROF, args, capture);
	assert_non_null(p = popen(cmd, "r"));
	while ((c = fgetc(p)) != EOF) {
		if (n + 1 >= cap)
			out = realloc(out, cap *= 2);
		out[n++] = (char)c;
	}
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	return out;
}

static void test_report_text(void **state)
{
	char *t = report("--peak --oom");

	(void)state;
	assert_non_null(strstr(t, "memory 0 'GPU:0' (device"));
	assert_non_null(strstr(t, "  peak in use       12582912 B (12.00 MiB) at 0.000400 ms"));
	assert_non_null(strstr(t, "    reserved        23068672 B (22.00 MiB) (live regions)\n"));
	assert_non_null(strstr(t, "  reserved peak     23068672 B (22.00 MiB) at 0.000200 ms"));
	assert_non_null(strstr(t, "  capacity          85899345920 B (80.00 GiB)\n"));
	assert_non_null(strstr(t, "asked 10485760 B (10.00 MiB)"));
	assert_non_null(strstr(t, "largest free chunk 8388608 B (8.00 MiB), fragmentation 52.94%"));
	assert_non_null(strstr(t, "     reserved 23068672 B (22.00 MiB), not reserved (capacity - reserved) "
				  "85876277248 B (79.98 GiB)\n"));
	assert_non_null(strstr(t, "cause: fragmentation"));
	free(t);
}

static void test_report_json(void **state)
{
	char *t = report("--peak --oom --timeline --json");
	json_t *doc = mp_test_json_loads(t, "report"), *dev, *rp, *oom;

	(void)state;
	dev = json_array_get(json_object_get(doc, "devices"), 0);
	assert_string_equal(json_string_value(json_object_get(dev, "name")), "GPU:0");
	rp = json_object_get(dev, "reserved_peak");
	assert_int_equal(json_integer_value(json_object_get(rp, "bytes")), 22 * MiB);
	assert_int_equal(json_integer_value(json_object_get(rp, "time_ns")), 200);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(dev, "peak"), "reserved_bytes")), 22 * MiB);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(dev, "peak"), "heap_bytes")), 12 * MiB);
	oom = json_array_get(json_object_get(dev, "oom"), 0);
	assert_int_equal(json_integer_value(json_object_get(oom, "reserved_bytes")), 22 * MiB);
	assert_int_equal(json_integer_value(json_object_get(oom, "heap_bytes")), 5 * MiB);
	assert_string_equal(json_string_value(json_object_get(oom, "cause")), "fragmented");
	json_decref(doc);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_solver_two_levels),
		cmocka_unit_test(test_report_text),
		cmocka_unit_test(test_report_json),
	};
	return cmocka_run_group_tests(tests, write_capture, remove_capture);
}
