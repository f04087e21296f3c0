/* test_gpu_record.c - `memprof record --gpu` where GPU memory cannot be
 * recorded (CI has no CUDA; this project's machines have no GPU): one
 * warning, the host capture complete, the program's exit status unchanged.
 * The injection library's own start is driven by gpu_victim, which calls
 * InitializeInjection() as the CUDA driver would: without libcupti, and
 * (where the toolkit is installed but no driver is) with a libcupti that
 * cannot start; and its whole path on a fake libcupti (fake_cupti.c), as
 * far as it can be followed without a GPU. */
#include "test_common.h"

#include "capture_helpers.h"

#include <memprof/cupti_dump.h>
#include <memprof/cupti_translate.h>
#include <memprof/capsummary.h>
#include <memprof/run.h>
#include <memprof/solver.h>

#include <dirent.h>

#include <dlfcn.h>
#include <math.h>

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

/* memprof record wrote the run `run` (consumed: removed at the end with
 * drop_run): the path of its main process's capture, owned. */
static char *run_dirs[8];
static char *run_main(char *run)
{
	mp_run_t *r;
	mp_diag_t diag;
	char *path;
	int k;

	assert_int_equal(mp_run_open(&r, run, &diag), 0);
	assert_true((k = mp_run_main(r)) >= 0);
	path = strdup(mp_run_proc(r, (size_t)k)->path);
	mp_run_close(r);
	for (k = 0; k < 8 && run_dirs[k]; k++)
		;
	assert_true(k < 8);
	run_dirs[k] = run;
	return path;
}

/* Remove the runs run_main saw (their captures, marker, directory). */
static void drop_runs(void)
{
	char cmd[4200];

	for (int k = 0; k < 8 && run_dirs[k]; k++) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", run_dirs[k]);
		assert_int_equal(system(cmd), 0);
		free(run_dirs[k]);
		run_dirs[k] = NULL;
	}
}

/* The figures the capture's writer kept (memprof/capsummary.h) equal the
 * solver's on every memory id -- the GPU's, whose events come through a
 * lane with their own times, as the host's. */
static void check_summary_agrees(const char *path)
{
	mp_capture_summary_t s;
	const mp_solver_device_t *d;
	mp_solver_options_t o;
	mp_solver_t *solver;
	mp_source_t *src;
	mp_diag_t diag;
	mp_event_t ev;
	size_t i;
	int gpu = 0;

	assert_int_equal(mp_capture_summary_read(path, &s, &diag), 0);
	assert_true(s.available);
	mp_solver_options_init(&o);
	assert_non_null(solver = mp_solver_new(&o));
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	while (mp_source_next(src, &ev, &diag) == 1)
		assert_int_equal(mp_solver_feed(solver, &ev, &diag), 0);
	assert_int_equal(mp_solver_finish(solver), 0);
	for (i = 0; i < s.nmemories; i++) {
		const mp_summary_memory_t *m = &s.memories[i];
		assert_non_null(d = mp_solver_find(solver, m->id));
		assert_int_equal(d->allocations, m->allocations + m->reallocs);
		assert_int_equal(d->deallocations, m->frees + m->reallocs);
		assert_int_equal(d->peak_bytes, m->peak_bytes);
		if (m->has_peak)
			assert_int_equal(d->peak.time_ns, m->peak_time_ns);
		assert_int_equal(d->leak_bytes, m->live_bytes);
		gpu += !strncmp(m->name, "GPU:", 4) && m->has_peak;
	}
	assert_true(gpu > 0);
	mp_solver_free(solver);
	mp_source_close(src);
	mp_capture_summary_free(&s);
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

/* The fake victim's host block is in the capture. */
static void check_host_capture_a(const char *path)
{
	mp_event_t *ev;
	mp_diag_t diag;
	int rc, a = 0;
	size_t n = read_all(path, &ev, &rc, &diag, NULL), i;

	assert_int_equal(rc, 0);
	for (i = 0; i < n; i++)
		a += ev[i].kind == MP_EV_ALLOC && ev[i].requested_bytes == 123457;
	assert_int_equal(a, 1);
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
	out = run_main(out); /* memprof record wrote a run: its main process's capture */
	assert_int_equal(count(err, "memprof: warning: --gpu:"), have_driver() ? 0 : 1);
	if (!have_driver())
		assert_non_null(strstr(err, "memprof: warning: --gpu: no CUDA driver on this machine (libcuda.so.1 "
					    "cannot be loaded); GPU memory is not recorded, host memory is\n"));
	assert_non_null(strstr(err, "memprof: run written to"));
	check_host_capture(out);
	unlink(out);
	drop_runs();
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
	out = run_main(out); /* memprof record wrote a run: its main process's capture */
	assert_int_equal(count(err, "memprof: warning:"), 1);
	assert_non_null(strstr(err, "memprof: warning: --gpu: libcupti not found (/nonexistent/libcupti.so; set "
				    "MEMPROF_CUPTI_LIB to its path); GPU memory is not recorded, host memory is\n"));
	check_host_capture(out);
	unlink(out);
	drop_runs();
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
	out = run_main(out); /* memprof record wrote a run: its main process's capture */
	assert_int_equal(count(err, "memprof: warning:"), 1);
	assert_non_null(strstr(err, "memprof: warning: --gpu: CUPTI "));
	assert_non_null(strstr(err, "GPU memory is not recorded, host memory is\n"));
	check_host_capture(out);
	free(err);
	unlink(out);
	drop_runs();
	free(out);
#endif
}

#define MiB (1ull << 20)
#define SEG_A 0x7f0000000000ull
#define SEG_B 0x7f0002000000ull
#define SEG_C 0x7f0004000000ull
#define SEG_D 0x7f0006000000ull

/* The raw buffers the run dumped (MEMPROF_CUPTI_DUMP), replayed: the
 * segments' events again, at the very times the live capture has them
 * (times[0], [1], [5]: the dump keeps the capture's origin). The failure
 * came through a callback, not a buffer: not in the dump. */
static void check_dump(const char *dir, const uint64_t *times, uint64_t lib_time)
{
	char path[4096] = "", *out = mp_test_tmpfile(".memprof");
	mp_cupti_stats_t st;
	mp_source_t *src;
	mp_event_t ev;
	mp_diag_t diag;
	struct dirent *de;
	DIR *d = opendir(dir);
	const int kinds[6] = {MP_EV_REGION_ADD, MP_EV_REGION_ADD,    MP_EV_REGION_REMOVE,
			      MP_EV_REGION_ADD, MP_EV_REGION_REMOVE, MP_EV_REGION_ADD};
	const uint64_t at[6] = {times[0], times[1], times[5], times[6], times[7], lib_time};
	const uint64_t addr[6] = {SEG_A, SEG_B, SEG_B, SEG_C, SEG_C, SEG_D};
	int k = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "cupti.", 6))
			snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
	closedir(d);
	assert_true(path[0]);
	assert_int_equal(mp_cupti_replay(path, out, &st, &diag), 0);
	assert_int_equal(st.records, 6);
	assert_int_equal(mp_capture_open_source(&src, out, &diag), 0);
	while (mp_source_next(src, &ev, &diag) == 1) {
		if (ev.kind == MP_EV_MEMORY)
			continue;
		/* a replay cannot read the sources (another process's
		 * pointers): the library's segment is GPU:0's here */
		assert_true(k < 6);
		assert_int_equal(ev.kind, kinds[k]);
		assert_int_equal(ev.address, addr[k]);
		assert_int_equal(ev.time_ns, at[k]);
		k++;
	}
	assert_int_equal(k, 6);
	mp_source_close(src);
	unlink(path);
	rmdir(dir);
	unlink(out);
	free(out);
}

/* gpu_fake_victim on fake_cupti: no warning; GPU:0 declared with the
 * device's 80 GiB; its two segments, the framework's two tensors inside
 * the first, the failed 10 MiB cudaMalloc (once, though the driver call
 * inside it failed too), the second segment's release, a 2 MiB cuMemMap'd
 * chunk added and removed (once each, though callbacks and records both
 * tell it) in time order, next to the host heap; "cuBLAS"'s own 1 MiB in
 * GPU:0:libraries, out of GPU:0's reserved bytes; CUPTI's 2 dropped records counted
 * on GPU:0. Solved: reserved peak 22 MiB, in use 12 MiB, and at the
 * failure 10 MiB free inside the segments (A: [12, 20) MiB, B: 2 MiB),
 * largest chunk 8 MiB: fragmentation 1 - 8/10, cause fragmented. */
static void test_fake_gpu(void **state)
{
	char *out = mp_test_tmpfile(".memprof"), cmd[4096], *err;
	const mp_solver_device_t *dev = NULL;
	mp_solver_options_t o;
	mp_source_t *src;
	mp_solver_t *s;
	mp_event_t ev;
	mp_diag_t diag;
	struct {
		int kind;
		uint64_t address, bytes;
	} want[] = {
		{MP_EV_REGION_ADD, SEG_A, 20 * MiB}, {MP_EV_REGION_ADD, SEG_B, 2 * MiB},
		{MP_EV_ALLOC, SEG_A, 8 * MiB},       {MP_EV_ALLOC, SEG_A + 8 * MiB, 4 * MiB},
		{MP_EV_ALLOC_FAILED, 0, 10 * MiB},   {MP_EV_REGION_REMOVE, SEG_B, 0},
		{MP_EV_REGION_ADD, SEG_C, 2 * MiB},  {MP_EV_REGION_REMOVE, SEG_C, 0},
	};
	uint64_t last = 0, dropped = 0, times[8], lib_time = 0;
	int lib_events = 0;
	size_t k = 0, i;
	int gpu = -1;
	char dumpdir[] = "/tmp/memprof-dump-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dumpdir));
	snprintf(cmd, sizeof cmd,
		 "MEMPROF_CUPTI_DUMP=%s MEMPROF_CUPTI_LIB=%s MEMPROF_CUPTI_FLUSH_MS=50 %s record -o %s -- %s %s %s",
		 dumpdir, FAKE_CUPTI, MEMPROF, out, FAKE_VICTIM, INJECTION, FAKE_CUPTI);
	assert_int_equal(run(cmd, &err), 3);
	out = run_main(out); /* memprof record wrote a run: its main process's capture */
	assert_int_equal(count(err, "warning"), 0);
	check_host_capture_a(out);
	check_summary_agrees(out);

	assert_int_equal(mp_capture_open_source(&src, out, &diag), 0);
	while (mp_source_next(src, &ev, &diag) == 1) {
		const mp_memory_info_t *m = mp_source_memory(src, ev.memory);
		if (ev.kind != MP_EV_MEMORY && m && !strcmp(m->name, "GPU:0:libraries")) {
			/* "cuBLAS"'s own 1 MiB, told by its record's source */
			assert_int_equal(ev.kind, MP_EV_REGION_ADD);
			assert_int_equal(ev.address, SEG_D);
			assert_int_equal(ev.requested_bytes, 1 * MiB);
			assert_int_equal(m->kind, MP_MEMORY_DEVICE);
			lib_time = ev.time_ns;
			lib_events++;
			continue;
		}
		if (ev.kind == MP_EV_MEMORY || !m || strcmp(m->name, "GPU:0"))
			continue;
		gpu = (int)ev.memory;
		assert_int_equal(m->kind, MP_MEMORY_DEVICE);
		assert_int_equal(m->capacity_bytes, 80ull << 30);
		if (ev.kind == MP_EV_DROPPED) {
			dropped += ev.requested_bytes;
			continue;
		}
		assert_true(k < 8);
		assert_int_equal(ev.kind, want[k].kind);
		if (ev.kind != MP_EV_ALLOC_FAILED)
			assert_int_equal(ev.address, want[k].address);
		if (ev.kind != MP_EV_FREE && ev.kind != MP_EV_REGION_REMOVE)
			assert_int_equal(ev.requested_bytes, want[k].bytes);
		assert_true(ev.time_ns >= last);
		last = times[k] = ev.time_ns;
		k++;
	}
	assert_int_equal(k, 8); /* one failure per cudaMalloc, one region per mapped chunk */
	assert_int_equal(dropped, 2);
	assert_int_equal(lib_events, 1);
	assert_true(gpu >= 0);
	mp_source_close(src);

	mp_solver_options_init(&o);
	assert_non_null(s = mp_solver_new(&o));
	assert_int_equal(mp_capture_open_source(&src, out, &diag), 0);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	for (i = 0; i < mp_solver_device_count(s); i++)
		if ((int)mp_solver_device(s, i)->id == gpu)
			dev = mp_solver_device(s, i);
	assert_non_null(dev);
	assert_int_equal(dev->reserved_peak_bytes, 22 * MiB);
	assert_int_equal(dev->peak_bytes, 12 * MiB);
	assert_int_equal(dev->peak.reserved_bytes, 22 * MiB);
	assert_int_equal(dev->dropped_events, 2);
	assert_int_equal(dev->oom_count, 1);
	assert_int_equal(dev->oom[0].requested_bytes, 10 * MiB);
	assert_int_equal(dev->oom[0].at.heap_bytes, 12 * MiB);
	assert_int_equal(dev->oom[0].at.region_free_bytes, 10 * MiB);
	assert_int_equal(dev->oom[0].at.largest_free_bytes, 8 * MiB);
	assert_true(fabs(dev->oom[0].at.fragmentation - 0.2) < 1e-12);
	assert_string_equal(mp_solver_oom_cause(&dev->oom[0]), "fragmented");
	mp_source_close(src);
	mp_solver_free(s);
	check_dump(dumpdir, times, lib_time);
	unlink(out);
	drop_runs();
	free(out);
	free(err);
}

/* The injection library alone (CUDA_INJECTION64_PATH under another
 * launcher): its own capture on MEMPROF_OUTPUT, the GPU's events only. */
static void test_fake_gpu_standalone(void **state)
{
	char *out = mp_test_tmpfile(".memprof"), cmd[4096], *err;
	mp_event_t *ev;
	mp_diag_t diag;
	mp_end_status_t end;
	int rc, kinds[8], k = 0;
	size_t n, i;

	(void)state;
	snprintf(cmd, sizeof cmd, "MEMPROF_OUTPUT=%s MEMPROF_CUPTI_LIB=%s MEMPROF_CUPTI_FLUSH_MS=50 %s %s %s", out,
		 FAKE_CUPTI, FAKE_VICTIM, INJECTION, FAKE_CUPTI);
	assert_int_equal(run(cmd, &err), 3);
	assert_string_equal(err, "");
	n = read_all(out, &ev, &rc, &diag, &end);
	assert_int_equal(rc, 0);
	assert_int_equal(end, MP_END_CLEAN);
	for (i = 0; i < n; i++)
		if (ev[i].kind != MP_EV_MEMORY && ev[i].kind != MP_EV_DROPPED && k < 8)
			kinds[k++] = ev[i].kind;
	assert_int_equal(k, 7);
	assert_int_equal(kinds[0], MP_EV_REGION_ADD);
	assert_int_equal(kinds[1], MP_EV_REGION_ADD);
	assert_int_equal(kinds[2], MP_EV_ALLOC_FAILED);
	assert_int_equal(kinds[3], MP_EV_REGION_REMOVE);
	assert_int_equal(kinds[4], MP_EV_REGION_ADD);
	assert_int_equal(kinds[5], MP_EV_REGION_REMOVE);
	assert_int_equal(kinds[6], MP_EV_REGION_ADD); /* GPU:0:libraries */
	free(ev);
	unlink(out);
	free(out);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_gpu_host_program),
		cmocka_unit_test(test_injection_without_libcupti),
		cmocka_unit_test(test_injection_cupti_cannot_start),
		cmocka_unit_test(test_fake_gpu),
		cmocka_unit_test(test_fake_gpu_standalone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
