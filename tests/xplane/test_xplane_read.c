/* test_xplane_read.c - the XSpace reader on fixtures built by memprof's own
 * XSpace builder: what each event becomes (string encodings and slots, stat
 * slots, steps, lines and clocks, hosts, dtype names, ordinal memory ids)
 * and the stream's order over many lines. Whole inputs (xprof's unit case
 * through the compat table, damaged files, log directories):
 * test_xplane_inputs.c. */
#include "test_common.h"

#include "xplane_fixture.h"

#define A FX_A
#define D FX_D

/* ref_value and str_value strings, raw and gzip files: the same stream. */
static void encodings_agree(void **state)
{
	fx_collected_t a, b;
	int ref, gz;
	size_t i;

	(void)state;
	for (ref = 0; ref < 2; ref++) {
		for (gz = 0; gz < 2; gz++) {
			char *path = mp_test_tmpfile(gz ? ".xplane.pb.gz" : ".xplane.pb");
			mp_source_t *src;

			fx_write(path, xprof_case, 3, NULL, NULL, 1, ref, gz);
			src = fx_open1(path, 0);
			fx_collect(src, ref == 0 && gz == 0 ? &a : &b);
			mp_source_close(src);
			unlink(path);
			free(path);
			if (ref == 0 && gz == 0)
				continue;
			assert_int_equal(a.n, b.n);
			for (i = 0; i < a.n; i++) {
				assert_int_equal(a.ev[i].time_ns, b.ev[i].time_ns);
				assert_int_equal(a.ev[i].address, b.ev[i].address);
				assert_string_equal(a.op[i], b.op[i]);
				assert_string_equal(a.shape[i], b.shape[i]);
				assert_string_equal(a.dtype[i], b.dtype[i]);
				assert_int_equal(a.ev[i].region, b.ev[i].region);
			}
		}
	}
}

/* Steps: group_id when present; xprof's UpdateStepId otherwise (per
 * allocator, time order: the last known step + 1, 0 before any). */
static void steps_without_group_id(void **state)
{
	static const fx_mem_t ev[] = {
		{A, 1000, "GPU_0_bfc", 0, 256, 0, 256, 4, 256, 1, 0, NULL, NULL, NULL, -1, -1},
		{A, 2000, "gpu_host_bfc", 0, 256, 0, 256, 4, 256, 1, 0, NULL, NULL, NULL, -1, 7},
		{A, 3000, "GPU_0_bfc", 0, 512, 0, 512, 4, 256, 2, 0, NULL, NULL, NULL, -1, 5},
		{A, 4000, "GPU_0_bfc", 0, 768, 0, 768, 4, 256, 3, 0, NULL, NULL, NULL, -1, -1},
		{A, 5000, "gpu_host_bfc", 0, 512, 0, 512, 4, 256, 2, 0, NULL, NULL, NULL, -1, -1},
		{A, 6000, "GPU_0_bfc", 0, 1024, 0, 1024, 4, 256, 4, 0, NULL, NULL, NULL, -1, 2},
		{A, 7000, "GPU_0_bfc", 0, 1280, 0, 1280, 4, 256, 5, 0, NULL, NULL, NULL, -1, -1},
	};
	static const int64_t want[] = {0, 7, 5, 6, 8, 2, 3};
	char *path = mp_test_tmpfile(".xplane.pb");
	mp_source_t *src;
	fx_collected_t c;
	size_t i;

	(void)state;
	fx_write(path, ev, 7, NULL, NULL, 1, 1, 0);
	src = fx_open1(path, 0);
	assert_int_equal(mp_source_memory_count(src), 2);
	assert_string_equal(mp_source_memory(src, 0)->name, "GPU_0_bfc");
	assert_string_equal(mp_source_memory(src, 1)->name, "gpu_host_bfc");
	assert_int_equal(mp_source_memory(src, 1)->kind, MP_MEMORY_PINNED_HOST);
	fx_collect(src, &c);
	assert_int_equal(c.n, 7);
	for (i = 0; i < 7; i++)
		assert_int_equal(c.ev[i].step, want[i]);
	/* a rewind starts the step state again */
	assert_int_equal(mp_source_rewind(src, NULL), 0);
	fx_collect(src, &c);
	assert_int_equal(c.ev[0].step, 0);
	assert_int_equal(c.ev[6].step, 3);
	mp_source_close(src);
	unlink(path);
	free(path);
}

/* Lines: events of several lines come out in time order, ties in stored
 * order; line start times are added (xprof ignores them: xprof_clock). */
static void lines_and_clocks(void **state)
{
	static const fx_mem_t ev[] = {
		{A, 5000, "GPU_0_bfc", 0, 256, 0, 256, 4, 256, 1, 0, "a", NULL, NULL, -1, -1},
		{A, 9000, "GPU_0_bfc", 0, 512, 0, 512, 4, 256, 2, 0, "b", NULL, NULL, -1, -1},
		{A, 1000, "GPU_0_bfc", 0, 768, 0, 768, 4, 256, 3, 0, "c", NULL, NULL, -1, -1},
		{A, 4000, "GPU_0_bfc", 0, 1024, 0, 1024, 4, 256, 4, 0, "d", NULL, NULL, -1, -1},
	};
	static const int lines[] = {0, 0, 1, 1};
	static const int64_t ts_same[] = {1000, 1000}, ts_diff[] = {1000, 1005};
	char *path = mp_test_tmpfile(".xplane.pb");
	mp_source_t *src;
	fx_collected_t c;

	(void)state;
	fx_write(path, ev, 4, lines, ts_same, 2, 1, 0);
	src = fx_open1(path, 0);
	fx_collect(src, &c);
	assert_int_equal(c.n, 4);
	assert_string_equal(c.op[0], "c"); /* 1 ns */
	assert_string_equal(c.op[1], "d"); /* 4 ns */
	assert_string_equal(c.op[2], "a"); /* 5 ns */
	assert_string_equal(c.op[3], "b");
	assert_int_equal(c.ev[0].time_ns, 1);
	assert_int_equal(c.ev[0].thread, 1);
	mp_source_close(src);

	/* line 1 starts 5 ns later: "d" at 9 ns ties "b" at 9 ns; b is stored first */
	fx_write(path, ev, 4, lines, ts_diff, 2, 1, 0);
	src = fx_open1(path, 0);
	fx_collect(src, &c);
	assert_string_equal(c.op[0], "a");
	assert_string_equal(c.op[1], "c");
	assert_int_equal(c.ev[1].time_ns, 6);
	assert_string_equal(c.op[2], "b");
	assert_string_equal(c.op[3], "d");
	assert_int_equal(c.ev[3].time_ns, 9);
	mp_source_close(src);
	src = fx_open1(path, 1);
	fx_collect(src, &c);
	assert_string_equal(c.op[0], "c");
	assert_int_equal(c.ev[0].time_ns, 1);
	mp_source_close(src);
	unlink(path);
	free(path);
}

/* Several hosts: memory ids prefixed with the host, sorted by name. */
static void several_hosts(void **state)
{
	static const fx_mem_t e1[] = {
		{A, 3000, "GPU_0_bfc", 0, 256, 100, 256, 4, 256, 1, 0, NULL, NULL, NULL, -1, -1},
	};
	static const fx_mem_t e2[] = {
		{A, 2000, "GPU_0_bfc", 0, 512, 100, 512, 4, 512, 1, 0, NULL, NULL, NULL, -1, -1},
		{A, 4000, "GPU_1_bfc", 0, 512, 100, 512, 4, 512, 1, 0, NULL, NULL, NULL, -1, -1},
	};
	char dir[] = "/tmp/memprof-test-hostsXXXXXX";
	char p1[300], p2[300];
	const char *paths[2] = {p1, p2};
	mp_source_t *src = NULL;
	mp_diag_t diag;
	fx_collected_t c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p1, sizeof(p1), "%s/worker-b.xplane.pb", dir);
	snprintf(p2, sizeof(p2), "%s/worker-a.xplane.pb", dir);
	fx_write(p1, e1, 1, NULL, NULL, 1, 0, 0);
	fx_write(p2, e2, 2, NULL, NULL, 1, 1, 0);
	assert_int_equal(mp_xplane_open_source(&src, paths, 2, NULL, &diag), 0);
	assert_int_equal(mp_source_memory_count(src), 3);
	assert_string_equal(mp_source_memory(src, 0)->name, "worker-a/GPU_0_bfc");
	assert_string_equal(mp_source_memory(src, 1)->name, "worker-a/GPU_1_bfc");
	assert_string_equal(mp_source_memory(src, 2)->name, "worker-b/GPU_0_bfc");
	assert_int_equal(mp_source_memory(src, 2)->capacity_bytes, 356);
	fx_collect(src, &c);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.ev[0].memory, 0);
	assert_int_equal(c.ev[0].time_ns, 2);
	assert_int_equal(c.ev[1].memory, 2);
	assert_int_equal(c.ev[2].memory, 1);
	mp_source_close(src);
	unlink(p1);
	unlink(p2);
	rmdir(dir);
}

/* Names: dtype enum values, "(null)" strings, ordinals as memory ids. */
static void names_and_nulls(void **state)
{
	static const fx_mem_t ev[] = {
		{A, 1000, "GPU_0_bfc", 0, 256, 0, 256, 4, 256, 1, 0, "(null)", "(null)", NULL, 0, -1},
		{A, 2000, "GPU_0_bfc", 0, 512, 0, 512, 4, 256, 2, 0, "x", "persist", "[2,3]", 4, -1},
		{A, 3000, "GPU_0_bfc", 0, 768, 0, 768, 4, 256, 3, 0, "y", "weird", NULL, 119, -1},
		{A, 4000, "GPU_0_bfc", 0, 1024, 0, 1024, 4, 256, 4, 0, NULL, "temp", NULL, 77, -1},
	};
	char *path = mp_test_tmpfile(".xplane.pb");
	mp_source_t *src;
	fx_collected_t c;
	char buf[48];

	(void)state;
	fx_write(path, ev, 4, NULL, NULL, 1, 0, 0);
	src = fx_open1(path, 0);
	fx_collect(src, &c);
	assert_int_equal(c.ev[0].op, 0);
	assert_int_equal(c.ev[0].region, MP_REGION_UNKNOWN);
	assert_string_equal(c.dtype[0], "INVALID");
	assert_string_equal(c.dtype[1], "uint8");
	assert_int_equal(c.ev[1].region, MP_REGION_PERSIST);
	assert_string_equal(c.shape[1], "[2,3]");
	assert_string_equal(c.dtype[2], "half_ref");
	assert_int_equal(c.ev[2].region, MP_REGION_UNKNOWN);
	assert_string_equal(c.dtype[3], "unknown dtype enum (77)");
	assert_int_equal(c.ev[3].region, MP_REGION_TEMP);
	mp_source_close(src);
	assert_string_equal(mp_tf_dtype_name(1, buf, sizeof(buf)), "float");
	assert_string_equal(mp_tf_dtype_name(14, buf, sizeof(buf)), "bfloat16");
	assert_string_equal(mp_tf_dtype_name(-3, buf, sizeof(buf)), "unknown dtype enum (-3)");
	unlink(path);
	free(path);
}

/* index_on_host / device_ordinal name the memory when they come last. */
static void ordinal_memory_ids(void **state)
{
	char *path = mp_test_tmpfile(".xplane.pb");
	mp_xsb_t *b = mp_xsb_new();
	mp_source_t *src;
	mp_diag_t diag;

	(void)state;
	mp_xsb_plane(b, 1, "/host:CPU");
	mp_xsb_line(b, 1, "t", 0);
	mp_xsb_event(b, A, 1000, 0);
	mp_xsb_stat_str(b, "allocator_name", "GPU_0_bfc");
	mp_xsb_stat_int(b, "device_ordinal", 3);
	mp_xsb_stat_int(b, "bytes_allocated", 256);
	mp_xsb_event(b, A, 2000, 0);
	mp_xsb_stat_int(b, "index_on_host", 1);
	mp_xsb_stat_str(b, "allocator_name", "GPU_1_bfc");
	mp_xsb_event(b, D, 3000, 0); /* no allocator at all */
	assert_int_equal(mp_xsb_write(b, path, 0, &diag), 0);
	mp_xsb_free(b);
	src = fx_open1(path, 0);
	assert_int_equal(mp_source_memory_count(src), 3);
	assert_string_equal(mp_source_memory(src, 0)->name, "3");
	assert_string_equal(mp_source_memory(src, 1)->name, "GPU_1_bfc");
	assert_string_equal(mp_source_memory(src, 2)->name, "unnamed_allocator");
	mp_source_close(src);
	unlink(path);
	free(path);
}

/* Strings in bytes_value and gzip compressed_str_value; a dtype given as a
 * name; a group_id stored as uint64 and addr as int64. */
static void other_string_slots(void **state)
{
	char *path = mp_test_tmpfile(".xplane.pb");
	mp_xsb_t *b = mp_xsb_new();
	mp_source_t *src;
	mp_diag_t diag;
	fx_collected_t c;

	(void)state;
	mp_xsb_plane(b, 1, "/host:CPU");
	mp_xsb_line(b, 1, "t", 0);
	mp_xsb_event(b, A, 1000, 0);
	mp_xsb_stat_gzstr(b, "allocator_name", "GPU_0_bfc");
	mp_xsb_stat_bytes(b, "tf_op", "conv/Conv2D");
	mp_xsb_stat_gzstr(b, "shape", "[8,8]");
	mp_xsb_stat_str(b, "data_type", "float8_e8m0");
	mp_xsb_stat_uint(b, "group_id", 4);
	mp_xsb_stat_int(b, "addr", 0x7000);
	mp_xsb_stat_int(b, "allocation_bytes", 512);
	assert_int_equal(mp_xsb_write(b, path, 0, &diag), 0);
	mp_xsb_free(b);
	src = fx_open1(path, 0);
	assert_string_equal(mp_source_memory(src, 0)->name, "GPU_0_bfc");
	fx_collect(src, &c);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.op[0], "conv/Conv2D");
	assert_string_equal(c.shape[0], "[8,8]");
	assert_string_equal(c.dtype[0], "float8_e8m0");
	assert_int_equal(c.ev[0].step, 4);
	assert_int_equal(c.ev[0].address, 0x7000);
	assert_int_equal(c.ev[0].allocated_bytes, 512);
	mp_source_close(src);
	unlink(path);
	free(path);
}

/* Thousands of events on several lines in random time order: the stream
 * is sorted by time, ties in stored order, and nothing is lost. */
static void many_lines_sorted(void **state)
{
	enum { N = 5000, L = 7 };
	static fx_mem_t ev[N];
	static int lines[N];
	static char ops[N][12];
	char *path = mp_test_tmpfile(".xplane.pb");
	uint64_t seed = 12345, last_t = 0, count = 0, sum = 0, want_sum = 0;

	int64_t line_ts[L];
	mp_source_t *src;
	mp_event_t e;
	mp_diag_t diag;
	int i, prev = 0;

	(void)state;
	for (i = 0; i < L; i++)
		line_ts[i] = 1000000 + i * 3; /* lines start a few ns apart */
	for (i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		ev[i] = (fx_mem_t){A, (int64_t)((seed >> 33) % 2000) * 1000, "GPU_0_bfc", 0, 256, 0, 256, 4, 256,
				   (int64_t)i, 0, ops[i], NULL, NULL, -1, -1};
		snprintf(ops[i], sizeof(ops[i]), "%d", i);
		lines[i] = (int)((seed >> 20) % L);
		want_sum += (uint64_t)i;
	}
	fx_write(path, ev, N, lines, line_ts, L, 1, 0);
	src = fx_open1(path, 0);
	assert_int_equal(mp_xplane_memory_event_count(src), N);
	while (mp_source_next(src, &e, &diag) > 0) {
		int idx;

		if (e.kind != MP_EV_ALLOC)
			continue;
		idx = atoi(mp_source_string(src, e.op));
		assert_int_equal(e.address, (uint64_t)idx);
		assert_true(e.time_ns >= last_t);
		/* expected time: line start offset + offset_ps / 1000 */
		assert_int_equal(e.time_ns, (uint64_t)(lines[idx] * 3 + ev[idx].offset_ps / 1000));
		if (e.time_ns == last_t && count > 0) /* ties: stored order (line, then position) */
			assert_true(lines[idx] > lines[prev] || (lines[idx] == lines[prev] && idx > prev));
		prev = idx;
		last_t = e.time_ns;
		sum += (uint64_t)idx;
		count++;
	}
	assert_int_equal(count, N);
	assert_int_equal(sum, want_sum); /* each event exactly once */
	mp_source_close(src);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(encodings_agree),
		cmocka_unit_test(steps_without_group_id),
		cmocka_unit_test(lines_and_clocks),
		cmocka_unit_test(several_hosts),
		cmocka_unit_test(names_and_nulls),
		cmocka_unit_test(ordinal_memory_ids),
		cmocka_unit_test(other_string_slots),
		cmocka_unit_test(many_lines_sorted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
