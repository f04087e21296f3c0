/* chart_check.h - what the chart tests assert of every scene, whatever it
 * shows: each text is on the canvas and overlaps no other text. Boxes are
 * the painter's measured widths and the font size's line height. */
#ifndef MEMPROF_CHART_CHECK_H
#define MEMPROF_CHART_CHECK_H

#include <memprof/layout.h>
#include <memprof/scene.h>

#include <stdio.h>

static inline mp_box_t cc_text_box(const mp_scene_t *s, const mp_scene_item_t *it, const mp_text_measure_t *m)
{
	const mp_text_style_t *ts = &it->text_style;
	double w = mp_text_width(m, mp_scene_string(s, it), ts->size, ts->bold), h = ts->size * 1.15, x = it->x, y = it->y;

	if (ts->halign == MP_ALIGN_CENTER)
		x -= w / 2;
	else if (ts->halign == MP_ALIGN_RIGHT)
		x -= w;
	if (ts->valign == MP_VALIGN_MIDDLE)
		y -= 0.58 * ts->size;
	else if (ts->valign == MP_VALIGN_BASELINE)
		y -= 0.93 * ts->size;
	return (mp_box_t){x, y, w, h};
}

/* Returns the number of problems found, each printed. */
static inline int cc_texts_clear(const mp_scene_t *s, const mp_text_measure_t *m)
{
	const double slack = 1.0; /* anti-aliasing: a pixel either way */
	mp_box_t canvas = {-slack, -slack, mp_scene_width(s) + 2 * slack, mp_scene_height(s) + 2 * slack};
	int bad = 0;

	for (size_t i = 0; i < mp_scene_count(s); i++) {
		const mp_scene_item_t *a = mp_scene_item(s, i);
		mp_box_t ba;
		if (a->kind != MP_SCENE_TEXT)
			continue;
		ba = cc_text_box(s, a, m);
		if (!mp_box_inside(&ba, &canvas)) {
			fprintf(stderr, "text '%s' at (%.1f, %.1f) %.1fx%.1f leaves the %.0fx%.0f canvas\n",
				mp_scene_string(s, a), ba.x, ba.y, ba.w, ba.h, mp_scene_width(s), mp_scene_height(s));
			bad++;
		}
		for (size_t j = i + 1; j < mp_scene_count(s); j++) {
			const mp_scene_item_t *b = mp_scene_item(s, j);
			mp_box_t bb, sa = ba;
			if (b->kind != MP_SCENE_TEXT)
				continue;
			bb = cc_text_box(s, b, m);
			sa.x += slack, sa.y += slack, sa.w -= 2 * slack, sa.h -= 2 * slack;
			if (mp_box_overlap(&sa, &bb, -slack)) {
				fprintf(stderr, "text '%s' overlaps '%s'\n", mp_scene_string(s, a), mp_scene_string(s, b));
				bad++;
			}
		}
	}
	return bad;
}

/* The nth item tagged tag, failing the test when there is none. */
static inline const mp_scene_item_t *cc_find(const mp_scene_t *s, const char *tag, size_t nth)
{
	size_t from = 0;
	const mp_scene_item_t *it = NULL;

	for (size_t i = 0; i <= nth; i++)
		it = mp_scene_find(s, tag, &from);
	if (!it)
		fail_msg("no item tagged '%s' (#%zu)", tag, nth);
	return it;
}

static inline size_t cc_count(const mp_scene_t *s, const char *tag)
{
	size_t from = 0, n = 0;

	while (mp_scene_find(s, tag, &from))
		n++;
	return n;
}

/* How many points of the area's outline (its columns' tops) lie under the
 * label -- its first line and the smaller one below it, at most as tall --
 * above its bottom: what the label hides. */
static inline int cc_label_over_area(const mp_scene_t *s, const mp_scene_item_t *label, const mp_scene_item_t *area,
				     const mp_text_measure_t *m)
{
	mp_box_t b = cc_text_box(s, label, m);
	const mp_point_t *p = mp_scene_points(s, area);
	int bad = 0;

	for (uint32_t i = 0; i < area->count; i++)
		if (p[i].x > b.x && p[i].x < b.x + b.w && p[i].y < b.y + 2 * b.h - 1)
			bad++;
	if (bad)
		fprintf(stderr, "label '%s' hides %d points of what was in use\n", mp_scene_string(s, label), bad);
	return bad;
}

#endif
