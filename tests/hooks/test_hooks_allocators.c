/* test_hooks_allocators.c - `memprof record` beside other allocators than
 * glibc's malloc: C++ operator new and delete, the annotation API next to
 * the host heap (libmemprof linked dynamically or compiled in), a thread
 * without its ring, the preload over jemalloc and tcmalloc; and the
 * symbols the preload library exports.
 *
 * As in test_hooks_heap.c: each test records a victim and replays the
 * capture with hooks_check.c, asserting figures hand-computed from the
 * victim's source. The driver itself may be sanitized; the victims and
 * the preload library never are.
 */
#include "test_common.h"

#include "hooks_run.h"

#include <fcntl.h>
#include <sys/wait.h>

/* --- C++ operator new and delete ------------------------------------------- */

/* victim_cxx's blocks (hand-counted in victim_cxx.cpp): each allocated and
 * freed once, and the two failed news of 2^50 bytes, nothrow and throwing
 * (std::bad_alloc); the block of 55 bytes after the exception shows that
 * recording went on; 321 bytes from memprof_victim::make_buffer. */
static void check_cxx(const char *cap)
{
	static const uint64_t sizes[] = {1234, 1200, 24, 4, 128, 77, 55, 321};
	hk_stats_t st = {0};
	int i;

	st.nwatch = 8;
	for (i = 0; i < 8; i++)
		st.watch[i].size = sizes[i];
	hk_replay_ok(cap, &st);
	for (i = 0; i < 8; i++) {
		assert_int_equal(st.watch[i].allocs, 1);
		assert_int_equal(st.watch[i].frees, 1);
	}
	assert_int_equal(st.nfailed, 2);
	assert_int_equal(st.failed_req[0], (uint64_t)1 << 50);
	assert_int_equal(st.failed_req[1], (uint64_t)1 << 50);
	assert_int_equal(st.unknown_frees, 0);
}

static void test_hooks_cxx(void **state)
{
	tmpdir_t *t = *state;

	if (!HK_HAVE_CXX) {
		fprintf(stderr, "skip: no C++ compiler, no victim_cxx\n");
		skip();
	}
	assert_int_equal(hk_record(t->cap, NULL, "victim_cxx", NULL, NULL), 0);
	check_cxx(t->cap);
}

/* --- annotations next to the host heap ---------------------------------- */

static void check_annotate(void **state, const char *victim)
{
	tmpdir_t *t = *state;
	hk_stats_t host = {0}, pool = {0};
	char names[8][600];

	host.nwatch = 1;
	host.watch[0].size = 555;
	assert_int_equal(hk_record(t->cap, NULL, victim, NULL, NULL), 0);
	assert_int_equal(hk_other_captures(t->cap, names, 8), 0); /* one capture, shared */
	hk_replay_ok(t->cap, &host);
	assert_int_equal(host.memories, 2);
	assert_int_equal(host.watch[0].allocs, 1);
	assert_int_equal(host.watch[0].frees, 1);
	assert_string_equal(host.watch[0].op_name, "conv2d");
	pool.memory = "GPU_0_bfc";
	hk_replay_ok(t->cap, &pool);
	assert_int_equal(pool.allocs, 3);
	assert_int_equal(pool.frees, 1);
	assert_int_equal(pool.peak, 4096 + 8192 + 16384);
	assert_int_equal(pool.live_bytes, 4096 + 16384);
	assert_int_equal(pool.regions_added, 1);
}

/* libmemprof.so linked dynamically: the preload's memprof_* win. */
static void test_hooks_annotate(void **state)
{
	check_annotate(state, "victim_annotate");
}

/* libmemprof compiled into the program: it forwards to the preload's
 * memprof_api_table_v1. */
static void test_hooks_annotate_static(void **state)
{
	check_annotate(state, "victim_annotate_static");
}

/* A thread whose ring cannot be mapped (victim_noring.c: the address space
 * limited below a ring's size) records nothing, and says so: its 2000
 * events are counted as dropped, in the capture and in what `memprof
 * record` prints. The program is not disturbed. */
static void test_hooks_no_ring_counted(void **state)
{
	tmpdir_t *t = *state;
	/* the ring's default size, whatever the caller's environment says (a
	 * small MEMPROF_RING_KB would fit under the victim's limit) */
	const char *env[] = {"MEMPROF_REGIONS=0", "MEMPROF_RING_KB=16384", NULL};
	char log[200], *out;
	hk_stats_t st = {0};

	st.nwatch = 2;
	st.watch[0].size = 48;
	st.watch[1].size = 5555;
	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, "victim_noring", NULL, env), 0);
	hk_replay_ok(t->cap, &st);
	assert_int_equal(st.abrupt, 0);
	assert_int_equal(st.dropped, 2000);
	assert_int_equal(st.watch[0].allocs, 0);
	assert_int_equal(st.watch[1].allocs, 1);
	assert_int_equal(st.watch[1].frees, 1);
	out = hk_read_text(log);
	assert_non_null(strstr(out, "memprof: warning: 2000 host heap events were not recorded (dropped)"));
	free(out);

	/* the same through the annotation API: a pool's events */
	{
		const char *args[] = {"api", NULL};
		hk_stats_t ps = {0};
		unlink(t->cap);
		ps.memory = "pool";
		assert_int_equal(hk_record(t->cap, NULL, "victim_noring", args, env), 0);
		hk_replay_ok(t->cap, &ps);
		assert_int_equal(ps.abrupt, 0);
		assert_int_equal(ps.dropped, 2000);
		assert_int_equal(ps.allocs, 0);
	}
}

/* Preloaded on top of another allocator (the first of libs that is
 * installed): the originals come from dlsym(RTLD_NEXT), allocated sizes
 * from that allocator's malloc_usable_size, and there are no glibc regions
 * (reading its blocks as glibc chunks crashed on tcmalloc, which also
 * exports __libc_malloc). The allocated sizes expected are what the
 * allocator itself says, run untraced ("usable" mode). Runs the victim
 * directly (the driver may carry ASan, which must stay first in its own
 * LD_PRELOAD). */
static void over_allocator(tmpdir_t *t, const char *name, const char *const *libs)
{
	static const uint64_t sizes[][3] = {{1000, 2, 2}, {5000, 1, 1}, {3000, 1, 1}, {200000, 1, 0},
					    {7, 1, 0}};
	const char *lib = NULL;
	char pre[1024], out[256], vpath[512], upath[300], *text, *p;
	uint64_t usable[5];
	hk_stats_t st = {0};
	int i, status = 0, fd;
	pid_t pid;

	for (i = 0; libs[i]; i++)
		if (access(libs[i], R_OK) == 0)
			lib = libs[i];
	if (!lib) {
		fprintf(stderr, "skip: %s is not installed\n", name);
		skip();
	}
	snprintf(vpath, sizeof(vpath), "%s/victim_seq", HK_VICTIM_DIR);
	snprintf(upath, sizeof(upath), "%s/usable.txt", t->dir);
	for (int traced = 0; traced < 2; traced++) {
		if (traced)
			snprintf(pre, sizeof(pre), "LD_PRELOAD=%s:%s", HK_PRELOAD, lib);
		else
			snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", lib);
		snprintf(out, sizeof(out), "MEMPROF_OUTPUT=%s", t->cap);
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			char *argv[] = {vpath, (char *)(uintptr_t)(traced ? "exit" : "usable"), NULL};
			char *envp[] = {pre, out, NULL};
			if (!traced) {
				if ((fd = open(upath, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 || dup2(fd, 1) < 0)
					_exit(125);
			}
			execve(vpath, argv, envp);
			_exit(126);
		}
		assert_true(pid > 0 && waitpid(pid, &status, 0) == pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	text = hk_read_text(upath);
	for (i = 0, p = text; i < 5; i++)
		usable[i] = strtoull(p, &p, 10);
	free(text);
	/* the allocator's own size classes, not glibc's (1000 -> 1000 there) */
	assert_int_equal(usable[0], 1024);
	st.nwatch = 5;
	for (i = 0; i < 5; i++)
		st.watch[i].size = sizes[i][0];
	hk_replay_ok(t->cap, &st);
	for (i = 0; i < 5; i++) {
		assert_int_equal(st.watch[i].allocs, sizes[i][1]);
		assert_int_equal(st.watch[i].frees, sizes[i][2]);
		assert_int_equal(st.watch[i].allocated, usable[i]);
	}
	assert_int_equal(st.unknown_frees, 0);
	assert_int_equal(st.regions_added, 0);

	/* C++: the allocator's own operator new and delete (not through
	 * malloc), recorded by the preload's */
	if (HK_HAVE_CXX) {
		char cxx[512], cap[200];
		snprintf(cxx, sizeof(cxx), "%s/victim_cxx", HK_VICTIM_DIR);
		snprintf(cap, sizeof(cap), "%s/cxx.memprof", t->dir);
		snprintf(out, sizeof(out), "MEMPROF_OUTPUT=%s", cap);
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			char *argv[] = {cxx, NULL};
			char *envp[] = {pre, out, NULL};
			execve(cxx, argv, envp);
			_exit(126);
		}
		assert_true(pid > 0 && waitpid(pid, &status, 0) == pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		check_cxx(cap);
	}
}

static void test_hooks_over_jemalloc(void **state)
{
	static const char *const libs[] = {"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/libjemalloc.so.2",
					   NULL};

	over_allocator(*state, "jemalloc", libs);
}

static void test_hooks_over_tcmalloc(void **state)
{
	static const char *const libs[] = {"/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
					   "/usr/lib/libtcmalloc_minimal.so.4", NULL};

	over_allocator(*state, "tcmalloc", libs);
}

/* --- the exported symbols ---------------------------------------------------- */

static void test_hooks_exports(void **state)
{
	static const char *const allowed[] = {
		"malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "aligned_alloc",
		"posix_memalign", "valloc", "pvalloc", "execve", "execv", "execvp", "execvpe", "execl",
		"execlp", "execle", "fexecve", "execveat", "posix_spawn", "posix_spawnp", "_exit", "_Exit", "abort",
		"kill", "raise", "wait", "waitpid", "wait3", "wait4", "waitid",
		"mmap", "mmap64",
		"munmap", "mremap", "mprotect", "memprof_api_table_v1",
		/* C++ operator new and delete (preload/cxx.c) */
		"_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t",
		"_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
		"_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
		"_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
		"_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t", NULL};
	char cmd[600], line[512];
	int found_malloc = 0, n = 0;
	FILE *p;

	(void)state;
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s' 2>/dev/null", HK_PRELOAD);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *name = strrchr(line, ' ');
		int ok = 0, i;
		if (!name)
			continue;
		name++;
		name[strcspn(name, "\n@")] = '\0';
		for (i = 0; allowed[i]; i++)
			ok |= !strcmp(name, allowed[i]);
		ok |= !strncmp(name, "memprof_", 8);
		if (!ok)
			fprintf(stderr, "unexpected export: %s\n", name);
		assert_true(ok);
		found_malloc |= !strcmp(name, "malloc");
		n++;
	}
	assert_int_equal(pclose(p), 0);
	assert_true(found_malloc);
	assert_true(n >= 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hooks_exports),
		cmocka_unit_test_setup_teardown(test_hooks_cxx, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_no_ring_counted, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_annotate, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_annotate_static, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_over_jemalloc, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_over_tcmalloc, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests_name("hooks_allocators", tests, NULL, NULL);
}
