/* hlo_chart_check.h - what the HLO chart tests assert of a scene against
 * `memprof hlo --json` of the same module: the working space (the peak's
 * label and line, the heap and unpadded series at the points M4 keeps, the
 * lifetime bars), the strips' colours, the table's rows, and every text on
 * the canvas and clear of the others. After test_common.h: failures fail
 * the test. */
#ifndef MEMPROF_HLO_CHART_CHECK_H
#define MEMPROF_HLO_CHART_CHECK_H

#include <memprof/hlo.h>
#include <memprof/plot.h>
#include <memprof/render.h>

#include "render_check.h"

#include "json_check.h"
#include <inttypes.h>
#include <jansson.h>
#include <math.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define MAXTEXT "hlo/maxtext-h100/module_0016.jit_train_step.sm_9.0_gpu_after_optimizations.hlo.pb"
#define JIT_F "hlo/tpu-inference/jit_f.12190760917235803885.hlo_proto.pb"
#define UNIT "hlo/xprof-unit-vectors/share_with_chain_display_name_color1.hlo.pb"

/* `memprof hlo ARGS`, stdout into *out (may be NULL); the exit code. */
static inline int run(const char *args, char **out)
{
	char cmd[8192 + 256];

	snprintf(cmd, sizeof(cmd), "%s hlo %s 2>/dev/null", MEMPROF, args);
	return rc_run(cmd, out);
}

/* `memprof hlo --json --color COLOR PATH`, parsed and validated against
 * docs/schema/hlo.schema.json. Owned by the caller
 * (json_decref). */
static inline json_t *json_of(const char *path, int color)
{
	char args[4352], *out;
	json_t *doc;

	snprintf(args, sizeof(args), "--json --color %d '%s'", color, path);
	assert_int_equal(run(args, &out), 0);
	doc = mp_test_json_loads(out, "hlo");
	free(out);
	return doc;
}

/* The same module and colour analysed in this process. Owned by the
 * caller (mp_hlo_result_free). */
static inline mp_hlo_result_t *analyze(const char *path, int color)
{
	mp_hlo_file_t *f;
	mp_hlo_module_t *m;
	mp_hlo_result_t *r;
	mp_hlo_options_t o;
	mp_diag_t d;

	mp_hlo_options_init(&o);
	o.color = color;
	assert_int_equal(mp_hlo_file_open(path, &f, &d), 0);
	assert_int_equal(mp_hlo_module_load(f, 0, &m, &d), 0);
	mp_hlo_file_close(f);
	assert_int_equal(mp_hlo_analyze(m, &o, &r, &d), 0);
	mp_hlo_module_free(m);
	return r;
}

static inline int64_t jint(const json_t *o, const char *key)
{
	return (int64_t)json_integer_value(json_object_get(o, key));
}

static inline uint32_t category_color(const char *name)
{
	for (int c = MP_HLO_CAT_PARAMETER; c <= MP_HLO_CAT_SMALL; c++)
		if (!strcmp(mp_hlo_category_name((mp_hlo_category_t)c), name))
			return mp_color_hlo((mp_hlo_category_t)c);
	fail_msg("unknown category %s", name);
	return 0;
}

static inline const mp_scene_item_t *find1(const mp_scene_t *s, const char *tag)
{
	size_t from = 0;
	const mp_scene_item_t *it = mp_scene_find(s, tag, &from);

	if (!it)
		fail_msg("no item tagged '%s'", tag);
	return it;
}

/* ---- text: on the canvas, none over another ------------------------------- */

typedef struct tbox {
	double x0, y0, x1, y1;
	const char *s;
} tbox_t;

/* The ink box of a text item (DejaVu Sans: capitals 0.73 em, descenders
 * 0.24 em; the painter puts the baseline at y + ascent 0.93 em for TOP,
 * at y + 0.36 em for MIDDLE). */
static inline tbox_t text_box(const mp_scene_t *s, const mp_scene_item_t *it, const mp_text_measure_t *m)
{
	const mp_text_style_t *ts = &it->text_style;
	double w = mp_text_width(m, mp_scene_string(s, it), ts->size, ts->bold), base, x0;

	base = ts->valign == MP_VALIGN_TOP ? it->y + 0.93 * ts->size
	       : ts->valign == MP_VALIGN_MIDDLE ? it->y + 0.36 * ts->size : it->y;
	x0 = ts->halign == MP_ALIGN_CENTER ? it->x - w / 2 : ts->halign == MP_ALIGN_RIGHT ? it->x - w : it->x;
	return (tbox_t){x0, base - 0.73 * ts->size, x0 + w, base + 0.24 * ts->size, mp_scene_string(s, it)};
}

static inline void check_texts(const mp_scene_t *s, const mp_text_measure_t *m)
{
	size_t n = mp_scene_count(s), nt = 0;
	tbox_t *b = malloc((n ? n : 1) * sizeof(*b));

	assert_non_null(b);
	for (size_t i = 0; i < n; i++) {
		const mp_scene_item_t *it = mp_scene_item(s, i);
		if (it->kind != MP_SCENE_TEXT)
			continue;
		assert_int_equal(it->text_style.vertical, 0);
		b[nt] = text_box(s, it, m);
		if (b[nt].x0 < -0.01 || b[nt].y0 < -0.01 || b[nt].x1 > mp_scene_width(s) + 0.01 ||
		    b[nt].y1 > mp_scene_height(s) + 0.01)
			fail_msg("text off the canvas: '%s' at %.1f,%.1f-%.1f,%.1f", b[nt].s, b[nt].x0, b[nt].y0, b[nt].x1,
				 b[nt].y1);
		nt++;
	}
	for (size_t i = 0; i < nt; i++)
		for (size_t j = i + 1; j < nt; j++)
			if (b[i].x0 < b[j].x1 - 0.5 && b[j].x0 < b[i].x1 - 0.5 && b[i].y0 < b[j].y1 - 0.5 &&
			    b[j].y0 < b[i].y1 - 0.5)
				fail_msg("texts overlap: '%s' and '%s'", b[i].s, b[j].s);
	free(b);
}

/* ---- the working space against --json -------------------------------------- */

/* The heap path is a step line through the points mp_series_m4 keeps:
 * (X(k0), Y(v[k0])), then per kept k: (X(k), Y(previous)), (X(k), Y(v[k])),
 * then (right end, Y(last)); v[e] = heap_sizes[e + 1], the heap after event e. */
static inline void check_series(const mp_scene_t *s, const mp_scene_item_t *path, const mp_box_t *plot,
				 const json_t *arr, size_t nev, double bytes_per_px)
{
	size_t n = nev ? nev : 1, np = json_array_size(arr), k;
	double *x = malloc(n * sizeof(*x)), *v = malloc(n * sizeof(*v));
	size_t *keep = malloc((4 * (size_t)plot->w + 4) * sizeof(*keep));
	const mp_point_t *p = mp_scene_points(s, path);
	double bottom = plot->y + plot->h;

	assert_true(x && v && keep);
	for (size_t e = 0; e < n; e++) {
		x[e] = (double)e;
		v[e] = (double)json_integer_value(json_array_get(arr, e + 1 < np ? e + 1 : np - 1));
	}
	k = mp_series_m4(x, v, n, 0, (double)n, (size_t)plot->w, keep);
	assert_true(k > 0);
	assert_int_equal(path->count, 2 * k);
	for (size_t j = 0; j < k; j++) {
		const mp_point_t *q = &p[j ? 2 * j : 0];
		double want_x = plot->x + (double)keep[j] * plot->w / (double)n;
		assert_true(fabs(q->x - want_x) < 1e-6);
		assert_true(fabs((bottom - q->y) * bytes_per_px - v[keep[j]]) < 1e-6 * (v[keep[j]] + 1));
		if (j)
			assert_true(fabs((bottom - p[2 * j - 1].y) * bytes_per_px - v[keep[j - 1]]) <
				    1e-6 * (v[keep[j - 1]] + 1));
	}
	assert_true(fabs(p[2 * k - 1].x - (plot->x + plot->w)) < 1e-6);
	free(x);
	free(v);
	free(keep);
}

static inline void check_space(const mp_scene_t *s, const json_t *doc, size_t lifetimes)
{
	const mp_scene_item_t *plot_it = find1(s, "plot"), *line = find1(s, "peak-line"), *heap = find1(s, "heap"), *it;
	mp_box_t plot = {plot_it->x, plot_it->y, plot_it->w, plot_it->h};
	int64_t peak = jint(doc, "peak_heap_bytes"), pos = jint(doc, "peak_position");
	size_t nev = (size_t)jint(doc, "events"), n = nev ? nev : 1, nlife = 0, from = 0;
	const json_t *bysize = json_object_get(doc, "buffers_by_size");
	const mp_point_t *lp = mp_scene_points(s, line), *hp = mp_scene_points(s, heap);
	double px_per_ev = plot.w / (double)n, top = 1e300, bytes_per_px;
	uint32_t fills[8];
	char want[128], hb[32];
	const char *label = mp_scene_string(s, find1(s, "peak-label"));

	/* the label: the value and the position of --json */
	snprintf(want, sizeof(want), "peak %s at event %" PRId64, mp_fmt_bytes(hb, sizeof(hb), (uint64_t)peak), pos);
	assert_memory_equal(label, want, strlen(want));
	/* the line: at the peak's event, to the pixel */
	assert_true(fabs(lp[0].x - lp[1].x) < 1e-9);
	assert_true(fabs((lp[0].x - plot.x) / px_per_ev - (double)pos) <= 0.5 / px_per_ev + 1e-9);
	/* the heap path's highest point is the peak, at x = X(peak_position) */
	for (size_t i = 0; i < heap->count; i++)
		if (hp[i].y < top)
			top = hp[i].y;
	bytes_per_px = (double)peak / (plot.y + plot.h - top);
	for (size_t i = 0; i < heap->count; i++)
		if (hp[i].y == top) {
			assert_true(fabs(hp[i].x - (plot.x + (double)pos * px_per_ev)) < 1e-6);
			break;
		}
	check_series(s, heap, &plot, json_object_get(doc, "heap_sizes"), nev, bytes_per_px);
	if ((it = mp_scene_find(s, "unpadded", &from)))
		check_series(s, it, &plot, json_object_get(doc, "unpadded_heap_sizes"), nev, bytes_per_px);
	else /* not drawn: the same curve as the heap's */
		assert_true(json_equal(json_object_get(doc, "heap_sizes"), json_object_get(doc, "unpadded_heap_sizes")));
	from = 0;
	/* lifetimes: the largest buffers with a span, in size order, from
	 * allocation to release; the first eight each in a colour of its own
	 * (grey after them), none of them a type's grey */
	for (size_t j = 0; j < json_array_size(bysize) && nlife < lifetimes; j++) {
		const json_t *b = json_array_get(bysize, j);
		double x0, x1;
		if (json_is_null(json_object_get(b, "span_start")))
			continue;
		it = mp_scene_find(s, "lifetime", &from);
		assert_non_null(it);
		x0 = plot.x + (double)jint(b, "span_start") * px_per_ev;
		x1 = plot.x + (double)jint(b, "span_limit") * px_per_ev;
		assert_true(fabs(it->x - x0) <= 0.5 + 1e-9);
		assert_true(fabs(it->x + it->w - x1) <= 0.5 + 1e-9 || it->w == 2);
		if (nlife < 8) {
			assert_int_not_equal(it->style.fill, MP_RGB(0xD9D9D9));
			for (size_t k = 0; k < nlife; k++)
				assert_int_not_equal(it->style.fill, fills[k]);
			fills[nlife] = it->style.fill;
		}
		assert_true(it->h >= 2 && it->h <= 14);
		nlife++;
	}
	assert_null(mp_scene_find(s, "lifetime", &from));
}

/* The strips' bands of types: runs that tile each strip's width; where a
 * buffer wide enough to be seen alone lies, its type's colour. With two strips the first is in
 * program order, the second by size. The first such place is returned for
 * a pixel test. */
static inline void check_strips(const mp_scene_t *s, const json_t *doc, int nstrips, double *px, double *py,
				 uint32_t *rgb)
{
	const json_t *order = json_object_get(doc, "buffers_by_order"), *bysize = json_object_get(doc, "buffers_by_size");
	const mp_scene_item_t *it, **runs[2];
	size_t nruns[2] = {0, 0}, from = 0, cap = mp_scene_count(s);
	double total = 0;
	int strip = -1;

	runs[0] = malloc(cap * sizeof(*runs[0]));
	runs[1] = malloc(cap * sizeof(*runs[1]));
	assert_true(runs[0] && runs[1]);
	for (size_t i = 0; i < json_array_size(order); i++)
		total += (double)jint(json_array_get(order, i), "size_bytes");
	while ((it = mp_scene_find(s, "buffer-type", &from))) {
		if (strip < 0 || it->y != runs[strip][0]->y) {
			strip++;
			assert_true(strip < nstrips);
		} else { /* contiguous */
			const mp_scene_item_t *prev = runs[strip][nruns[strip] - 1];
			assert_true(fabs(it->x - (prev->x + prev->w)) < 1e-9);
		}
		runs[strip][nruns[strip]++] = it;
	}
	assert_int_equal(strip, nstrips - 1);
	*px = -1;
	for (int st = 0; st < nstrips; st++) {
		const json_t *arr = st == 0 && nstrips == 2 ? order : bysize;
		double sx = runs[st][0]->x, last = runs[st][nruns[st] - 1]->x + runs[st][nruns[st] - 1]->w;
		double sw = last - sx, off = 0;
		/* each strip as wide as the other and centred in the canvas */
		assert_true(fabs(sx + last - mp_scene_width(s)) <= 1);
		for (size_t i = 0; i < json_array_size(arr); i++) {
			const json_t *b = json_array_get(arr, i);
			double size = (double)jint(b, "size_bytes"), cx = sx + (off + size / 2) / total * sw;
			off += size;
			if (size / total * sw < 8)
				continue;
			for (size_t r = 0; r < nruns[st]; r++) {
				const mp_scene_item_t *run = runs[st][r];
				uint32_t want;
				if (!(run->x <= cx && cx < run->x + run->w))
					continue;
				want = category_color(json_string_value(json_object_get(b, "category")));
				assert_int_equal(run->style.fill, MP_RGB(want));
				if (*px < 0) {
					*px = cx;
					*py = run->y + run->h / 2;
					*rgb = want;
				}
			}
		}
	}
	assert_true(*px >= 0);
	free(runs[0]);
	free(runs[1]);
}

static inline size_t count_tag(const mp_scene_t *s, const char *tag)
{
	size_t n = 0, from = 0;

	while (mp_scene_find(s, tag, &from))
		n++;
	return n;
}

/* The table's rows: every buffer by size down to the last lifetime's
 * (10 at least, when there are as many), the small aggregate left out. */
static inline size_t table_rows_expected(const json_t *doc, size_t lifetimes, size_t rows)
{
	const json_t *bysize = json_object_get(doc, "buffers_by_size");
	size_t life = 0, last = 0, out = 0, n = json_array_size(bysize);

	for (size_t j = 0; j < n && life < lifetimes; j++)
		if (!json_is_null(json_object_get(json_array_get(bysize, j), "span_start"))) {
			life++;
			last = j + 1;
		}
	for (size_t j = 0; j < n; j++) {
		int small = !strcmp(json_string_value(json_object_get(json_array_get(bysize, j), "category")), "Small");
		if (!small && (out < rows || j < last))
			out++;
	}
	return out;
}

/* The scene of r (charts: 0 = all; w, h: 0 = the default size). Owned by
 * the caller (mp_scene_free). */
static inline mp_scene_t *plot(const mp_hlo_result_t *r, unsigned charts, double w, double h)
{
	mp_plot_hlo_options_t o = {charts, w, h, 0, 0};
	mp_scene_t *s = NULL;
	mp_diag_t d;

	mp_diag_clear(&d);
	if (mp_plot_hlo(&s, r, &o, mp_render_measure(), &d) != 0)
		fail_msg("mp_plot_hlo: %s", d.text);
	return s;
}

#endif
