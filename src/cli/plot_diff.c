/* plot_diff.c - `memprof plot --diff A B -o OUT`: per memory id in both,
 * the two timelines on one axis with their peaks, and the largest changes
 * at the peak as diverging bars (mp_plot_diff; docs/diff.md). */
#include "diff_cli.h"
#include "plot_out.h"

#include <memprof/plot.h>
#include <memprof/render.h>

#include <stdlib.h>
#include <string.h>

#define LABEL 160

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* "attn  output  float  [64]", or the function. */
static void row_label(char *buf, const mp_diff_row_t *r)
{
	if (r->function)
		snprintf(buf, LABEL, "%s", r->function);
	else
		snprintf(buf, LABEL, "%s%s%s%s%s%s%s", r->op[0] ? r->op : "(no op)", strcmp(r->region, "unknown") ? "  " : "",
			 strcmp(r->region, "unknown") ? r->region : "", r->dtype[0] ? "  " : "", r->dtype,
			 r->shape[0] ? "  " : "", r->shape);
}

int cli_plot_diff(char *a, char *b, const char *out, const mp_plot_options_t *po, const cli_inputs_options_t *io)
{
	cli_diff_pair_t p;
	mp_diff_options_t dopt = {io->functions == 1, NULL, 0};
	size_t top = po->top ? po->top : 12, n;
	mp_plot_diff_memory_t *mem = NULL;
	mp_plot_diff_bar_t *bars = NULL;
	char *labels = NULL, titles[8][256];
	mp_scene_t *scene = NULL;
	mp_diag_t diag;
	int rc, err;

	mp_diag_clear(&diag);
	if (cli_diff_looks_hlo(a) || cli_diff_looks_hlo(b)) {
		/* one line, before anything is read: the picture is of timelines */
		mp_cli_error("plot --diff of HLO modules is not supported: compare them with 'memprof diff', draw "
			     "each with 'memprof hlo -o'");
		return MP_EXIT_USAGE;
	}
	if ((rc = cli_diff_pair_open(&p, a, b, NULL, io, &dopt)) != MP_EXIT_OK)
		goto out;
	n = mp_diff_count(p.diff);
	n = n > 8 ? 8 : n; /* a picture of at most 8 memory ids */
	mem = calloc(n, sizeof(*mem));
	bars = calloc(n * top, sizeof(*bars));
	labels = calloc(n * top, LABEL);
	if (!mem || !bars || !labels) {
		mp_cli_error("out of memory");
		rc = MP_EXIT_FAILURE;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const mp_diff_memory_t *m = mp_diff_memory(p.diff, i);
		size_t k = m->row_count < top ? m->row_count : top;
		if (strcmp(m->a.name, m->b.name))
			snprintf(titles[i], sizeof(titles[i]), "%s = %s", m->a.name, m->b.name);
		else
			snprintf(titles[i], sizeof(titles[i]), "%s", m->a.name);
		mem[i] = (mp_plot_diff_memory_t){titles[i], m->a.dev, m->b.dev, base(p.ca.paths[0]), base(p.cb.paths[0]),
						 mp_source_time_unit(p.ca.sources[0]) != NULL, bars + i * top, k};
		for (size_t j = 0; j < k; j++) {
			char *l = labels + (i * top + j) * LABEL;
			row_label(l, &m->rows[j]);
			bars[i * top + j] = (mp_plot_diff_bar_t){
				l, m->rows[j].change_bytes,
				m->rows[j].kind == MP_DIFF_NEW || m->rows[j].kind == MP_DIFF_GONE ? mp_diff_kind_name(m->rows[j].kind)
												  : NULL};
		}
	}
	cli_picture_font_check(out);
	err = mp_plot_diff(&scene, mem, n, po->width, mp_render_measure(), &diag);
	if (err == 0)
		err = cli_picture_write(scene, out, &diag);
	if (err < 0)
		rc = err == MP_ENODATA ? (mp_cli_diag(&diag), MP_EXIT_FAILURE) : mp_cli_diag(&diag);
out:
	mp_scene_free(scene);
	free(mem);
	free(bars);
	free(labels);
	cli_diff_pair_close(&p);
	mp_render_shutdown();
	return rc;
}
