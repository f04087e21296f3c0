/* test_hlo_charts_cli.c - `memprof hlo -o` end to end: --chart, --width and
 * --height give the picture asked for at that size, --json with -o prints
 * the document and writes the picture, and the documented errors leave no
 * file. The figures drawn: test_hlo_charts.c. */
#include "test_common.h"

#include "hlo_chart_check.h"

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

	snprintf(args, sizeof(args), "--chart working-space --width 900 --height 1100 -o '%s' '%s'", png, path);
	assert_int_equal(run(args, NULL), 0);
	assert_int_equal(rc_png_size(png, &w, &h), 0);
	assert_int_equal(w, 900);
	assert_int_equal(h, 1100);
	s = plot(r, MP_PLOT_HLO_WORKING_SPACE, 900, 1100);
	check_texts(s, mp_render_measure());
	mp_scene_free(s);

	/* --json with -o: the document on stdout, the picture written */
	unlink(png);
	snprintf(args, sizeof(args), "--json -o '%s' '%s'", png, path);
	assert_int_equal(run(args, &out), 0);
	assert_memory_equal(out, "{", 1);
	json_decref(mp_test_json_loads(out, "hlo"));
	free(out);
	assert_int_equal(rc_png_size(png, &w, &h), 0);
	unlink(png);
	free(png);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_options),
		cmocka_unit_test(test_cli_errors),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	mp_render_shutdown(); /* fontconfig's caches: ASan's leak check sees a clean exit */
	return rc;
}
