/* test_torch_attribution.c - which frame names a PyTorch allocation
 * (docs/torch.md "Attribution"): the generated stacks of gen_snapshots.py
 * (attribution.pickle) against the ops it wrote by hand per --user-code
 * setting, the same through `memprof report --by-function`, and the real
 * snapshots of ../shared/data/torch (skipped when absent): no op of the
 * unwinder, no package's frame where the user's code is in the stack. */
#include "test_common.h"
#include "torch_test.h"

#include "json_check.h"

#include <memprof/solver.h>
#include <memprof/torch.h>

#include <jansson.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define OUT MEMPROF_BINARY_DIR "/tests/torch/fixtures-attr"

static json_t *expected, *attr;

static int setup(void **state)
{
	(void)state;
	expected = mp_test_gen_snapshots(OUT);
	attr = json_object_get(expected, "_attribution");
	return attr ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(expected);
	return 0;
}

static mp_source_t *open_snapshot(const char *path, int all_frames, const char *user_code)
{
	mp_torch_options_t opts = {all_frames, user_code};
	mp_source_t *src = NULL;
	mp_diag_t diag;
	int rc;

	mp_diag_clear(&diag);
	rc = mp_torch_open_source(&src, path, &opts, &diag);
	if (rc != 0)
		fail_msg("%s: %s", path, diag.text);
	return src;
}

static int is_device(const mp_source_t *src, uint32_t memory, const char *name)
{
	const mp_memory_info_t *m = mp_source_memory(src, memory);

	return m && !strcmp(m->name, name);
}

/* The stack key of expected.json's "addresses" at addr, or NULL. */
static const char *key_at(uint64_t addr)
{
	const char *key;
	json_t *v;

	json_object_foreach(json_object_get(attr, "addresses"), key, v)
		if ((uint64_t)json_integer_value(v) == addr)
			return key;
	return NULL;
}

/* Every allocation of attribution.pickle has the op `want` gives its
 * stack; so has the failed one (before "; device free"). */
static void check_ops(const json_t *want, int all_frames, const char *user_code)
{
	mp_source_t *src = open_snapshot(OUT "/attribution.pickle", all_frames, user_code);
	size_t allocs = 0, ooms = 0;
	mp_event_t ev;
	mp_diag_t diag;
	int rc;

	while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
		const char *op = mp_source_string(src, ev.op), *key;
		if (!is_device(src, ev.memory, "cuda:0"))
			continue;
		if (ev.kind == MP_EV_ALLOC) {
			assert_non_null(key = key_at(ev.address));
			if (strcmp(op, json_string_value(json_object_get(want, key))))
				fail_msg("user_code '%s', all_frames %d, stack %s: op '%s', expected '%s'",
					 user_code ? user_code : "", all_frames, key, op,
					 json_string_value(json_object_get(want, key)));
			allocs++;
		} else if (ev.kind == MP_EV_ALLOC_FAILED && !all_frames) {
			const char *oom = json_string_value(json_object_get(attr, "oom"));
			assert_int_equal(strncmp(op, oom, strlen(oom)), 0);
			assert_non_null(strstr(op, "; device free 3145728 B"));
			ooms++;
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(allocs, json_object_size(json_object_get(attr, "addresses")));
	assert_int_equal(ooms, all_frames ? 0 : 1);
	mp_source_close(src);
}

static void test_generated(void **state)
{
	const json_t *want;
	const char *setting;

	(void)state;
	json_object_foreach(json_object_get(attr, "ops"), setting, want)
		check_ops(want, 0, setting[0] ? setting : NULL);
	check_ops(json_object_get(attr, "all_frames"), 1, NULL);
	check_ops(json_object_get(attr, "all_frames"), 1, "packages"); /* --all-frames wins */
}

/* Run cmd; its stdout into buf. Returns the exit status. */
static int sh(const char *cmd, char *buf, size_t size)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0;
	int st;

	assert_non_null(f);
	while (n + 1 < size && !feof(f))
		n += fread(buf + n, 1, size - 1 - n, f);
	buf[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Allocations of the by-function row named fn in `report --by-function
 * --json` output; -1 when there is no such row. */
static long row_allocations(const char *out, const char *fn)
{
	json_t *doc = mp_test_json_loads(out, "report"), *row;
	json_t *rows = json_object_get(json_object_get(doc, "functions"), "rows");
	long n = -1;
	size_t i;

	json_array_foreach(rows, i, row)
		if (!strcmp(json_string_value(json_object_get(row, "function")), fn))
			n = (long)json_integer_value(json_object_get(row, "allocations"));
	json_decref(doc);
	return n;
}

/* The CLI: --by-function rows follow the same rule, --user-code changes
 * it, a bad list is a usage error. */
static void test_cli(void **state)
{
	static char out[1 << 18];
	const json_t *def = json_object_get(json_object_get(attr, "ops"), "");
	const json_t *pkg = json_object_get(json_object_get(attr, "ops"), "packages");

	(void)state;
	assert_int_equal(sh(MEMPROF " report --by-function --json " OUT "/attribution.pickle", out, sizeof(out)), 0);
	assert_int_equal(row_allocations(out, json_string_value(json_object_get(def, "bwd_node"))), 1);
	assert_int_equal(row_allocations(out, json_string_value(json_object_get(def, "lib_user_39"))), 1);
	assert_int_equal(row_allocations(out, json_string_value(json_object_get(def, "lib_user_55"))), 1);
	assert_int_equal(sh(MEMPROF " report --by-function --json --user-code packages " OUT "/attribution.pickle", out,
			    sizeof(out)), 0);
	/* the package's frame merges the two lines of the user's model */
	assert_int_equal(row_allocations(out, json_string_value(json_object_get(pkg, "lib_user_39"))), 2);
	assert_int_equal(row_allocations(out, json_string_value(json_object_get(def, "lib_user_39"))), -1);
	assert_int_equal(sh(MEMPROF " report --user-code '' " OUT "/attribution.pickle 2>&1", out, sizeof(out)), 2);
	assert_non_null(strstr(out, "invalid --user-code"));
	assert_int_equal(sh(MEMPROF " plot --user-code a --user-code b " OUT "/attribution.pickle -o " OUT "/a.svg 2>&1",
			    out, sizeof(out)), 2);
	assert_non_null(strstr(out, "--user-code given twice"));
}

/* --- the real snapshots --------------------------------------------------- */

typedef struct op_count {
	const char *op;
	size_t want, seen;
} op_count_t;

/* Every allocation's op of a real snapshot on cuda:0: none may contain
 * `never` unless listed in `allowed`; the ops of `counts` are counted. */
static void scan_real(mp_source_t *src, const char *never, const char *const *allowed, op_count_t *counts)
{
	mp_event_t ev;
	mp_diag_t diag;
	int rc;

	while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
		const char *op = mp_source_string(src, ev.op);
		int ok = 0;
		if ((ev.kind != MP_EV_ALLOC && ev.kind != MP_EV_ALLOC_FAILED) || !is_device(src, ev.memory, "cuda:0"))
			continue;
		for (size_t i = 0; counts[i].op; i++)
			counts[i].seen += !strcmp(op, counts[i].op);
		if (!strstr(op, never))
			continue;
		for (size_t i = 0; allowed && allowed[i]; i++)
			ok |= !strcmp(op, allowed[i]) || (!strncmp(op, "awaiting another stream: ", 25) &&
							   !strcmp(op + 25, allowed[i]));
		if (!ok)
			fail_msg("op '%s' names '%s'", op, never);
	}
	assert_int_equal(rc, 0);
	for (size_t i = 0; counts[i].op; i++)
		if (counts[i].seen != counts[i].want)
			fail_msg("%zu allocations named '%s', expected %zu", counts[i].seen, counts[i].op, counts[i].want);
}

static const mp_solver_device_t *solve(mp_solver_t **solver, mp_source_t *src, const char *name)
{
	mp_solver_options_t so;
	mp_diag_t diag;

	assert_int_equal(mp_source_rewind(src, &diag), 0);
	mp_solver_options_init(&so);
	so.top = 100000; /* every row */
	assert_non_null(*solver = mp_solver_new(&so));
	assert_int_equal(mp_solver_run(*solver, src, &diag), 0);
	for (size_t i = 0; i < mp_solver_device_count(*solver); i++) {
		const mp_solver_device_t *d = mp_solver_device(*solver, i);
		if (is_device(src, d->id, name))
			return d;
	}
	fail_msg("no memory '%s'", name);
	return NULL;
}

/* cnn_counterfactual_marks.pickle: 1331 of its 1935 allocations were named
 * torch::unwind::unwind(); the backward pass's are now its nodes. Counts
 * by hand with python3's pickle module: allocations whose stack has no
 * Python frame, the node SubBackward0 (AddmmBackward0) and at::_ops::neg
 * (mm) as its innermost operator. */
static void test_real_cnn(void **state)
{
	const char *path = mp_test_shared("torch/cnn_counterfactual_marks.pickle");
	op_count_t counts[] = {
		{"SubBackward0: aten::neg (backward)", 10, 0},
		{"AddmmBackward0: aten::mm (backward)", 41, 0},
		{NULL, 0, 0},
	};
	const mp_solver_device_t *d;
	mp_solver_t *solver;
	mp_source_t *src;

	(void)state;
	if (!path)
		skip();
	src = open_snapshot(path, 0, NULL);
	scan_real(src, "torch::unwind", NULL, counts);
	d = solve(&solver, src, "cuda:0");
	assert_true(d->breakdown_count > 0 && d->leak_count > 0);
	for (size_t i = 0; i < d->breakdown_count; i++)
		assert_null(strstr(mp_source_string(src, d->breakdown[i].op), "torch::unwind"));
	for (size_t i = 0; i < d->leak_count; i++)
		assert_null(strstr(mp_source_string(src, d->leaks[i].op), "torch::unwind"));
	mp_solver_free(solver);
	mp_source_close(src);
}

/* llama_lora_no_time.pickle: a notebook cell drives transformers, peft,
 * bitsandbytes and accelerate. Checked by hand with python3's pickle
 * module: 1552 allocations have /tmp/ipykernel_114/3105878423.py:21 as
 * their innermost frame outside torch, the standard library and the
 * packages; the 462 of bitsandbytes' autograd Function (autograd thread)
 * have no frame of the user's at all, only library code: the innermost
 * library frame names them, and only them. */
static void test_real_llama(void **state)
{
	static const char *const library_only[] = {
		"backward (/root/miniconda3/envs/py3.10/lib/python3.10/site-packages/bitsandbytes/autograd/_functions.py:540)",
		"dequantize_4bit (/root/miniconda3/envs/py3.10/lib/python3.10/site-packages/bitsandbytes/functional.py:1349)",
		NULL,
	};
	const char *path = mp_test_shared("torch/llama_lora_no_time.pickle");
	op_count_t counts[] = {
		{"<module> (/tmp/ipykernel_114/3105878423.py:21)", 1552, 0},
		{library_only[0], 308, 0},
		{library_only[1], 154, 0},
		{"MmBackward0: aten::mm (backward)", 177, 0},
		{NULL, 0, 0},
	};
	mp_source_t *src;

	(void)state;
	if (!path)
		skip();
	src = open_snapshot(path, 0, NULL);
	scan_real(src, "-packages/", library_only, counts);
	mp_source_close(src);
	/* --user-code packages: transformers' line again (before this rule, the op) */
	src = open_snapshot(path, 0, "packages");
	{
		op_count_t none[] = {{"<module> (/tmp/ipykernel_114/3105878423.py:21)", 0, 0}, {NULL, 0, 0}};
		scan_real(src, "torch::unwind", NULL, none);
	}
	mp_source_close(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_real_cnn),
		cmocka_unit_test(test_real_llama),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
