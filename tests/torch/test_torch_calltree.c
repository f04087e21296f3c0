/* test_torch_calltree.c - call trees of PyTorch snapshots
 * (memprof/calltree.h, `memprof report --tree`): the generated
 * calltree.pickle of gen_snapshots.py against the trees it computes from
 * its own script (live at the peak, at the end, allocated: every node's
 * inclusive and exclusive bytes and blocks), the frames the source gives
 * for a stack, and the real snapshots of ../shared/data/torch (skipped when
 * absent): the root of the peak tree is the solver's peak, and on
 * cnn_counterfactual_marks.pickle the top frames are those read by hand
 * from the pickle with Python's pickle module. */
#include "test_common.h"
#include "torch_test.h"

#include <sys/stat.h>
#include <unistd.h>

#include "calltree_check.h"
#include "json_check.h"

#include <memprof/calltree.h>
#include <memprof/solver.h>
#include <memprof/torch.h>

#include <jansson.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define OUT MEMPROF_BINARY_DIR "/tests/torch/fixtures-tree"

static json_t *expected, *ct;

static int setup(void **state)
{
	(void)state;
	expected = mp_test_gen_snapshots(OUT);
	ct = json_object_get(expected, "_calltree");
	return ct ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(expected);
	return 0;
}

typedef struct run {
	mp_source_t *src;
	mp_solver_t *solver;
	mp_calltree_t *tree;
} run_t;

/* Open path, solve it and build its trees (all three kinds, folding
 * under min_percent). */
static void open_run(run_t *r, const char *path, double min_percent)
{
	mp_calltree_options_t o = {min_percent, 0, NULL, 0};
	mp_diag_t diag;

	mp_diag_clear(&diag);
	if (mp_torch_open_source(&r->src, path, NULL, &diag) != 0)
		fail_msg("%s: %s", path, diag.text);
	r->solver = mp_solver_new(NULL);
	assert_int_equal(mp_solver_run(r->solver, r->src, &diag), 0);
	if (mp_calltree_compute(&r->tree, r->src, r->solver, &o, &diag) != 0)
		fail_msg("%s: the call tree: %s", path, diag.text);
}

static void close_run(run_t *r)
{
	mp_calltree_free(r->tree);
	mp_solver_free(r->solver);
	mp_source_close(r->src);
}

static uint32_t memory_id(const mp_source_t *src, const char *name)
{
	for (uint32_t i = 0; i < mp_source_memory_count(src); i++)
		if (!strcmp(mp_source_memory(src, i)->name, name))
			return i;
	fail_msg("no memory '%s'", name);
	return 0;
}

/* Every node of memprof's tree is one of the generator's, with its
 * figures, and the other way round. */
static void check_tree(const mp_tree_t *t, const json_t *want)
{
	char path[16384];

	mp_test_tree_shape(t);
	assert_int_equal(t->count, json_object_size(want));
	for (size_t i = 0; i < t->count; i++) {
		const mp_tree_node_t *n = &t->nodes[i];
		const json_t *w = json_object_get(want, mp_test_tree_path(t, (int32_t)i, path, sizeof(path)));
		if (!w)
			fail_msg("%s tree: no node '%s' in the generator's", mp_tree_kind_name(t->kind), path);
		assert_int_equal(n->total_bytes, json_integer_value(json_array_get(w, 0)));
		assert_int_equal(n->self_bytes, json_integer_value(json_array_get(w, 1)));
		assert_int_equal(n->total_count, json_integer_value(json_array_get(w, 2)));
		assert_int_equal(n->self_count, json_integer_value(json_array_get(w, 3)));
	}
}

static void test_generated(void **state)
{
	const json_t *want = json_object_get(ct, "trees");
	const mp_solver_device_t *d;
	run_t r;
	uint32_t mem;

	(void)state;
	open_run(&r, OUT "/calltree.pickle", 0);
	mem = memory_id(r.src, "cuda:0");
	d = mp_solver_find(r.solver, mem);
	assert_int_equal(d->peak_bytes, json_integer_value(json_object_get(ct, "peak_bytes")));
	for (int k = 0; k <= MP_TREE_KIND_MAX; k++) {
		const mp_tree_t *t = mp_calltree_find(r.tree, mem, k);
		assert_non_null(t);
		check_tree(t, json_object_get(want, mp_tree_kind_name(k)));
		assert_int_equal(t->folded_nodes, 0);
	}
	/* the root of the peak tree is the solver's peak; of the leaks tree, its leaks */
	assert_int_equal(mp_calltree_find(r.tree, mem, MP_TREE_PEAK)->nodes[0].total_bytes, d->peak.heap_bytes);
	assert_int_equal(mp_calltree_find(r.tree, mem, MP_TREE_LEAKS)->nodes[0].total_bytes, d->leak_bytes);
	assert_string_equal(mp_calltree_find(r.tree, mem, MP_TREE_PEAK)->nodes[0].name, "cuda:0");
	/* the segments have no frames: no tree for cuda:0 reserved */
	assert_null(mp_calltree_find(r.tree, memory_id(r.src, "cuda:0 reserved"), MP_TREE_PEAK));
	assert_string_equal(mp_calltree_symbolizer(r.tree), "source");
	assert_int_equal(mp_calltree_distinct_stacks(r.tree), 5);
	{
		json_t *j = mp_calltree_json(r.tree, r.src, MP_TREE_LEAKS, 0, 0);
		mp_test_json_valid(j, "report", "call_tree");
		assert_int_equal(json_array_size(json_object_get(j, "trees")), 1);
		json_decref(j);
	}
	close_run(&r);
}

/* The source's frames of a stack: PyTorch's, innermost first, "??" as "",
 * Python frames by their .py file. */
static void test_stack_frames(void **state)
{
	const json_t *want = json_object_get(ct, "frames");
	mp_source_t *src = NULL;
	mp_diag_t diag;
	mp_event_t ev;
	size_t seen = 0;
	int rc;

	(void)state;
	assert_int_equal(mp_torch_open_source(&src, OUT "/calltree.pickle", NULL, &diag), 0);
	while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
		char key[32];
		const json_t *w;
		const mp_source_frame_t *f;
		uint32_t n;
		snprintf(key, sizeof(key), "%" PRIu64, ev.address);
		if (ev.kind != MP_EV_ALLOC || !(w = json_object_get(want, key)))
			continue;
		assert_true(ev.stack > 0);
		assert_int_equal(mp_source_stack_frames(src, ev.stack, &f, &n), 0);
		assert_int_equal(n, json_array_size(w));
		for (uint32_t i = 0; i < n; i++) {
			const json_t *x = json_array_get(w, i);
			assert_string_equal(f[i].name, json_string_value(json_array_get(x, 0)));
			assert_string_equal(f[i].file, json_string_value(json_array_get(x, 1)));
			assert_int_equal(f[i].line, json_integer_value(json_array_get(x, 2)));
			assert_string_equal(mp_frame_kind_name(f[i].kind), json_string_value(json_array_get(x, 3)));
		}
		seen++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(seen, json_object_size(want));
	{
		const mp_source_frame_t *f;
		uint32_t n;
		assert_int_equal(mp_source_stack_frames(src, 0, &f, &n), MP_ENOTFOUND);
		assert_int_equal(mp_source_stack_frames(src, 1000000, &f, &n), MP_ENOTFOUND);
		assert_null(f);
	}
	mp_source_close(src);
}

/* The real snapshots: every tree well formed, the root of each peak tree
 * the solver's peak (heap) of its memory id, of each leaks tree its leaks. */
static void test_real_roots(void **state)
{
	static const char *const files[] = {"cnn_counterfactual_marks.pickle", "cs336_ctx128_forward_py313.pickle",
					    "cs336_medium_128_training.pickle", "llama_lora_no_time.pickle"};

	(void)state;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char rel[128];
		const char *path;
		run_t r;
		snprintf(rel, sizeof(rel), "torch/%s", files[f]);
		if (!(path = mp_test_shared(rel)))
			return;
		open_run(&r, path, MP_CALLTREE_MIN_PERCENT_DEFAULT);
		assert_true(mp_calltree_count(r.tree) > 0);
		for (size_t i = 0; i < mp_calltree_count(r.tree); i++) {
			const mp_tree_t *t = mp_calltree_tree(r.tree, i);
			const mp_solver_device_t *d = mp_solver_find(r.solver, t->memory);
			mp_test_tree_shape(t);
			if (t->kind == MP_TREE_PEAK)
				assert_int_equal(t->nodes[0].total_bytes, d->peak.heap_bytes);
			else if (t->kind == MP_TREE_LEAKS)
				assert_int_equal(t->nodes[0].total_bytes, d->leak_bytes);
		}
		close_run(&r);
	}
}

/* cnn_counterfactual_marks.pickle at its peak (trace entry 759), read by
 * hand with Python's pickle module: 72 live blocks, 35 allocated from the
 * main thread (_start), 6 from autograd's (__clone3, their requests
 * rounded to 512 B: 39977472 B), 31 older than the trace that the dump
 * gives no frames (8781824 B, expected.json's allocated_at_trace_start_bytes);
 * the main thread's are the rest of the 110110720 B peak. Under
 * <module> (counterfactuals.py:218), generate_counterfactuals holds 26
 * blocks from line 115, 2 of 7.5 MiB from 102 and from 127, 2 from 117
 * (7864320 + 512 B). */
static void test_real_cnn(void **state)
{
	const char *path = mp_test_shared("torch/cnn_counterfactual_marks.pickle");
	static const struct {
		int64_t line;
		uint64_t count, bytes; /* 0: not checked */
	} user[] = {{115, 26, 0}, {102, 2, 15728640}, {127, 2, 15728640}, {117, 2, 7864832}};
	const mp_tree_t *t;
	const mp_tree_node_t *n;
	int32_t start, clone, none, mod, g;
	run_t r;

	(void)state;
	if (!path)
		return;
	open_run(&r, path, MP_CALLTREE_MIN_PERCENT_DEFAULT);
	t = mp_calltree_find(r.tree, memory_id(r.src, "cuda:0"), MP_TREE_PEAK);
	assert_non_null(t);
	n = t->nodes;
	assert_int_equal(n[0].total_bytes, 110110720);
	assert_int_equal(n[0].total_bytes, mp_solver_find(r.solver, t->memory)->peak_bytes);
	assert_int_equal(n[0].total_count, 72);
	start = n[0].first_child;
	clone = n[start].next_sibling;
	none = n[clone].next_sibling;
	assert_string_equal(n[start].name, "_start");
	assert_int_equal(n[start].total_count, 35);
	assert_int_equal(n[start].total_bytes, 110110720 - 39977472 - 8781824);
	assert_string_equal(n[clone].name, "__clone3");
	assert_int_equal(n[clone].total_count, 6);
	assert_int_equal(n[clone].total_bytes, 39977472);
	assert_string_equal(n[none].name, "(no stack)");
	assert_int_equal(n[none].total_count, 31);
	assert_int_equal(n[none].total_bytes, 8781824);
	assert_int_equal(n[none].next_sibling, -1);
	/* down the single path of C frames from _start to the script's <module> */
	for (mod = start; mod >= 0 && strcmp(n[mod].name, "<module>"); mod = n[mod].first_child)
		assert_int_equal(n[mod].total_count, 35);
	assert_true(mod > 0);
	assert_int_equal(n[mod].kind, MP_FRAME_PYTHON);
	assert_int_equal(n[mod].line, 218);
	assert_string_equal(n[mod].file, "/oscar/home/jsolt/FourierNN/counterfactuals.py");
	for (size_t i = 0; i < sizeof(user) / sizeof(user[0]); i++) {
		for (g = (int32_t)mod + 1; (size_t)g < t->count && n[g].depth > n[mod].depth; g++)
			if (!strcmp(n[g].name, "generate_counterfactuals") && n[g].line == user[i].line)
				break;
		assert_true((size_t)g < t->count && n[g].depth > n[mod].depth);
		assert_int_equal(n[g].total_count, user[i].count);
		if (user[i].bytes)
			assert_int_equal(n[g].total_bytes, user[i].bytes);
	}
	close_run(&r);
}

/* Run cmd; its stdout (NUL-terminated) in a buffer the caller frees. */
static char *sh(const char *cmd, int *status)
{
	FILE *f = popen(cmd, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int st;

	assert_non_null(f);
	for (;;) {
		if (n + 4096 + 1 > cap && !(buf = realloc(buf, cap = cap ? cap * 2 : 65536)))
			fail_msg("out of memory");
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		if (!got)
			break;
		n += got;
	}
	buf[n] = '\0';
	st = pclose(f);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return buf;
}

/* The command: --tree --json validated against the schema, the three
 * kinds, the text's root line, and a snapshot without frames. */
static void test_cli(void **state)
{
	static const char *const kinds[] = {"", "=peak", "=leaks", "=allocated"};
	char cmd[MP_TEST_CMD_MAX];
	int st;

	(void)state;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		char *out;
		json_t *doc, *tree;
		snprintf(cmd, sizeof(cmd), MEMPROF " report --tree%s --min-percent 0 --json " OUT "/calltree.pickle", kinds[k]);
		out = sh(cmd, &st);
		assert_int_equal(st, 0);
		doc = mp_test_json_loads(out, "report");
		tree = json_object_get(doc, "call_tree");
		assert_string_equal(json_string_value(json_object_get(tree, "kind")), k < 2 ? "peak" : kinds[k] + 1);
		assert_int_equal(json_array_size(json_object_get(tree, "trees")), 1);
		assert_int_equal(json_array_size(json_object_get(json_array_get(json_object_get(tree, "trees"), 0), "nodes")),
				 json_object_size(json_object_get(json_object_get(ct, "trees"), k < 2 ? "peak" : kinds[k] + 1)));
		assert_null(json_object_get(doc, "functions")); /* --tree alone: no by-function table */
		json_decref(doc);
		free(out);
	}
	{
		char *out = sh(MEMPROF " report --tree " OUT "/calltree.pickle", &st);
		assert_int_equal(st, 0);
		assert_non_null(strstr(out, "Call tree of the bytes live at the peak, memory 'cuda:0': 17827328 B (17.00 MiB) "
					    "in 6 blocks, 5 stacks (symbols: source)\n"));
		assert_null(strstr(out, "Breakdown")); /* --tree alone: the tree only */
		free(out);
	}
	{ /* a snapshot without frames: one line, exit 1 */
		char *out = sh(MEMPROF " report --tree " OUT "/noframes.pickle 2>&1", &st);
		assert_int_equal(st, 1);
		assert_string_equal(out, "memprof: error: '" OUT "/noframes.pickle': no call tree: the snapshot's blocks "
					 "and trace entries carry no frames\n");
		free(out);
	}
}

/* plot --chart flame: the trees as icicles, one line and exit 1 without
 * frames, and --tree without the flame chart a usage error. */
static void test_plot_flame(void **state)
{
	static const char *const kinds[] = {"", " --tree peak", " --tree leaks", " --tree allocated"};
	char cmd[MP_TEST_CMD_MAX];
	struct stat sb;
	char *out;
	int st;

	(void)state;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		unlink(OUT "/flame.png");
		snprintf(cmd, sizeof(cmd), MEMPROF " plot --chart flame%s -o " OUT "/flame.png " OUT "/calltree.pickle 2>&1",
			 kinds[k]);
		out = sh(cmd, &st);
		assert_int_equal(st, 0);
		assert_non_null(strstr(out, "memprof: wrote " OUT "/flame.png (1200x"));
		assert_int_equal(stat(OUT "/flame.png", &sb), 0);
		assert_true(sb.st_size > 1000);
		free(out);
	}
	out = sh(MEMPROF " plot --chart flame -o " OUT "/flame.png " OUT "/noframes.pickle 2>&1", &st);
	assert_int_equal(st, 1);
	assert_string_equal(out, "memprof: error: '" OUT "/noframes.pickle': no call tree: the snapshot's blocks "
				 "and trace entries carry no frames\n");
	free(out);
	out = sh(MEMPROF " plot --tree leaks -o " OUT "/flame.png " OUT "/calltree.pickle 2>&1", &st);
	assert_int_equal(st, 2);
	assert_non_null(strstr(out, "--tree applies to --chart flame"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_stack_frames),
		cmocka_unit_test(test_real_roots),
		cmocka_unit_test(test_real_cnn),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_plot_flame),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
