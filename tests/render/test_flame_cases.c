/* test_flame_cases.c - the flame chart at its edges (a group of
 * test_flame): frames under 1 px merged and counted, the depth cap and a
 * box too short, the empty and malformed trees, children with more bytes
 * than their parent, names that are not UTF-8, colours dark text can be
 * read on and neighbours that differ, and the example painted. */
#include "test_common.h"

#include <memprof/error.h>
#include <memprof/flame.h>
#include <memprof/render.h>

#include "../../render/charts/flame_impl.h"
#include "chart_check.h"
#include "flame_check.h"
#include "flame_example.h"
#include "render_check.h"

#include <math.h>

int flame_narrow_tests(void);

/* 100 B a px: the root's children n1..n3 and big's child tiny are
 * narrower than a pixel; n1..n3 make a run 1.8 px wide, tiny one of 0. */
static void test_narrow_merged(void **state)
{
	static const mp_flame_node_t t[] = {
		{"root", MP_FLAME_OTHER, 97200, 0, 9, UINT32_MAX}, {"big", MP_FLAME_NATIVE, 90000, 0, 2, 0},
		{"n1", MP_FLAME_NATIVE, 50, 0, 2, 0},               {"n2", MP_FLAME_NATIVE, 60, 60, 1, 0},
		{"n3", MP_FLAME_NATIVE, 70, 70, 1, 0},              {"n1child", MP_FLAME_NATIVE, 50, 50, 2, 2},
		{"bigchild", MP_FLAME_NATIVE, 80000, 80000, 1, 1},  {"tiny", MP_FLAME_NATIVE, 40, 40, 1, 1},
	};
	mp_scene_t *s;
	const mp_scene_item_t *run;

	(void)state;
	s = chart(t, 8, NULL);
	assert_int_equal(cc_count(s, "flame-frame"), 3); /* root, big, bigchild */
	for (uint32_t i = 2; i < 8; i++)
		assert_int_equal(has_frame(s, i), i == 6);
	assert_int_equal(cc_count(s, "flame-merged"), 1);
	run = cc_find(s, "flame-merged", 0);
	assert_true(run->x == X0 + 900 && run->w == 2); /* [900, 901.8 -> 902): too narrow for a seam */
	assert_true(run->y == frame_of(s, 1)->y);
	assert_int_equal(run->ref, 0);
	assert_string_equal(mp_scene_item_note(s, run), "3 frames under 1 px wide, merged\n180 B in all");
	assert_string_equal(mp_scene_string(s, cc_find(s, "flame-hidden", 0)),
			    "4 frames under 1 px wide (220 B in all) drawn merged in grey");
	mp_scene_free(s);
}

static void test_depth_cap(void **state)
{
	mp_flame_node_t chain[100];
	mp_flame_options_t five = {0, 0, 5};
	double fixed;
	mp_scene_t *s;

	(void)state;
	for (uint32_t i = 0; i < 100; i++)
		chain[i] = (mp_flame_node_t){"f (deep.py:1)", MP_FLAME_PYTHON, 1000, i == 99 ? 1000 : 0, 1,
					     i ? i - 1 : UINT32_MAX};
	fixed = mp_chart_flame_height(chain, 1, W, NULL, &mp_text_measure_fixed) - MP_FLAME_ROW_H;
	assert_true(mp_chart_flame_height(chain, 100, W, NULL, &mp_text_measure_fixed) == fixed + 64 * MP_FLAME_ROW_H);
	s = chart(chain, 100, NULL);
	assert_int_equal(cc_count(s, "flame-frame"), 64);
	assert_string_equal(mp_scene_string(s, cc_find(s, "flame-hidden", 0)),
			    "1 frame below row 64 (1000 B in all) not drawn");
	mp_scene_free(s);
	s = chart(chain, 100, &five);
	assert_int_equal(cc_count(s, "flame-frame"), 5);
	assert_string_equal(mp_scene_string(s, cc_find(s, "flame-hidden", 0)),
			    "1 frame below row 5 (1000 B in all) not drawn");
	mp_scene_free(s);
	/* a box with room for 10 rows draws 10, and says so */
	s = chart_m(chain, 100, NULL, fixed + 10 * MP_FLAME_ROW_H + 5, &mp_text_measure_fixed, 0);
	assert_int_equal(cc_count(s, "flame-frame"), 10);
	assert_true(frame_of(s, 9)->y + 19 <= mp_scene_height(s));
	assert_string_equal(mp_scene_string(s, cc_find(s, "flame-hidden", 0)),
			    "1 frame below row 10 (1000 B in all) not drawn");
	mp_scene_free(s);
}

static void test_empty_and_malformed(void **state)
{
	static const mp_flame_node_t small_root[] = {{"root", MP_FLAME_OTHER, 1, 1, 1, UINT32_MAX}};
	static const mp_flame_node_t zero[] = {{"root", MP_FLAME_OTHER, 0, 0, 0, UINT32_MAX}, {"a", 0, 0, 0, 0, 0}};
	/* a's parent after it; two roots */
	static const mp_flame_node_t late[] = {
		{"root", 0, 10, 0, 1, UINT32_MAX}, {"a", 0, 5, 5, 1, 2}, {"b", 0, 5, 5, 1, 0}};
	static const mp_flame_node_t two[] = {{"root", 0, 10, 0, 1, UINT32_MAX}, {"a", 0, 5, 5, 1, UINT32_MAX}};
	mp_scene_t *s;

	(void)state;
	for (int k = 0; k < 2; k++) {
		s = chart(k ? zero : NULL, k ? 2 : 0, NULL);
		assert_int_equal(cc_count(s, "flame-frame"), 0);
		assert_string_equal(mp_scene_string(s, cc_find(s, "flame-empty", 0)), "nothing to draw");
		assert_int_equal(mp_scene_count(s), 3); /* title, subtitle, the line */
		mp_scene_free(s);
	}
	/* a box shorter than the header and one row: refused, nothing drawn */
	s = chart_m(small_root, 1, NULL, mp_chart_flame_height(small_root, 1, W, NULL, &mp_text_measure_fixed) - 1,
		    &mp_text_measure_fixed, MP_EUSAGE);
	assert_int_equal(mp_scene_count(s), 0);
	mp_scene_free(s);
	mp_scene_free(chart_m(late, 3, NULL, 400, &mp_text_measure_fixed, MP_EUSAGE));
	mp_scene_free(chart_m(two, 2, NULL, 400, &mp_text_measure_fixed, MP_EUSAGE));
	assert_true(mp_chart_flame_height(late, 3, W, NULL, &mp_text_measure_fixed) == 0);
}

/* Frames in a row never overlap, and none passes its parent's right edge. */
static void check_nested(const mp_scene_t *s, const mp_flame_node_t *nodes)
{
	size_t from = 0;
	const mp_scene_item_t *it;

	while ((it = mp_scene_find(s, "flame-frame", &from))) {
		size_t from2 = from;
		const mp_scene_item_t *o;
		if (it->ref) {
			const mp_scene_item_t *p = frame_of(s, nodes[it->ref].parent);
			assert_true(it->x >= p->x && it->x + it->w <= p->x + p->w + 1);
		}
		while ((o = mp_scene_find(s, "flame-frame", &from2)))
			if (o->y == it->y && o->x < it->x + it->w && it->x < o->x + o->w)
				fail_msg("frames %u and %u overlap", it->ref, o->ref);
	}
}

static void test_inconsistent_bytes(void **state)
{
	static const mp_flame_node_t t[] = {
		{"root", 0, 972, 0, 1, UINT32_MAX}, {"a", 0, 800, 0, 1, 0},     {"b", 1, 600, 0, 1, 0},
		{"c", 42, 600, 600, 1, 2},          {"d", 3, 5000, 5000, 1, 1}, {"e", 2, 100, 100, 1, 1},
	};
	mp_flame_node_t nodes[FX_NODES];
	mp_scene_t *s;

	(void)state;
	s = chart(t, 6, NULL);
	check_nested(s, t);
	assert_rect(frame_of(s, 1), X0, 799);       /* a [0, 800) */
	assert_rect(frame_of(s, 2), X0 + 800, 171); /* b cut to [800, 972) */
	assert_rect(frame_of(s, 3), X0 + 800, 171);
	assert_rect(frame_of(s, 4), X0, 799); /* d cut to a's 800 B: e has no room */
	assert_int_equal(has_frame(s, 5), 0);
	assert_non_null(strstr(mp_scene_item_note(s, frame_of(s, 4)), "5000 B (4.88 KiB)")); /* its own figures */
	assert_non_null(strstr(mp_scene_item_note(s, frame_of(s, 3)), "\nunknown · ")); /* kind 42 */
	mp_scene_free(s);
	fx_build(nodes);
	s = chart(nodes, FX_NODES, NULL);
	check_nested(s, nodes);
	mp_scene_free(s);
}

static void test_names_not_utf8(void **state)
{
	static const mp_flame_node_t t[] = {
		{NULL, 0, 972, 0, 1, UINT32_MAX},
		{"\xff\xfe bad (x.py:1)", 0, 500, 500, 1, 0},
		{"cut \xe2\x80", 1, 400, 400, 1, 0},
	};
	mp_scene_t *s;

	(void)state;
	s = chart(t, 3, NULL);
	for (uint32_t i = 0; i < 3; i++)
		assert_true(mp_utf8_valid(mp_scene_item_note(s, frame_of(s, i))));
	assert_non_null(strstr(mp_scene_item_note(s, frame_of(s, 0)), "?\n"));
	assert_non_null(strstr(mp_scene_item_note(s, frame_of(s, 1)), "?? bad (x.py:1)\n"));
	mp_scene_free(s);
}

static double luminance(uint32_t rgb)
{
	double c[3];

	for (int i = 0; i < 3; i++) {
		double v = (double)(rgb >> (16 - 8 * i) & 0xFF) / 255;
		c[i] = v <= 0.03928 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
	}
	return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}

static double contrast(uint32_t a, uint32_t b)
{
	double la = luminance(a), lb = luminance(b);

	return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05);
}

/* Every shade of every kind, the root's and the runs' grey, under dark
 * text: WCAG's 4.5:1 at least; a kind's shades differ from each other. */
static void test_colors(void **state)
{
	mp_flame_node_t nodes[FX_NODES];
	mp_scene_t *s;
	size_t from = 0;
	const mp_scene_item_t *it, *prev = NULL;

	(void)state;
	for (int k = 0; k < MP_FLAME_KINDS; k++)
		for (unsigned sh = 0; sh < FL_SHADES; sh++) {
			if (contrast(fl_color(k, sh), MP_COLOR_TEXT) < 4.5)
				fail_msg("kind %d shade %u: %06x", k, sh, fl_color(k, sh));
			if (sh && k != MP_FLAME_OTHER)
				assert_true(fl_color(k, sh) != fl_color(k, sh - 1));
		}
	assert_true(contrast(FL_ROOT_COLOR, MP_COLOR_TEXT) >= 4.5);
	assert_true(contrast(FL_MERGED_COLOR, MP_COLOR_TEXT) >= 4.5);
	/* neighbours in a row (left to right, as drawn) never share a fill */
	fx_build(nodes);
	s = chart(nodes, FX_NODES, NULL);
	while ((it = mp_scene_find(s, "flame-frame", &from))) {
		if (prev && prev->y == it->y && prev->x + prev->w + 1 >= it->x)
			assert_true(prev->style.fill != it->style.fill);
		prev = it;
	}
	mp_scene_free(s);
}

/* The example as the painter draws it: every frame's fill where the scene
 * put it, clear of its label; an SVG that parses. */
static void test_painted(void **state)
{
	mp_flame_node_t nodes[FX_NODES];
	char *png = mp_test_tmpfile(".png"), *svg = mp_test_tmpfile(".svg"), root[16], w[32], h[32], err[256];
	mp_scene_t *s;
	mp_diag_t d;
	size_t from = 0;
	const mp_scene_item_t *it;
	int checked = 0;

	(void)state;
	fx_build(nodes);
	s = chart_m(nodes, FX_NODES, NULL, mp_chart_flame_height(nodes, FX_NODES, W, NULL, mp_render_measure()),
		    mp_render_measure(), 0);
	assert_int_equal(mp_render_write(s, png, MP_RENDER_PNG, &d), 0);
	assert_int_equal(mp_render_write(s, svg, MP_RENDER_SVG, &d), 0);
	while ((it = mp_scene_find(s, "flame-frame", &from))) {
		long px = rc_png_pixel(png, (int)it->x + 1, (int)it->y + 1);
		if (px != (long)(it->style.fill >> 8))
			fail_msg("frame %u: pixel %06lx, fill %06x", it->ref, px, it->style.fill >> 8);
		checked++;
	}
	assert_true(checked >= 30);
	assert_int_equal(rc_svg_parse(svg, root, sizeof(root), w, h, sizeof(w), err, sizeof(err)), 0);
	assert_string_equal(root, "svg");
	unlink(png);
	unlink(svg);
	free(png);
	free(svg);
	mp_scene_free(s);
}

int flame_narrow_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_narrow_merged),   cmocka_unit_test(test_depth_cap),
		cmocka_unit_test(test_empty_and_malformed), cmocka_unit_test(test_inconsistent_bytes),
		cmocka_unit_test(test_names_not_utf8),  cmocka_unit_test(test_colors),
		cmocka_unit_test(test_painted),
	};

	return cmocka_run_group_tests_name("flame edges", tests, NULL, NULL);
}
