/* plot_out.c - analysed inputs into a picture file (see plot_out.h). */
#include "plot_out.h"

#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_parse_px(const char *s, const char *opt, uint32_t least, double *out)
{
	uint32_t v;

	if (cli_parse_u32(s, &v) < 0 || v < least || v > MP_RENDER_MAX_SIDE) {
		mp_cli_error("invalid %s '%s' (expected %u to %d px)", opt, s, least, MP_RENDER_MAX_SIDE);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_plot_check_path(const char *path, const char *option)
{
	if (mp_render_format_of(path) != MP_RENDER_NONE)
		return MP_EXIT_OK;
	mp_cli_error("%s '%s': unknown picture format (the name must end in .svg, .png or .html)", option, path);
	return MP_EXIT_USAGE;
}

void cli_picture_font_check(const char *path)
{
	static int checked;

	if (checked++ || mp_render_font_ok())
		return;
	mp_cli_warning("the font DejaVu Sans is not installed (Debian: fonts-dejavu-core): '%s' is drawn with another",
		       path);
}

int cli_picture_write(const mp_scene_t *scene, const char *path, mp_diag_t *diag)
{
	struct stat st;
	char hb[32];
	int rc = mp_render_write(scene, path, mp_render_format_of(path), diag);

	if (rc == 0)
		fprintf(stderr, "memprof: wrote %s (%s%.0fx%.0f px, %s)\n", path,
			mp_render_format_of(path) == MP_RENDER_HTML ? "a page of " : "", mp_scene_width(scene),
			mp_scene_height(scene), stat(path, &st) == 0 ? mp_fmt_bytes(hb, sizeof(hb), (uint64_t)st.st_size) : "?");
	return rc;
}

/* Bars of the breakdown by allocating function, per memory id, from the
 * rows of one capture recorded with --stacks (rows come by memory id, then
 * by bytes live at the peak). */
static int function_bars(mp_functions_t *f, mp_plot_function_bars_t **out, size_t *nout, mp_chart_bar_t **bars,
			 char **text)
{
	size_t n = mp_functions_count(f), nb = 0, ng = 0, used = 0;
	mp_plot_function_bars_t *g = calloc(n ? n : 1, sizeof(*g));
	mp_chart_bar_t *b = calloc(n ? n : 1, sizeof(*b));
	char *t = malloc(n * 64 + 1);

	*out = g;
	*bars = b;
	*text = t;
	*nout = 0;
	if (!g || !b || !t)
		return MP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const mp_func_row_t *r = mp_functions_row(f, i);
		char hb[32];
		if (!r->peak_bytes)
			continue;
		if (!ng || g[ng - 1].memory != r->memory) {
			g[ng].memory = r->memory;
			g[ng].bars = &b[nb];
			ng++;
		}
		b[nb].label = r->label; /* a Python frame's with its file:line */
		int w = snprintf(t + used, 64, "%" PRIu64 " live, %s requested in all", r->peak_count,
				 mp_fmt_bytes(hb, sizeof(hb), r->requested_bytes));
		b[nb].detail = t + used;
		used += (w > 0 && w < 64 ? (size_t)w : 63) + 1;
		b[nb].bytes = r->peak_bytes;
		b[nb].color = MP_COLOR_HEAP;
		nb++;
		g[ng - 1].n++;
	}
	*nout = ng;
	return 0;
}

/* What the picture needs read from each input that the solver does not
 * keep (the maps' snapshots, the timelines' phases and step marks): the
 * layout asks, the analysis side reads (memprof/replay.h), the layout
 * draws it. *rp[i] the caller's (mp_replay_free). Returns 0 or an error,
 * diag filled. */
static int plot_reads(mp_plot_input_t *in, const cli_inputs_t *ci, mp_replay_t *rp, int n, const mp_plot_options_t *o,
		      mp_diag_t *diag)
{
	int rc = 0;

	for (int i = 0; i < n && rc == 0; i++) {
		mp_snapshot_target_t *t = NULL;
		size_t nt = 0;
		int marks = 0;
		if ((rc = mp_plot_capture_reads(&in[i], o, &t, &nt, &marks)) == 0)
			rc = ci->in[i].window_set ? cli_plot_window_reads(ci->paths[i], in[i].source, in[i].solver, t, nt,
									  marks, &rp[i], diag)
			     : ci->sought[i] ? cli_plot_seek_reads(ci->paths[i], in[i].solver, t, nt, marks, &rp[i], diag)
					     : mp_replay_read(in[i].source, in[i].name, t, nt, marks, &rp[i], diag);
		else
			mp_diag_set(diag, rc, -1, -1, "out of memory");
		free(t);
		in[i].replay = &rp[i];
	}
	return rc;
}

int cli_plot_write(const cli_inputs_t *ci, const mp_plot_options_t *o, const char *path)
{
	mp_plot_input_t *in = calloc((size_t)(ci->n ? ci->n : 1), sizeof(*in));
	mp_plot_function_bars_t **fg = calloc((size_t)(ci->n ? ci->n : 1), sizeof(*fg));
	mp_chart_bar_t **fb = calloc((size_t)(ci->n ? ci->n : 1), sizeof(*fb));
	char **ft = calloc((size_t)(ci->n ? ci->n : 1), sizeof(*ft));
	mp_replay_t *rp = calloc((size_t)(ci->n ? ci->n : 1), sizeof(*rp));
	mp_scene_t *scene = NULL;
	mp_diag_t diag;
	int rc = MP_EXIT_OK, err;

	mp_diag_clear(&diag);
	if (!in || !fg || !fb || !ft || !rp) {
		mp_cli_error("out of memory");
		rc = MP_EXIT_FAILURE;
		goto out;
	}
	for (int i = 0; i < ci->n; i++) {
		in[i].name = cli_input_title(ci, i);
		in[i].solver = ci->solvers[i];
		in[i].source = ci->sources[i];
		in[i].device_set = ci->in[i].device_set;
		in[i].device = ci->in[i].device;
		if (ci->functions[i] && function_bars(ci->functions[i], &fg[i], &in[i].nfunctions, &fb[i], &ft[i]) < 0) {
			mp_cli_error("out of memory");
			rc = MP_EXIT_FAILURE;
			goto out;
		}
		in[i].functions = fg[i];
	}
	cli_picture_font_check(path);
	err = plot_reads(in, ci, rp, ci->n, o, &diag);
	if (err == 0)
		err = mp_plot_capture(&scene, in, (size_t)ci->n, o, mp_render_measure(), &diag);
	if (err == 0)
		err = cli_picture_write(scene, path, &diag);
	if (err < 0) {
		rc = mp_cli_diag(&diag);
		if (err == MP_ENODATA)
			rc = MP_EXIT_FAILURE;
	}
out:
	for (int i = 0; rp && i < ci->n; i++)
		mp_replay_free(&rp[i]);
	for (int i = 0; ft && i < ci->n; i++) {
		free(fg[i]);
		free(fb[i]);
		free(ft[i]);
	}
	free(in);
	free(fg);
	free(fb);
	free(ft);
	free(rp);
	mp_scene_free(scene);
	mp_render_shutdown(); /* the font caches: leak checkers see a clean exit */
	return rc;
}
