/* test_xplane_capture.c - a .memprof capture written with memprof's own
 * writer, exported to XSpace and read back: the same solver figures. */
#include "test_common.h"

#include <memprof/capture.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>
#include <memprof/xplane_export.h>

#include <math.h>

static mp_solver_t *solve(mp_source_t *src)
{
	mp_solver_t *s = mp_solver_new(NULL);
	mp_diag_t diag;

	assert_int_equal(mp_source_rewind(src, &diag), 0);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	return s;
}

static void capture_round_trip(void **state)
{
	char *cap_path = mp_test_tmpfile(".memprof"), *xp_path = mp_test_tmpfile(".xplane.pb");
	mp_writer_options_t wo = {0};
	mp_writer_t *w = NULL;
	mp_source_t *orig = NULL, *back = NULL;
	mp_solver_t *sa, *sb;
	mp_diag_t diag;
	const mp_solver_device_t *a, *b;
	int dev, host, i;
	size_t r;

	(void)state;
	wo.command_line = "test";
	assert_int_equal(mp_writer_open(&w, cap_path, 0, &wo, &diag), 0);
	host = mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	dev = mp_writer_memory(w, "GPU:0", MP_MEMORY_DEVICE, 1 << 30);
	assert_true(host >= 0 && dev >= 0);
	mp_writer_set_context(w, mp_writer_intern(w, "dense/MatMul"), MP_REGION_OUTPUT, mp_writer_intern(w, "float"),
			      mp_writer_intern(w, "[64,64]"));
	for (i = 0; i < 10; i++)
		assert_int_equal(mp_writer_alloc(w, (uint32_t)dev, 0x1000 + (uint64_t)i * 0x4000, 16384, 16384), 0);
	mp_writer_set_context(w, mp_writer_intern(w, "relu"), MP_REGION_TEMP, mp_writer_intern(w, "bf16"), 0);
	assert_int_equal(mp_writer_alloc(w, (uint32_t)dev, 0x90000, 1000, 1024), 0);
	assert_int_equal(mp_writer_alloc(w, (uint32_t)host, 0x55, 77, 0), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(mp_writer_free(w, (uint32_t)dev, 0x1000 + (uint64_t)i * 0x4000), 0);
	assert_int_equal(mp_writer_close(w), 0);

	assert_int_equal(mp_capture_open_source(&orig, cap_path, &diag), 0);
	assert_int_equal(mp_xplane_export(orig, xp_path, NULL, NULL, &diag), 0);
	assert_int_equal(mp_xplane_open_source(&back, (const char *const *)&xp_path, 1, NULL, &diag), 0);
	sa = solve(orig);
	sb = solve(back);
	/* xplane memory ids are sorted by name: GPU:0 first, then host */
	a = mp_solver_find(sa, (uint32_t)dev);
	b = mp_solver_find(sb, 0);
	assert_string_equal(mp_source_memory(back, 0)->name, "GPU:0");
	assert_int_equal(a->peak_bytes, 10 * 16384 + 1024);
	assert_int_equal(b->peak_bytes, a->peak_bytes);
	assert_int_equal(b->peak.time_ns, a->peak.time_ns);
	assert_int_equal(b->capacity_bytes, 1 << 30);
	assert_int_equal(a->capacity_bytes, 1 << 30);
	assert_int_equal(b->peak.free_bytes, a->peak.free_bytes);
	assert_true(isnan(a->peak.fragmentation) == isnan(b->peak.fragmentation));
	assert_int_equal(a->breakdown_count, b->breakdown_count);
	for (r = 0; r < a->breakdown_count; r++) {
		assert_string_equal(mp_source_string(orig, a->breakdown[r].op), mp_source_string(back, b->breakdown[r].op));
		assert_string_equal(mp_source_string(orig, a->breakdown[r].dtype),
				    mp_source_string(back, b->breakdown[r].dtype));
		assert_int_equal(a->breakdown[r].occurrences, b->breakdown[r].occurrences);
		assert_int_equal(a->breakdown[r].allocated_bytes, b->breakdown[r].allocated_bytes);
		assert_int_equal(a->breakdown[r].region, b->breakdown[r].region);
	}
	a = mp_solver_find(sa, (uint32_t)host);
	b = mp_solver_find(sb, 1);
	assert_int_equal(a->peak_bytes, 77);
	assert_int_equal(b->peak_bytes, 77);
	mp_solver_free(sa);
	mp_solver_free(sb);
	mp_source_close(orig);
	mp_source_close(back);
	unlink(cap_path);
	unlink(xp_path);
	free(cap_path);
	free(xp_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(capture_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
