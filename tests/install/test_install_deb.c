/* test_install_deb.c - the Debian package (scripts/package-deb.sh, CPack
 * DEB) of this build: its files, its fields, its Depends against what its
 * ELF files really need (deb_needs.sh: objdump, ldconfig, dpkg -S; not
 * dpkg-shlibdeps, which made the field), then unpacked into a scratch root
 * (dpkg -x) and run from there: record, report, hlo, the Python module. */
#include "test_common.h"

#include "install_run.h"
#include "json_check.h"

#include <dirent.h>
#include <jansson.h>
#include <limits.h>

static char dir[64];
static char deb[PATH_MAX];
static char root[128];

static int build_deb(void **state)
{
	DIR *d;
	struct dirent *de;
	char out[128];

	(void)state;
	if (it_mkdir(dir))
		return -1;
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	if (it_sh(dir, "'%s/scripts/package-deb.sh' '%s' '%s'", MEMPROF_SOURCE_DIR, MEMPROF_BINARY_DIR, out))
		return -1;
	d = opendir(out);
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "memprof_0.1.0_", 14) && strstr(de->d_name, ".deb"))
			snprintf(deb, sizeof(deb), "%s/%s", out, de->d_name);
	if (d)
		closedir(d);
	if (!*deb)
		return -1;
	return it_sh(dir, "mkdir '%s' && dpkg -x '%s' '%s'", root, deb, root);
}

static int remove_dir(void **state)
{
	(void)state;
	it_rmdir(dir);
	return 0;
}

/* The control field's value (dpkg-deb -f), without the newline. */
static char *field(const char *name)
{
	char *v = it_sh_out(dir, "dpkg-deb -f '%s' %s", deb, name);
	size_t n = strlen(v);

	if (n && v[n - 1] == '\n')
		v[n - 1] = '\0';
	return v;
}

static void test_fields_and_files(void **state)
{
	static const char *const files[] = {
		"./usr/bin/memprof",
		"./usr/" IT_LIBDIR "/libmemprof.so.0.1.0",
		"./usr/" IT_LIBDIR "/libmemprof.so.0 -> libmemprof.so.0.1.0",
		"./usr/" IT_LIBDIR "/libmemprof.so -> libmemprof.so.0",
		"./usr/" IT_LIBDIR "/memprof/libmemprof_preload.so",
		"./usr/" IT_LIBEXECDIR "/memprof/memprof_demo_victim",
		"./usr/include/memprof/annotate.h",
		"./usr/" IT_LIBDIR "/pkgconfig/memprof.pc",
		"./usr/" IT_LIBDIR "/cmake/memprof/memprofConfig.cmake",
		"./usr/lib/python3/dist-packages/memprof/__init__.py",
		"./usr/lib/python3/dist-packages/memprof/_location.py",
	};
	char *list, *v, *arch;
	size_t i;

	(void)state;
	list = it_sh_out(dir, "dpkg-deb -c '%s'", deb);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char line[256];
		snprintf(line, sizeof(line), " %s\n", files[i]);
		if (!strstr(list, line))
			fail_msg("%s is not in the package:\n%s", files[i], list);
	}
	free(list);
	v = field("Package");
	assert_string_equal(v, "memprof");
	free(v);
	v = field("Version");
	assert_string_equal(v, "0.1.0");
	free(v);
	v = field("Architecture");
	arch = it_sh_out(dir, "dpkg --print-architecture");
	assert_true(strlen(arch) > 1);
	arch[strlen(arch) - 1] = '\0';
	assert_string_equal(v, arch);
	free(arch);
	free(v);
	/* dpkg-deb -I: the control file and the shlibs file of libmemprof */
	v = it_sh_out(dir, "dpkg-deb -I '%s' shlibs", deb);
	assert_string_equal(v, "libmemprof 0 memprof (>= 0.1.0)\n");
	free(v);
	/* the maintainer scripts: the loader's cache, the module compiled on
	 * install and its compiled files removed before removal */
	v = it_sh_out(dir, "dpkg-deb -I '%s' postinst | grep -E '^[[:space:]]*(ldconfig|py3compile -p memprof)$'", deb);
	assert_string_equal(v, "\tldconfig\n\t\tpy3compile -p memprof\n");
	free(v);
	v = it_sh_out(dir, "dpkg-deb -I '%s' prerm | grep -c '^[[:space:]]*py3clean -p memprof$'", deb);
	assert_string_equal(v, "1\n");
	free(v);
	v = it_sh_out(dir, "dpkg-deb -I '%s' postrm | grep -c '^[[:space:]]*ldconfig$'", deb);
	assert_string_equal(v, "1\n");
	free(v);
	/* the .pc of the package names /usr */
	v = it_sh_out(dir, "grep '^prefix=' '%s/usr/" IT_LIBDIR "/pkgconfig/memprof.pc'", root);
	assert_string_equal(v, "prefix=/usr\n");
	free(v);
}

/* Depends names the package of every library the binaries need. */
static void test_depends(void **state)
{
	char *depends, *needs, *line, *save = NULL;
	static const char *const known[] = {"libc6", "zlib1g", "libcairo2", "libjansson4", "libprotobuf-c1",
					    "libfontconfig1"};
	size_t i;
	int n = 0;

	(void)state;
	depends = field("Depends");
	/* what memprof links whatever this build found (CMakeLists.txt) */
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "%s (", known[i]);
		if (!strstr(depends, name))
			fail_msg("Depends lacks %s: %s", known[i], depends);
	}
	needs = it_sh_out(dir, "sh '%s/tests/install/deb_needs.sh' '%s'", MEMPROF_SOURCE_DIR, root);
	for (line = strtok_r(needs, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *pkg = strchr(line, ' ');
		char a[96], b[96];
		assert_non_null(pkg);
		pkg++;
		/* "pkg (>= v)" or "pkg" at the end or before a comma */
		snprintf(a, sizeof(a), "%s (", pkg);
		snprintf(b, sizeof(b), "%s,", pkg);
		if (!strstr(depends, a) && !strstr(depends, b) &&
		    !(strlen(depends) >= strlen(pkg) && !strcmp(depends + strlen(depends) - strlen(pkg), pkg)))
			fail_msg("%s needs package %s, which Depends does not name: %s", line, pkg, depends);
		n++;
	}
	assert_true(n >= 6); /* libc, libm, zlib, cairo, jansson, protobuf-c at least */
	free(needs);
	free(depends);
	depends = field("Recommends");
	assert_string_equal(depends, "fonts-dejavu-core, python3");
	free(depends);
}

/* The unpacked binary records the demo's program with its own preload,
 * reports it and reads an HLO module. */
static void test_runs_from_root(void **state)
{
	char memprof[256], cap[128], *out;
	json_t *doc;
	const json_t *pool;
	const char *hlo;

	(void)state;
	snprintf(memprof, sizeof(memprof), "%s/usr/bin/memprof", root);
	snprintf(cap, sizeof(cap), "%s/demo.memprof", dir);
	it_sh_ok(dir, "env -u MEMPROF_PRELOAD '%s' record -o '%s' -- '%s/usr/" IT_LIBEXECDIR
		      "/memprof/memprof_demo_victim' >/dev/null",
		 memprof, cap, root);
	/* tests/demo/test_demo.c's figures */
	doc = it_report(dir, memprof, "--peak --oom", cap);
	pool = it_device(doc, "GPU_0_bfc");
	assert_int_equal(it_int(json_object_get(pool, "peak"), "bytes"), 63 * 1048576);
	assert_int_equal(it_int(json_object_get(pool, "peak"), "step"), 3);
	assert_int_equal(it_int(pool, "allocations"), 88);
	assert_int_equal(it_int(pool, "failed_allocations"), 1);
	json_decref(doc);

	hlo = mp_test_shared("hlo/maxtext-h100/module_0003.jit__unnamed_wrapped_function_."
			     "sm_9.0_gpu_after_optimizations.hlo.pb");
	if (hlo) {
		/* tests/hlo/test_hlo_cli.c's golden figures */
		out = it_sh_out(dir, "'%s' hlo --json --compat=xprof '%s'", memprof, hlo);
		doc = mp_test_json_loads(out, "hlo");
		assert_int_equal(it_int(doc, "peak_heap_bytes"), 2007644692);
		assert_int_equal(it_int(doc, "peak_position"), 34);
		json_decref(doc);
		free(out);
	}

	/* the package's Python module finds the package's libmemprof.so */
	if (IT_HAVE_PYTHON) {
		snprintf(cap, sizeof(cap), "%s/py.memprof", dir);
		out = it_sh_out(dir,
				"env -u LD_PRELOAD MEMPROF_OUTPUT='%s' PYTHONDONTWRITEBYTECODE=1 "
				"PYTHONPATH='%s/usr/lib/python3/dist-packages' '%s' -c 'import memprof\n"
				"memprof.step(7)\nmemprof.mark(\"deb\")\nprint(memprof._lib._name)'",
				cap, root, IT_PYTHON);
		{
			char expect[256];
			snprintf(expect, sizeof(expect), "%s/usr/" IT_LIBDIR "/libmemprof.so.0\n", root);
			assert_string_equal(out, expect);
		}
		free(out);
		out = it_sh_out(dir, "'%s' dump '%s' | grep -c ' step=7 mark label=\"deb\"'", memprof, cap);
		assert_string_equal(out, "1\n");
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields_and_files),
		cmocka_unit_test(test_depends),
		cmocka_unit_test(test_runs_from_root),
	};
	return cmocka_run_group_tests(tests, build_deb, remove_dir);
}
