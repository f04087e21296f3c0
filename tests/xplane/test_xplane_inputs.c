/* test_xplane_inputs.c - whole xplane inputs built by memprof's own XSpace
 * builder: xprof's unit case through the reader and the xprof-compatible
 * table, files without memory events, every truncation of a file and
 * damaged bytes, log directories and run selection. What each event
 * becomes: test_xplane_read.c. */
#include "test_common.h"

#include "xplane_fixture.h"

#include <memprof/xprof_compat.h>

#include <errno.h>

#define A FX_A
#define D FX_D

static void xprof_unit_case(void **state)
{
	char *path = mp_test_tmpfile(".xplane.pb");
	mp_xprof_options_t o = {0};
	mp_xprof_profile_t *p = NULL;
	mp_source_t *src;
	mp_diag_t diag;
	const mp_xprof_memory_t *m;
	fx_collected_t c;

	(void)state;
	fx_write(path, xprof_case, 3, NULL, NULL, 1, 1, 0);
	src = fx_open1(path, 0);
	assert_int_equal(mp_source_memory_count(src), 1);
	assert_string_equal(mp_source_memory(src, 0)->name, "GPU_0_bfc");
	assert_int_equal(mp_source_memory(src, 0)->kind, MP_MEMORY_DEVICE);
	assert_int_equal(mp_source_memory(src, 0)->capacity_bytes, 10000);
	fx_collect(src, &c);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.ev[0].kind, MP_EV_ALLOC);
	assert_int_equal(c.ev[0].time_ns, 40);
	assert_int_equal(c.ev[0].address, 0x1000);
	assert_int_equal(c.ev[0].requested_bytes, 200);
	assert_int_equal(c.ev[0].allocated_bytes, 256);
	assert_int_equal(c.ev[0].region, MP_REGION_OUTPUT);
	assert_string_equal(c.op[0], "foo/bar");
	assert_string_equal(c.dtype[0], "float");
	assert_string_equal(c.shape[0], "[4]");
	assert_int_equal(c.ev[1].kind, MP_EV_FREE);
	assert_int_equal(c.ev[1].allocated_bytes, 256);
	assert_int_equal(c.ev[2].stats.stack_bytes, 2000);
	assert_int_equal(c.ev[2].stats.heap_bytes, 5000);
	assert_int_equal(c.ev[2].stats.free_bytes, 3000);
	assert_int_equal(c.ev[2].stats.peak_bytes, 9500);
	assert_true(c.ev[2].stats.fragmentation == 0.25);
	assert_true(c.ev[0].stats.fragmentation == 0.0); /* int64 0 */

	assert_int_equal(mp_xprof_compute(src, &o, &p, &diag), 0);
	assert_int_equal(p->n, 1);
	m = &p->mems[0];
	assert_int_equal(m->lifetime_peak_xprof, 9500);
	assert_int_equal(m->peak_bytes, 7000);
	assert_int_equal(m->peak_time_ns, 70);
	assert_int_equal(m->capacity_bytes, 10000);
	assert_int_equal(m->nrows, 3);
	assert_string_equal(m->rows[0].op, "unused preallocated device memory");
	assert_int_equal(m->rows[0].allocation_bytes, 4700);
	assert_string_equal(m->rows[0].region, "persist/dynamic");
	assert_string_equal(m->rows[0].dtype, "INVALID");
	assert_string_equal(m->rows[0].shape, "unknown");
	assert_string_equal(m->rows[1].op, "stack");
	assert_int_equal(m->rows[1].allocation_bytes, 2000);
	assert_string_equal(m->rows[2].op, "mul_grad/Sum");
	assert_int_equal(m->rows[2].allocation_bytes, 300);
	assert_int_equal(m->rows[2].requested_bytes, 250);
	assert_string_equal(m->rows[2].region, "temp");
	mp_xprof_free(p);
	mp_source_close(src);
	unlink(path);
	free(path);
}

static void no_memory_events(void **state)
{
	char *path = mp_test_tmpfile(".xplane.pb");
	mp_xsb_t *b = mp_xsb_new();
	mp_source_t *src;
	mp_event_t ev;
	mp_diag_t diag;

	(void)state;
	mp_xsb_plane(b, 1, "/device:GPU:0");
	mp_xsb_line(b, 1, "t", 0);
	mp_xsb_event(b, A, 1000, 0);
	mp_xsb_stat_str(b, "allocator_name", "GPU_0_bfc");
	mp_xsb_plane(b, 2, "/host:CPU");
	mp_xsb_line(b, 1, "t", 0);
	mp_xsb_event(b, "Op", 1000, 10);
	assert_int_equal(mp_xsb_write(b, path, 0, &diag), 0);
	mp_xsb_free(b);
	src = fx_open1(path, 0);
	assert_int_equal(mp_xplane_memory_event_count(src), 0);
	assert_int_equal(mp_source_next(src, &ev, &diag), 0);
	mp_source_close(src);
	/* an empty file is an empty XSpace */
	fclose(fopen(path, "w"));
	src = fx_open1(path, 0);
	assert_int_equal(mp_source_memory_count(src), 0);
	mp_source_close(src);
	unlink(path);
	free(path);
}

/* Every truncation of a valid file, and some damaged bytes: a clean error
 * (or, where the cut falls between top-level fields, a shorter capture),
 * never a crash. */
static void truncated_and_corrupt(void **state)
{
	char *path = mp_test_tmpfile(".xplane.pb"), *cut = mp_test_tmpfile(".xplane.pb");
	FILE *f;
	unsigned char *data;
	long size, n, errors = 0;
	mp_source_t *src;
	mp_diag_t diag;
	int rc;

	(void)state;
	fx_write(path, xprof_case, 3, NULL, NULL, 1, 1, 0);
	f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	data = malloc((size_t)size);
	assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	for (n = 1; n < size; n++) {
		f = fopen(cut, "wb");
		fwrite(data, 1, (size_t)n, f);
		fclose(f);
		src = NULL;
		rc = mp_xplane_open_source(&src, (const char *const *)&cut, 1, NULL, &diag);
		if (rc < 0) {
			errors++;
			assert_true(rc == MP_ETRUNCATED || rc == MP_ECORRUPT);
			assert_true(diag.offset >= 0 && diag.offset <= size);
			assert_non_null(strstr(diag.file, "memprof-test"));
			assert_null(src);
		} else {
			mp_source_close(src);
		}
	}
	assert_true(errors > size / 2);
	/* garbage: a text file */
	f = fopen(cut, "wb");
	fputs("this is not a protobuf message\n", f);
	fclose(f);
	rc = mp_xplane_open_source(&src, (const char *const *)&cut, 1, NULL, &diag);
	assert_true(rc == MP_ECORRUPT || rc == MP_ETRUNCATED);
	/* a gzip file cut short */
	fx_write(path, xprof_case, 3, NULL, NULL, 1, 1, 1);
	assert_int_equal(truncate(path, 30), 0);
	rc = mp_xplane_open_source(&src, (const char *const *)&path, 1, NULL, &diag);
	assert_int_equal(rc, MP_ECOMPRESS);
	/* a missing file */
	rc = mp_xplane_open_source(&src, (const char *const[]){"/nonexistent/x.xplane.pb"}, 1, NULL, &diag);
	assert_int_equal(rc, -ENOENT);
	free(data);
	unlink(path);
	unlink(cut);
	free(path);
	free(cut);
}

/* Log directories: runs found at any depth, sorted; the newest chosen;
 * the same run name in two places is ambiguous until --run says which. */
static void log_directories(void **state)
{
	char root[] = "/tmp/memprof-test-logdirXXXXXX", p[512];
	static const char *const dirs[] = {"a", "a/plugins", "a/plugins/profile", "a/plugins/profile/2024_01_01_00_00_00",
					   "a/plugins/profile/2023_05_05_00_00_00", "b", "b/train", "b/train/plugins",
					   "b/train/plugins/profile", "b/train/plugins/profile/2024_01_01_00_00_00"};
	static const char *const files[] = {"a/plugins/profile/2024_01_01_00_00_00/h1.xplane.pb",
					    "a/plugins/profile/2024_01_01_00_00_00/h2.xplane.pb.gz",
					    "a/plugins/profile/2023_05_05_00_00_00/h1.xplane.pb",
					    "b/train/plugins/profile/2024_01_01_00_00_00/w.xplane.pb"};
	mp_xplane_runs_t runs;
	mp_diag_t diag;
	size_t i;
	int k;

	(void)state;
	assert_non_null(mkdtemp(root));
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		assert_int_equal(mkdir(p, 0755), 0);
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, files[i]);
		fx_write(p, xprof_case, 1, NULL, NULL, 1, 1, strstr(p, ".gz") != NULL);
	}
	assert_int_equal(mp_xplane_find_runs(root, &runs, &diag), 0);
	assert_int_equal(runs.n, 3);
	assert_string_equal(runs.runs[0].name, "2023_05_05_00_00_00");
	assert_int_equal(runs.runs[1].nhosts, 2);
	assert_string_equal(runs.runs[1].hosts[0], "h1");
	assert_string_equal(runs.runs[1].hosts[1], "h2");
	/* newest name exists twice: ambiguous, both directories listed */
	assert_int_equal(mp_xplane_select_run(&runs, NULL, &diag), MP_EUSAGE);
	assert_non_null(strstr(diag.text, "a/plugins/profile/2024_01_01_00_00_00"));
	assert_non_null(strstr(diag.text, "b/train/plugins/profile/2024_01_01_00_00_00"));
	assert_int_equal(mp_xplane_select_run(&runs, "2024_01_01_00_00_00", &diag), MP_EUSAGE);
	k = mp_xplane_select_run(&runs, "train/plugins/profile/2024_01_01_00_00_00", &diag);
	assert_int_equal(k, 2);
	assert_string_equal(runs.runs[k].hosts[0], "w");
	assert_int_equal(mp_xplane_select_run(&runs, "2023_05_05_00_00_00", &diag), 0);
	assert_int_equal(mp_xplane_select_run(&runs, "1999", &diag), MP_ENOTFOUND);
	mp_xplane_runs_free(&runs);
	/* a run directory itself; a directory with nothing */
	snprintf(p, sizeof(p), "%s/a/plugins/profile/2024_01_01_00_00_00", root);
	assert_int_equal(mp_xplane_find_runs(p, &runs, &diag), 0);
	assert_int_equal(runs.n, 1);
	assert_int_equal(runs.runs[0].nhosts, 2);
	mp_xplane_runs_free(&runs);
	snprintf(p, sizeof(p), "%s/b/train", root);
	assert_int_equal(mp_xplane_find_runs(p, &runs, &diag), 0);
	mp_xplane_runs_free(&runs);
	snprintf(p, sizeof(p), "%s/a/plugins/profile/2023_05_05_00_00_00/h1.xplane.pb", root);
	assert_int_equal(mp_xplane_find_runs(p, &runs, &diag), MP_ENOTFOUND);
	for (i = sizeof(files) / sizeof(files[0]); i-- > 0;) {
		snprintf(p, sizeof(p), "%s/%s", root, files[i]);
		unlink(p);
	}
	for (i = sizeof(dirs) / sizeof(dirs[0]); i-- > 0;) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		rmdir(p);
	}
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xprof_unit_case),
		cmocka_unit_test(no_memory_events),
		cmocka_unit_test(truncated_and_corrupt),
		cmocka_unit_test(log_directories),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
