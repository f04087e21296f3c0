/* test_gpu_record.c - `memprof record --gpu` where GPU memory cannot be
 * recorded (CI has no CUDA; this project's machines have no GPU): one
 * warning, the host capture complete, the program's exit status unchanged.
 * The injection library's own start is driven by gpu_victim, which calls
 * InitializeInjection() as the CUDA driver would: without libcupti, and
 * (where the toolkit is installed but no driver is) with a libcupti that
 * cannot start. */
#include "test_common.h"

#include "capture_helpers.h"

#include <dlfcn.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define VICTIM MEMPROF_BINARY_DIR "/tests/gpu/gpu_victim"
#define INJECTION MEMPROF_BINARY_DIR "/allocator_hooks/libmemprof_cupti.so"

/* Run a shell command line; its exit status, its stderr in *err (caller frees). */
static int run(const char *cmdline, char **err)
{
	char cmd[8192], *errpath = mp_test_tmpfile(".err");
	FILE *f;
	long n;
	int st;

	snprintf(cmd, sizeof cmd, "%s 2>%s", cmdline, errpath);
	st = system(cmd);
	assert_non_null(f = fopen(errpath, "r"));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*err = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(*err, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	unlink(errpath);
	free(errpath);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The victim's two blocks are in the capture, on the host memory id. */
static void check_host_capture(const char *path)
{
	mp_event_t *ev;
	mp_diag_t diag;
	int rc, a = 0, b = 0;
	size_t n = read_all(path, &ev, &rc, &diag, NULL), i;

	assert_int_equal(rc, 0);
	for (i = 0; i < n; i++) {
		if (ev[i].kind != MP_EV_ALLOC)
			continue;
		a += ev[i].requested_bytes == 123457;
		b += ev[i].requested_bytes == 654321;
	}
	assert_int_equal(a, 1);
	assert_int_equal(b, 1);
	free(ev);
}

static int have_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (h)
		dlclose(h);
	return h != NULL;
}

/* An ordinary host program under --gpu: without a driver, the one warning
 * says so; with one, the program never starts CUDA and nothing is said. */
static void test_record_gpu_host_program(void **state)
{
	char *out = mp_test_tmpfile(".memprof"), cmd[4096], *err;

	(void)state;
	snprintf(cmd, sizeof cmd, "%s record --gpu -o %s -- %s", MEMPROF, out, VICTIM);
	assert_int_equal(run(cmd, &err), 3);
	assert_int_equal(count(err, "memprof: warning: --gpu:"), have_driver() ? 0 : 1);
	if (!have_driver())
		assert_non_null(strstr(err, "memprof: warning: --gpu: no CUDA driver on this machine (libcuda.so.1 "
					    "cannot be loaded); GPU memory is not recorded, host memory is\n"));
	assert_non_null(strstr(err, "memprof: capture written to"));
	check_host_capture(out);
	unlink(out);
	free(out);
	free(err);
}

/* The injection library started in a traced process whose libcupti is
 * missing: one warning naming what is missing, the host capture goes on. */
static void test_injection_without_libcupti(void **state)
{
	char *out = mp_test_tmpfile(".memprof"), cmd[4096], *err;

	(void)state;
	snprintf(cmd, sizeof cmd, "MEMPROF_CUPTI_LIB=/nonexistent/libcupti.so %s record -o %s -- %s %s", MEMPROF,
		 out, VICTIM, INJECTION);
	assert_int_equal(run(cmd, &err), 3);
	assert_int_equal(count(err, "memprof: warning:"), 1);
	assert_non_null(strstr(err, "memprof: warning: --gpu: libcupti not found (/nonexistent/libcupti.so; set "
				    "MEMPROF_CUPTI_LIB to its path); GPU memory is not recorded, host memory is\n"));
	check_host_capture(out);
	unlink(out);
	free(out);
	free(err);
}

/* With the toolkit's libcupti but no driver, CUPTI refuses to start (it
 * answers CUPTI_ERROR_UNKNOWN without a GPU): one warning, host capture. */
static void test_injection_cupti_cannot_start(void **state)
{
	(void)state;
#ifndef MEMPROF_CUPTI_LIB_PATH
	fprintf(stderr, "skipped: libcupti is not installed here (the CUDA toolkit was not found at build time)\n");
	skip();
#else
	char *out, cmd[4096], *err;

	if (have_driver()) {
		fprintf(stderr, "skipped: a CUDA driver is installed here: CUPTI may well start\n");
		skip();
	}
	out = mp_test_tmpfile(".memprof");
	snprintf(cmd, sizeof cmd, "MEMPROF_CUPTI_LIB=%s %s record -o %s -- %s %s", MEMPROF_CUPTI_LIB_PATH, MEMPROF,
		 out, VICTIM, INJECTION);
	assert_int_equal(run(cmd, &err), 3);
	assert_int_equal(count(err, "memprof: warning:"), 1);
	assert_non_null(strstr(err, "memprof: warning: --gpu: CUPTI "));
	assert_non_null(strstr(err, "GPU memory is not recorded, host memory is\n"));
	check_host_capture(out);
	free(err);
	unlink(out);
	free(out);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_gpu_host_program),
		cmocka_unit_test(test_injection_without_libcupti),
		cmocka_unit_test(test_injection_cupti_cannot_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
