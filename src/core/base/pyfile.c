/* pyfile.c - whose code a Python file is (memprof/pyfile.h). */
#include <memprof/pyfile.h>

#include <string.h>

static int is_torch_file(const char *f)
{
	return !strncmp(f, "torch/", 6) || strstr(f, "/torch/");
}

const char *mp_pyfile_package_path(const char *from)
{
	for (const char *p = strstr(from, "-packages/"); p; p = strstr(p + 1, "-packages/"))
		if (p - from >= 4 && (!strncmp(p - 4, "site", 4) || !strncmp(p - 4, "dist", 4)))
			return p + strlen("-packages/");
	return NULL;
}

/* f is in the installed package name[0..n): its directory or its module. */
static int in_package(const char *f, const char *name, size_t n)
{
	for (const char *p = mp_pyfile_package_path(f); p; p = mp_pyfile_package_path(p))
		if (!strncmp(p, name, n) && (p[n] == '/' || !strcmp(p + n, ".py")))
			return 1;
	return 0;
}

/* One item of --user-code: "packages" (every third-party package), a path
 * prefix (it has a '/'), or the name of an installed package. */
static int user_item_matches(const char *item, size_t n, const char *f)
{
	if (n == strlen("packages") && !strncmp(item, "packages", n))
		return mp_pyfile_package_path(f) && !is_torch_file(f);
	if (memchr(item, '/', n))
		return !strncmp(f, item, n);
	return in_package(f, item, n);
}

int mp_pyfile_user_code_names(const char *list, const char *f)
{
	while (list && *list) {
		const char *end = strchr(list, ',');
		size_t n = end ? (size_t)(end - list) : strlen(list);
		if (n && user_item_matches(list, n, f))
			return 1;
		list = end ? end + 1 : NULL;
	}
	return 0;
}

int mp_pyfile_kind(const char *f, const char *user_code)
{
	if (f[0] == '<')
		return MP_PYFILE_INTERNAL;
	if (mp_pyfile_user_code_names(user_code, f)) /* named by the user: before every rule that skips */
		return MP_PYFILE_USER;
	if (is_torch_file(f))
		return MP_PYFILE_INTERNAL;
	if (mp_pyfile_package_path(f))
		return MP_PYFILE_PACKAGE;
	if (strstr(f, "/lib/python") || strstr(f, "/lib64/python")) /* the standard library */
		return MP_PYFILE_INTERNAL;
	return MP_PYFILE_USER;
}
