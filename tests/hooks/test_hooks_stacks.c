/* test_hooks_stacks.c - `memprof record --stacks` end to end.
 *
 * victim_stacks (see its header comment) allocates from four known
 * functions; the capture is checked with the capture API (every host
 * allocation has a stack, the three calls of alloc_a share one, the module
 * map names the victim), then `memprof report --by-function --json` must
 * charge exactly what each function allocated: alloc_a 3 x 1000, alloc_b
 * 2 x 5000, grow_c 100 then a realloc to 200, fail_d one failed request.
 * `report --tree` must show them as main's children. Both unwinders
 * (libunwind, frame pointers) must agree; a capture without --stacks must
 * read and report as before.
 */
#include "test_common.h"

#include "json_check.h"
#include "hooks_run.h"

#include <memprof/capture.h>

#include <jansson.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Capture-level checks; returns the number of distinct stack ids seen. */
static uint32_t check_capture(const char *path, int want_stacks)
{
	mp_capture_t *cap;
	mp_source_t *src;
	mp_diag_t diag;
	mp_event_t ev;
	uint32_t id_a = 0, id_b = 0, n_a = 0, n_b = 0, seen = 0, unstacked = 0, allocs = 0;
	int rc, victim = 0;
	size_t i;

	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	src = mp_capture_source(cap);
	while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
		if (ev.kind != MP_EV_ALLOC && ev.kind != MP_EV_ALLOC_FAILED)
			continue;
		if (strcmp(mp_source_memory(src, ev.memory)->name, "host"))
			continue;
		allocs++;
		unstacked += ev.stack == 0;
		if (ev.stack > seen)
			seen = ev.stack;
		if (ev.kind == MP_EV_ALLOC && ev.requested_bytes == 1000) {
			if (!id_a)
				id_a = ev.stack;
			assert_int_equal(ev.stack, id_a);
			n_a++;
		}
		if (ev.kind == MP_EV_ALLOC && ev.requested_bytes == 5000) {
			if (!id_b)
				id_b = ev.stack;
			assert_int_equal(ev.stack, id_b);
			n_b++;
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n_a, 3);
	assert_int_equal(n_b, 2);
	assert_true(allocs >= 7); /* 3 + 2 + malloc + realloc + failed, and whatever start-up made */
	if (want_stacks) {
		assert_int_equal(unstacked, 0);
		assert_true(id_a != 0 && id_b != 0 && id_a != id_b);
		/* deduplicated: alloc_a, alloc_b, grow_c's two sites, fail_d, and
		 * the few start-up allocations at most */
		assert_true(mp_capture_stack_count(cap) >= 5);
		assert_true(mp_capture_stack_count(cap) <= 12);
		for (i = 0; i < mp_capture_module_count(cap); i++)
			victim |= strstr(mp_capture_module(cap, i)->path, "/victim_stacks") != NULL;
		assert_true(victim);
	} else {
		assert_int_equal(unstacked, allocs);
		assert_int_equal(mp_capture_stack_count(cap), 0);
		assert_int_equal(mp_capture_module_count(cap), 0);
	}
	mp_capture_close(cap);
	return seen;
}

/* `memprof report ARGS --json FILE`; returns the document (caller frees)
 * and the exit status in *status. */
static json_t *report_json(const char *args, const char *path, int *status)
{
	char cmd[2048];
	json_error_t err;
	json_t *root;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' report %s --json '%s' 2>/dev/null", HK_MEMPROF, args, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	root = mp_test_json_loadf(p, JSON_DISABLE_EOF_CHECK, "report", &err);
	*status = pclose(p);
	return root;
}

static const json_t *row_of(const json_t *rows, const char *function)
{
	size_t i;
	json_t *r;

	json_array_foreach(rows, i, r) {
		if (!strcmp(json_string_value(json_object_get(r, "function")), function))
			return r;
	}
	fail_msg("no row for function '%s'", function);
	return NULL;
}

#define FIELD(r, k) json_integer_value(json_object_get((r), (k)))

static void check_breakdown(const char *path);

static void check_row(const json_t *rows, const char *fn, long allocs, long requested, long failed, long peak,
		      long peak_count)
{
	const json_t *r = row_of(rows, fn), *frame0;

	assert_string_equal(json_string_value(json_object_get(r, "memory")), "host");
	assert_int_equal(FIELD(r, "allocations"), allocs);
	assert_int_equal(FIELD(r, "requested_bytes"), requested);
	assert_int_equal(FIELD(r, "failed_allocations"), failed);
	assert_int_equal(FIELD(r, "peak_bytes"), peak);
	assert_int_equal(FIELD(r, "peak_count"), peak_count);
	assert_int_equal(FIELD(r, "leak_bytes"), 0);
	assert_int_equal(FIELD(r, "leak_count"), 0);
	assert_non_null(strstr(json_string_value(json_object_get(r, "object")), "victim_stacks"));
	/* the representative stack starts in the allocating function (the
	 * preload's own frames were dropped at capture time) */
	frame0 = json_array_get(json_object_get(r, "stack"), 0);
	assert_non_null(frame0);
	assert_string_equal(json_string_value(json_object_get(frame0, "function")), fn);
}

static void check_report(const char *path)
{
	int status;
	json_t *root = report_json("--by-function", path, &status), *fns, *rows, *dev;

	if (!root)
		fail_msg("`memprof report --by-function --json` gave no JSON");
	assert_int_equal(status, 0);
	fns = json_object_get(root, "functions");
	assert_non_null(fns);
	assert_true(FIELD(fns, "distinct_stacks") >= 5);
	rows = json_object_get(fns, "rows");
	assert_true(json_array_size(rows) >= 4);
	/* the peak is with everything of main live: 3000 + 10000 + 200 */
	dev = json_array_get(json_object_get(root, "devices"), 0);
	assert_int_equal(FIELD(json_object_get(dev, "peak"), "bytes"), 13200);
	if (!strcmp(json_string_value(json_object_get(fns, "symbolizer")), "libdw")) {
		check_row(rows, "alloc_a", 3, 3000, 0, 3000, 3);
		check_row(rows, "alloc_b", 2, 10000, 0, 10000, 2);
		check_row(rows, "grow_c", 2, 300, 0, 200, 1); /* malloc(100), then realloc to 200 */
		check_row(rows, "fail_d", 0, 0, 1, 0, 0);
		/* sorted by bytes live at the peak */
		assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "function")), "alloc_b");
		assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 1), "function")), "alloc_a");
		check_breakdown(path);
	} else {
		print_message("memprof built without libdw: function names not checked\n");
	}
	json_decref(root);
}

/* The breakdown at the peak: the victim annotates no op, so each row is
 * named by the function --by-function charges its stack to (the report's
 * stack labeler), not "-": alloc_b 10000 B, alloc_a 3000, grow_c 200. */
static void check_breakdown(const char *path)
{
	static const struct {
		const char *op;
		long bytes;
	} want[] = {{"alloc_b", 10000}, {"alloc_a", 3000}, {"grow_c", 200}};
	long got[3] = {0};
	int status;
	json_t *root = report_json("--breakdown", path, &status), *rows, *r;
	size_t i, k;

	if (!root)
		fail_msg("`memprof report --breakdown --json` gave no JSON");
	assert_int_equal(status, 0);
	rows = json_object_get(json_array_get(json_object_get(root, "devices"), 0), "breakdown");
	json_array_foreach(rows, i, r) {
		const char *op = json_string_value(json_object_get(r, "op"));
		for (k = 0; k < 3 && strcmp(op, want[k].op); k++)
			;
		if (k == 3)
			fail_msg("breakdown row '%s' is not one of the victim's functions", op);
		got[k] += FIELD(r, "total_bytes");
	}
	for (k = 0; k < 3; k++)
		assert_int_equal(got[k], want[k].bytes);
	json_decref(root);
}

/* `report --tree`: at the peak, main's children are the three functions
 * with what each holds (fail_d's request failed: in no tree), malloc and
 * realloc dropped; the root is the peak. */
static void check_tree(const char *path)
{
	static const struct {
		const char *fn;
		long bytes, count;
	} want[] = {{"alloc_b", 10000, 2}, {"alloc_a", 3000, 3}, {"grow_c", 200, 1}};
	int status;
	json_t *root = report_json("--tree --min-percent 0", path, &status), *ct, *nodes, *n = NULL;
	size_t i, main_i = 0;
	long k;

	if (!root)
		fail_msg("`memprof report --tree --json` gave no JSON");
	assert_int_equal(status, 0);
	ct = json_object_get(root, "call_tree");
	assert_non_null(ct);
	nodes = json_object_get(json_array_get(json_object_get(ct, "trees"), 0), "nodes");
	assert_int_equal(FIELD(json_array_get(nodes, 0), "total_bytes"), 13200);
	if (strcmp(json_string_value(json_object_get(ct, "symbolizer")), "libdw")) {
		print_message("memprof built without libdw: the tree's names not checked\n");
		json_decref(root);
		return;
	}
	json_array_foreach(nodes, i, n)
		if (!strcmp(json_string_value(json_object_get(n, "name")), "main"))
			break;
	assert_true(i < json_array_size(nodes));
	main_i = i;
	assert_int_equal(FIELD(n, "total_bytes"), 13200);
	k = FIELD(n, "first_child");
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++, k = FIELD(n, "next_sibling")) {
		assert_true(k > 0);
		n = json_array_get(nodes, (size_t)k);
		assert_string_equal(json_string_value(json_object_get(n, "name")), want[i].fn);
		assert_int_equal(FIELD(n, "parent"), (long)main_i);
		assert_int_equal(FIELD(n, "total_bytes"), want[i].bytes);
		assert_int_equal(FIELD(n, "self_bytes"), want[i].bytes);
		assert_int_equal(FIELD(n, "total_count"), want[i].count);
		assert_int_equal(FIELD(n, "first_child"), -1); /* malloc, realloc: dropped */
		assert_string_equal(json_string_value(json_object_get(n, "kind")), "native");
		assert_non_null(strstr(json_string_value(json_object_get(n, "file")), "victim_stacks"));
	}
	assert_int_equal(k, -1);
	json_decref(root);
}

/* The CSV table: alloc_a's row, field by field. */
static void check_csv(const char *path)
{
	char cmd[2048], line[4096];
	int found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' report --csv '%s' 2>/dev/null", HK_MEMPROF, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (!strncmp(line, "functions,", 10) && strstr(line, ",alloc_a,")) {
			found = 1;
			/* allocations .. stacks, then a native frame's empty source file and line 0 */
			assert_non_null(strstr(line, "victim_stacks,3,3000,0,3000,3,0,0,1,,0\n"));
		}
	assert_int_equal(pclose(p), 0);
	assert_true(found);
}

static void test_stacks_unwind(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL};

	assert_int_equal(hk_record(t->cap, opts, "victim_stacks", NULL, NULL), 0);
	check_capture(t->cap, 1);
	check_report(t->cap);
	check_tree(t->cap);
	if (HK_HAVE_LIBDW)
		check_csv(t->cap);
}

static void test_stacks_frame_pointers(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL};
	const char *env[] = {"MEMPROF_STACKS=fp", NULL};

	assert_int_equal(hk_record(t->cap, opts, "victim_stacks", NULL, env), 0);
	check_capture(t->cap, 1);
	check_report(t->cap);
	check_tree(t->cap);
}

/* Without --stacks: no stacks, no module map, the report as before, and
 * --by-function says why it cannot. */
static void test_stacks_none(void **state)
{
	tmpdir_t *t = *state;
	const char *forced = getenv("MEMPROF_STACKS");
	char *saved = forced ? strdup(forced) : NULL;
	json_t *root;
	int status;

	/* without stacks even when the suite runs with MEMPROF_STACKS set */
	unsetenv("MEMPROF_STACKS");
	status = hk_record(t->cap, NULL, "victim_stacks", NULL, NULL);
	if (saved) {
		setenv("MEMPROF_STACKS", saved, 1);
		free(saved);
	}
	assert_int_equal(status, 0);
	check_capture(t->cap, 0);
	root = report_json("", t->cap, &status);
	assert_non_null(root);
	assert_int_equal(status, 0);
	assert_null(json_object_get(root, "functions"));
	json_decref(root);
	root = report_json("--by-function", t->cap, &status);
	json_decref(root);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 2);
}

/* C++: operator new is an allocator entry point, so main (its caller) is
 * the allocating function: new char[1234], the vector (24) and its buffer
 * (1200), new int (4), the over-aligned object (128), the nothrow char[77]
 * and the char[55] after the exception (the failed news are failures, not
 * allocations; the std::bad_alloc's own block is libstdc++'s
 * __cxa_allocate_exception's); and the char[321] of
 * memprof_victim::make_buffer, whose mangled name (_ZN14memprof_victim11
 * make_bufferEm) the report shows demangled. libstdc++ has no frame
 * pointers: libunwind only. */
static void test_stacks_cxx(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL};
	const char *env[] = {"MEMPROF_STACKS=1", NULL}; /* libunwind, also when the suite runs with fp */
	json_t *root, *rows;
	int status;

	if (!HK_HAVE_CXX || !HK_HAVE_LIBUNWIND) {
		skip();
		return;
	}
	assert_int_equal(hk_record(t->cap, opts, "victim_cxx", NULL, env), 0);
	root = report_json("--by-function", t->cap, &status);
	assert_non_null(root);
	rows = json_object_get(json_object_get(root, "functions"), "rows");
	if (!strcmp(json_string_value(json_object_get(json_object_get(root, "functions"), "symbolizer")), "libdw")) {
		const json_t *r = row_of(rows, "main");
		assert_int_equal(FIELD(r, "allocations"), 7);
		assert_int_equal(FIELD(r, "requested_bytes"), 1234 + 24 + 1200 + 4 + 128 + 77 + 55);
		assert_int_equal(FIELD(r, "leak_count"), 0);
		/* a mangled name, shown demangled */
		r = row_of(rows, "memprof_victim::make_buffer(unsigned long)");
		assert_int_equal(FIELD(r, "allocations"), 1);
		assert_int_equal(FIELD(r, "requested_bytes"), 321);
	}
	json_decref(root);
}

/* The preload must not hand a program another C++ unwinder: libunwind
 * exports the _Unwind_* functions too, and as one of the preload's
 * libraries it took them over from libgcc_s for C++ code loaded later (a
 * Python process's extension modules), even without --stacks. Now the
 * preload links libgcc_s ahead of it. victim_unwinder exits 5 when the
 * global scope offers _Unwind_RaiseException from anything but libgcc_s. */
static void test_stacks_unwinder_untouched(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL};
	const char *env[] = {"MEMPROF_STACKS=1", NULL};

	assert_int_equal(hk_record(t->cap, NULL, "victim_unwinder", NULL, NULL), 0);
	remove(t->cap);
	assert_int_equal(hk_record(t->cap, opts, "victim_unwinder", NULL, env), 0);
}

/* A library loaded by dlopen after the capture started: the module map
 * gains it, and its function is named. */
static void test_stacks_dlopen(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL};
	const char *args[] = {HK_PLUGIN, NULL};
	mp_capture_t *cap;
	mp_diag_t diag;
	mp_event_t ev;
	json_t *root;
	size_t i;
	int status, plugin = 0;

	assert_int_equal(hk_record(t->cap, opts, "victim_stacks", args, NULL), 0);
	assert_int_equal(mp_capture_open(&cap, t->cap, &diag), 0);
	while (mp_source_next(mp_capture_source(cap), &ev, &diag) == 1)
		;
	for (i = 0; i < mp_capture_module_count(cap); i++)
		plugin |= strstr(mp_capture_module(cap, i)->path, "stacks_plugin") != NULL;
	assert_true(plugin);
	mp_capture_close(cap);
	root = report_json("--by-function", t->cap, &status);
	assert_non_null(root);
	assert_int_equal(status, 0);
	if (HK_HAVE_LIBDW) {
		const json_t *r = row_of(json_object_get(json_object_get(root, "functions"), "rows"), "plugin_alloc");
		assert_int_equal(FIELD(r, "allocations"), 2);
		assert_int_equal(FIELD(r, "requested_bytes"), 1554);
		assert_int_equal(FIELD(r, "leak_count"), 0);
		assert_non_null(strstr(json_string_value(json_object_get(r, "object")), "stacks_plugin"));
	}
	json_decref(root);
}

/* Host allocations without a stack in a capture, and the stacks defined. */
static uint64_t unstacked(const char *path, uint32_t *nstacks)
{
	mp_capture_t *cap;
	mp_diag_t diag;
	mp_event_t ev;
	uint64_t n = 0;

	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	while (mp_source_next(mp_capture_source(cap), &ev, &diag) == 1)
		if ((ev.kind == MP_EV_ALLOC || ev.kind == MP_EV_ALLOC_FAILED) && ev.memory == 0 && !ev.stack)
			n++;
	*nstacks = mp_capture_stack_count(cap);
	mp_capture_close(cap);
	return n;
}

/* 8 threads x 100000 allocations freed across threads, and 4000
 * short-lived threads (the frame-pointer walk finds each new thread's
 * stack bound): the figures of test_hooks_proc, unchanged by --stacks,
 * every allocation with a stack, and a handful of distinct stacks. */
static void test_stacks_threads(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL};
	const char *unwinders[] = {"MEMPROF_STACKS=1", "MEMPROF_STACKS=fp"};
	uint32_t nstacks;
	int u;

	for (u = 0; u < 2; u++) {
		const char *env[] = {unwinders[u], NULL};
		const char *churn_env[] = {unwinders[u], "MEMPROF_FLUSH_MS=1", NULL};
		hk_stats_t st = {0}, ch = {0};

		unlink(t->cap);
		assert_int_equal(hk_record(t->cap, opts, "victim_threads", NULL, env), 0);
		st.skip_first_thread = 1;
		hk_replay_ok(t->cap, &st);
		assert_int_equal(st.allocs, 800000);
		assert_int_equal(st.frees, 800000);
		assert_int_equal(st.peak, 37995904);
		assert_int_equal(st.unknown_frees, 0);
		assert_int_equal(st.dropped, 0);
		assert_int_equal(unstacked(t->cap, &nstacks), 0);
		assert_true(nstacks >= 1 && nstacks <= 32);

		unlink(t->cap);
		assert_int_equal(hk_record(t->cap, opts, "victim_churn", NULL, churn_env), 0);
		ch.skip_first_thread = 1;
		hk_replay_ok(t->cap, &ch);
		assert_int_equal(ch.allocs, 4000 * 101);
		assert_int_equal(ch.frees, 4000 * 101);
		assert_int_equal(ch.unknown_frees, 0);
		assert_int_equal(unstacked(t->cap, &nstacks), 0);
		assert_true(nstacks <= 64);
	}
}

/* A thread whose first allocation happens inside pthread_getattr_np(),
 * which holds the thread's lock (victim_stacks "getattr"; the JVM's new
 * threads do this): the frame-pointer walk found the thread's stack by
 * asking pthread_getattr_np() itself, and waited on that lock for ever --
 * `java` hung at start with MEMPROF_STACKS=fp. Now it reads the bound from
 * the thread's descriptor. Both unwinders: the program ends, and each of
 * its 8 allocations of 321 bytes has a stack. */
static void test_stacks_getattr(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL};
	const char *args[] = {"getattr", NULL};
	const char *unwinders[] = {"MEMPROF_STACKS=1", "MEMPROF_STACKS=fp"};
	uint32_t nstacks;
	int u;

	for (u = 0; u < 2; u++) {
		const char *env[] = {unwinders[u], NULL};
		hk_stats_t st = {0};

		unlink(t->cap);
		st.nwatch = 1;
		st.watch[0].size = 321;
		assert_int_equal(hk_record(t->cap, opts, "victim_stacks", args, env), 0);
		hk_replay_ok(t->cap, &st);
		assert_int_equal(st.watch[0].allocs, 8);
		assert_int_equal(st.watch[0].frees, 8);
		assert_int_equal(st.unknown_frees, 0);
		assert_int_equal(unstacked(t->cap, &nstacks), 0);
		assert_true(nstacks >= 1);
	}
}

/* The program's own anonymous mappings ("host_mmap") have stacks too
 * (victim_stacks "mmap"): a mapping is charged to map_e, a commit of a
 * reservation (mprotect) to commit_f -- as, with MEMPROF_PYMALLOC=0, a
 * pymalloc arena to the Python line that asked for it. Before, they had
 * none: '-' in the breakdown. Both unwinders. */
static void test_stacks_mmap(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL};
	const char *args[] = {"mmap", NULL};
	const char *unwinders[] = {"MEMPROF_STACKS=1", "MEMPROF_STACKS=fp"};

	for (int u = 0; u < 2; u++) {
		const char *env[] = {unwinders[u], NULL};
		int status;
		json_t *root;
		const json_t *rows, *r;
		size_t i, found = 0;

		unlink(t->cap);
		assert_int_equal(hk_record(t->cap, opts, "victim_stacks", args, env), 0);
		root = report_json("--by-function", t->cap, &status);
		assert_non_null(root);
		assert_int_equal(status, 0);
		if (strcmp(json_string_value(json_object_get(json_object_get(root, "functions"), "symbolizer")), "libdw")) {
			print_message("memprof built without libdw: function names not checked\n");
			json_decref(root);
			return;
		}
		rows = json_object_get(json_object_get(root, "functions"), "rows");
		json_array_foreach(rows, i, r) {
			const char *fn = json_string_value(json_object_get(r, "function"));
			if (strcmp(json_string_value(json_object_get(r, "memory")), "host_mmap"))
				continue;
			if (!strcmp(fn, "map_e")) {
				assert_int_equal(FIELD(r, "allocations"), 1);
				assert_int_equal(FIELD(r, "requested_bytes"), 1048576);
				found++;
			} else if (!strcmp(fn, "commit_f")) {
				assert_int_equal(FIELD(r, "allocations"), 1);
				assert_int_equal(FIELD(r, "requested_bytes"), 2097152);
				found++;
			} else {
				fail_msg("%s: a host_mmap row charged to '%s'", unwinders[u], fn);
			}
		}
		assert_int_equal(found, 2);
		json_decref(root);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stacks_unwind, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_stacks_frame_pointers, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_stacks_none, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_stacks_cxx, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_stacks_threads, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_stacks_getattr, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_stacks_mmap, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_stacks_dlopen, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_stacks_unwinder_untouched, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
