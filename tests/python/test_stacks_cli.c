/* test_stacks_cli.c - the call-stack commands end to end on real captures
 * (issue 40, "How it is checked"); none of it needs memprof's Python
 * frames, so it always runs:
 *
 * - `report --tree`: a Python's host tree starts at its outermost Python
 *   frame (<module> at depth 1), the interpreter's start only with
 *   --all-frames;
 * - `plot --chart flame`: the widest frame under the root is as wide as
 *   `report --tree`'s top row says (its bytes over the root's, of the
 *   plot's width, to the pixel the chart rounds to), on a Python program
 *   with two threads and on sites.py (the first Python 3.11+ present);
 * - a capture without stacks: `report --tree` and `plot --chart flame` say
 *   so in one line and exit 1, `report --by-function` exits 2;
 * - a stripped program (victim_stripped_s): `report --by-function`,
 *   `--tree` and the flame chart show its frames as addresses
 *   (victim_stripped_s+0x...) and never crash. */
#include "test_common.h"

#include "json_check.h"
#include "py_run.h"

#include <memprof/flame.h>

#define SCRIPTS MEMPROF_SOURCE_DIR "/tests/python"
#define MAX_RECTS 20000

/* The first Python 3.11+ present, or NULL (said). */
static const py_interp_t *first_python(py_interp_t *pys, int max)
{
	int n = py_interps(pys, max);

	for (int k = 0; k < n; k++)
		if (py_present(&pys[k]))
			return &pys[k];
	fprintf(stderr, "skip: no Python 3.11+ on this machine\n");
	return NULL;
}

/* The tree drawn first (the memory id with the highest peak: the root
 * with most bytes) of a `report --tree --json` document. Borrowed. */
static const json_t *first_tree(const json_t *rep)
{
	const json_t *trees = json_object_get(json_object_get(rep, "call_tree"), "trees"), *t, *best = NULL;
	json_int_t most = -1;
	size_t i;

	assert_true(json_is_array(trees));
	json_array_foreach(trees, i, t) {
		json_int_t b = json_integer_value(json_object_get(json_array_get(json_object_get(t, "nodes"), 0),
								  "total_bytes"));
		if (b > most)
			most = b, best = t;
	}
	assert_non_null(best);
	return best;
}

/* The flame chart of run against its tree: the widest frame in the row
 * under the root spans what the tree's top row holds. */
static void flame_matches_tree(const py_fixture_t *fx, const char *run, const char *what)
{
	char cmd[MP_TEST_CMD_MAX], svg[128], *out;
	const json_t *nodes, *n, *top = NULL;
	py_rect_t *r = calloc(MAX_RECTS, sizeof(*r));
	json_int_t root_b, top_b = -1;
	const py_rect_t *root = NULL, *widest = NULL;
	json_t *rep;
	int nr, st;
	size_t i;

	assert_non_null(r);
	rep = py_report_json("--tree", run);
	nodes = json_object_get(first_tree(rep), "nodes");
	root_b = json_integer_value(json_object_get(json_array_get(nodes, 0), "total_bytes"));
	json_array_foreach(nodes, i, n) /* the root's children: depth 1; the top row is the first */
		if (json_integer_value(json_object_get(n, "depth")) == 1) {
			json_int_t b = json_integer_value(json_object_get(n, "total_bytes"));
			if (!top)
				top = n, top_b = b;
			assert_true(b <= top_b); /* largest first */
		}
	assert_non_null(top);
	assert_true(root_b > 0);

	snprintf(svg, sizeof(svg), "%s/flame-%s.svg", fx->dir, what);
	snprintf(cmd, sizeof(cmd), "'%s' plot --chart flame -o '%s' '%s' 2>&1", PY_MEMPROF, svg, run);
	out = py_sh(cmd, &st);
	if (st != 0 || !strstr(out, "memprof: wrote "))
		fail_msg("'%s' exited with %d: %s", cmd, st, out);
	free(out);
	nr = py_svg_rects(svg, r, MAX_RECTS);
	assert_true(nr > 0);
	for (int k = 0; k < nr && !root; k++) /* the first frame drawn is the first chart's root */
		if (r[k].y1 - r[k].y0 == 19)
			root = &r[k];
	assert_non_null(root);
	for (int k = 0; k < nr; k++)
		if (r[k].y0 == root->y0 + MP_FLAME_ROW_H && r[k].y1 - r[k].y0 == 19 &&
		    (!widest || r[k].x1 - r[k].x0 > widest->x1 - widest->x0))
			widest = &r[k];
	assert_non_null(widest);
	{
		/* frames are filled 1 px short of their right edge, which lies at
		 * the plot's left + round(plot width x bytes / root's) */
		double plot = root->x1 + 1 - root->x0, drawn = widest->x1 + 1 - widest->x0;
		double want = plot * (double)top_b / (double)root_b;
		fprintf(stderr, "%s: tree's top row '%s' %lld B of %lld B: %.2f px of %.0f; the widest frame under the "
				"root in the chart: %.0f px at x %.0f\n",
			what, json_string_value(json_object_get(top, "name")), (long long)top_b, (long long)root_b, want,
			plot, drawn, widest->x0);
		assert_true(widest->x0 == root->x0);
		if (drawn < want - 1 || drawn > want + 1)
			fail_msg("%s: the widest frame under the root is %.0f px, the tree's top row %.2f px", what, drawn,
				 want);
	}
	json_decref(rep);
	free(r);
}

/* The depth of the host tree's <module> of prog (the first met) in
 * `report --tree ARGS --json run`; -1 when none. */
static json_int_t module_depth(const char *args, const char *run, const char *prog)
{
	json_t *rep = py_report_json(args, run);
	const json_t *trees = json_object_get(json_object_get(rep, "call_tree"), "trees"), *t, *n;
	json_int_t depth = -1;
	size_t i, k;

	json_array_foreach(trees, i, t) {
		if (strcmp(json_string_value(json_object_get(t, "memory")), "host"))
			continue;
		json_array_foreach(json_object_get(t, "nodes"), k, n)
			if (depth < 0 && !strcmp(json_string_value(json_object_get(n, "name")), "<module>") &&
			    strstr(json_string_value(json_object_get(n, "file")), prog))
				depth = json_integer_value(json_object_get(n, "depth"));
	}
	json_decref(rep);
	return depth;
}

static void test_flame_tree(void **state)
{
	static const char *const progs[] = {"threads", "sites"};
	py_fixture_t *fx = *state;
	py_interp_t pys[8];
	const py_interp_t *py = first_python(pys, 8);
	char cmd[MP_TEST_CMD_MAX], run[128];
	int st;

	if (!py)
		skip();
	for (size_t k = 0; k < 2; k++) {
		snprintf(run, sizeof(run), "%s/%s.run", fx->dir, progs[k]);
		snprintf(cmd, sizeof(cmd), "%s '" SCRIPTS "/%s.py' >/dev/null", py->cmd, progs[k]);
		if ((st = py_record(run, cmd, NULL)) != 0)
			fail_msg("memprof record --stacks -- %s exited with %d", cmd, st);
		flame_matches_tree(fx, run, progs[k]);
	}
	/* a Python's mallocs are rooted at its outermost Python frame: the
	 * process's and the interpreter's start (_start ... PyEval_EvalCode)
	 * only with --all-frames */
	{
		json_int_t top = module_depth("--tree", run, "sites.py"), all = module_depth("--tree --all-frames", run, "sites.py");
		fprintf(stderr, "sites: the host tree's <module> at depth %lld (--all-frames: %lld)\n", (long long)top,
			(long long)all);
		assert_int_equal(top, 1);
		assert_true(all > 5);
	}
}

/* One line, ending in a newline. */
static int one_line(const char *s)
{
	const char *nl = strchr(s, '\n');
	return nl && nl[1] == '\0';
}

static void test_no_stacks(void **state)
{
	py_fixture_t *fx = *state;
	char cmd[MP_TEST_CMD_MAX], run[128], *out;
	int st;

	snprintf(run, sizeof(run), "%s/nostacks.run", fx->dir);
	snprintf(cmd, sizeof(cmd), "MEMPROF_PRELOAD='%s' '%s' record -o '%s' -- '%s' >/dev/null 2>&1", PY_PRELOAD,
		 PY_MEMPROF, run, PY_STRIPPED);
	free(py_sh(cmd, &st));
	assert_int_equal(st, 0);
	snprintf(cmd, sizeof(cmd), "'%s' report --tree '%s' 2>&1", PY_MEMPROF, run);
	out = py_sh(cmd, &st);
	assert_int_equal(st, 1);
	if (!one_line(out) || !strstr(out, "no call tree: the capture has no call stacks (record it with 'memprof record "
					   "--stacks')"))
		fail_msg("report --tree without stacks said: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' plot --chart flame -o '%s/x.png' '%s' 2>&1", PY_MEMPROF, fx->dir, run);
	out = py_sh(cmd, &st);
	assert_int_equal(st, 1);
	if (!one_line(out) || !strstr(out, "no call tree"))
		fail_msg("plot --chart flame without stacks said: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' report --by-function '%s' 2>&1", PY_MEMPROF, run);
	free(py_sh(cmd, &st));
	assert_int_equal(st, 2); /* docs/report.md: exit 2 for a capture without stacks */
}

/* Whether any string member "function" or "name" of the array's objects
 * starts with prefix. */
static int names_start(const json_t *arr, const char *key, const char *prefix)
{
	const json_t *x;
	size_t i;

	json_array_foreach(arr, i, x) {
		const char *s = json_string_value(json_object_get(x, key));
		if (s && !strncmp(s, prefix, strlen(prefix)))
			return 1;
	}
	return 0;
}

static void test_stripped(void **state)
{
	py_fixture_t *fx = *state;
	char cmd[MP_TEST_CMD_MAX], run[128], *out;
	const char *base = strrchr(PY_STRIPPED, '/') + 1;
	char prefix[128];
	json_t *rep;
	int st;

	snprintf(prefix, sizeof(prefix), "%s+0x", base);
	snprintf(run, sizeof(run), "%s/stripped.run", fx->dir);
	snprintf(cmd, sizeof(cmd), "'%s' >/dev/null", PY_STRIPPED);
	assert_int_equal(py_record(run, cmd, NULL), 0);

	rep = py_report_json("--by-function", run);
	{
		const json_t *rows = json_object_get(json_object_get(rep, "functions"), "rows"), *r;
		json_int_t peak = 0;
		size_t i;
		assert_true(json_array_size(rows) > 0);
		if (!names_start(rows, "function", prefix))
			fail_msg("no by-function row reads %s...", prefix);
		/* the heap at the peak: 32 x 4 KiB + 8 x 1 MiB, all in the program's frames */
		json_array_foreach(rows, i, r)
			if (!strncmp(json_string_value(json_object_get(r, "function")), prefix, strlen(prefix)))
				peak += json_integer_value(json_object_get(r, "peak_bytes"));
		fprintf(stderr, "stripped: rows at %s...: %lld B live at the peak\n", prefix, (long long)peak);
		assert_true(peak >= 32 * 4096 + 8 * (1 << 20));
		assert_true(peak < 32 * 4096 + 8 * (1 << 20) + 64 * 1024);
	}
	json_decref(rep);

	rep = py_report_json("--tree", run);
	if (!names_start(json_object_get(first_tree(rep), "nodes"), "name", prefix))
		fail_msg("no call tree node reads %s...", prefix);
	json_decref(rep);

	snprintf(cmd, sizeof(cmd), "'%s' report --by-function --tree '%s' 2>&1", PY_MEMPROF, run);
	out = py_sh(cmd, &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, prefix));
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' plot --chart flame -o '%s/stripped.png' '%s' 2>&1", PY_MEMPROF, fx->dir, run);
	out = py_sh(cmd, &st);
	if (st != 0 || !strstr(out, "memprof: wrote "))
		fail_msg("'%s' exited with %d: %s", cmd, st, out);
	free(out);
	flame_matches_tree(fx, run, "stripped");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_flame_tree, py_setup, py_teardown),
		cmocka_unit_test_setup_teardown(test_no_stacks, py_setup, py_teardown),
		cmocka_unit_test_setup_teardown(test_stripped, py_setup, py_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
