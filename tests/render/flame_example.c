/* flame_example.c - draws the hand-made call tree of flame_example.h as an
 * icicle, to look at: flame_example [OUT.png|OUT.svg] (default
 * /tmp/flame-example.png); with a second argument "flame", as a flame
 * graph (the root at the bottom). */
#include <memprof/flame.h>
#include <memprof/render.h>

#include "flame_example.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *out = argc > 1 ? argv[1] : "/tmp/flame-example.png";
	mp_flame_options_t o = {argc > 2 && !strcmp(argv[2], "flame"), MP_FLAME_SORT_BYTES, 0};
	mp_flame_node_t nodes[FX_NODES];
	const double width = 1200;
	double height;
	mp_scene_t *s;
	mp_diag_t d;
	int rc;

	fx_build(nodes);
	height = mp_chart_flame_height(nodes, FX_NODES, width, &o, mp_render_measure());
	if (!(s = mp_scene_new(width, height, MP_RGB(MP_COLOR_BACKGROUND))))
		return 1;
	{
		mp_chart_area_t a = {s, mp_render_measure(), {0, 0, width, height}};
		rc = mp_chart_flame(&a, nodes, FX_NODES, "Memory by call stack: train.py, step 3 (example)",
				    "live at the peak", &o);
	}
	if (rc < 0)
		fprintf(stderr, "flame_example: %s\n", mp_strerror(rc));
	else if ((rc = mp_render_write(s, out, mp_render_format_of(out), &d)) < 0)
		fprintf(stderr, "flame_example: %s\n", d.text);
	else
		printf("flame_example: wrote %s (%.0fx%.0f px)\n", out, width, height);
	mp_scene_free(s);
	mp_render_shutdown();
	return rc ? 1 : 0;
}
