/* test_install_prefix.c - `cmake --install` into a temporary prefix, used
 * as a user would (docs/install.md): the files where GNUInstallDirs puts
 * them, a C program built with `pkg-config --cflags --libs memprof` and the
 * same one with find_package(memprof), each recorded with the installed
 * `memprof record` (consumer/annotated.c: the figures it should give,
 * worked out by hand), then the prefix moved elsewhere and still working,
 * and the error when its preload library is gone. */
#include "test_common.h"

#include "install_run.h"

#include <jansson.h>
#include <limits.h>

static char dir[64];    /* scratch: the prefix, the builds, the captures */
static char prefix[96]; /* dir/p, then dir/moved */

static int install_prefix(void **state)
{
	(void)state;
	if (it_mkdir(dir))
		return -1;
	snprintf(prefix, sizeof(prefix), "%s/p", dir);
	return it_sh(dir, "'%s' --install '%s' --prefix '%s'", IT_CMAKE, MEMPROF_BINARY_DIR, prefix);
}

static int remove_prefix(void **state)
{
	(void)state;
	it_rmdir(dir);
	return 0;
}

static int exists(const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", prefix, rel);
	return lstat(path, &st) == 0;
}

static void link_is(const char *rel, const char *target)
{
	char path[PATH_MAX], got[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", prefix, rel);
	n = readlink(path, got, sizeof(got) - 1);
	assert_true(n > 0);
	got[n] = '\0';
	assert_string_equal(got, target);
}

/* Every file the issue lists, where docs/install.md says. */
static void test_layout(void **state)
{
	char *out;

	(void)state;
	assert_true(exists("bin/memprof"));
	assert_true(exists(IT_LIBDIR "/libmemprof.so.0.1.0"));
	link_is(IT_LIBDIR "/libmemprof.so.0", "libmemprof.so.0.1.0");
	link_is(IT_LIBDIR "/libmemprof.so", "libmemprof.so.0");
	assert_true(exists("include/memprof/annotate.h"));
	assert_true(exists(IT_LIBDIR "/pkgconfig/memprof.pc"));
	assert_true(exists(IT_LIBDIR "/cmake/memprof/memprofConfig.cmake"));
	assert_true(exists(IT_LIBDIR "/cmake/memprof/memprofConfigVersion.cmake"));
	assert_true(exists(IT_LIBDIR "/cmake/memprof/memprofTargets.cmake"));
	assert_true(exists(IT_LIBDIR "/memprof/libmemprof_preload.so"));
	assert_true(exists(IT_LIBEXECDIR "/memprof/memprof_demo_victim"));
	/* the preload is not where a program's -lmemprof would find it */
	assert_false(exists(IT_LIBDIR "/libmemprof_preload.so"));
	/* the soname a program records is the major version's */
	out = it_sh_out(dir, "objdump -p '%s/" IT_LIBDIR "/libmemprof.so.0.1.0' | grep SONAME", prefix);
	assert_non_null(strstr(out, "libmemprof.so.0\n"));
	free(out);
	out = it_sh_out(dir, "'%s/bin/memprof' --version", prefix);
	assert_string_equal(out, "memprof 0.1.0\n");
	free(out);
	/* the installed header is the source tree's */
	it_sh_ok(dir, "cmp '%s/include/memprof/annotate.h' '%s/allocator_hooks/include/memprof/annotate.h'", prefix,
		 MEMPROF_SOURCE_DIR);
}

/* annotated.c's figures (see its comment), from the installed memprof. */
static void check_annotated(const char *cap)
{
	char memprof[PATH_MAX];
	json_t *doc;
	const json_t *pool, *peak, *host;

	snprintf(memprof, sizeof(memprof), "%s/bin/memprof", prefix);
	doc = it_report(dir, memprof, "--peak --leaks", cap);
	pool = it_device(doc, "GPU_0_bfc");
	assert_string_equal(json_string_value(json_object_get(pool, "kind")), "device");
	assert_int_equal(it_int(pool, "capacity_bytes"), 16777216);
	assert_int_equal(it_int(pool, "allocations"), 4);
	assert_int_equal(it_int(pool, "deallocations"), 3);
	assert_int_equal(it_int(pool, "lifetime_peak_bytes"), 786432);
	peak = json_object_get(pool, "peak");
	assert_int_equal(it_int(peak, "bytes"), 786432);
	assert_int_equal(it_int(peak, "step"), 3);
	assert_int_equal(it_int(peak, "free_bytes"), 15990784);
	assert_int_equal(it_int(peak, "largest_free_chunk_bytes"), 15990784);
	assert_true(json_real_value(json_object_get(peak, "fragmentation")) == 0.0);
	assert_int_equal(json_array_size(json_object_get(pool, "breakdown")), 2);
	it_row_is(it_row(pool, "breakdown", "embedding", 250000), "persist", "float32", "[1000,64]", 1);
	it_row_is(it_row(pool, "breakdown", "mlp", 500000), "temp", "bfloat16", "[8,8192]", 1);
	assert_int_equal(it_int(it_row(pool, "breakdown", "mlp", 500000), "total_bytes"), 524288);
	assert_int_equal(it_int(pool, "leak_bytes"), 262144);
	/* the host heap: the malloc inside attention carries the scope */
	host = it_device(doc, "host");
	it_row_is(it_row(host, "leaks", "attention", 123457), "temp", "float32", "[8,2048]", 1);
	json_decref(doc);

	/* step 2 alone: its peak is B + C over A */
	doc = it_report(dir, memprof, "--steps 2:2", cap);
	pool = it_device(doc, "GPU_0_bfc");
	peak = json_object_get(pool, "peak");
	assert_int_equal(it_int(peak, "bytes"), 393216);
	assert_int_equal(it_int(peak, "step"), 2);
	it_row_is(it_row(pool, "breakdown", "attention", 65536), "temp", "float32", "[8,2048]", 2);
	assert_int_equal(it_int(it_row(pool, "breakdown", "attention", 65536), "total_bytes"), 131072);
	json_decref(doc);
}

static void record_annotated(const char *program, const char *cap)
{
	char *log;

	it_sh_ok(dir, "'%s/bin/memprof' record -o '%s' -- '%s' 2>'%s.log'", prefix, cap, program, cap);
	log = it_sh_out(dir, "cat '%s.log'", cap);
	assert_non_null(strstr(log, "memprof: run written to"));
	free(log);
	check_annotated(cap);
}

static void test_pkgconfig_program(void **state)
{
	char *flags;
	char expect[512];

	(void)state;
	flags = it_sh_out(dir, "PKG_CONFIG_PATH='%s/" IT_LIBDIR "/pkgconfig' '%s' --cflags --libs memprof", prefix,
			  IT_PKG_CONFIG);
	snprintf(expect, sizeof(expect), "-I%s/include -L%s/" IT_LIBDIR " -lmemprof \n", prefix, prefix);
	assert_string_equal(flags, expect);
	free(flags);
	flags = it_sh_out(dir, "PKG_CONFIG_PATH='%s/" IT_LIBDIR "/pkgconfig' '%s' --modversion memprof", prefix,
			  IT_PKG_CONFIG);
	assert_string_equal(flags, "0.1.0\n");
	free(flags);
	/* as docs/install.md writes it; -rpath because the prefix is not one
	 * the loader searches */
	it_sh_ok(dir,
		 "export PKG_CONFIG_PATH='%s/" IT_LIBDIR "/pkgconfig'; '%s' -o '%s/annotated_pc' "
		 "'%s/tests/install/consumer/annotated.c' $('%s' --cflags --libs memprof) -Wl,-rpath,'%s/" IT_LIBDIR "'",
		 prefix, IT_CC, dir, MEMPROF_SOURCE_DIR, IT_PKG_CONFIG, prefix);
	{
		char prog[128], cap[128];
		snprintf(prog, sizeof(prog), "%s/annotated_pc", dir);
		snprintf(cap, sizeof(cap), "%s/pc.memprof", dir);
		record_annotated(prog, cap);
	}
	/* not recording: every call returns at once, the program says so */
	assert_int_equal(it_sh(dir, "'%s/annotated_pc'", dir), 3);
}

static void test_cmake_program(void **state)
{
	char prog[128], cap[128], *found, expect[256];

	(void)state;
	it_sh_ok(dir, "'%s' -S '%s/tests/install/consumer' -B '%s/cmake-build' -G Ninja -DCMAKE_C_COMPILER='%s' "
		 "-DCMAKE_PREFIX_PATH='%s'",
		 IT_CMAKE, MEMPROF_SOURCE_DIR, dir, IT_CC, prefix);
	it_sh_ok(dir, "'%s' --build '%s/cmake-build'", IT_CMAKE, dir);
	found = it_sh_out(dir, "cat '%s/cmake-build/found.txt'", dir);
	snprintf(expect, sizeof(expect), "0.1.0\n%s/bin/memprof\n", prefix);
	assert_string_equal(found, expect);
	free(found);
	snprintf(prog, sizeof(prog), "%s/cmake-build/annotated", dir);
	snprintf(cap, sizeof(cap), "%s/cmake.memprof", dir);
	record_annotated(prog, cap);
}

/* The installed tree moved whole (a copied prefix, an unpacked tarball):
 * memprof finds its preload and the demo's program from where it is now;
 * without the preload it says which file it looked for. */
static void test_moved_prefix(void **state)
{
	char cap[128], memprof[128];
	char *err, expect[512];
	json_t *doc;
	const json_t *pool;

	(void)state;
	it_sh_ok(dir, "mv '%s' '%s/moved'", prefix, dir);
	snprintf(prefix, sizeof(prefix), "%s/moved", dir);
	snprintf(memprof, sizeof(memprof), "%s/bin/memprof", prefix);
	snprintf(cap, sizeof(cap), "%s/demo.memprof", dir);
	it_sh_ok(dir, "env -u MEMPROF_PRELOAD '%s' record -o '%s' -- '%s/" IT_LIBEXECDIR "/memprof/memprof_demo_victim'",
		 memprof, cap, prefix);
	/* the demo's figures (tests/demo/test_demo.c): a 63 MiB peak at step 3 */
	doc = it_report(dir, memprof, "", cap);
	pool = it_device(doc, "GPU_0_bfc");
	assert_int_equal(it_int(json_object_get(pool, "peak"), "bytes"), 63 * 1048576);
	assert_int_equal(it_int(json_object_get(pool, "peak"), "step"), 3);
	assert_int_equal(it_int(pool, "failed_allocations"), 1);
	json_decref(doc);
	it_sh_ok(dir, "cd '%s' && env -u MEMPROF_DEMO_PROGRAM '%s' demo -o '%s/demo2.memprof' >/dev/null", dir,
		 memprof, dir);

	it_sh_ok(dir, "rm '%s/" IT_LIBDIR "/memprof/libmemprof_preload.so'", prefix);
	assert_int_equal(it_sh(dir, "env -u MEMPROF_PRELOAD '%s' record -o '%s/x.memprof' -- true 2>'%s/err'", memprof,
			       dir, dir),
			 3);
	err = it_sh_out(dir, "cat '%s/err'", dir);
	snprintf(expect, sizeof(expect),
		 "memprof: error: cannot find the preload library: looked for "
		 "'%s/bin/%s/libmemprof_preload.so' and '%s/bin/%s/libmemprof_preload.so'; "
		 "set MEMPROF_PRELOAD to its path\n",
		 prefix, IT_PRELOAD_INSTALL_REL, prefix, IT_PRELOAD_BUILD_REL);
	assert_string_equal(err, expect);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_pkgconfig_program),
		cmocka_unit_test(test_cmake_program),
		cmocka_unit_test(test_moved_prefix), /* last: it moves the prefix */
	};
	return cmocka_run_group_tests(tests, install_prefix, remove_prefix);
}
