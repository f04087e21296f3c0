/* fuzz_flame.c - random call trees through the flame chart's layout
 * (memprof/flame.h): 8 input bytes a node (its parent among the nodes
 * before it, kind, inclusive and self bytes on scales from 1 B to 2^64,
 * count, name), the first 4 the options and the box. Names are long, not
 * UTF-8, empty, NULL or "name (file:line)"; children may hold more bytes
 * than their parent; a flag makes one parent come after its child.
 * Checks beyond "no crash": a valid tree lays out (MP_ENOMEM aside), a
 * malformed one is MP_EUSAGE; every text stays on the canvas and clear of
 * the others; frames lie in the box, each inside its parent's span and
 * none overlapping another of its row; every name lies in its frame; each
 * frame's note is UTF-8. No cairo: texts are measured with the fixed
 * measure. Replayed by ctest (flame_fuzz_replay) from tests/fuzz/corpus/flame. */
#include <memprof/error.h>
#include <memprof/flame.h>

#include <stdlib.h>
#include <string.h>

#define fail_msg(...) abort() /* chart_check.h's cc_find, unused here */
#include "chart_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_NODES 4096

static const char *const names[] = {
	"forward (model.py:42)",
	"malloc",
	"libfoo.so+0x12",
	"a_very_long_function_name_that_will_never_fit_in_a_small_frame_at_all (some/deep/package/module_file.py:12345)",
	"torch::autograd::generated::SoftmaxBackward0::apply",
	"",
	NULL,
	"\xff\xfe (\xc3.py:1)",
	"cut \xe2\x80",
	"()",
	" (x)",
	"\xe2\x80\xa6\xe2\x80\xa6\xe2\x80\xa6",
};

static uint64_t bytes_of(uint8_t scale, uint8_t mant)
{
	unsigned shift = scale % 65;

	if (shift == 64)
		return UINT64_MAX - mant;
	return ((uint64_t)mant << shift >> 8) + (scale & 0x80 ? 0 : mant);
}

/* Every frame inside the box and its parent's span, apart from the other
 * frames of its row; its note UTF-8. */
static void check_frames(const mp_scene_t *s, const mp_flame_node_t *nodes, const mp_box_t *box)
{
	size_t from = 0;
	const mp_scene_item_t *it;

	while ((it = mp_scene_find(s, "flame-frame", &from))) {
		mp_box_t b = {it->x, it->y, it->w, it->h};
		size_t from2 = from;
		const mp_scene_item_t *o;
		if (!mp_box_inside(&b, box) || it->w < 1 || !mp_utf8_valid(mp_scene_item_note(s, it)))
			abort();
		for (size_t j = 0; j < mp_scene_count(s); j++) { /* its parent's frame */
			const mp_scene_item_t *p = mp_scene_item(s, j);
			if (it->ref && p->tag && !strcmp(p->tag, "flame-frame") && p->ref == nodes[it->ref].parent &&
			    (it->x < p->x || it->x + it->w > p->x + p->w + 1))
				abort();
		}
		while ((o = mp_scene_find(s, "flame-frame", &from2)))
			if (o->y == it->y && o->x < it->x + it->w && it->x < o->x + o->w)
				abort();
	}
}

/* Every name drawn starts and ends inside a frame of its row. */
static void check_labels(const mp_scene_t *s)
{
	size_t from = 0;
	const mp_scene_item_t *it;

	while ((it = mp_scene_find(s, "flame-label", &from))) {
		mp_box_t b = cc_text_box(s, it, &mp_text_measure_fixed);
		size_t from2 = 0;
		const mp_scene_item_t *f;
		int inside = 0;
		while ((f = mp_scene_find(s, "flame-frame", &from2)))
			inside |= it->y > f->y && it->y < f->y + f->h && b.x >= f->x && b.x + b.w <= f->x + f->w;
		if (!inside)
			abort();
	}
}

/* The least height a box may have: the chart's with one row. */
static double min_height(double w)
{
	static const mp_flame_node_t root = {"root", MP_FLAME_OTHER, 1, 1, 1, UINT32_MAX};

	return mp_chart_flame_height(&root, 1, w, NULL, &mp_text_measure_fixed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mp_flame_node_t *nodes;
	mp_flame_options_t o;
	size_t n = size > 4 ? (size - 4) / 8 : 0;
	int malformed = 0, rc;
	double w, h;

	if (size < 4)
		return 0;
	if (n > MAX_NODES)
		n = MAX_NODES;
	if (!(nodes = calloc(n ? n : 1, sizeof(*nodes))))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *b = data + 4 + 8 * i;
		uint32_t pick = (uint32_t)b[0] | (uint32_t)b[1] << 8;
		nodes[i].parent = i ? (pick & 0x8000 ? (uint32_t)i - 1 - (pick & 7) % (uint32_t)i : pick % (uint32_t)i)
				    : UINT32_MAX;
		nodes[i].kind = (int)(b[2] % 8) - 1; /* -1 and 5, 6: out of range */
		nodes[i].total_bytes = bytes_of(b[3], b[4]);
		nodes[i].self_bytes = bytes_of(b[3], b[5]);
		nodes[i].count = b[5];
		nodes[i].name = names[b[6] % (sizeof(names) / sizeof(names[0]))];
		if (i && b[7] == 0xFF && data[3] & 0x80) { /* a parent after its child, or a second root */
			nodes[i].parent = b[6] & 1 ? UINT32_MAX : (uint32_t)i + (b[6] & 2);
			malformed = 1;
		}
	}
	memset(&o, 0, sizeof(o));
	o.flame = data[0] & 1;
	o.sort = data[0] >> 1 & 1;
	o.max_depth = data[1] % 80;
	w = 120 + (double)data[2] * 8 + (data[0] >> 2 & 3) * 0.25;
	h = data[3] & 0x40 ? mp_chart_flame_height(nodes, n, w, &o, &mp_text_measure_fixed)
			   : 40 + (double)(data[3] & 0x3F) * 12;
	if (h < 1 || h > 20000) {
		if (!malformed && n && h < 1)
			abort(); /* a valid tree has a height */
		h = 300;
	}
	{
		mp_scene_t *s = mp_scene_new(w, h, MP_RGB(0xFFFFFF));
		mp_chart_area_t a = {s, &mp_text_measure_fixed, {0, 0, w, h}};
		if (!s) {
			free(nodes);
			return 0;
		}
		rc = mp_chart_flame(&a, nodes, n, "fuzz", data[0] & 0x80 ? NULL : "a subtitle", &o);
		if (malformed || h < min_height(w) ? rc != MP_EUSAGE : rc != 0 && rc != MP_ENOMEM)
			abort();
		if (rc == 0) {
			if (cc_texts_clear(s, &mp_text_measure_fixed))
				abort();
			check_frames(s, nodes, &a.box);
			check_labels(s);
		}
		mp_scene_free(s);
	}
	free(nodes);
	return 0;
}
