/* flame_check.h - what the flame chart's tests share: a chart laid out in
 * a box 1000 px wide (its plot 972 px from x = 14), its texts checked to be
 * on the canvas and clear of each other; a node's frame found by its ref. */
#ifndef MEMPROF_FLAME_CHECK_H
#define MEMPROF_FLAME_CHECK_H

#include <memprof/flame.h>

#include "chart_check.h"

#define W 1000.0 /* the box: the plot is 14 .. 986, 972 px */
#define X0 14.0

static inline mp_scene_t *chart_m(const mp_flame_node_t *nodes, size_t n, const mp_flame_options_t *o, double h,
			   const mp_text_measure_t *m, int expect)
{
	mp_scene_t *s = mp_scene_new(W, h, MP_RGB(MP_COLOR_BACKGROUND));
	mp_chart_area_t a = {s, m, {0, 0, W, h}};

	assert_non_null(s);
	assert_int_equal(mp_chart_flame(&a, nodes, n, "Flame", "test", o), expect);
	if (expect == 0)
		assert_int_equal(cc_texts_clear(s, m), 0);
	return s;
}

static inline mp_scene_t *chart(const mp_flame_node_t *nodes, size_t n, const mp_flame_options_t *o)
{
	return chart_m(nodes, n, o, mp_chart_flame_height(nodes, n, W, o, &mp_text_measure_fixed),
		       &mp_text_measure_fixed, 0);
}

/* The frame of node i (its ref), failing when it is not drawn. */
static inline const mp_scene_item_t *frame_of(const mp_scene_t *s, uint32_t node)
{
	size_t from = 0;
	const mp_scene_item_t *it;

	while ((it = mp_scene_find(s, "flame-frame", &from)))
		if (it->ref == node && mp_scene_item_note(s, it))
			return it;
	fail_msg("node %u has no frame", node);
	return NULL;
}

static inline int has_frame(const mp_scene_t *s, uint32_t node)
{
	size_t from = 0;
	const mp_scene_item_t *it;

	while ((it = mp_scene_find(s, "flame-frame", &from)))
		if (it->ref == node)
			return 1;
	return 0;
}

#define assert_rect(it, ex, ew)                                                                                  \
	do {                                                                                                      \
		if ((it)->x != (ex) || (it)->w != (ew) || (it)->h != 19)                                          \
			fail_msg("frame at x %.2f w %.2f h %.2f, expected x %.2f w %.2f", (it)->x, (it)->w, (it)->h, \
				 (double)(ex), (double)(ew));                                                      \
	} while (0)

/* The frame a label at (x, y) lies in. */
static inline const mp_scene_item_t *frame_under(const mp_scene_t *s, double x, double y)
{
	size_t from = 0;
	const mp_scene_item_t *it;

	while ((it = mp_scene_find(s, "flame-frame", &from)))
		if (x >= it->x && x < it->x + it->w && y >= it->y && y < it->y + it->h)
			return it;
	fail_msg("no frame under (%.1f, %.1f)", x, y);
	return NULL;
}

#endif
