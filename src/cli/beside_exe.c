/* beside_exe.c - the files `memprof` runs that are not part of its own
 * executable: the preload library `memprof record` injects and the example
 * program `memprof demo` records.
 *
 * They are found relative to the memprof executable itself
 * (/proc/self/exe), never through a path fixed at build time, so that the
 * same binary works where it was built and wherever it is installed
 * (`cmake --install --prefix P`, the .deb, a copied prefix):
 *
 *   installed   P/bin/memprof
 *               P/<libdir>/memprof/libmemprof_preload.so
 *               P/<libexecdir>/memprof/memprof_demo_victim
 *   build tree  B/src/cli/memprof
 *               B/allocator_hooks/libmemprof_preload.so
 *               B/src/demo/memprof_demo_victim
 *
 * The relative paths come from CMake (MEMPROF_*_REL, computed from
 * GNUInstallDirs and the build tree's layout; docs/install.md). An
 * environment variable names the file instead when set. When nothing is
 * found the error lists every path that was tried, so that a broken
 * install says what is missing. */
#include "cli.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef MEMPROF_PRELOAD_INSTALL_REL
#define MEMPROF_PRELOAD_INSTALL_REL "../lib/memprof"
#endif
#ifndef MEMPROF_PRELOAD_BUILD_REL
#define MEMPROF_PRELOAD_BUILD_REL "../../allocator_hooks"
#endif
#ifndef MEMPROF_DEMO_INSTALL_REL
#define MEMPROF_DEMO_INSTALL_REL "../libexec/memprof"
#endif
#ifndef MEMPROF_DEMO_BUILD_REL
#define MEMPROF_DEMO_BUILD_REL "../demo"
#endif

/* Look for name in each of the directories rel[] (relative to the
 * directory of the memprof executable); mode is access()'s. On success the
 * canonical path is in out. Otherwise prints one error naming every path
 * tried and returns MP_EXIT_IO. env, when set and not empty, is the path
 * to use instead, and only it is tried. */
static int find_beside_exe(const char *what, const char *name, const char *env, const char *const rel[],
			   size_t nrel, int mode, char *out, size_t size)
{
	const char *given = getenv(env);
	char exe[PATH_MAX], tried[3 * (PATH_MAX + 8)] = "", *dir;
	size_t used = 0, i;
	ssize_t n;

	if (given && *given) {
		if (access(given, mode) == 0 && snprintf(out, size, "%s", given) < (int)size)
			return 0;
		mp_cli_error("%s '%s' (from %s) cannot be used: %s", what, given, env, strerror(errno));
		return MP_EXIT_IO;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		mp_cli_error("cannot find %s %s: /proc/self/exe cannot be read (%s); set %s to its path", what,
			     name, strerror(errno), env);
		return MP_EXIT_IO;
	}
	exe[n] = '\0';
	dir = dirname(exe);
	for (i = 0; i < nrel; i++) {
		char cand[PATH_MAX + 128];
		int w;

		snprintf(cand, sizeof(cand), "%s/%s/%s", dir, rel[i], name);
		if (access(cand, mode) == 0 && realpath(cand, out))
			return 0;
		w = snprintf(tried + used, sizeof(tried) - used, "%s'%s'", i ? " and " : "", cand);
		if (w > 0 && (size_t)w < sizeof(tried) - used)
			used += (size_t)w;
	}
	mp_cli_error("cannot find %s: looked for %s; set %s to its path", what, tried, env);
	return MP_EXIT_IO;
}

int mp_cli_find_preload(char *out, size_t size)
{
	static const char *const rel[] = {MEMPROF_PRELOAD_INSTALL_REL, MEMPROF_PRELOAD_BUILD_REL};

	return find_beside_exe("the preload library", "libmemprof_preload.so", "MEMPROF_PRELOAD", rel,
			       sizeof(rel) / sizeof(rel[0]), R_OK, out, size);
}

int mp_cli_find_demo(char *out, size_t size)
{
	static const char *const rel[] = {MEMPROF_DEMO_INSTALL_REL, MEMPROF_DEMO_BUILD_REL};

	return find_beside_exe("the example program", "memprof_demo_victim", "MEMPROF_DEMO_PROGRAM", rel,
			       sizeof(rel) / sizeof(rel[0]), X_OK, out, size);
}
