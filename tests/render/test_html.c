/* test_html.c - the HTML report (render/draw/html.c, docs/charts.md): one
 * self-contained file (no http(s) reference but the SVG namespaces, no
 * <script src>, a policy that forbids fetches), op names escaped, a hit
 * area on every breakdown bar at the bar's own box carrying the op's full
 * name, and the table's rows and bytes; then `plot -o x.html` and
 * `report --html` on the demo capture (its figures worked out by hand in
 * tests/demo/test_demo.c: at the peak, 47 x 1 MiB of data/shuffle_buffer
 * and four 4 MiB kernels). What a browser makes of it:
 * tests/render/html_chromium.sh. */
#include "test_common.h"

#include <memprof/charts.h>
#include <memprof/render.h>

#include "render_check.h"

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* The file fetches nothing: its only URLs are the SVG namespaces. */
static void check_self_contained(const char *html)
{
	for (const char *p = strstr(html, "http"); p; p = strstr(p + 1, "http")) {
		if (strncmp(p, "http://", 7) && strncmp(p, "https://", 8))
			continue;
		int ns = (p - html >= 7 && !strncmp(p - 7, "xmlns=\"", 7)) ||
			 (p - html >= 13 && !strncmp(p - 13, "xmlns:xlink=\"", 13));
		if (!ns)
			fail_msg("a URL in the report: %.60s", p);
	}
	assert_null(strstr(html, "<script src"));
	assert_null(strstr(html, "<link"));
	assert_int_equal(count(html, "<script"), 1); /* the embedded one */
	assert_non_null(strstr(html, "Content-Security-Policy\" content=\"default-src 'none';"));
}

#define EVIL "<script>alert('x')</script> & \"op\""
#define EVIL_ESC "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;op&quot;"
#define LONG_NAME                                                                                                   \
	"model/encoder/layers.11/self_attention/query_key_value/kernel/Initializer/random_uniform/"                 \
	"RandomUniform_with_a_name_too_long_for_the_picture"

/* Hand-made bars: escaping, the hit areas and the table, exactly. */
static void test_breakdown_page(void **state)
{
	mp_chart_bar_t bars[2] = {{EVIL, "dynamic · float [8]", 3000000, 0x0072B2},
				  {LONG_NAME, "", 1000000, 0xE69F00}};
	mp_chart_bars_t b = {"Live at the peak: GPU_0", NULL, bars, 2, 500, 2, "groups", 0};
	mp_scene_t *s = mp_scene_new(800, 260, MP_RGB(0xFFFFFF));
	mp_chart_area_t a = {s, mp_render_measure(), {10, 10, 780, 240}};
	char *path = mp_test_tmpfile(".html"), *html, want[512];
	const mp_scene_item_t *it;
	mp_diag_t d;
	size_t from = 0, len;

	(void)state;
	assert_int_equal(mp_render_format_of("x/REPORT.HTML"), MP_RENDER_HTML);
	assert_int_equal(mp_render_format_of("report.htm"), MP_RENDER_HTML);
	assert_int_equal(mp_chart_breakdown(&a, &b), 0);
	assert_int_equal(mp_render_write(s, path, MP_RENDER_HTML, &d), 0);
	html = (char *)rc_slurp(path, &len);
	assert_non_null(html);
	check_self_contained(html);
	assert_null(strstr(html, "<script>alert"));
	/* the hit area of each bar: at the bar's box, with its full name */
	it = mp_scene_find(s, "bar", &from);
	assert_non_null(it);
	snprintf(want, sizeof(want),
		 "<rect class=\"hit\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" data-ref=\"0\" data-tag=\"bar\" "
		 "data-note=\"" EVIL_ESC "&#10;bytes: 3000000 (",
		 it->x, it->y, it->w, it->h);
	assert_non_null(strstr(html, want));
	it = mp_scene_find(s, "bar", &from);
	assert_non_null(it);
	snprintf(want, sizeof(want), "x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" data-ref=\"1\" "
		 "data-tag=\"bar\" data-note=\"" LONG_NAME "&#10;bytes: 1000000 (", it->x, it->y, it->w, it->h);
	assert_non_null(strstr(html, want));
	assert_non_null(mp_scene_find(s, "bar", &from)); /* the rest's bar */
	assert_null(mp_scene_find(s, "bar", &from));
	/* the picture shortened the long name; the hover and the table did not */
	from = 0;
	while ((it = mp_scene_find(s, "bar-label", &from)))
		assert_string_not_equal(mp_scene_string(s, it), LONG_NAME);
	assert_int_equal(count(html, "class=\"hit\""), 3);
	/* the table: three rows, largest first, exact bytes to sort by */
	assert_int_equal(count(html, "<tr><td class=\"num\""), 3);
	assert_non_null(strstr(html, "<td data-v=\"" EVIL_ESC "\">" EVIL_ESC "</td><td class=\"num\" "
				     "data-v=\"3000000\" title=\"3000000 B\">2.86 MiB (75.0 %)</td>"
				     "<td data-v=\"dynamic · float [8]\">dynamic · float [8]</td>"));
	assert_non_null(strstr(html, "data-v=\"1000000\" title=\"1000000 B\">977 KiB (25.0 %)</td>"));
	assert_non_null(strstr(html, ">other (2 groups)</td><td class=\"num\" data-v=\"500\""));
	assert_true(strstr(html, "data-v=\"3000000\"") < strstr(html, "data-v=\"1000000\""));
	free(html);
	unlink(path);
	free(path);
	mp_scene_free(s);
}

/* The map's hover: a hand-made region of 256 MiB at 0x10000000 (six rows
 * of about 1150 px: some 38 KiB a px), a block of 64 MiB at its start (a
 * quarter of the region: one and a half rows, so two hit areas), ten
 * blocks of 16 B half way (in one pixel column: merged, "10 blocks,
 * 160 B"), the free bytes between and after them (their own hit areas, one
 * per row they cross), and nothing painted for any of them. */
static void test_map_hover(void **state)
{
	mp_snapshot_region_t r = {0x10000000, 0x20000000};
	mp_snapshot_block_t b[11] = {{0x10000000, 0x4000000, 0, 1}};
	mp_snapshot_t snap = {0, 0, 0, 0, &r, 1, b, 11};
	mp_memmap_t m;
	mp_scene_t *s = mp_scene_new(1200, 400, MP_RGB(0xFFFFFF));
	mp_chart_area_t a = {s, mp_render_measure(), {0, 0, 1200, 400}};
	const mp_scene_item_t *it;
	size_t from = 0, nblock = 0, nmerged = 0, nfree = 0;

	(void)state;
	for (int i = 0; i < 10; i++) /* at 0x18000000 */
		b[1 + i] = (mp_snapshot_block_t){0x18000000 + 16 * (uint64_t)i, 16, 0, 1};
	assert_int_equal(mp_chart_map_geometry(&m, &snap, 1200), 0);
	assert_int_equal(m.rows, 6);
	mp_chart_map_t c = {"map", NULL, &m, 0, b, 11, NULL};
	assert_int_equal(mp_chart_map(&a, &c), 0);
	while ((it = mp_scene_find(s, "map-block", &from))) {
		nblock++;
		assert_int_equal(it->style.fill, MP_NONE); /* hit only: painted as nothing */
		assert_int_equal(it->style.stroke, MP_NONE);
		assert_string_equal(mp_scene_item_note(s, it), "block 0x10000000 to 0x14000000\nbytes: 67108864 B (64.00 MiB)\n"
							       "op: -\ntype: persist");
	}
	assert_int_equal(nblock, 2);
	from = 0;
	while ((it = mp_scene_find(s, "map-blocks", &from))) {
		nmerged++;
		assert_int_equal(it->w, 1);
		assert_string_equal(mp_scene_item_note(s, it), "10 blocks, 160 B\n0x18000000 to 0x180000a0\nfree: 0 B\n"
							       "largest: 16 B, op -");
	}
	assert_int_equal(nmerged, 1);
	from = 0;
	while ((it = mp_scene_find(s, "map-free", &from))) {
		nfree++;
		assert_string_equal(mp_scene_item_note(s, it), nfree <= 2 ? "free chunk 0x14000000 to 0x18000000\n"
										  "bytes: 67108864 B (64.00 MiB)"
									: "free chunk 0x180000a0 to 0x20000000\n"
									  "bytes: 134217568 B (128.00 MiB)");
	}
	assert_int_equal(nfree, 5); /* 64 MiB over rows 1-2, 128 MiB less 160 B over rows 3-5 */
	mp_scene_free(s);
	mp_memmap_free(&m);
}

/* The demo capture through the command line. */
static void test_demo_cli(void **state)
{
	char *dir = mp_test_tmpfile(".d"), cmd[MP_TEST_CMD_MAX], *html, *out;
	size_t len;

	(void)state;
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && '%s' demo -o '%s/demo.memprof' >/dev/null 2>&1", dir, MEMPROF, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "'%s' plot --chart all -o '%s/r.html' '%s/demo.memprof' 2>&1", MEMPROF, dir, dir);
	assert_int_equal(rc_run(cmd, &out), 0);
	assert_non_null(strstr(out, "r.html (a page of 1200x"));
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/r.html", dir);
	html = (char *)rc_slurp(cmd, &len);
	assert_non_null(html);
	check_self_contained(html);
	/* the peak's largest bar: the op's full name, its bytes, what it is */
	assert_non_null(strstr(html, "data-tag=\"bar\" data-note=\"data/shuffle_buffer&#10;bytes: 49283072 (47.0 MiB "
				     "(74.6 %))&#10;dynamic · uint8 [1048576] · 47 × 1.00 MiB&#10;chart: Live at the peak: "
				     "GPU_0_bfc (device)\""));
	assert_int_equal(count(html, "<tr><td class=\"num\""), 5);
	assert_int_equal(count(html, "data-v=\"4194304\""), 4);
	assert_int_equal(count(html, "data-v=\"49283072\""), 1);
	/* the map's blocks hover, each with its exact bytes and op */
	assert_non_null(strstr(html, "&#10;bytes: 1048576 B (1.00 MiB)&#10;op: data/shuffle_buffer&#10;type: "));
	assert_true(count(html, "data-tag=\"map-block\"") >= 47);
	/* the timeline's columns hover, four px each: the peak's say its bytes */
	assert_true(count(html, "data-tag=\"timeline-column\"") > 0);
	assert_true(count(html, "data-tag=\"timeline-column\"") <= 1200 / 4);
	assert_non_null(strstr(html, " to 66060288 B (63.00 MiB)&#10;fragmentation: "));
	free(html);
	/* report --html: the same page of its charts; names checked */
	snprintf(cmd, sizeof(cmd), "'%s' report --html '%s/r2.html' '%s/demo.memprof' >/dev/null 2>&1", MEMPROF, dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/r2.html", dir);
	html = (char *)rc_slurp(cmd, &len);
	assert_non_null(html);
	assert_non_null(strstr(html, "data-note=\"data/shuffle_buffer&#10;bytes: 49283072 ("));
	free(html);
	snprintf(cmd, sizeof(cmd), "'%s' report --html '%s/r2.svg' '%s/demo.memprof' >/dev/null 2>&1", MEMPROF, dir, dir);
	assert_int_equal(WEXITSTATUS(system(cmd)), 2);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_breakdown_page),
		cmocka_unit_test(test_map_hover),
		cmocka_unit_test(test_demo_cli),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	mp_render_shutdown(); /* the font caches: leak checkers see a clean exit */
	return rc;
}
