/* test_demo.c - the bundled example (src/demo/bfc_demo.c) reports what its
 * comments say, figured by hand from the program (MiB = 1048576 B):
 *   88 allocations (4 weights + 3 training steps x 12 + 47 shuffle blocks
 *   + the 6 MiB retry), 84 frees, 1 failed allocation;
 *   peak 16 + 47 = 63 MiB in use at step 3, 1 MiB free, not fragmented;
 *   the failed 6 MiB request in step 3 with 39 MiB in use, 25 MiB free, a
 *   largest free chunk of 2 MiB: fragmentation 1 - 2/25 = 0.92;
 *   the 4 weights (16 MiB) still live at the end. */
#include "test_common.h"

#include <memprof/capture.h>
#include <memprof/solver.h>

#include <sys/wait.h>

#define MiB 1048576ull

static char *record_demo(void)
{
	char *path = mp_test_tmpfile(".memprof");
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		setenv("MEMPROF_OUTPUT", path, 1);
		freopen("/dev/null", "w", stdout);
		execl(MEMPROF_DEMO_VICTIM, MEMPROF_DEMO_VICTIM, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return path;
}

static void test_demo_figures(void **state)
{
	char *path = record_demo();
	mp_source_t *src;
	mp_solver_t *s;
	mp_diag_t diag;
	const mp_solver_device_t *d;
	const mp_solver_oom_t *o;
	size_t i;
	uint64_t shuffle = 0;

	(void)state;
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	s = mp_solver_new(NULL);
	assert_non_null(s);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	assert_int_equal(mp_solver_device_count(s), 1);
	d = mp_solver_device(s, 0);
	assert_string_equal(mp_source_memory(src, d->id)->name, "GPU_0_bfc");
	assert_int_equal(d->capacity_bytes, 64 * MiB);
	assert_int_equal(d->allocations, 88);
	assert_int_equal(d->deallocations, 84);
	assert_int_equal(d->failed_allocations, 1);
	assert_int_equal(d->dropped_events, 0);

	/* the peak: the pool filled by the shuffle buffer in step 3 */
	assert_true(d->has_peak);
	assert_int_equal(d->peak_bytes, 63 * MiB);
	assert_int_equal(d->lifetime_peak_bytes, 63 * MiB);
	assert_int_equal(d->peak.step, 3);
	assert_int_equal(d->peak.heap_bytes, 63 * MiB);
	assert_int_equal(d->peak.stack_bytes, 0);
	assert_int_equal(d->peak.free_bytes, 1 * MiB);
	assert_true(d->peak.fragmentation == 0.0);
	assert_int_equal(d->breakdown_count, 5);
	for (i = 0; i < d->breakdown_count; i++) {
		const mp_solver_row_t *r = &d->breakdown[i];
		if (!strcmp(mp_source_string(src, r->op), "data/shuffle_buffer")) {
			assert_int_equal(r->occurrences, 47);
			assert_int_equal(r->allocated_bytes, MiB);
			assert_int_equal(r->region, MP_REGION_DYNAMIC);
			shuffle++;
		} else {
			assert_int_equal(r->occurrences, 1);
			assert_int_equal(r->total_bytes, 4 * MiB);
			assert_int_equal(r->region, MP_REGION_PERSIST);
		}
	}
	assert_int_equal(shuffle, 1);

	/* the fragmented step's failed allocation */
	assert_int_equal(d->oom_count, 1);
	o = &d->oom[0];
	assert_int_equal(o->at.step, 3);
	assert_string_equal(mp_source_string(src, o->op), "attention/softmax");
	assert_int_equal(o->requested_bytes, 6 * MiB);
	assert_int_equal(o->at.heap_bytes, 39 * MiB);
	assert_int_equal(o->at.free_bytes, 25 * MiB);
	assert_true(o->at.has_largest);
	assert_int_equal(o->at.largest_free_bytes, 2 * MiB);
	assert_int_equal(o->at.region_free_bytes, 25 * MiB);
	assert_float_equal(o->at.fragmentation, 0.92, 1e-12);

	/* the weights outlive the run */
	assert_int_equal(d->leak_bytes, 16 * MiB);
	mp_solver_free(s);
	mp_source_close(src);
	unlink(path);
	free(path);
}

/* The front door: `memprof demo` prints the same story. */
/* `memprof demo`: the report, then the timeline and the map at the failed
 * allocation beside the capture, as the README promises. */
static void test_demo_command(void **state)
{
	char cmd[4096], line[1024], dir[] = "/tmp/memprof-demo-test-XXXXXX", file[256];
	int found_peak = 0, found_oom = 0, found_cause = 0, found_charts = 0;
	static const char *const charts[] = {"demo.timeline.png", "demo.oom-map.png"};
	struct stat st;
	FILE *p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "MEMPROF_DEMO_PROGRAM=%s %s demo -o %s/demo.memprof 2>&1", MEMPROF_DEMO_VICTIM,
		 MEMPROF_CLI, dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		found_peak |= strstr(line, "peak in use       66060288 B (63.00 MiB)") != NULL && strstr(line, "step 3");
		found_oom |= strstr(line, "largest free chunk 2097152 B (2.00 MiB), fragmentation 92.00%") != NULL;
		found_cause |= strstr(line, "cause: fragmentation") != NULL;
		found_charts |= strstr(line, "charts of the example:") && strstr(line, "demo.timeline.png") &&
				strstr(line, "demo.oom-map.png");
	}
	assert_int_equal(pclose(p), 0);
	assert_true(found_peak);
	assert_true(found_oom);
	assert_true(found_cause);
	assert_true(found_charts);
	for (size_t i = 0; i < 2; i++) {
		unsigned char head[8];
		FILE *f;
		snprintf(file, sizeof(file), "%s/%s", dir, charts[i]);
		assert_non_null(f = fopen(file, "rb"));
		assert_int_equal(fread(head, 1, 8, f), 8);
		assert_memory_equal(head, "\x89PNG\r\n\x1a\n", 8);
		fclose(f);
		unlink(file);
	}
	snprintf(file, sizeof(file), "%s/demo.memprof", dir);
	assert_int_equal(stat(file, &st), 0);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demo_figures),
		cmocka_unit_test(test_demo_command),
	};
	return cmocka_run_group_tests_name("demo", tests, NULL, NULL);
}
