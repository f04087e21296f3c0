/* test_paint.c - the painter: a small scene into PNG and SVG, read back
 * (pixels where the scene put colours, the size asked for, well-formed
 * XML), and files written whole or not at all. */
#include "test_common.h"

#include <memprof/render.h>

#include "render_check.h"

#include <errno.h>
#include <dirent.h>
#include <sys/resource.h>

static mp_scene_t *small_scene(void)
{
	mp_scene_t *s = mp_scene_new(200, 100, MP_RGB(0xFFFFFF));
	mp_style_t blue = {MP_RGB(0x0072B2), MP_NONE, 0, 0};
	mp_style_t outline = {MP_NONE, MP_RGB(0xD55E00), 2, 0};
	mp_text_style_t ts = {12, 1, MP_ALIGN_LEFT, MP_VALIGN_TOP, 0, MP_RGB(0x222222)};
	mp_point_t tri[3] = {{120, 90}, {190, 90}, {190, 50}};
	mp_style_t green = {MP_RGB(0x009E73), MP_NONE, 0, 0};

	assert_non_null(s);
	mp_scene_rect(s, 10, 10, 50, 30, &blue);
	mp_scene_rect(s, 100.5, 10.5, 40, 20, &outline);
	mp_scene_path(s, tri, 3, 1, &green);
	mp_scene_text(s, 10, 60, "peak 63.0 MiB · 278.6 µs", &ts);
	assert_int_equal(mp_scene_status(s), 0);
	return s;
}

static void test_png_pixels(void **state)
{
	mp_scene_t *s = small_scene();
	char *png = mp_test_tmpfile(".png");
	mp_diag_t d;
	int w, h;

	(void)state;
	assert_int_equal(mp_render_write(s, png, MP_RENDER_PNG, &d), 0);
	assert_int_equal(rc_png_size(png, &w, &h), 0);
	assert_int_equal(w, 200);
	assert_int_equal(h, 100);
	assert_int_equal(rc_png_pixel(png, 35, 25), 0x0072B2);  /* inside the filled rect */
	assert_int_equal(rc_png_pixel(png, 5, 5), 0xFFFFFF);    /* background */
	assert_int_equal(rc_png_pixel(png, 100, 20), 0xD55E00); /* on the 2 px outline, x 99.5..101.5 */
	assert_int_equal(rc_png_pixel(png, 120, 20), 0xFFFFFF); /* inside the outline: not filled */
	assert_int_equal(rc_png_pixel(png, 185, 85), 0x009E73); /* inside the triangle */
	assert_int_equal(rc_png_pixel(png, 125, 55), 0xFFFFFF); /* above its diagonal */
	unlink(png);
	free(png);
	mp_scene_free(s);
}

static void test_svg_xml(void **state)
{
	mp_scene_t *s = small_scene();
	char *a = mp_test_tmpfile(".svg");
	char root[16], w[32], h[32], err[256];
	mp_diag_t d;

	(void)state;
	assert_int_equal(mp_render_format_of(a), MP_RENDER_SVG);
	assert_int_equal(mp_render_format_of("x/CHART.PNG"), MP_RENDER_PNG);
	assert_int_equal(mp_render_format_of("chart.pdf"), MP_RENDER_NONE);
	assert_int_equal(mp_render_format_of("dir.svg/chart"), MP_RENDER_NONE);
	assert_int_equal(mp_render_write(s, a, MP_RENDER_SVG, &d), 0);
	if (rc_svg_parse(a, root, sizeof(root), w, h, sizeof(w), err, sizeof(err)) < 0)
		fail_msg("%s: %s", a, err);
	assert_string_equal(root, "svg");
	assert_string_equal(w, "200px");
	assert_string_equal(h, "100px");
	/* the font the bytes depend on is the one installed (scripts/deps.sh) */
	assert_int_equal(mp_render_font_ok(), 1);
	unlink(a);
	free(a);
	mp_scene_free(s);
}

/* No partial file, and no temporary file left behind, when writing fails. */
static void test_errors_leave_nothing(void **state)
{
	mp_scene_t *s = small_scene(), *big;
	char dir[] = "/tmp/memprof-paint-XXXXXX", path[256];
	mp_diag_t d;
	DIR *dh;
	struct dirent *de;
	int files = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* a directory we cannot write to (root ignores permissions: use a
	 * path under a regular file instead) */
	snprintf(path, sizeof(path), "%s/file", dir);
	fclose(fopen(path, "w"));
	snprintf(path, sizeof(path), "%s/file/chart.png", dir);
	mp_diag_clear(&d);
	assert_int_equal(mp_render_write(s, path, MP_RENDER_PNG, &d), -ENOTDIR);
	assert_non_null(strstr(d.text, path));
	/* the format must be known */
	snprintf(path, sizeof(path), "%s/chart.png", dir);
	assert_int_equal(mp_render_write(s, path, MP_RENDER_NONE, &d), MP_EUSAGE);
	/* too big to paint */
	big = mp_scene_new(MP_RENDER_MAX_SIDE + 1, 10, MP_RGB(0xFFFFFF));
	assert_int_equal(mp_render_write(big, path, MP_RENDER_PNG, &d), MP_EUSAGE);
	mp_scene_free(big);
	/* a full disk: writes fail half-way (a file size limit of 1000 bytes
	 * in a child); the temporary file goes, nothing is renamed */
	{
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct rlimit rl = {1000, 1000};
			signal(SIGXFSZ, SIG_IGN);
			setrlimit(RLIMIT_FSIZE, &rl);
			_exit(mp_render_write(s, path, MP_RENDER_PNG, &d) == -EFBIG && strstr(d.text, "File too large") ? 0 : 1);
		}
		assert_int_equal(mp_test_wait_deadline(pid, pid, 20000), 0);
	}
	/* a device is written in place, never renamed over: /dev/full says
	 * the disk is full */
	if (access("/dev/full", W_OK) == 0) {
		struct stat st;
		assert_int_equal(mp_render_write(s, "/dev/full", MP_RENDER_PNG, &d), -ENOSPC);
		assert_int_equal(stat("/dev/full", &st), 0);
		assert_true(S_ISCHR(st.st_mode));
	}
	dh = opendir(dir);
	assert_non_null(dh);
	while ((de = readdir(dh)))
		files += de->d_name[0] != '.';
	closedir(dh);
	assert_int_equal(files, 1); /* only "file" */
	snprintf(path, sizeof(path), "%s/file", dir);
	unlink(path);
	rmdir(dir);
	mp_scene_free(s);
}

/* A picture replaces an older file only once it is whole. */
static void test_replaces_whole(void **state)
{
	mp_scene_t *s = small_scene();
	char *png = mp_test_tmpfile(".png");
	FILE *f = fopen(png, "w");
	struct stat st;
	mp_diag_t d;
	int w, h;

	(void)state;
	fputs("old", f);
	fclose(f);
	assert_int_equal(mp_render_write(s, png, MP_RENDER_PNG, &d), 0);
	assert_int_equal(rc_png_size(png, &w, &h), 0);
	assert_int_equal(stat(png, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0666 & ~(unsigned)umask(022));
	umask(022);
	unlink(png);
	free(png);
	mp_scene_free(s);
}

static void test_measure(void **state)
{
	const mp_text_measure_t *m = mp_render_measure();
	double a, b;

	(void)state;
	a = mp_text_width(m, "MiB", 12, 0);
	b = mp_text_width(m, "MiB", 24, 0);
	assert_true(a > 10 && a < 40);
	assert_true(b > 1.99 * a && b < 2.01 * a); /* no hinting: widths scale */
	assert_true(mp_text_width(m, "MiB", 12, 1) > a);
}

static int teardown(void **state)
{
	(void)state;
	mp_render_shutdown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_png_pixels),
		cmocka_unit_test(test_svg_xml),
		cmocka_unit_test(test_errors_leave_nothing),
		cmocka_unit_test(test_replaces_whole),
		cmocka_unit_test(test_measure),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
