/* test_pyframes.c - reports of a capture whose stacks hold Python frames
 * (format 2.2: "hybrid" stacks, return addresses and interpreter frames)
 * written with the writer API: the allocating frame of the user's code
 * (--by-function), --all-frames and --user-code, the call tree's Python
 * frames, and `memprof report` / `plot --chart flame` end to end.
 *
 * Frames: T12 main (/home/u/train.py:12), T20 main (train.py:20), T30 step
 * (train.py:30), J decode (/usr/lib/python3.11/json/decoder.py:337, the
 * standard library), N zeros (.../site-packages/numpy/core/numeric.py:100,
 * a package), F _call_with_frames_removed (<frozen importlib._bootstrap>:241);
 * M malloc (skipped: an allocator entry point), K make_tensor (a native
 * frame of this program).
 * Stacks (innermost first) and the frame each is charged to:
 *   S1 {M, T12, F}      -> main (train.py:12)
 *   S2 {M, T30, T20}    -> step (train.py:30), the innermost user frame
 *   S3 {M, J, T20}      -> main (train.py:20): the standard library's decode is not the user's
 *   S4 {M, K, W}        -> make_tensor (native only; W is write_capture)
 *   S5 {M, N, F}        -> zeros (numeric.py:100): no user frame, the package's
 *   S6 {M, N, T12}      -> main (train.py:12): the user's frame before the package's
 * Events on "host" (allocated = requested): S1 1000 @0x1000, S2 2000 @0x2000,
 * S3 300 @0x3000, S4 40 @0x4000, S5 500 @0x5000, S6 60 @0x6000 (the peak,
 * 3900), free 0x2000, S3 5 @0x7000.
 * Rows (live at the peak / blocks, allocations, requested, live at end):
 *   step (train.py:30)   2000/1  1  2000     0
 *   main (train.py:12)   1060/2  2  1060  1060
 *   zeros (numeric.py)    500/1  1   500   500
 *   main (train.py:20)    300/1  2   305   305
 *   make_tensor            40/1  1    40    40
 * --all-frames: S3 -> decode (decoder.py:337) 300/1 (305 requested), S6 ->
 * zeros: zeros 560/2; main (train.py:12) 1000/1. --user-code numpy: S5 and
 * S6 -> zeros: zeros 560/2, main (train.py:12) 1000/1, main (train.py:20)
 * 300/1. */
#include "test_common.h"

#include "json_check.h"
#include <memprof/calltree.h>
#include <memprof/capture.h>
#include <memprof/functions.h>
#include <memprof/solver.h>

#include "stackframes.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define TRAIN "/home/u/train.py"
#define NUMERIC "/opt/venv/lib/python3.11/site-packages/numpy/core/numeric.py"

__attribute__((noinline, used)) void make_tensor(void);
__attribute__((noinline, used)) void make_tensor(void)
{
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory");
}

#define IN(fn) ((uint64_t)(uintptr_t)(fn) + 4)

static char *path;

static uint64_t frame(mp_writer_t *w, const char *fn, const char *file, uint32_t line)
{
	uint64_t v = mp_writer_frame(w, mp_writer_intern(w, fn), mp_writer_intern(w, file), line, MP_FRAME_PYTHON);

	assert_true(v & MP_STACK_FRAME_TAG);
	return v;
}

static int write_capture(void **state)
{
	void *(*volatile m)(size_t) = malloc;
	uint64_t t12, t20, t30, j, n, f, st[6][3];
	uint32_t id[6];
	static const uint64_t at[6] = {0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000};
	static const uint64_t bytes[6] = {1000, 2000, 300, 40, 500, 60};
	mp_writer_t *w;
	mp_diag_t diag;
	int i;

	(void)state;
	path = mp_test_tmpfile("pyframes.memprof");
	assert_int_equal(mp_writer_open(&w, path, 1, NULL, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	assert_true(mp_writer_modules(w) > 0);
	t12 = frame(w, "main", TRAIN, 12);
	t20 = frame(w, "main", TRAIN, 20);
	t30 = frame(w, "step", TRAIN, 30);
	j = frame(w, "decode", "/usr/lib/python3.11/json/decoder.py", 337);
	n = frame(w, "zeros", NUMERIC, 100);
	f = frame(w, "_call_with_frames_removed", "<frozen importlib._bootstrap>", 241);
	for (i = 0; i < 6; i++)
		st[i][0] = IN(m);
	st[0][1] = t12, st[0][2] = f;
	st[1][1] = t30, st[1][2] = t20;
	st[2][1] = j, st[2][2] = t20;
	st[3][1] = IN(make_tensor), st[3][2] = IN(write_capture);
	st[4][1] = n, st[4][2] = f;
	st[5][1] = n, st[5][2] = t12;
	for (i = 0; i < 6; i++)
		assert_int_equal(mp_writer_stack(w, st[i], 3, &id[i]), 0);
	for (i = 0; i < 6; i++) {
		mp_writer_next_stack(w, id[i]);
		assert_int_equal(mp_writer_alloc(w, 0, at[i], bytes[i], bytes[i]), 0);
	}
	mp_writer_free(w, 0, 0x2000);
	mp_writer_next_stack(w, id[2]);
	mp_writer_alloc(w, 0, 0x7000, 5, 5);
	assert_int_equal(mp_writer_close(w), 0);
	return 0;
}

static int remove_capture(void **state)
{
	(void)state;
	unlink(path);
	free(path);
	return 0;
}

static const mp_func_row_t *row(const mp_functions_t *f, const char *label)
{
	for (size_t i = 0; i < mp_functions_count(f); i++)
		if (!strcmp(mp_functions_row(f, i)->label, label))
			return mp_functions_row(f, i);
	for (size_t i = 0; i < mp_functions_count(f); i++)
		print_message("row %s\n", mp_functions_row(f, i)->label);
	fail_msg("no row '%s'", label);
	return NULL;
}

/* peak bytes / blocks, allocations, requested, live at the end */
static void expect(const mp_func_row_t *r, uint64_t pb, uint64_t pc, uint64_t allocs, uint64_t req, uint64_t lb)
{
	assert_int_equal(r->peak_bytes, pb);
	assert_int_equal(r->peak_count, pc);
	assert_int_equal(r->allocations, allocs);
	assert_int_equal(r->requested_bytes, req);
	assert_int_equal(r->leak_bytes, lb);
}

static mp_functions_t *functions(const mp_functions_options_t *o, mp_solver_t **s, mp_source_t **src)
{
	mp_functions_t *f = NULL;
	mp_diag_t diag;

	assert_int_equal(mp_capture_open_source(src, path, &diag), 0);
	*s = mp_solver_new(NULL);
	assert_int_equal(mp_solver_run(*s, *src, &diag), 0);
	assert_int_equal(mp_solver_find(*s, 0)->peak_bytes, 3900);
	assert_int_equal(mp_functions_compute_opts(&f, *src, *s, o, &diag), 0);
	return f;
}

static void done(mp_functions_t *f, mp_solver_t *s, mp_source_t *src)
{
	mp_functions_free(f);
	mp_solver_free(s);
	mp_source_close(src);
}

static void test_user_frame(void **state)
{
	mp_solver_t *s;
	mp_source_t *src;
	mp_functions_t *f = functions(NULL, &s, &src);
	const mp_func_row_t *r;
	const mp_func_frame_t *fr;
	char *text = NULL;
	size_t len = 0;
	uint32_t n;
	FILE *out;
	json_t *j, *jr;

	(void)state;
	assert_int_equal(mp_functions_count(f), 5);
	r = mp_functions_row(f, 0); /* the largest at the peak first */
	assert_string_equal(r->label, "step (" TRAIN ":30)");
	assert_string_equal(r->function, "step");
	assert_string_equal(r->file, TRAIN);
	assert_int_equal(r->line, 30);
	assert_int_equal(r->kind, MP_FRAME_PYTHON);
	assert_string_equal(r->object, "");
	expect(r, 2000, 1, 1, 2000, 0);
	expect(row(f, "main (" TRAIN ":12)"), 1060, 2, 2, 1060, 1060);
	expect(row(f, "zeros (" NUMERIC ":100)"), 500, 1, 1, 500, 500);
	expect(row(f, "main (" TRAIN ":20)"), 300, 1, 2, 305, 305);
	r = mp_functions_row(f, 4);
	assert_int_equal(r->kind, MP_FRAME_NATIVE);
	assert_string_equal(r->file, "");
	expect(r, 40, 1, 1, 40, 40);
	if (!strcmp(mp_functions_symbolizer(f), "libdw"))
		assert_string_equal(r->function, "make_tensor");
	/* the row's stack: malloc, then the Python frames named */
	assert_int_equal(mp_functions_frames(f, row(f, "main (" TRAIN ":20)")->stack, &fr, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(fr[0].kind, MP_FRAME_NATIVE);
	assert_int_equal(fr[1].kind, MP_FRAME_PYTHON);
	assert_string_equal(fr[1].function, "decode");
	assert_string_equal(fr[1].file, "/usr/lib/python3.11/json/decoder.py");
	assert_int_equal(fr[1].line, 337);
	assert_null(fr[1].object);
	assert_string_equal(fr[2].function, "main");
	assert_int_equal(fr[2].line, 20);
	/* text: "function (file:line)" */
	out = open_memstream(&text, &len);
	assert_int_equal(mp_functions_text(out, f, src, 0, 0, 0), 0);
	fclose(out);
	assert_non_null(strstr(text, "\n  step (" TRAIN ":30)  "));
	assert_non_null(strstr(text, "\n  main (" TRAIN ":20)  "));
	free(text);
	/* JSON: function, file, line, kind beside the figures; valid */
	j = mp_functions_json(f, src, 0, 0, 0);
	mp_test_json_valid(j, "report", "functions");
	jr = json_array_get(json_object_get(j, "rows"), 1);
	assert_string_equal(json_string_value(json_object_get(jr, "function")), "main");
	assert_string_equal(json_string_value(json_object_get(jr, "file")), TRAIN);
	assert_int_equal(json_integer_value(json_object_get(jr, "line")), 12);
	assert_string_equal(json_string_value(json_object_get(jr, "kind")), "python");
	assert_int_equal(json_integer_value(json_object_get(jr, "peak_bytes")), 1060);
	jr = json_array_get(json_object_get(jr, "stack"), 1);
	assert_string_equal(json_string_value(json_object_get(jr, "kind")), "python");
	json_decref(j);
	done(f, s, src);
}

static void test_options(void **state)
{
	mp_functions_options_t all = {1, NULL, NULL}, numpy = {0, "numpy", NULL};
	mp_solver_t *s;
	mp_source_t *src;
	mp_functions_t *f = functions(&all, &s, &src);

	(void)state;
	assert_int_equal(mp_functions_count(f), 5);
	expect(row(f, "step (" TRAIN ":30)"), 2000, 1, 1, 2000, 0);
	expect(row(f, "main (" TRAIN ":12)"), 1000, 1, 1, 1000, 1000);
	expect(row(f, "zeros (" NUMERIC ":100)"), 560, 2, 2, 560, 560);
	expect(row(f, "decode (/usr/lib/python3.11/json/decoder.py:337)"), 300, 1, 2, 305, 305);
	done(f, s, src);
	f = functions(&numpy, &s, &src);
	assert_int_equal(mp_functions_count(f), 5);
	expect(row(f, "zeros (" NUMERIC ":100)"), 560, 2, 2, 560, 560);
	expect(row(f, "main (" TRAIN ":12)"), 1000, 1, 1, 1000, 1000);
	expect(row(f, "main (" TRAIN ":20)"), 300, 1, 2, 305, 305);
	done(f, s, src);
	/* the interpreter's objects */
	assert_true(rp_is_interpreter("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"));
	assert_true(rp_is_interpreter("/usr/bin/python3.11"));
	assert_true(rp_is_interpreter("python3"));
	assert_false(rp_is_interpreter("/usr/bin/pythonista"));
	assert_false(rp_is_interpreter("/usr/lib/x86_64-linux-gnu/libc.so.6"));
}

/* The call tree's frames: the Python ones by function, file and line. */
static void test_tree(void **state)
{
	mp_calltree_t *t = NULL;
	const mp_tree_t *tr;
	mp_solver_t *s;
	mp_source_t *src;
	mp_diag_t diag;
	mp_calltree_options_t o = {0, 0, NULL, 0};
	int found = 0;

	(void)state;
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	s = mp_solver_new(NULL);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	assert_int_equal(mp_calltree_compute(&t, src, s, &o, &diag), 0);
	tr = mp_calltree_find(t, 0, MP_TREE_PEAK);
	assert_non_null(tr);
	assert_int_equal(tr->nodes[0].total_bytes, 3900);
	for (size_t i = 1; i < tr->count; i++) {
		const mp_tree_node_t *x = &tr->nodes[i];
		if (x->kind == MP_FRAME_PYTHON && !strcmp(x->name, "main") && x->line == 20) {
			/* S2 (step, 2000) and S3 (decode, 300) under it */
			assert_string_equal(x->file, TRAIN);
			assert_int_equal(x->total_bytes, 2300);
			assert_int_equal(x->depth, 1); /* outermost */
			found++;
		}
		if (x->kind == MP_FRAME_PYTHON && !strcmp(x->name, "decode")) {
			assert_int_equal(x->line, 337);
			assert_int_equal(x->self_bytes, 300);
			found++;
		}
	}
	assert_int_equal(found, 2);
	mp_calltree_free(t);
	mp_solver_free(s);
	mp_source_close(src);
}

/* Recursion in text: a function calling itself from one line, five deep,
 * is one line counting its calls, what it called one level under it;
 * JSON and the flame graph keep every call. The capture: 640 B from
 * {M, leaf (rec.py:51), deep (rec.py:52) x5, main (rec.py:90)} and 100 B
 * from {M, deep (rec.py:52), main (rec.py:91)} (one call: no run). */
static void test_recursion_text(void **state)
{
	void *(*volatile m)(size_t) = malloc;
	char *rec = mp_test_tmpfile("recursion.memprof"), *text = NULL;
	mp_calltree_options_t o = {0, 0, NULL, 0};
	mp_calltree_t *t = NULL;
	uint64_t st[8], one[3];
	uint32_t id[2];
	size_t len = 0;
	mp_writer_t *w;
	mp_solver_t *s;
	mp_source_t *src;
	mp_diag_t diag;
	FILE *out;

	(void)state;
	assert_int_equal(mp_writer_open(&w, rec, 1, NULL, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	st[0] = one[0] = IN(m);
	st[1] = frame(w, "leaf", "/tmp/rec.py", 51);
	for (int k = 2; k < 7; k++)
		st[k] = frame(w, "deep", "/tmp/rec.py", 52);
	st[7] = frame(w, "main", "/tmp/rec.py", 90);
	one[1] = st[2];
	one[2] = frame(w, "main", "/tmp/rec.py", 91);
	assert_int_equal(mp_writer_stack(w, st, 8, &id[0]), 0);
	assert_int_equal(mp_writer_stack(w, one, 3, &id[1]), 0);
	mp_writer_next_stack(w, id[0]);
	assert_int_equal(mp_writer_alloc(w, 0, 0x1000, 640, 640), 0);
	mp_writer_next_stack(w, id[1]);
	assert_int_equal(mp_writer_alloc(w, 0, 0x2000, 100, 100), 0);
	assert_int_equal(mp_writer_close(w), 0);
	assert_int_equal(mp_capture_open_source(&src, rec, &diag), 0);
	s = mp_solver_new(NULL);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	assert_int_equal(mp_calltree_compute(&t, src, s, &o, &diag), 0);
	assert_non_null(out = open_memstream(&text, &len));
	assert_int_equal(mp_calltree_text(out, t, src, s, MP_TREE_PEAK, 0, 0), 0);
	fclose(out);
	if (!strstr(text, "\n       640 B   86.5%      1         0 B    main (/tmp/rec.py:90)\n"
			  "       640 B   86.5%      1         0 B      deep (/tmp/rec.py:52) x5 (recursion)\n"
			  "       640 B   86.5%      1       640 B        leaf (/tmp/rec.py:51)\n") ||
	    !strstr(text, "\n       100 B   13.5%      1         0 B    main (/tmp/rec.py:91)\n"
			  "       100 B   13.5%      1       100 B      deep (/tmp/rec.py:52)\n"))
		fail_msg("the tree's text:\n%s", text);
	free(text);
	mp_calltree_free(t);
	mp_solver_free(s);
	mp_source_close(src);
	unlink(rec);
	free(rec);
}

static void test_cli(void **state)
{
	char cmd[MP_TEST_CMD_MAX], *out, *png = mp_test_tmpfile("pyflame.png");
	int st;

	(void)state;
	snprintf(cmd, sizeof(cmd), MEMPROF " report --by-function %s", path);
	out = mp_test_sh(cmd, &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "\n  step (" TRAIN ":30)  "));
	assert_non_null(strstr(out, "\n  main (" TRAIN ":20)  "));
	assert_null(strstr(out, "decode"));
	free(out);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --by-function --all-frames %s", path);
	out = mp_test_sh(cmd, &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "\n  decode (/usr/lib/python3.11/json/decoder.py:337)  "));
	free(out);
	snprintf(cmd, sizeof(cmd), MEMPROF " report --tree --min-percent 0 %s", path);
	out = mp_test_sh(cmd, &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "main (" TRAIN ":20)"));
	assert_non_null(strstr(out, "decode (/usr/lib/python3.11/json/decoder.py:337)"));
	free(out);
	snprintf(cmd, sizeof(cmd), MEMPROF " plot --chart flame -o %s %s 2>&1", png, path);
	out = mp_test_sh(cmd, &st);
	assert_int_equal(st, 0);
	free(out);
	assert_int_equal(access(png, F_OK), 0);
	unlink(png);
	free(png);
}

/* The breakdown at the peak (report --breakdown): allocations without an
 * op grouped by their stack's Python frame of the user's code; the
 * native-only stack by its function, as --by-function charges it (the
 * report's stack labeler). Rows per size: bytes by op summed. */
static void test_breakdown_ops(void **state)
{
	static const struct {
		const char *op;
		json_int_t bytes;
	} want[] = {
		{"step (" TRAIN ":30)", 2000}, {"main (" TRAIN ":12)", 1060}, {"zeros (" NUMERIC ":100)", 500},
		{"main (" TRAIN ":20)", 300},  {"make_tensor", 40},
	};
	json_int_t got[5] = {0};
	char cmd[MP_TEST_CMD_MAX], *out;
	json_t *doc, *rows;
	size_t i, k;
	int st;

	(void)state;
	snprintf(cmd, sizeof(cmd), MEMPROF " report --breakdown --json %s", path);
	out = mp_test_sh(cmd, &st);
	assert_int_equal(st, 0);
	doc = mp_test_json_loads(out, "report");
	rows = json_object_get(json_array_get(json_object_get(doc, "devices"), 0), "breakdown");
	assert_int_equal(json_array_size(rows), 6); /* main (train.py:12): 1000 and 60 */
	for (i = 0; i < json_array_size(rows); i++) {
		const char *op = json_string_value(json_object_get(json_array_get(rows, i), "op"));
		for (k = 0; k < 5 && strcmp(op, want[k].op); k++)
			;
		if (k == 5)
			fail_msg("unexpected op '%s'", op);
		got[k] += json_integer_value(json_object_get(json_array_get(rows, i), "total_bytes"));
	}
	for (k = 0; k < 5; k++)
		assert_int_equal(got[k], want[k].bytes);
	json_decref(doc);
	free(out);
	/* --all-frames: the standard library's decode is the op */
	snprintf(cmd, sizeof(cmd), MEMPROF " report --breakdown --all-frames %s", path);
	out = mp_test_sh(cmd, &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "  decode (/usr/lib/python3.11/json/decoder.py:337)\n"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user_frame),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_recursion_text),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_breakdown_ops),
	};
	return cmocka_run_group_tests(tests, write_capture, remove_capture);
}
