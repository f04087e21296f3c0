/* py_run.c - what the Python checks share (py_run.h). Every command goes
 * through sh under `timeout`, so that a program that hangs fails its test
 * instead of the suite's deadline. */
#include "test_common.h"

#include "json_check.h"
#include "py_run.h"

#include <math.h>

#define PY_TIMEOUT_S 180

int py_interps(py_interp_t *out, int max)
{
	static const char *const versions[] = {"3.11.7", "3.12.1", "3.13.0"};
	const char *root = getenv("PYENV_ROOT"), *home = getenv("HOME");
	char base[512];
	int n = 0;

	if (root && root[0])
		snprintf(base, sizeof(base), "%s", root);
	else
		snprintf(base, sizeof(base), "%s/.pyenv", home ? home : "/root");
	for (size_t k = 0; k < sizeof(versions) / sizeof(versions[0]) && n < max; k++, n++) {
		snprintf(out[n].name, sizeof(out[n].name), "pyenv %s", versions[k]);
		snprintf(out[n].path, sizeof(out[n].path), "%s/versions/%s/bin/python3", base, versions[k]);
		snprintf(out[n].cmd, sizeof(out[n].cmd), "%s", out[n].path);
	}
	if (n < max) {
		snprintf(out[n].name, sizeof(out[n].name), "/usr/bin/python3.11");
		snprintf(out[n].path, sizeof(out[n].path), "/usr/bin/python3.11");
		snprintf(out[n].cmd, sizeof(out[n].cmd), "/usr/bin/python3.11");
		n++;
	}
	if (n < max) { /* the shim needs the version it names too */
		snprintf(out[n].name, sizeof(out[n].name), "pyenv shim (PYENV_VERSION=3.12.1 python3)");
		snprintf(out[n].path, sizeof(out[n].path), "%s/shims/python3", base);
		snprintf(out[n].cmd, sizeof(out[n].cmd), "PYENV_VERSION=3.12.1 PATH=%s/shims:\"$PATH\" python3", base);
		n++;
	}
	return n;
}

int py_present(const py_interp_t *py)
{
	if (access(py->path, X_OK) == 0) {
		if (!strstr(py->name, "shim"))
			return 1;
		char alt[1100];
		snprintf(alt, sizeof(alt), "%.*s/versions/3.12.1/bin/python3", (int)(strstr(py->path, "/shims/") - py->path),
			 py->path);
		if (access(alt, X_OK) == 0)
			return 1;
	}
	fprintf(stderr, "skip %s: %s is absent\n", py->name, py->path);
	return 0;
}

char *py_sh(const char *cmd, int *status)
{
	char *full = malloc(4 * strlen(cmd) + 128), *buf = malloc(1 << 20), *w;
	size_t n = 0, cap = 1 << 20, got;
	FILE *f;
	int st;

	assert_non_null(full);
	assert_non_null(buf);
	/* cmd single-quoted for the inner sh; the sanitizer runtime of a
	 * sanitized driver must not follow into the programs */
	w = full + sprintf(full, "unset LD_PRELOAD; timeout %d sh -c '", PY_TIMEOUT_S);
	for (const char *c = cmd; *c; c++)
		w += *c == '\'' ? sprintf(w, "'\\''") : sprintf(w, "%c", *c);
	sprintf(w, "'");
	fflush(NULL);
	f = popen(full, "r");
	assert_non_null(f);
	/* all of it: a report stopped by a closed pipe would exit with 141 */
	while ((got = fread(buf + n, 1, cap - 1 - n, f)) > 0) {
		n += got;
		if (n + 1 == cap) {
			buf = realloc(buf, cap *= 2);
			assert_non_null(buf);
		}
	}
	buf[n] = '\0';
	st = pclose(f);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	free(full);
	return buf;
}

int py_record(const char *run, const char *prog, char **out)
{
	const char *cut = strstr(prog, " python3 ");
	char cmd[MP_TEST_CMD_MAX];
	char *o;
	int st;

	/* "ENV=V ... python3 ARGS" (the shim): the assignments go before
	 * memprof, which looks python3 up in the PATH they set, as a shell
	 * does */
	if (prog[0] == '/' || !cut)
		cut = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'; export MEMPROF_PRELOAD='%s' %.*s; '%s' record --stacks -o '%s' -- %s 2>'%s.log'",
		 run, PY_PRELOAD, cut ? (int)(cut - prog) : 0, prog, PY_MEMPROF, run, cut ? cut + 1 : prog, run);
	o = py_sh(cmd, &st);
	if (st != 0) { /* what memprof record said, for the failure's message */
		snprintf(cmd, sizeof(cmd), "cat '%s.log' >&2", run);
		free(py_sh(cmd, &(int){0}));
	}
	if (out)
		*out = o;
	else
		free(o);
	return st;
}

json_t *py_report_json(const char *opts, const char *run)
{
	char cmd[MP_TEST_CMD_MAX], *out;
	json_t *doc;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' report %s --json '%s'", PY_MEMPROF, opts, run);
	out = py_sh(cmd, &st);
	if (st != 0)
		fail_msg("'%s' exited with %d", cmd, st);
	doc = mp_test_json_loads(out, "report");
	free(out);
	assert_non_null(doc);
	return doc;
}

int py_site_line(const char *path, const char *name)
{
	FILE *f = fopen(path, "r");
	char line[1024], want[128];
	int n = 0;

	assert_non_null(f);
	snprintf(want, sizeof(want), "# SITE:%s\n", name);
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line), wl = strlen(want);
		n++;
		if (len >= wl && !strcmp(line + len - wl, want)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("%s has no line marked SITE:%s", path, name);
	return -1;
}

/* The report's by-function rows, failing when it has none. */
static const json_t *rows_of(const json_t *report)
{
	const json_t *rows = json_object_get(json_object_get(report, "functions"), "rows");

	if (!json_is_array(rows))
		fail_msg("the report has no by-function rows (\"functions\": {\"rows\": [...]})");
	return rows;
}

static int row_at(const json_t *r, const char *file, int line)
{
	const json_t *f = json_object_get(r, "file"), *l = json_object_get(r, "line");
	const char *m = json_string_value(json_object_get(r, "memory"));

	return json_is_string(f) && !strcmp(json_string_value(f), file) && json_is_integer(l) &&
	       json_integer_value(l) == line && !(m && !strcmp(m, "host_mmap"));
}

uint64_t py_line_sum(const json_t *report, const char *file, int line, const char *key)
{
	const json_t *rows = rows_of(report), *r;
	uint64_t sum = 0;
	size_t i;

	json_array_foreach(rows, i, r)
		if (row_at(r, file, line))
			sum += (uint64_t)json_integer_value(json_object_get(r, key));
	return sum;
}

size_t py_file_rows(const json_t *report, const char *file)
{
	const json_t *rows = rows_of(report), *r;
	size_t i, n = 0;

	json_array_foreach(rows, i, r) {
		const json_t *f = json_object_get(r, "file");
		n += json_is_string(f) && !strcmp(json_string_value(f), file);
	}
	return n;
}

const char *py_line_function(const json_t *report, const char *file, int line)
{
	const json_t *rows = rows_of(report), *r;
	const char *best = "";
	json_int_t most = -1;
	size_t i;

	json_array_foreach(rows, i, r) {
		json_int_t b = json_integer_value(json_object_get(r, "peak_bytes"));
		if (row_at(r, file, line) && b > most && json_is_string(json_object_get(r, "function"))) {
			most = b;
			best = json_string_value(json_object_get(r, "function"));
		}
	}
	return best;
}

int py_within(uint64_t got, uint64_t want, double pct)
{
	return fabs((double)got - (double)want) <= (double)want * pct / 100.0;
}

int py_svg_rects(const char *path, py_rect_t *out, int max)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	int n = 0;

	if (!f)
		return -1;
	/* cairo writes one element a line: <path style=" stroke:none;...fill:rgb(...);..." d="M x0 y0 L x1 y0 L x1 y1
	 * L x0 y1 Z M x0 y0 "/> for a filled rectangle; the legend's swatches are stroked, the glyphs are <symbol>s */
	while (fgets(line, sizeof(line), f) && n < max) {
		const char *d = strstr(line, " d=\"M ");
		double x[4], y[4];
		if (strncmp(line, "<path style=\" stroke:none;", 26) || !strstr(line, "fill:rgb(") || !d)
			continue;
		if (sscanf(d, " d=\"M %lf %lf L %lf %lf L %lf %lf L %lf %lf Z", &x[0], &y[0], &x[1], &y[1], &x[2], &y[2],
			   &x[3], &y[3]) != 8)
			continue;
		if (y[0] != y[1] || x[1] != x[2] || y[2] != y[3] || x[3] != x[0])
			continue; /* not an axis-aligned rectangle */
		out[n++] = (py_rect_t){x[0], y[0], x[1], y[2]};
	}
	fclose(f);
	return n;
}

int py_setup(void **state)
{
	py_fixture_t *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/memprof-py-XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

int py_teardown(void **state)
{
	py_fixture_t *fx = *state;
	char cmd[256];
	int st;

	if (getenv("MEMPROF_TEST_KEEP")) {
		fprintf(stderr, "kept %s\n", fx->dir);
	} else {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
		free(py_sh(cmd, &st));
	}
	free(fx);
	return 0;
}
