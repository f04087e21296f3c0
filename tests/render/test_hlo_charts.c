/* test_hlo_charts.c - the HLO memory viewer as a picture (mp_plot_hlo,
 * `memprof hlo -o`): on the shared HLO modules, what the scene says is
 * drawn (the peak, the heap series, the lifetimes, the buffer strips, the
 * table) against the figures of `memprof hlo --json`; the pixels of the
 * PNG where the scene put them; the SVG well-formed at the size asked for;
 * the same bytes twice; no text off the canvas or over another, however
 * long the names; a picture bounded by its width whatever the event and
 * buffer counts; the command's exit codes. */
#include "test_common.h"
#include "test_rand.h"

#include <memprof/hlo.h>
#include <memprof/plot.h>
#include <memprof/render.h>

#include "render_check.h"

#include <jansson.h>
#include <inttypes.h>
#include <math.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define MAXTEXT "hlo/maxtext-h100/module_0016.jit_train_step.sm_9.0_gpu_after_optimizations.hlo.pb"
#define JIT_F "hlo/tpu-inference/jit_f.12190760917235803885.hlo_proto.pb"
#define UNIT "hlo/xprof-unit-vectors/share_with_chain_display_name_color1.hlo.pb"

/* `memprof hlo ARGS`, stdout into *out (may be NULL); the exit code. */
static int run(const char *args, char **out)
{
	char cmd[8192 + 256];

	snprintf(cmd, sizeof(cmd), "%s hlo %s 2>/dev/null", MEMPROF, args);
	return rc_run(cmd, out);
}

static json_t *json_of(const char *path, int color)
{
	char args[4352], *out;
	json_error_t err;
	json_t *doc;

	snprintf(args, sizeof(args), "--json --color %d '%s'", color, path);
	assert_int_equal(run(args, &out), 0);
	doc = json_loads(out, 0, &err);
	if (!doc)
		fail_msg("json: %s", err.text);
	free(out);
	return doc;
}

static mp_hlo_result_t *analyze(const char *path, int color)
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

static int64_t jint(const json_t *o, const char *key)
{
	return (int64_t)json_integer_value(json_object_get(o, key));
}

static uint32_t category_color(const char *name)
{
	for (int c = MP_HLO_CAT_PARAMETER; c <= MP_HLO_CAT_SMALL; c++)
		if (!strcmp(mp_hlo_category_name((mp_hlo_category_t)c), name))
			return mp_color_hlo((mp_hlo_category_t)c);
	fail_msg("unknown category %s", name);
	return 0;
}

static const mp_scene_item_t *find1(const mp_scene_t *s, const char *tag)
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
static tbox_t text_box(const mp_scene_t *s, const mp_scene_item_t *it, const mp_text_measure_t *m)
{
	const mp_text_style_t *ts = &it->text_style;
	double w = mp_text_width(m, mp_scene_string(s, it), ts->size, ts->bold), base, x0;

	base = ts->valign == MP_VALIGN_TOP ? it->y + 0.93 * ts->size
	       : ts->valign == MP_VALIGN_MIDDLE ? it->y + 0.36 * ts->size : it->y;
	x0 = ts->halign == MP_ALIGN_CENTER ? it->x - w / 2 : ts->halign == MP_ALIGN_RIGHT ? it->x - w : it->x;
	return (tbox_t){x0, base - 0.73 * ts->size, x0 + w, base + 0.24 * ts->size, mp_scene_string(s, it)};
}

static void check_texts(const mp_scene_t *s, const mp_text_measure_t *m)
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
static void check_series(const mp_scene_t *s, const mp_scene_item_t *path, const mp_box_t *plot, const json_t *arr,
			 size_t nev, double bytes_per_px)
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

static void check_space(const mp_scene_t *s, const json_t *doc, size_t lifetimes)
{
	const mp_scene_item_t *plot_it = find1(s, "plot"), *line = find1(s, "peak-line"), *heap = find1(s, "heap"), *it;
	mp_box_t plot = {plot_it->x, plot_it->y, plot_it->w, plot_it->h};
	int64_t peak = jint(doc, "peak_heap_bytes"), pos = jint(doc, "peak_position");
	size_t nev = (size_t)jint(doc, "events"), n = nev ? nev : 1, nlife = 0, from = 0;
	const json_t *bysize = json_object_get(doc, "buffers_by_size");
	const mp_point_t *lp = mp_scene_points(s, line), *hp = mp_scene_points(s, heap);
	double px_per_ev = plot.w / (double)n, top = 1e300, bytes_per_px;
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
	 * allocation to release, in their type's colour */
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
		assert_int_equal(it->style.fill, MP_RGB(category_color(json_string_value(json_object_get(b, "category")))));
		assert_true(it->h >= 2 && it->h <= 14);
		nlife++;
	}
	assert_null(mp_scene_find(s, "lifetime", &from));
}

/* The strips: runs that tile each strip; where a buffer wide enough to be
 * seen alone lies, its type's colour. With two strips the first is in
 * program order, the second by size. The first such place is returned for
 * a pixel test. */
static void check_strips(const mp_scene_t *s, const json_t *doc, int nstrips, double *px, double *py, uint32_t *rgb)
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
	while ((it = mp_scene_find(s, "buffer", &from))) {
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

static size_t count_tag(const mp_scene_t *s, const char *tag)
{
	size_t n = 0, from = 0;

	while (mp_scene_find(s, tag, &from))
		n++;
	return n;
}

/* The table's rows: the lifetimes' buffers and the largest others, 10 in
 * all (more when there are more lifetimes), the small aggregate left out. */
static size_t table_rows_expected(const json_t *doc, size_t lifetimes, size_t rows)
{
	const json_t *bysize = json_object_get(doc, "buffers_by_size");
	size_t life = 0, others = 0, n = json_array_size(bysize);

	for (size_t j = 0; j < n && life < lifetimes; j++)
		life += !json_is_null(json_object_get(json_array_get(bysize, j), "span_start"));
	for (size_t j = 0; j < n; j++)
		others += strcmp(json_string_value(json_object_get(json_array_get(bysize, j), "category")), "Small") != 0;
	others -= life;
	return life + (rows > life ? (rows - life < others ? rows - life : others) : 0);
}

static mp_scene_t *plot(const mp_hlo_result_t *r, unsigned charts, double w, double h)
{
	mp_plot_hlo_options_t o = {charts, w, h, 0, 0};
	mp_scene_t *s = NULL;
	mp_diag_t d;

	mp_diag_clear(&d);
	if (mp_plot_hlo(&s, r, &o, mp_render_measure(), &d) != 0)
		fail_msg("mp_plot_hlo: %s", d.text);
	return s;
}

/* x of a lifetime bar clear of labels and of the peak line, or -1. */
static double bar_sample_x(const mp_scene_t *s, const mp_scene_item_t *bar, double peak_x)
{
	for (double x = floor(bar->x) + 1.5; x < bar->x + bar->w - 1; x += 1) {
		const mp_scene_item_t *l;
		size_t from = 0;
		int clear = fabs(x - peak_x) > 3;
		while (clear && (l = mp_scene_find(s, "lifetime-label", &from)))
			if (l->kind == MP_SCENE_RECT && x > l->x - 2 && x < l->x + l->w + 2 && bar->y < l->y + l->h &&
			    l->y < bar->y + bar->h)
				clear = 0;
		if (clear)
			return x;
	}
	return -1;
}

/* Everything the scene of one module says, then its PNG and SVG through
 * the command: the same picture as the library's, at the size asked for,
 * the same bytes twice, pixels where the scene put colours. */
static void check_module(const char *rel, int color)
{
	const char *shared = mp_test_shared(rel);
	char path[4096], args[8192], root[16], w[32], h[32], err[256], want[32];
	char *png, *png2, *lib, *svg, *svg2;
	const mp_scene_item_t *line, *bar;
	mp_hlo_result_t *r;
	mp_scene_t *s;
	json_t *doc;
	mp_diag_t d;
	double rx, ry, bx;
	uint32_t rgb;
	int pw, ph;

	if (!shared)
		skip();
	png = mp_test_tmpfile(".png"); /* after the skip: a skipped test leaks nothing */
	png2 = mp_test_tmpfile(".png");
	lib = mp_test_tmpfile(".png");
	svg = mp_test_tmpfile(".svg");
	svg2 = mp_test_tmpfile(".svg");
	snprintf(path, sizeof(path), "%s", shared);
	doc = json_of(path, color);
	r = analyze(path, color);
	s = plot(r, 0, 0, 0);
	assert_true(mp_scene_width(s) == 1200);
	check_space(s, doc, 8);
	check_strips(s, doc, 2, &rx, &ry, &rgb);
	assert_int_equal(count_tag(s, "table-row"), table_rows_expected(doc, 8, 10));
	check_texts(s, mp_render_measure());
	assert_true(mp_scene_count(s) < 3000); /* bounded by the width, not the events */

	snprintf(args, sizeof(args), "--color %d -o '%s' '%s'", color, png, path);
	assert_int_equal(run(args, NULL), 0);
	snprintf(args, sizeof(args), "--color %d -o '%s' '%s'", color, png2, path);
	assert_int_equal(run(args, NULL), 0);
	assert_true(rc_same_bytes(png, png2));
	assert_int_equal(mp_render_write(s, lib, MP_RENDER_PNG, &d), 0);
	assert_true(rc_same_bytes(png, lib)); /* the command draws this very scene */
	assert_int_equal(rc_png_size(png, &pw, &ph), 0);
	assert_int_equal(pw, 1200);
	assert_int_equal(ph, (int)mp_scene_height(s));
	line = find1(s, "peak-line");
	assert_int_equal(rc_png_pixel(png, (int)mp_scene_points(s, line)[0].x,
				      (int)(find1(s, "plot")->y + find1(s, "plot")->h) - 3), 0x000000);
	bar = find1(s, "lifetime");
	assert_true((bx = bar_sample_x(s, bar, mp_scene_points(s, line)[0].x)) > 0);
	assert_int_equal(rc_png_pixel(png, (int)bx, (int)(bar->y + bar->h / 2)), (long)(bar->style.fill >> 8));
	assert_int_equal(rc_png_pixel(png, (int)rx, (int)ry), (long)rgb);
	assert_int_equal(rc_png_pixel(png, 2, 2), 0xFFFFFF);

	snprintf(args, sizeof(args), "--color %d -o '%s' '%s'", color, svg, path);
	assert_int_equal(run(args, NULL), 0);
	snprintf(args, sizeof(args), "--color %d -o '%s' '%s'", color, svg2, path);
	assert_int_equal(run(args, NULL), 0);
	assert_true(rc_same_bytes(svg, svg2));
	if (rc_svg_parse(svg, root, sizeof(root), w, h, sizeof(w), err, sizeof(err)) < 0)
		fail_msg("%s: %s", svg, err);
	assert_string_equal(root, "svg");
	assert_string_equal(w, "1200px");
	snprintf(want, sizeof(want), "%dpx", (int)mp_scene_height(s));
	assert_string_equal(h, want);
	{
		struct stat st;
		assert_int_equal(stat(svg, &st), 0);
		assert_true(st.st_size < 2 * 1024 * 1024);
	}
	unlink(png), unlink(png2), unlink(lib), unlink(svg), unlink(svg2);
	free(png), free(png2), free(lib), free(svg), free(svg2);
	mp_scene_free(s);
	mp_hlo_result_free(r);
	json_decref(doc);
}

static void test_maxtext_train_step(void **state)
{
	(void)state;
	check_module(MAXTEXT, 0);
}

static void test_tpu_jit_f(void **state)
{
	(void)state;
	check_module(JIT_F, 0);
}

static void test_unit_vector_color1(void **state)
{
	(void)state;
	check_module(UNIT, 1);
}

/* --chart, --width, --height: the picture asked for, at that size. */
static void test_cli_options(void **state)
{
	const char *shared = mp_test_shared(MAXTEXT);
	char path[4096], args[8192], *png, *out;
	mp_hlo_result_t *r;
	mp_scene_t *s;
	size_t from = 0;
	int w, h;

	(void)state;
	if (!shared)
		skip();
	png = mp_test_tmpfile(".png");
	snprintf(path, sizeof(path), "%s", shared);
	r = analyze(path, 0);
	snprintf(args, sizeof(args), "--chart by-size -o '%s' '%s'", png, path);
	assert_int_equal(run(args, &out), 0);
	assert_string_equal(out, ""); /* the picture replaces the text report */
	free(out);
	s = plot(r, MP_PLOT_HLO_BY_SIZE, 0, 0);
	assert_null(mp_scene_find(s, "heap", &from));
	assert_int_equal(count_tag(s, "buffer-label") > 0, 1);
	assert_int_equal(rc_png_size(png, &w, &h), 0);
	assert_int_equal(w, 1200);
	assert_int_equal(h, (int)mp_scene_height(s));
	mp_scene_free(s);

	snprintf(args, sizeof(args), "--chart working-space --width 900 --height 1000 -o '%s' '%s'", png, path);
	assert_int_equal(run(args, NULL), 0);
	assert_int_equal(rc_png_size(png, &w, &h), 0);
	assert_int_equal(w, 900);
	assert_int_equal(h, 1000);
	s = plot(r, MP_PLOT_HLO_WORKING_SPACE, 900, 1000);
	check_texts(s, mp_render_measure());
	mp_scene_free(s);

	/* --json with -o: the document on stdout, the picture written */
	unlink(png);
	snprintf(args, sizeof(args), "--json -o '%s' '%s'", png, path);
	assert_int_equal(run(args, &out), 0);
	assert_memory_equal(out, "{", 1);
	free(out);
	assert_int_equal(rc_png_size(png, &w, &h), 0);
	unlink(png);
	free(png);
	mp_hlo_result_free(r);
}

/* Narrow pictures: the header's cards wrap, legends too, the table drops
 * columns; still every text on the canvas and none over another, and the
 * same figures. */
static void test_narrow_widths(void **state)
{
	static const double widths[] = {480, 640, 800, 1000, 2400};
	const char *shared = mp_test_shared(MAXTEXT);
	char path[4096];
	mp_hlo_result_t *r;
	json_t *doc;

	(void)state;
	if (!shared)
		skip();
	snprintf(path, sizeof(path), "%s", shared);
	r = analyze(path, 0);
	doc = json_of(path, 0);
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		mp_scene_t *s = plot(r, 0, widths[i], 0);
		double px, py;
		uint32_t rgb;
		assert_true(mp_scene_width(s) == widths[i]);
		check_space(s, doc, 8);
		check_strips(s, doc, 2, &px, &py, &rgb);
		check_texts(s, mp_render_measure());
		mp_scene_free(s);
	}
	json_decref(doc);
	mp_hlo_result_free(r);
}

static int exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

static void test_cli_errors(void **state)
{
	char path[4096], fpath[4096], args[8192], *png, *jpg;
	const char *shared;

	(void)state;
	/* mp_test_shared returns one static buffer: copy each path out */
	if (!(shared = mp_test_shared(MAXTEXT)))
		skip();
	snprintf(path, sizeof(path), "%s", shared);
	if (!(shared = mp_test_shared(JIT_F)))
		skip();
	snprintf(fpath, sizeof(fpath), "%s", shared);
	png = mp_test_tmpfile(".png");
	jpg = mp_test_tmpfile(".jpg");
	snprintf(args, sizeof(args), "-o '%s' '%s'", jpg, path);
	assert_int_equal(run(args, NULL), 2); /* unknown extension */
	assert_false(exists(jpg));
	snprintf(args, sizeof(args), "--chart pie -o '%s' '%s'", png, path);
	assert_int_equal(run(args, NULL), 2);
	snprintf(args, sizeof(args), "--chart by-size '%s'", path);
	assert_int_equal(run(args, NULL), 2); /* --chart without -o */
	snprintf(args, sizeof(args), "--width 100 -o '%s' '%s'", png, path);
	assert_int_equal(run(args, NULL), 2); /* too narrow */
	snprintf(args, sizeof(args), "--height 200 -o '%s' '%s'", png, path);
	assert_int_equal(run(args, NULL), 2); /* too short */
	snprintf(args, sizeof(args), "--width 0 -o '%s' '%s'", png, path);
	assert_int_equal(run(args, NULL), 2);
	assert_false(exists(png));
	snprintf(args, sizeof(args), "-o /nonexistent-dir/x.svg '%s'", path);
	assert_int_equal(run(args, NULL), 3); /* unwritable */
	assert_false(exists("/nonexistent-dir/x.svg"));
	/* TPU host memory (colour 5) has no heap-simulator trace */
	snprintf(args, sizeof(args), "--color 5 -o '%s' '%s'", png, fpath);
	assert_int_equal(run(args, NULL), 1);
	assert_false(exists(png));
	/* its buffers alone can be drawn */
	snprintf(args, sizeof(args), "--color 5 --chart by-order -o '%s' '%s'", png, fpath);
	assert_int_equal(run(args, NULL), 0);
	assert_true(exists(png));
	unlink(png);
	free(png);
	free(jpg);
}

/* ---- bounded whatever the input -------------------------------------------- */

static const mp_hlo_buffer_t *sort_buffers;

static int cmp_size(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int64_t x = sort_buffers[i].size, y = sort_buffers[j].size;

	if (x != y)
		return x > y ? -1 : 1;
	return i < j ? -1 : i > j; /* stable: ties in program order */
}

/* A module no compiler wrote: 200,000 events, 50,000 buffers, names of
 * hundreds of characters, some not ASCII, some not even UTF-8 (cairo
 * refuses those: the picture must be drawn all the same). The picture
 * stays as small as its width allows, with every text on the canvas and
 * none over another; the figures drawn are those of its JSON report. */
static void test_bounded_synthetic(void **state)
{
	const size_t nev = 200000, nbuf = 50000;
	static char big[700], shape[300], src[400], entry[] = "main.1", empty[] = "",
				       fusion[] = "fusion";
	uint64_t seed = 0x9E3779B97F4A7C15u;
	mp_hlo_result_t r;
	int64_t h = 1 << 30, hi = -1;
	char **names = malloc((nev + 1) * sizeof(*names)), *json = NULL, *svg = mp_test_tmpfile(".svg");
	size_t jlen = 0, path_points = 0, from = 0;
	const mp_scene_item_t *it;
	FILE *mem;
	json_t *doc;
	mp_scene_t *s = NULL;
	mp_plot_hlo_options_t o = {0, 0, 0, 0, 0};
	mp_diag_t d;
	struct stat st;

	(void)state;
	for (size_t i = 0; i + 12 < sizeof(big); i += 12)
		memcpy(big + i, "jit(µstep)/d", strlen("jit(µstep)/d")), big[i + 12] = 0;
	memcpy(big + 30, "\xff\xed\xa0\x80\xc0\xaf", 6); /* not UTF-8: a byte, a surrogate, an overlong '/' */
	memset(shape, 'f', sizeof(shape) - 1);
	memset(src, 'p', sizeof(src) - 1);
	memset(&r, 0, sizeof(r));
	r.module_name = big;
	r.entry_computation_name = entry;
	r.peak_instruction = big;
	r.trace_id = 0;
	r.n_events = nev;
	r.n_points = nev + 1;
	r.small_buffer_size = 16384;
	r.heap_sizes = malloc(r.n_points * sizeof(int64_t));
	r.unpadded_heap_sizes = malloc(r.n_points * sizeof(int64_t));
	r.buffers = calloc(nbuf, sizeof(*r.buffers));
	r.by_size = malloc(nbuf * sizeof(size_t));
	assert_true(names && r.heap_sizes && r.unpadded_heap_sizes && r.buffers && r.by_size);
	for (size_t i = 0; i <= nev; i++) {
		h += (int64_t)(mp_test_xorshift(&seed) % (1 << 24)) - (1 << 23);
		if (h < 0)
			h = 0;
		r.heap_sizes[i] = h;
		r.unpadded_heap_sizes[i] = h - h / 50;
		if (i && h > hi) {
			hi = h;
			r.peak_position = (int64_t)i - 1;
		}
		names[i] = i == nev ? empty : fusion;
	}
	r.point_names = names;
	r.peak_heap_bytes = hi;
	r.peak_unpadded_heap_bytes = r.unpadded_heap_sizes[r.peak_position + 1];
	r.total_allocation_bytes = hi + hi / 10;
	for (size_t i = 0; i < nbuf; i++) {
		mp_hlo_buffer_t *b = &r.buffers[i];
		b->logical_buffer_id = (int64_t)i;
		b->category = (mp_hlo_category_t)(i == nbuf - 1 ? MP_HLO_CAT_SMALL : i % 5);
		b->size = (int64_t)(mp_test_xorshift(&seed) % (i % 997 ? i % 97 ? 1u << 16 : 1u << 28 : 1ull << 33)) + 16384;
		b->unpadded_size = b->size - b->size / 7;
		/* long names where they are drawn (the largest buffers), short ones
		 * elsewhere: the JSON report stays a few MB */
		b->instruction_name = i % 97 ? fusion : big + (i % 100);
		b->label = i % 97 ? fusion : big;
		b->shape = i % 97 ? fusion : shape;
		b->op_name = i % 97 ? empty : big;
		b->opcode = fusion;
		b->source = i % 97 ? empty : src;
		if (b->category == MP_HLO_CAT_TEMPORARY) {
			b->has_span = 1;
			b->span_start = r.peak_position - (int64_t)(mp_test_xorshift(&seed) % (uint64_t)(r.peak_position + 1));
			b->span_limit = r.peak_position + (int64_t)(mp_test_xorshift(&seed) % (nev - (size_t)r.peak_position));
		}
		r.by_size[i] = i;
	}
	r.n_buffers = nbuf;
	sort_buffers = r.buffers;
	qsort(r.by_size, nbuf, sizeof(size_t), cmp_size);

	assert_int_equal(mp_plot_hlo(&s, &r, &o, &mp_text_measure_fixed, &d), 0);
	assert_non_null(mem = open_memstream(&json, &jlen));
	assert_int_equal(mp_hlo_write_json(mem, &r), 0);
	fclose(mem);
	assert_non_null(doc = json_loads(json, 0, NULL));
	check_space(s, doc, 8);
	{
		double px, py;
		uint32_t rgb;
		check_strips(s, doc, 2, &px, &py, &rgb);
	}
	check_texts(s, &mp_text_measure_fixed);
	assert_int_equal(count_tag(s, "table-row"), 10);
	assert_true(mp_scene_count(s) < 4000);
	while ((it = mp_scene_find(s, "heap", &from)) || (it = mp_scene_find(s, "unpadded", &from)) ||
	       (it = mp_scene_find(s, "heap-area", &from)))
		path_points += it->count;
	assert_true(path_points <= 3 * (8 * 1200 + 4));
	mp_scene_free(s);

	/* with the painter's font, through to an SVG of bounded size */
	assert_int_equal(mp_plot_hlo(&s, &r, &o, mp_render_measure(), &d), 0);
	check_texts(s, mp_render_measure());
	assert_int_equal(mp_render_write(s, svg, MP_RENDER_SVG, &d), 0);
	assert_int_equal(stat(svg, &st), 0);
	assert_true(st.st_size < 2 * 1024 * 1024);
	unlink(svg);
	free(svg);
	mp_scene_free(s);
	json_decref(doc);
	free(json);
	free(names);
	free(r.heap_sizes);
	free(r.unpadded_heap_sizes);
	free(r.buffers);
	free(r.by_size);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maxtext_train_step),
		cmocka_unit_test(test_tpu_jit_f),
		cmocka_unit_test(test_unit_vector_color1),
		cmocka_unit_test(test_narrow_widths),
		cmocka_unit_test(test_cli_options),
		cmocka_unit_test(test_cli_errors),
		cmocka_unit_test(test_bounded_synthetic),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	mp_render_shutdown(); /* fontconfig's caches: ASan's leak check sees a clean exit */
	return rc;
}
