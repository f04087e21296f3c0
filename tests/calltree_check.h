/* calltree_check.h - what the call-tree tests check on every tree they get
 * (memprof/calltree.h): the flat array's links and order, the sums, the
 * children's order; and finding nodes by name or by their whole path.
 * Include after test_common.h. */
#ifndef MEMPROF_TEST_CALLTREE_CHECK_H
#define MEMPROF_TEST_CALLTREE_CHECK_H

#include <memprof/calltree.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Depth first (a parent before its children, a subtree contiguous), links
 * that agree, inclusive = exclusive + the children's (bytes and counts),
 * children by inclusive bytes, largest first; "(other)" a leaf. */
static inline void mp_test_tree_shape(const mp_tree_t *t)
{
	const mp_tree_node_t *n = t->nodes;
	uint64_t folded = 0, folded_bytes = 0;

	assert_true(t->count >= 1);
	assert_int_equal(n[0].parent, -1);
	assert_int_equal(n[0].depth, 0);
	assert_int_equal(n[0].next_sibling, -1);
	for (size_t i = 0; i < t->count; i++) {
		uint64_t b = n[i].self_bytes, c = n[i].self_count, prev = UINT64_MAX;
		int32_t expect_next = (int32_t)i + 1; /* preorder: the first child follows its parent */
		for (int32_t k = n[i].first_child; k >= 0; k = n[k].next_sibling) {
			assert_true(k > (int32_t)i && (size_t)k < t->count);
			assert_int_equal(k, expect_next);
			assert_int_equal(n[k].parent, (int32_t)i);
			assert_int_equal(n[k].depth, n[i].depth + 1);
			assert_true(n[k].total_bytes <= prev);
			prev = n[k].total_bytes;
			b += n[k].total_bytes;
			c += n[k].total_count;
			/* the next sibling follows this child's subtree */
			for (expect_next = k + 1; (size_t)expect_next < t->count && n[expect_next].depth > n[k].depth;)
				expect_next++;
		}
		if (b != n[i].total_bytes || c != n[i].total_count)
			fail_msg("node %zu '%s': total %" PRIu64 " B / %" PRIu64 ", self + children %" PRIu64 " B / %" PRIu64,
				 i, n[i].name, n[i].total_bytes, n[i].total_count, b, c);
		if (!strcmp(n[i].name, "(other)") && i) {
			assert_int_equal(n[i].first_child, -1);
			assert_true(n[i].folded > 0);
			folded += n[i].folded;
			folded_bytes += n[i].total_bytes;
		} else {
			assert_int_equal(n[i].folded, 0);
		}
	}
	assert_int_equal(folded, t->folded_nodes);
	assert_int_equal(folded_bytes, t->folded_bytes);
}

/* The child of parent named name (line: 0 for any), or -1. */
static inline int32_t mp_test_tree_child(const mp_tree_t *t, int32_t parent, const char *name, int64_t line)
{
	for (int32_t k = t->nodes[parent].first_child; k >= 0; k = t->nodes[k].next_sibling)
		if (!strcmp(t->nodes[k].name, name) && (!line || t->nodes[k].line == line))
			return k;
	return -1;
}

/* The path of node i from the outermost frame: "name\tfile\tline\tkind"
 * per node, joined by "\n" ("" for the root). */
static inline const char *mp_test_tree_path(const mp_tree_t *t, int32_t i, char *buf, size_t size)
{
	int32_t chain[4096];
	size_t n = 0, used = 0;

	for (; i > 0 && n < sizeof(chain) / sizeof(chain[0]); i = t->nodes[i].parent)
		chain[n++] = i;
	buf[0] = '\0';
	while (n--) {
		const mp_tree_node_t *x = &t->nodes[chain[n]];
		int w = snprintf(buf + used, size - used, "%s%s\t%s\t%" PRId64 "\t%s", used ? "\n" : "", x->name, x->file,
				 x->line, mp_frame_kind_name(x->kind));
		if (w < 0 || (size_t)w >= size - used)
			fail_msg("a path longer than %zu bytes", size);
		used += (size_t)w;
	}
	return buf;
}

#endif
