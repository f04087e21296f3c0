/* test_hlo_charts.c - the HLO charts (`memprof hlo -o`) of MaxText
 * `jit_train_step`, TPU `jit_f`, an xprof unit vector (colour 1) and a
 * synthetic module no compiler wrote: the working space, the lifetimes, the
 * strips and the table against the figures of `memprof hlo --json`
 * (hlo_chart_check.h); the pixels of the PNG where the scene put colours;
 * the same picture as the library's, the same bytes twice; narrow widths;
 * bounded whatever the input. The command's options and errors:
 * test_hlo_charts_cli.c. */
#include "test_common.h"
#include "test_rand.h"

#include "hlo_chart_check.h"

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
	doc = mp_test_json_loads(json, "hlo");
	check_space(s, doc, 8);
	{
		double px, py;
		uint32_t rgb;
		check_strips(s, doc, 2, &px, &py, &rgb);
	}
	check_texts(s, &mp_text_measure_fixed);
	assert_int_equal(count_tag(s, "table-row"), table_rows_expected(doc, 8, 10));
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
		cmocka_unit_test(test_bounded_synthetic),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	mp_render_shutdown(); /* fontconfig's caches: ASan's leak check sees a clean exit */
	return rc;
}
