/* hlo_plot.c - the HLO memory viewer as one picture: the header, the
 * charts asked for (working space, buffers in program order, by size) and
 * the details table, stacked at one width, the height chosen from what
 * they show unless one is imposed. */
#include "hlo_charts_impl.h"

#include <memprof/plot.h>

#include <inttypes.h>
#include <string.h>


unsigned mp_plot_hlo_chart_parse(const char *name)
{
	if (!strcmp(name, "working-space"))
		return MP_PLOT_HLO_WORKING_SPACE;
	if (!strcmp(name, "by-order"))
		return MP_PLOT_HLO_BY_ORDER;
	if (!strcmp(name, "by-size"))
		return MP_PLOT_HLO_BY_SIZE;
	if (!strcmp(name, "all"))
		return MP_PLOT_HLO_ALL;
	return 0;
}

enum { P_HEADER, P_SPACE, P_ORDER, P_SIZE, P_TABLE, NPANELS };

int mp_plot_hlo(mp_scene_t **out, const mp_hlo_result_t *r, const mp_plot_hlo_options_t *opt,
		const mp_text_measure_t *m, mp_diag_t *diag)
{
	unsigned charts = opt && opt->charts ? opt->charts & MP_PLOT_HLO_ALL : MP_PLOT_HLO_ALL;
	double width = opt && opt->width > 0 ? opt->width : MP_PLOT_DEFAULT_WIDTH, h[NPANELS] = {0}, total = 0, y = 0;
	size_t lifetimes = opt && opt->lifetimes ? opt->lifetimes : 8, rows = opt && opt->table_rows ? opt->table_rows : 10;
	size_t life[HX_MAX_LIFETIMES], tab[HX_MAX_TABLE_ROWS], lanes = 0, nrows;
	mp_style_t sep = cx_stroke(MP_COLOR_GRID, 1, MP_DASH_SOLID);
	mp_scene_t *s;
	int rc = 0;

	*out = NULL;
	if (!charts)
		charts = MP_PLOT_HLO_ALL;
	if (width < MP_PLOT_MIN_WIDTH)
		return mp_diag_set(diag, MP_EUSAGE, -1, -1, "a width of %.0f px is too narrow for the HLO charts (%.0f px "
				   "at least)", width, MP_PLOT_MIN_WIDTH);
	if ((charts & MP_PLOT_HLO_WORKING_SPACE) && !r->n_points)
		return mp_diag_set(diag, MP_ENODATA, -1, -1, "module '%s' has no heap-simulator trace for memory colour %"
				   PRId64 ": there is no working space to draw (--chart by-order or by-size draws the "
				   "buffers at the peak alone)", r->module_name ? r->module_name : "", r->color);
	if (!(charts & MP_PLOT_HLO_WORKING_SPACE) && !r->n_buffers)
		return mp_diag_set(diag, MP_ENODATA, -1, -1, "module '%s' has no buffer of memory colour %" PRId64
				   " live at the peak: there is nothing to draw", r->module_name ? r->module_name : "",
				   r->color);
	if (charts & MP_PLOT_HLO_WORKING_SPACE)
		lanes = hx_pick_lifetimes(r, lifetimes, life);
	nrows = hx_pick_table(r, rows, lanes, tab);
	h[P_HEADER] = hx_header_height(width, r);
	if (charts & MP_PLOT_HLO_WORKING_SPACE)
		h[P_SPACE] = hx_space_height(r, lanes, width, m);
	if (charts & MP_PLOT_HLO_BY_ORDER)
		h[P_ORDER] = hx_buffers_height(r, width, m);
	if (charts & MP_PLOT_HLO_BY_SIZE)
		h[P_SIZE] = hx_buffers_height(r, width, m);
	h[P_TABLE] = mp_chart_hlo_table_height(nrows);
	for (int p = 0; p < NPANELS; p++)
		total += h[p] = ceil(h[p]);
	if (opt && opt->height > 0) {
		/* only the working space's plot stretches; other panels keep their size */
		double least = total - (h[P_SPACE] > 0 ? HX_SPACE_PLOT_H - HX_SPACE_PLOT_MIN : 0);
		if (opt->height < least)
			return mp_diag_set(diag, MP_EUSAGE, -1, -1, "a height of %.0f px is too small for these charts "
					   "(%.0f px at least)", opt->height, least);
		if (h[P_SPACE] > 0)
			h[P_SPACE] += opt->height - total;
		total = opt->height;
	}
	if (!(s = mp_scene_new(width, total, MP_RGB(MP_COLOR_BACKGROUND))))
		return mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
	for (int p = 0; p < NPANELS && rc >= 0; p++) {
		mp_chart_area_t a = {s, m, {0, y, width, h[p]}};
		if (h[p] <= 0)
			continue;
		if (y > 0)
			mp_scene_line(s, 0, cx_crisp(y), width, cx_crisp(y), &sep);
		switch (p) {
		case P_HEADER:
			rc = mp_chart_hlo_header(&a, r);
			break;
		case P_SPACE:
			rc = mp_chart_hlo_working_space(&a, r, lanes);
			break;
		case P_ORDER:
		case P_SIZE:
			rc = mp_chart_hlo_buffers(&a, r, p == P_SIZE);
			break;
		default:
			rc = hx_table(&a, r, rows, lanes);
			break;
		}
		y += h[p];
	}
	if (rc >= 0)
		rc = mp_scene_status(s);
	if (rc < 0) {
		mp_scene_free(s);
		return mp_diag_set(diag, rc, -1, -1, "cannot lay out the HLO charts: %s", mp_strerror(rc));
	}
	*out = s;
	return 0;
}
