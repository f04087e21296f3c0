/* xplane_logdir.c - TensorBoard log directories: plugins/profile/<run>/
 * <host>.xplane.pb discovery, run selection, and how `memprof report`
 * turns its FILE arguments into xplane sources. */
#include <memprof/vec.h>
#include <memprof/xplane.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DEPTH 8
#define MAX_ENTRIES 200000 /* directory entries looked at, in all */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

static int is_xplane_name(const char *name)
{
	return (ends_with(name, ".xplane.pb") && strlen(name) > 10) ||
	       (ends_with(name, ".xplane.pb.gz") && strlen(name) > 13);
}

int mp_xplane_path_is_candidate(const char *path)
{
	struct stat st;

	if (is_xplane_name(path) || ends_with(path, ".xpb"))
		return 1;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s%s%s", a, ends_with(a, "/") ? "" : "/", b);
	return p;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_free(mp_xplane_run_t *r)
{
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		free(r->paths[i]);
		free(r->hosts[i]);
	}
	free(r->paths);
	free(r->hosts);
	free(r->name);
	free(r->dir);
}

void mp_xplane_runs_free(mp_xplane_runs_t *runs)
{
	size_t i;

	if (!runs)
		return;
	for (i = 0; i < runs->n; i++)
		run_free(&runs->runs[i]);
	free(runs->runs);
	runs->runs = NULL;
	runs->n = 0;
}

/* If dir holds *.xplane.pb files, add it as a run. */
static int add_run_if_any(mp_xplane_runs_t *runs, const char *dir, size_t *budget)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	mp_xplane_run_t r;
	const char *base;
	size_t cap = 0, i;
	mp_xplane_run_t *nr;

	if (!d)
		return 0;
	memset(&r, 0, sizeof(r));
	while ((e = readdir(d)) != NULL && *budget > 0) {
		(*budget)--;
		if (!is_xplane_name(e->d_name))
			continue;
		if (MP_VEC_RESERVE(r.paths, cap, r.nhosts + 1) < 0)
			goto oom;
		r.paths[r.nhosts] = join(dir, e->d_name);
		if (!r.paths[r.nhosts])
			goto oom;
		r.nhosts++;
	}
	closedir(d);
	d = NULL;
	if (r.nhosts == 0)
		return 0;
	qsort(r.paths, r.nhosts, sizeof(*r.paths), str_cmp);
	r.hosts = calloc(r.nhosts, sizeof(*r.hosts));
	if (!r.hosts)
		goto oom;
	for (i = 0; i < r.nhosts; i++) {
		const char *b = strrchr(r.paths[i], '/');
		size_t n;

		b = b ? b + 1 : r.paths[i];
		n = strlen(b) - (ends_with(b, ".gz") ? 13 : 10);
		r.hosts[i] = strndup(b, n);
		if (!r.hosts[i])
			goto oom;
	}
	base = dir + strlen(dir);
	while (base > dir && base[-1] == '/')
		base--;
	{
		const char *end = base;

		while (base > dir && base[-1] != '/')
			base--;
		r.name = strndup(base, (size_t)(end - base));
	}
	r.dir = strdup(dir);
	if (!r.name || !r.dir)
		goto oom;
	nr = realloc(runs->runs, (runs->n + 1) * sizeof(*nr));
	if (!nr)
		goto oom;
	runs->runs = nr;
	runs->runs[runs->n++] = r;
	return 1;
oom:
	if (d)
		closedir(d);
	run_free(&r);
	return MP_ENOMEM;
}

static int walk(mp_xplane_runs_t *runs, const char *dir, int depth, size_t *budget)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (ends_with(dir, "plugins/profile") || ends_with(dir, "plugins/profile/")) {
		/* every subdirectory is a run */
		d = opendir(dir);
		if (!d)
			return 0;
		while (rc >= 0 && (e = readdir(d)) != NULL && *budget > 0) {
			char *sub;
			struct stat st;

			(*budget)--;
			if (e->d_name[0] == '.')
				continue;
			sub = join(dir, e->d_name);
			if (!sub) {
				rc = MP_ENOMEM;
				break;
			}
			if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
				rc = add_run_if_any(runs, sub, budget);
			free(sub);
		}
		closedir(d);
		return rc < 0 ? rc : 0;
	}
	if (depth >= MAX_DEPTH)
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while (rc >= 0 && (e = readdir(d)) != NULL && *budget > 0) {
		char *sub;
		struct stat st;

		(*budget)--;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		sub = join(dir, e->d_name);
		if (!sub) {
			rc = MP_ENOMEM;
			break;
		}
		/* lstat: never follow directory symlinks (no loops) */
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			rc = walk(runs, sub, depth + 1, budget);
		free(sub);
	}
	closedir(d);
	return rc < 0 ? rc : 0;
}

static int run_cmp(const void *a, const void *b)
{
	const mp_xplane_run_t *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->dir, y->dir);
}

int mp_xplane_find_runs(const char *dir, mp_xplane_runs_t *out, mp_diag_t *diag)
{
	size_t budget = MAX_ENTRIES;
	struct stat st;
	int rc;

	memset(out, 0, sizeof(*out));
	mp_diag_set_file(diag, dir);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return mp_diag_set(diag, MP_ENOTFOUND, -1, -1, "not a directory");
	rc = walk(out, dir, 0, &budget);
	/* the directory itself may be a run directory */
	if (rc == 0 && out->n == 0)
		rc = add_run_if_any(out, dir, &budget);
	if (rc < 0) {
		mp_xplane_runs_free(out);
		return mp_diag_set(diag, rc, -1, -1, "%s", mp_strerror(rc));
	}
	if (out->n == 0)
		return mp_diag_set(diag, MP_ENOTFOUND, -1, -1,
				   "no profiler capture found (expected plugins/profile/<run>/<host>.xplane.pb "
				   "within %d levels)", MAX_DEPTH);
	qsort(out->runs, out->n, sizeof(*out->runs), run_cmp);
	return 0;
}

static void list_runs(char *buf, size_t size, const mp_xplane_runs_t *runs, const char *name)
{
	size_t used = 0, i, h;

	buf[0] = '\0';
	for (i = 0; i < runs->n && used + 1 < size; i++) {
		const mp_xplane_run_t *r = &runs->runs[i];
		int w;

		if (name && strcmp(r->name, name) != 0)
			continue;
		/* directories only when names clash (diag text is short) */
		if (name)
			w = snprintf(buf + used, size - used, "%s'%s' (%s; hosts:", used ? ", " : "", r->name, r->dir);
		else
			w = snprintf(buf + used, size - used, "%s'%s' (hosts:", used ? ", " : "", r->name);
		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
		for (h = 0; h < r->nhosts && used + 1 < size; h++) {
			w = snprintf(buf + used, size - used, " %s", r->hosts[h]);
			if (w < 0 || (size_t)w >= size - used)
				break;
			used += (size_t)w;
		}
		if (used + 2 < size) {
			buf[used++] = ')';
			buf[used] = '\0';
		}
	}
}

int mp_xplane_select_run(const mp_xplane_runs_t *runs, const char *name, mp_diag_t *diag)
{
	char list[2048];
	size_t i, matches = 0, found = 0;

	if (runs->n == 0)
		return mp_diag_set(diag, MP_ENOTFOUND, -1, -1, "no runs");
	if (!name) {
		const mp_xplane_run_t *last = &runs->runs[runs->n - 1];

		if (runs->n > 1 && !strcmp(runs->runs[runs->n - 2].name, last->name)) {
			list_runs(list, sizeof(list), runs, last->name);
			return mp_diag_set(diag, MP_EUSAGE, -1, -1,
					   "several runs are named '%s'; choose one with --run DIR: %s", last->name,
					   list);
		}
		return (int)(runs->n - 1);
	}
	for (i = 0; i < runs->n; i++) {
		const mp_xplane_run_t *r = &runs->runs[i];
		size_t dl = strlen(r->dir), nl = strlen(name);

		if (!strcmp(r->name, name) || !strcmp(r->dir, name) ||
		    (dl > nl && r->dir[dl - nl - 1] == '/' && !strcmp(r->dir + dl - nl, name))) {
			matches++;
			found = i;
		}
	}
	if (matches == 1)
		return (int)found;
	list_runs(list, sizeof(list), runs, matches ? name : NULL);
	if (matches == 0)
		return mp_diag_set(diag, MP_ENOTFOUND, -1, -1, "no run '%s'; runs: %s", name, list);
	return mp_diag_set(diag, MP_EUSAGE, -1, -1, "several runs match '%s'; choose one with --run DIR: %s", name,
			   list);
}
