/* test_hooks_stackcache.c - the thread's stack cache of --stacks
 * (allocator_hooks/preload/stackcache.c) gives the stacks the unwinder
 * gives.
 *
 * victim_stackcache (see its header comment) calls one leaf function under
 * two outer stacks with the same return address and stack pointer at the
 * malloc call, and under one recursive function at two depths, 100 times
 * each, interleaved, built without frame pointers. `memprof report --tree`
 * must charge each outer path exactly what it allocated, with the cache
 * (the default) and without it (MEMPROF_STACKS_CACHE=0): a cache keyed on
 * the call site alone would charge the first outer stack for the second's
 * blocks.
 */
#include "test_common.h"

#include "json_check.h"
#include "hooks_run.h"

#include <jansson.h>
#include <string.h>
#include <unistd.h>

#define FIELD(r, k) json_integer_value(json_object_get((r), (k)))

/* The node at main/rest[0]/rest[1]/..., by name (main is under the
 * process's entry frames), or NULL. */
static const json_t *main_path(const json_t *nodes, const char *const *rest)
{
	size_t i, j;

	for (i = 0; i < json_array_size(nodes); i++) {
		const json_t *n = json_array_get(nodes, i);
		if (!strcmp(json_string_value(json_object_get(n, "name")), "main")) {
			const json_t *at = n;
			for (j = 0; rest[j]; j++) {
				long k;
				for (k = FIELD(at, "first_child"); k > 0;
				     k = FIELD(json_array_get(nodes, (size_t)k), "next_sibling"))
					if (!strcmp(json_string_value(json_object_get(json_array_get(nodes, (size_t)k), "name")),
						    rest[j]))
						break;
				if (k <= 0)
					return NULL;
				at = json_array_get(nodes, (size_t)k);
			}
			return at;
		}
	}
	return NULL;
}

static void check_path(const json_t *nodes, const char *const *rest, long bytes, long count)
{
	const json_t *n = main_path(nodes, rest);

	if (!n)
		fail_msg("no node main/%s/%s...", rest[0], rest[1]);
	assert_int_equal(FIELD(n, "total_bytes"), bytes);
	assert_int_equal(FIELD(n, "total_count"), count);
	assert_int_equal(FIELD(n, "self_bytes"), bytes); /* the leaf: malloc dropped */
}

static void check_tree(const char *path)
{
	static const char *const x[] = {"outer_x", "leaf", NULL}, *const y[] = {"outer_y", "leaf", NULL};
	static const char *const d3[] = {"deep", "deep", "deep", "deep", "leaf", NULL};
	static const char *const d5[] = {"deep", "deep", "deep", "deep", "deep", "deep", "leaf", NULL};
	char cmd[2048];
	json_error_t err;
	json_t *root, *ct, *nodes;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' report --tree --min-percent 0 --json '%s' 2>/dev/null", HK_MEMPROF, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	root = mp_test_json_loadf(p, JSON_DISABLE_EOF_CHECK, "report", &err);
	assert_int_equal(pclose(p), 0);
	if (!root)
		fail_msg("`memprof report --tree --json` gave no JSON");
	ct = json_object_get(root, "call_tree");
	assert_non_null(ct);
	nodes = json_object_get(json_array_get(json_object_get(ct, "trees"), 0), "nodes");
	/* all 400 blocks live at the peak, in glibc's usable sizes (the
	 * request + 8 rounded up to 16, less 8): 100 x (120 + 232 + 344 + 568) */
	assert_int_equal(FIELD(json_array_get(nodes, 0), "total_bytes"), 126400);
	check_path(nodes, x, 12000, 100);
	check_path(nodes, y, 23200, 100);
	check_path(nodes, d3, 34400, 100);
	check_path(nodes, d5, 56800, 100);
	json_decref(root);
}

static void test_stackcache_tree(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL};
	const char *with[] = {"MEMPROF_STACKS=1", NULL}, *without[] = {"MEMPROF_STACKS=1", "MEMPROF_STACKS_CACHE=0", NULL};

	if (!HK_HAVE_LIBUNWIND || !HK_HAVE_LIBDW) {
		print_message("memprof built without libunwind or libdw: no stack cache or no names\n");
		return;
	}
	assert_int_equal(hk_record(t->cap, opts, "victim_stackcache", NULL, without), 0);
	check_tree(t->cap);
	unlink(t->cap);
	assert_int_equal(hk_record(t->cap, opts, "victim_stackcache", NULL, with), 0);
	check_tree(t->cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stackcache_tree, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
