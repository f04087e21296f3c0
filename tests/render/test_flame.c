/* test_flame.c - the flame chart (memprof/flame.h) as data: frames' edges
 * worked out by hand for small trees (by bytes and by name, icicle and
 * flame), the widest frame under the root being its top child, names
 * shortened inside their frames keeping "(file:line)", narrow frames
 * merged and counted, the depth cap, the empty and malformed trees, notes
 * carrying each frame's figures, colours dark text can be read on; and
 * the example tree painted (PNG and SVG), its pixels where the scene put
 * its frames. */
#include "test_common.h"

#include <memprof/error.h>
#include <memprof/flame.h>
#include <memprof/render.h>

#include "chart_check.h"
#include "flame_check.h"
#include "flame_example.h"

#include <math.h>

/* root 9720 B over 972 px: 10 B a px. Children given out of order. */
static const mp_flame_node_t small[] = {
	{"root", MP_FLAME_OTHER, 9720, 1215, 10, UINT32_MAX},
	{"alpha", MP_FLAME_PYTHON, 2430, 2430, 3, 0},
	{"zeta (z.py:1)", MP_FLAME_PYTHON, 4860, 2430, 4, 0},
	{"mid", MP_FLAME_NATIVE, 1215, 1215, 2, 0},
	{"zeta_child", MP_FLAME_KERNEL, 2430, 1458, 1, 2},
	{"leaf", MP_FLAME_NATIVE, 972, 972, 1, 4},
};

static void test_widths_by_bytes(void **state)
{
	mp_scene_t *s;
	const mp_scene_item_t *root, *it;

	(void)state;
	s = chart(small, 6, NULL);
	root = frame_of(s, 0);
	assert_rect(root, X0, 971);             /* 972 px, less the seam */
	assert_true(root->y == floor(root->y)); /* whole pixels */
	/* largest first: zeta [0, 486), alpha [486, 729), mid [729, 850.5 -> 851) */
	assert_rect(frame_of(s, 2), X0, 485);
	assert_rect(frame_of(s, 1), X0 + 486, 242);
	assert_rect(frame_of(s, 3), X0 + 729, 121);
	assert_rect(frame_of(s, 4), X0, 242);
	assert_rect(frame_of(s, 5), X0, 96); /* 97.2 px -> 97 */
	for (uint32_t i = 1; i < 6; i++) /* one row per depth, icicle: down */
		assert_true(frame_of(s, i)->y == frame_of(s, small[i].parent)->y + MP_FLAME_ROW_H);
	it = frame_of(s, 2);
	assert_string_equal(mp_scene_item_note(s, it),
			    "zeta (z.py:1)\nPython · 4860 B (4.75 KiB), 50.0 % of all\n"
			    "self 2430 B (2.37 KiB) · 4 allocations");
	assert_int_equal(cc_count(s, "flame-frame"), 6);
	assert_int_equal(cc_count(s, "flame-merged"), 0);
	assert_int_equal(cc_count(s, "flame-hidden"), 0);
	mp_scene_free(s);
}

static void test_widths_by_name_flame(void **state)
{
	mp_flame_options_t o = {1, MP_FLAME_SORT_NAME, 0};
	mp_scene_t *s;

	(void)state;
	s = chart(small, 6, &o);
	/* alpha [0, 243), mid [243, 364.5 -> 365), zeta [365, 851) */
	assert_rect(frame_of(s, 1), X0, 242);
	assert_rect(frame_of(s, 3), X0 + 243, 121);
	assert_rect(frame_of(s, 2), X0 + 365, 485);
	assert_rect(frame_of(s, 4), X0 + 365, 242);
	for (uint32_t i = 1; i < 6; i++) /* flame: callees above */
		assert_true(frame_of(s, i)->y == frame_of(s, small[i].parent)->y - MP_FLAME_ROW_H);
	/* the root's row is the last above the line under the chart */
	assert_true(frame_of(s, 0)->y + MP_FLAME_ROW_H <= mp_scene_height(s) - 14);
	mp_scene_free(s);
}

/* The example's root children: the widest frame of row 1 is the top child,
 * leftmost by bytes; by name, the row reads in name order. */
static void test_widest_child(void **state)
{
	mp_flame_node_t nodes[FX_NODES];
	mp_flame_options_t by_name = {0, MP_FLAME_SORT_NAME, 0};
	uint32_t top = 0;
	mp_scene_t *s;

	(void)state;
	fx_build(nodes);
	for (uint32_t i = 1; i < FX_NODES; i++)
		if (nodes[i].parent == 0 && (!top || nodes[i].total_bytes > nodes[top].total_bytes))
			top = i;
	for (int pass = 0; pass < 2; pass++) {
		const mp_scene_item_t *widest = NULL, *it;
		double prev_x = -1;
		const char *prev_name = "";
		size_t from = 0;
		s = chart(nodes, FX_NODES, pass ? &by_name : NULL);
		while ((it = mp_scene_find(s, "flame-frame", &from))) {
			if (nodes[it->ref].parent != 0)
				continue;
			if (!widest || it->w > widest->w)
				widest = it;
			if (pass) {
				assert_true(it->x > prev_x);
				assert_true(strcmp(nodes[it->ref].name, prev_name) >= 0);
				prev_name = nodes[it->ref].name;
				prev_x = it->x;
			}
		}
		assert_non_null(widest);
		assert_int_equal(widest->ref, top);
		if (!pass)
			assert_true(widest->x == X0); /* first */
		mp_scene_free(s);
	}
}

/* Every name and size drawn lies inside its frame, the padding kept. */
static void check_labels_inside(const mp_scene_t *s, const mp_text_measure_t *m)
{
	const char *tags[2] = {"flame-label", "flame-size"};

	for (int k = 0; k < 2; k++) {
		size_t from = 0;
		const mp_scene_item_t *it;
		while ((it = mp_scene_find(s, tags[k], &from))) {
			mp_box_t b = cc_text_box(s, it, m);
			const mp_scene_item_t *f = frame_under(s, it->x - (k ? 1 : 0), it->y);
			if (b.x < f->x + 4 - 1e-9 || b.x + b.w > f->x + f->w - 4 + 1e-9)
				fail_msg("'%s' (%.1f .. %.1f) is not inside its frame (%.1f .. %.1f)",
					 mp_scene_string(s, it), b.x, b.x + b.w, f->x, f->x + f->w);
		}
	}
}

static void test_labels_fit(void **state)
{
	/* 1 B a px; with the fixed measure, 6.9 px a character at 11.5 px */
	static const mp_flame_node_t t[] = {
		{"root", MP_FLAME_OTHER, 972, 0, 1, UINT32_MAX},
		{"forward_with_a_long_name (model/transformer.py:212)", MP_FLAME_PYTHON, 251, 251, 1, 0},
		{"torch::autograd::generated::SoftmaxBackward0::apply", MP_FLAME_NATIVE, 109, 109, 1, 0},
		{"a_function_name_too_long_for_its_place (f.py:1)", MP_FLAME_PYTHON, 80, 80, 1, 0},
		{"tiny", MP_FLAME_NATIVE, 12, 12, 1, 0},
		{"short (s.py:1)", MP_FLAME_PYTHON, 400, 400, 1, 0},
	};
	mp_flame_node_t nodes[FX_NODES];
	mp_scene_t *s;
	size_t from = 0;
	const mp_scene_item_t *it;
	int seen = 0;

	(void)state;
	s = chart(t, 6, NULL);
	check_labels_inside(s, &mp_text_measure_fixed);
	while ((it = mp_scene_find(s, "flame-label", &from))) {
		const char *l = mp_scene_string(s, it);
		uint32_t node = frame_under(s, it->x, it->y)->ref;
		if (node == 1) { /* 250 px less 8: 7 characters, the ellipsis and the location */
			assert_string_equal(l, "forward\xE2\x80\xA6 (model/transformer.py:212)");
			seen |= 1;
		}
		if (node == 2) { /* 100 px: 14 code points, a third of them before the ellipsis */
			assert_string_equal(l, "torc\xE2\x80\xA6" "d0::apply");
			seen |= 2;
		}
		if (node == 3) { /* the location leaves room for less than 3 characters: the end kept */
			assert_string_equal(l, "a_f\xE2\x80\xA6" ".py:1)");
			seen |= 4;
		}
		if (node == 0 || node == 5) {
			assert_string_equal(l, t[node].name);
			seen |= node ? 8 : 16;
		}
		assert_true(node != 4); /* 11 px: no room for 3 characters */
	}
	assert_int_equal(seen, 31);
	/* bytes beside a name where both fit */
	it = cc_find(s, "flame-size", 0);
	assert_string_equal(mp_scene_string(s, it), "972 B");
	assert_int_equal(cc_count(s, "flame-size"), 2);
	mp_scene_free(s);

	/* the example, painted as the painter measures */
	fx_build(nodes);
	s = chart_m(nodes, FX_NODES, NULL, mp_chart_flame_height(nodes, FX_NODES, W, NULL, mp_render_measure()),
		    mp_render_measure(), 0);
	check_labels_inside(s, mp_render_measure());
	assert_true(cc_count(s, "flame-label") >= 25);
	mp_scene_free(s);
}

int flame_narrow_tests(void);

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_widths_by_bytes),
		cmocka_unit_test(test_widths_by_name_flame),
		cmocka_unit_test(test_widest_child),
		cmocka_unit_test(test_labels_fit),
	};
	int failed = cmocka_run_group_tests_name("flame layout", tests, NULL, NULL);

	failed += flame_narrow_tests();
	mp_render_shutdown();
	return failed;
}
