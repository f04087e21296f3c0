/* test_calltree.c - call trees (memprof/calltree.h, `memprof report
 * --tree`) of a capture written with the writer API, whose stacks are real
 * return addresses into this program and libc (as test_functions.c), so
 * that every node's figures can be written down by hand.
 *
 * Stacks (innermost first; IN = a return address inside, IN2 another one):
 *   S1 = {malloc, leaf_c, mid_b, outer_a}       outer_a > mid_b > leaf_c (malloc dropped)
 *   S2 = {leaf_d, mid_b, outer_a}               outer_a > mid_b > leaf_d
 *   S3 = {IN2(mid_b), outer_a}                  outer_a > mid_b (the same node: one function)
 *   S4 = {calloc, realloc}                      only entry points: kept, realloc > calloc
 *   S5 = {leaf_c, outer_a, outer_a, outer_a, other_e}   other_e > outer_a x3 > leaf_c
 * Events on "host" (allocated = requested), live bytes after each:
 *   alloc 0x1000 100 S1 (100), alloc 0x2000 200 S1 (300), alloc 0x3000 1000 S2 (1300),
 *   alloc 0x4000 50 S3 (1350), alloc 0x5000 7 no stack (1357: the peak), free 0x1000 (1257),
 *   alloc 0x6000 3 S5 (1260), free 0x3000 (260), alloc 0x7000 40 S4 (300),
 *   failed 1 GiB S2 (in no tree)
 * Trees (bytes/blocks, total then self):
 *   peak 1357/5: outer_a 1350/4 0/0 > mid_b 1350/4 50/1 > {leaf_d 1000/1, leaf_c 300/2};
 *                (no stack) 7/1
 *   leaks 300/5: outer_a 250/2 > mid_b 250/2 50/1 > leaf_c 200/1; realloc 40/1 > calloc 40/1;
 *                (no stack) 7/1; other_e 3/1 > outer_a > outer_a > outer_a > leaf_c 3/1
 *   allocated 1400/7: outer_a 1350/4 > mid_b 1350/4 50/1 > {leaf_d 1000/1, leaf_c 300/2};
 *                realloc 40/1 > calloc 40/1; (no stack) 7/1; other_e 3/1 > ... > leaf_c 3/1
 */
#include "test_common.h"

#include "calltree_check.h"
#include "json_check.h"
#include <memprof/calltree.h>
#include <memprof/capture.h>
#include <memprof/solver.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"

__attribute__((noinline, used)) void outer_a(void);
__attribute__((noinline, used)) void mid_b(void);
__attribute__((noinline, used)) void leaf_c(void);
__attribute__((noinline, used)) void leaf_d(void);
__attribute__((noinline, used)) void other_e(void);
#define BODY __asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory")
__attribute__((noinline, used)) void outer_a(void) { BODY; }
__attribute__((noinline, used)) void mid_b(void) { BODY; }
__attribute__((noinline, used)) void leaf_c(void) { BODY; }
__attribute__((noinline, used)) void leaf_d(void) { BODY; }
__attribute__((noinline, used)) void other_e(void) { BODY; }

#define IN(fn) ((uint64_t)(uintptr_t)(fn) + 4)
#define IN2(fn) ((uint64_t)(uintptr_t)(fn) + 8)

static void write_capture(const char *path)
{
	void *(*volatile m)(size_t) = malloc;
	void *(*volatile c)(size_t, size_t) = calloc;
	void *(*volatile r)(void *, size_t) = realloc;
	uint64_t s1[] = {IN(m), IN(leaf_c), IN(mid_b), IN(outer_a)}, s2[] = {IN(leaf_d), IN(mid_b), IN(outer_a)},
		 s3[] = {IN2(mid_b), IN(outer_a)}, s4[] = {IN(c), IN(r)},
		 s5[] = {IN(leaf_c), IN(outer_a), IN(outer_a), IN(outer_a), IN(other_e)};
	uint32_t id[5];
	mp_writer_t *w;
	mp_diag_t diag;

	assert_int_equal(mp_writer_open(&w, path, 1, NULL, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	assert_true(mp_writer_modules(w) > 0);
	assert_int_equal(mp_writer_stack(w, s1, 4, &id[0]), 0);
	assert_int_equal(mp_writer_stack(w, s2, 3, &id[1]), 0);
	assert_int_equal(mp_writer_stack(w, s3, 2, &id[2]), 0);
	assert_int_equal(mp_writer_stack(w, s4, 2, &id[3]), 0);
	assert_int_equal(mp_writer_stack(w, s5, 5, &id[4]), 0);
	mp_writer_next_stack(w, id[0]);
	mp_writer_alloc(w, 0, 0x1000, 100, 100);
	mp_writer_next_stack(w, id[0]);
	mp_writer_alloc(w, 0, 0x2000, 200, 200);
	mp_writer_next_stack(w, id[1]);
	mp_writer_alloc(w, 0, 0x3000, 1000, 1000);
	mp_writer_next_stack(w, id[2]);
	mp_writer_alloc(w, 0, 0x4000, 50, 50);
	mp_writer_alloc(w, 0, 0x5000, 7, 7);
	mp_writer_free(w, 0, 0x1000);
	mp_writer_next_stack(w, id[4]);
	mp_writer_alloc(w, 0, 0x6000, 3, 3);
	mp_writer_free(w, 0, 0x3000);
	mp_writer_next_stack(w, id[3]);
	mp_writer_alloc(w, 0, 0x7000, 40, 40);
	mp_writer_next_stack(w, id[1]);
	mp_writer_alloc_failed(w, 0, 1u << 30);
	assert_int_equal(mp_writer_close(w), 0);
}

/* A node by its path from the root: names separated by '/'. */
typedef struct want {
	const char *path;
	uint64_t total_b, total_c, self_b, self_c;
} want_t;

static const want_t peak_nodes[] = {
	{"", 1357, 5, 0, 0},
	{"outer_a", 1350, 4, 0, 0},
	{"outer_a/mid_b", 1350, 4, 50, 1},
	{"outer_a/mid_b/leaf_d", 1000, 1, 1000, 1},
	{"outer_a/mid_b/leaf_c", 300, 2, 300, 2},
	{"(no stack)", 7, 1, 7, 1},
};
static const want_t leak_nodes[] = {
	{"", 300, 5, 0, 0},
	{"outer_a", 250, 2, 0, 0},
	{"outer_a/mid_b", 250, 2, 50, 1},
	{"outer_a/mid_b/leaf_c", 200, 1, 200, 1},
	{"realloc", 40, 1, 0, 0},
	{"realloc/calloc", 40, 1, 40, 1},
	{"(no stack)", 7, 1, 7, 1},
	{"other_e", 3, 1, 0, 0},
	{"other_e/outer_a", 3, 1, 0, 0},
	{"other_e/outer_a/outer_a", 3, 1, 0, 0},
	{"other_e/outer_a/outer_a/outer_a", 3, 1, 0, 0},
	{"other_e/outer_a/outer_a/outer_a/leaf_c", 3, 1, 3, 1},
};
static const want_t alloc_nodes[] = {
	{"", 1400, 7, 0, 0},
	{"outer_a", 1350, 4, 0, 0},
	{"outer_a/mid_b", 1350, 4, 50, 1},
	{"outer_a/mid_b/leaf_d", 1000, 1, 1000, 1},
	{"outer_a/mid_b/leaf_c", 300, 2, 300, 2},
	{"realloc", 40, 1, 0, 0},
	{"realloc/calloc", 40, 1, 40, 1},
	{"(no stack)", 7, 1, 7, 1},
	{"other_e", 3, 1, 0, 0},
	{"other_e/outer_a", 3, 1, 0, 0},
	{"other_e/outer_a/outer_a", 3, 1, 0, 0},
	{"other_e/outer_a/outer_a/outer_a", 3, 1, 0, 0},
	{"other_e/outer_a/outer_a/outer_a/leaf_c", 3, 1, 3, 1},
};

/* Node i's path as names joined by '/'. */
static const char *name_path(const mp_tree_t *t, int32_t i, char *buf, size_t size)
{
	char tmp[1024];

	buf[0] = '\0';
	for (; i > 0; i = t->nodes[i].parent) {
		snprintf(tmp, sizeof(tmp), "%s%s%s", t->nodes[i].name, buf[0] ? "/" : "", buf);
		snprintf(buf, size, "%s", tmp);
	}
	return buf;
}

/* The tree is exactly want[0..n), in this order (depth first, children by
 * bytes), each node native with its object the program or libc. */
static void expect_tree(const mp_tree_t *t, const want_t *want, size_t n)
{
	char path[1024];

	mp_test_tree_shape(t);
	assert_int_equal(t->count, n);
	for (size_t i = 0; i < n; i++) {
		const mp_tree_node_t *x = &t->nodes[i];
		assert_string_equal(name_path(t, (int32_t)i, path, sizeof(path)), want[i].path);
		assert_int_equal(x->total_bytes, want[i].total_b);
		assert_int_equal(x->total_count, want[i].total_c);
		assert_int_equal(x->self_bytes, want[i].self_b);
		assert_int_equal(x->self_count, want[i].self_c);
		assert_int_equal(x->line, 0);
		if (i && strcmp(x->name, "(no stack)")) {
			assert_int_equal(x->kind, MP_FRAME_NATIVE);
			assert_true(strstr(x->file, strncmp(x->name, "outer", 5) && strncmp(x->name, "mid", 3) &&
							   strncmp(x->name, "leaf", 4) && strncmp(x->name, "other", 5)
						       ? "/" /* libc, or this program under ASan */
						       : "test_report_calltree") != NULL);
		} else {
			assert_int_equal(x->kind, MP_FRAME_UNKNOWN);
		}
	}
}

typedef struct fixture {
	char *path;
	mp_source_t *src;
	mp_solver_t *solver;
} fixture_t;

static int setup(void **state)
{
	static fixture_t fx;
	mp_diag_t diag;

	fx.path = mp_test_tmpfile("calltree.memprof");
	write_capture(fx.path);
	if (mp_capture_open_source(&fx.src, fx.path, &diag) != 0)
		return -1;
	fx.solver = mp_solver_new(NULL);
	if (mp_solver_run(fx.solver, fx.src, &diag) != 0)
		return -1;
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	fixture_t *fx = *state;

	mp_solver_free(fx->solver);
	mp_source_close(fx->src);
	unlink(fx->path);
	free(fx->path);
	return 0;
}

static mp_calltree_t *trees(fixture_t *fx, double min_percent, unsigned kinds)
{
	mp_calltree_options_t o = {min_percent, kinds, NULL, 0};
	mp_calltree_t *t = NULL;
	mp_diag_t diag;

	assert_int_equal(mp_calltree_compute(&t, fx->src, fx->solver, &o, &diag), 0);
	return t;
}

static int have_names(const mp_calltree_t *t)
{
	if (!strcmp(mp_calltree_symbolizer(t), "libdw"))
		return 1;
	print_message("built without libdw: names not checked\n");
	return 0;
}

/* The three trees, every node by hand; JSON valid. */
static void test_by_hand(void **state)
{
	fixture_t *fx = *state;
	mp_calltree_t *t = trees(fx, 0, 0);
	json_t *j;

	assert_int_equal(mp_calltree_count(t), 3);
	assert_int_equal(mp_calltree_distinct_stacks(t), 5);
	assert_true(mp_calltree_min_percent(t) == 0);
	if (have_names(t)) {
		expect_tree(mp_calltree_find(t, 0, MP_TREE_PEAK), peak_nodes, sizeof(peak_nodes) / sizeof(peak_nodes[0]));
		expect_tree(mp_calltree_find(t, 0, MP_TREE_LEAKS), leak_nodes, sizeof(leak_nodes) / sizeof(leak_nodes[0]));
		expect_tree(mp_calltree_find(t, 0, MP_TREE_ALLOCATED), alloc_nodes,
			    sizeof(alloc_nodes) / sizeof(alloc_nodes[0]));
	}
	for (int k = 0; k <= MP_TREE_KIND_MAX; k++) {
		const mp_tree_t *tr = mp_calltree_find(t, 0, k);
		mp_test_tree_shape(tr);
		assert_string_equal(tr->nodes[0].name, "host");
		assert_int_equal(tr->stacks, k == MP_TREE_PEAK ? 3 : k == MP_TREE_LEAKS ? 4 : 5);
		j = mp_calltree_json(t, fx->src, k, 0, 0);
		mp_test_json_valid(j, "report", "call_tree");
		assert_string_equal(json_string_value(json_object_get(j, "kind")), mp_tree_kind_name(k));
		json_decref(j);
	}
	/* the root of the peak tree is the solver's peak; --device elsewhere: no tree */
	assert_int_equal(mp_calltree_find(t, 0, MP_TREE_PEAK)->nodes[0].total_bytes, mp_solver_find(fx->solver, 0)->peak_bytes);
	j = mp_calltree_json(t, fx->src, MP_TREE_PEAK, 1, 5);
	assert_int_equal(json_array_size(json_object_get(j, "trees")), 0);
	json_decref(j);
	mp_calltree_free(t);
	/* one kind asked: one tree */
	t = trees(fx, 0, 1u << MP_TREE_LEAKS);
	assert_int_equal(mp_calltree_count(t), 1);
	assert_null(mp_calltree_find(t, 0, MP_TREE_PEAK));
	mp_calltree_free(t);
}

/* Folding: a node under P% of the root's bytes goes, with its subtree,
 * into its parent's "(other)" (sorted with its siblings); at exactly P%
 * it stays. */
static void test_folding(void **state)
{
	fixture_t *fx = *state;
	mp_calltree_t *t;
	const mp_tree_t *tr;
	const mp_tree_node_t *n;
	int32_t o, mid;

	t = trees(fx, MP_CALLTREE_MIN_PERCENT_DEFAULT, 0); /* 1%: 13.57 B of the peak, 3 B of the leaks */
	tr = mp_calltree_find(t, 0, MP_TREE_PEAK);
	mp_test_tree_shape(tr);
	n = tr->nodes;
	assert_int_equal(tr->count, 6); /* (no stack), 7 B, folded */
	assert_int_equal(tr->folded_nodes, 1);
	assert_int_equal(tr->folded_bytes, 7);
	o = n[n[0].first_child].next_sibling;
	assert_string_equal(n[o].name, "(other)");
	assert_int_equal(n[o].total_bytes, 7);
	assert_int_equal(n[o].self_count, 1);
	assert_int_equal(n[o].folded, 1);
	assert_int_equal(n[o].kind, MP_FRAME_UNKNOWN);
	tr = mp_calltree_find(t, 0, MP_TREE_LEAKS); /* other_e's 3 B: exactly 1%, kept */
	assert_int_equal(tr->count, sizeof(leak_nodes) / sizeof(leak_nodes[0]));
	assert_int_equal(tr->folded_nodes, 0);
	mp_calltree_free(t);

	t = trees(fx, 2, 1u << MP_TREE_LEAKS); /* 6 B: other_e and its 4 frames folded, (no stack) kept */
	tr = mp_calltree_find(t, 0, MP_TREE_LEAKS);
	mp_test_tree_shape(tr);
	assert_int_equal(tr->count, 12 - 5 + 1);
	assert_int_equal(tr->folded_nodes, 5);
	assert_int_equal(tr->folded_bytes, 3);
	n = tr->nodes;
	for (o = n[0].first_child; n[o].next_sibling >= 0; o = n[o].next_sibling)
		;
	assert_string_equal(n[o].name, "(other)");
	assert_int_equal(n[o].folded, 5);
	mp_calltree_free(t);

	t = trees(fx, 50, 1u << MP_TREE_ALLOCATED); /* 700 B: leaf_c, realloc, (no stack), other_e */
	tr = mp_calltree_find(t, 0, MP_TREE_ALLOCATED);
	mp_test_tree_shape(tr);
	n = tr->nodes;
	assert_int_equal(tr->count, 6); /* root, outer_a, mid_b, leaf_d, (other) 300, (other) 50 */
	assert_int_equal(tr->folded_nodes, 1 + 2 + 1 + 5);
	assert_int_equal(tr->folded_bytes, 300 + 50);
	mid = n[n[0].first_child].first_child;
	o = n[n[mid].first_child].next_sibling;
	assert_string_equal(n[o].name, "(other)");
	assert_int_equal(n[o].total_bytes, 300);
	assert_int_equal(n[o].total_count, 2);
	o = n[n[0].first_child].next_sibling;
	assert_string_equal(n[o].name, "(other)");
	assert_int_equal(n[o].total_bytes, 50);
	assert_int_equal(n[o].total_count, 3);
	assert_int_equal(n[o].folded, 8);
	mp_calltree_free(t);
}

/* Text: the memory id's line, the root, a chain of frames that say
 * nothing new as one line, folding said. */
static void test_text(void **state)
{
	fixture_t *fx = *state;
	mp_calltree_t *t = trees(fx, 0, 0);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(mp_calltree_text(out, t, fx->src, fx->solver, MP_TREE_LEAKS, 0, 0), 0);
	fclose(out);
	if (have_names(t)) {
		assert_non_null(strstr(text, "\nCall tree of the bytes live at the end, memory 'host': 300 B in 5 blocks, "
					     "4 stacks (symbols: libdw)\n"));
		assert_non_null(strstr(text, "\n       300 B  100.0%      5         0 B  host\n"));
		assert_non_null(strstr(text, "\n       250 B   83.3%      2        50 B      mid_b (test_report_calltree)\n"));
		/* other_e > outer_a x3 > leaf_c: the three outer_a as one line */
		assert_non_null(strstr(text, "\n         3 B    1.0%      1         0 B    other_e (test_report_calltree)\n"
					     "                                             ... 3 frames ...\n"
					     "         3 B    1.0%      1         3 B      leaf_c (test_report_calltree)\n"));
		assert_null(strstr(text, "folded"));
	}
	free(text);
	mp_calltree_free(t);
	/* folding said under the tree's line; (other) as a frame */
	t = trees(fx, MP_CALLTREE_MIN_PERCENT_DEFAULT, 1u << MP_TREE_PEAK);
	out = open_memstream(&text, &len);
	assert_non_null(out);
	assert_int_equal(mp_calltree_text(out, t, fx->src, fx->solver, MP_TREE_PEAK, 0, 0), 0);
	fclose(out);
	assert_non_null(strstr(text, "\n  frames under 1% of it folded into (other): 1 frame, 7 B\n"));
	assert_non_null(strstr(text, "\n         7 B    0.5%      1         7 B    (other)\n"));
	free(text);
	mp_calltree_free(t);
}

/* A frame in a stripped module (no symbol names it): object+offset, the
 * object's path as its file; never a crash. */
static void test_stripped(void **state)
{
	const char *so = MEMPROF_BINARY_DIR "/tests/report/libcalltree_stripped.so";
	char *path = mp_test_tmpfile("stripped.memprof"), want[256];
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	uintptr_t (*addr)(void);
	mp_calltree_t *t = NULL;
	const mp_tree_t *tr;
	uint64_t st[2];
	mp_source_t *src;
	mp_solver_t *s;
	mp_writer_t *w;
	mp_diag_t diag;
	uint32_t id;
	Dl_info info;

	(void)state;
	if (!h)
		fail_msg("dlopen %s: %s", so, dlerror());
	*(void **)&addr = dlsym(h, "calltree_hidden_address");
	assert_non_null(addr);
	assert_int_equal(dladdr((void *)(addr() + 4), &info) != 0, 1);
	assert_null(info.dli_sname); /* the loader knows no name for it either */
	st[0] = addr() + 4;
	st[1] = IN(outer_a);
	assert_int_equal(mp_writer_open(&w, path, 1, NULL, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	assert_true(mp_writer_modules(w) > 0);
	assert_int_equal(mp_writer_stack(w, st, 2, &id), 0);
	mp_writer_next_stack(w, id);
	mp_writer_alloc(w, 0, 0x1000, 64, 64);
	assert_int_equal(mp_writer_close(w), 0);
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	s = mp_solver_new(NULL);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	assert_int_equal(mp_calltree_compute(&t, src, s, NULL, &diag), 0);
	tr = mp_calltree_find(t, 0, MP_TREE_PEAK);
	mp_test_tree_shape(tr);
	assert_int_equal(tr->count, 3);
	snprintf(want, sizeof(want), "libcalltree_stripped.so+%#" PRIx64, (uint64_t)(addr() + 4 - (uintptr_t)info.dli_fbase));
	assert_string_equal(tr->nodes[2].name, want);
	assert_non_null(strstr(tr->nodes[2].file, "libcalltree_stripped.so"));
	assert_int_equal(tr->nodes[2].kind, MP_FRAME_NATIVE);
	assert_int_equal(tr->nodes[2].self_bytes, 64);
	mp_calltree_free(t);
	mp_solver_free(s);
	mp_source_close(src);
	dlclose(h);
	unlink(path);
	free(path);
}

/* A capture without stacks: MP_ENODATA, nothing allocated. */
static void test_no_stacks_lib(void **state)
{
	char *path = mp_test_tmpfile("nostacks.memprof");
	mp_calltree_t *t = (mp_calltree_t *)1;
	mp_writer_t *w;
	mp_solver_t *s;
	mp_source_t *src;
	mp_diag_t diag;

	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 1, NULL, &diag), 0);
	mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	mp_writer_alloc(w, 0, 0x1000, 10, 10);
	assert_int_equal(mp_writer_close(w), 0);
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	s = mp_solver_new(NULL);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	assert_int_equal(mp_calltree_compute(&t, src, s, NULL, &diag), MP_ENODATA);
	assert_null(t);
	mp_solver_free(s);
	mp_source_close(src);
	unlink(path);
	free(path);
}

/* The command: JSON validated with the tree where the report has its
 * "functions", CSV, the errors and their exit codes. */
static void test_cli(void **state)
{
	fixture_t *fx = *state;
	char cmd[MP_TEST_CMD_MAX], *out, *nostack = mp_test_tmpfile("nostacks.memprof");
	mp_writer_t *w;
	mp_diag_t diag;
	json_t *doc;
	int st;

	snprintf(cmd, sizeof(cmd), MEMPROF " report --tree=leaks --min-percent 2 --json %s", fx->path);
	out = mp_test_sh(cmd, &st);
	assert_int_equal(st, 0);
	doc = mp_test_json_loads(out, "report");
	assert_non_null(json_object_get(doc, "call_tree"));
	assert_true(json_real_value(json_object_get(json_object_get(doc, "call_tree"), "min_percent")) == 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(json_object_get(doc, "call_tree"),
												"trees"), 0), "folded_nodes")), 5);
	json_decref(doc);
	free(out);
	/* with --peak, the by-function table too */
	snprintf(cmd, sizeof(cmd), MEMPROF " report --peak --tree --json %s", fx->path);
	out = mp_test_sh(cmd, &st);
	assert_int_equal(st, 0);
	doc = mp_test_json_loads(out, "report");
	assert_non_null(json_object_get(doc, "functions"));
	assert_non_null(json_object_get(doc, "call_tree"));
	json_decref(doc);
	free(out);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --tree=allocated --csv %s", fx->path);
	out = mp_test_sh(cmd, &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "\n\nsection,file,device,tree,node,parent,first_child,next_sibling,depth,name,"
				    "source_file,line,kind,total_bytes,self_bytes,total_count,self_count,folded\n"));
	assert_non_null(strstr(out, ",host,allocated,0,-1,1,-1,0,host,,,unknown,1400,0,7,0,0\n"));
	free(out);
	/* a capture without stacks: one line, exit 1 */
	assert_int_equal(mp_writer_open(&w, nostack, 1, NULL, &diag), 0);
	mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	mp_writer_alloc(w, 0, 0x1000, 10, 10);
	assert_int_equal(mp_writer_close(w), 0);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --tree %s 2>&1", nostack);
	out = mp_test_sh(cmd, &st);
	assert_int_equal(st, 1);
	assert_non_null(strstr(out, "memprof: error: '"));
	assert_non_null(strstr(out, "': no call tree: the capture has no call stacks (record it with 'memprof record "
				    "--stacks')\n"));
	assert_non_null(strchr(out, '\n'));
	assert_int_equal(strchr(out, '\n')[1], '\0'); /* one line */
	free(out);
	/* bad command lines: exit 2 */
	snprintf(cmd, sizeof(cmd), MEMPROF " report --tree=biggest %s 2>&1", fx->path);
	free(mp_test_sh(cmd, &st));
	assert_int_equal(st, 2);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --min-percent 5 %s 2>&1", fx->path);
	free(mp_test_sh(cmd, &st));
	assert_int_equal(st, 2);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --tree --min-percent 101 %s 2>&1", fx->path);
	free(mp_test_sh(cmd, &st));
	assert_int_equal(st, 2);
	unlink(nostack);
	free(nostack);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_hand),
		cmocka_unit_test(test_folding),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_no_stacks_lib),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
