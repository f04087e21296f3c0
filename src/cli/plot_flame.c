/* plot_flame.c - `memprof plot --chart flame`: the call trees that `report
 * --tree` prints, drawn as icicles (memprof/flame.h), one per memory id
 * with a peak, highest peak first, stacked into one picture. The tree's
 * nodes come depth first with the root first, so each node's parent is
 * already placed when the chart reaches it; only the kinds and the root's
 * parent index need translating. */
#include "cli.h"
#include "plot_out.h"

#include <memprof/calltree.h>
#include <memprof/flame.h>
#include <memprof/vec.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GAP 24.0 /* px between two charts */

typedef struct flame_panel {
	mp_flame_node_t *nodes; /* owned; names borrowed from the tree or from names */
	char *names;            /* owned: "name (file.py:line)" of the Python frames, back to back */
	size_t n;
	char title[512];
	char subtitle[256];
	double height;
} flame_panel_t;

static int flame_kind(const mp_tree_node_t *t)
{
	if (t->folded)
		return MP_FLAME_OTHER;
	switch (t->kind) {
	case MP_FRAME_PYTHON:
		return MP_FLAME_PYTHON;
	case MP_FRAME_NATIVE:
		return MP_FLAME_NATIVE;
	case MP_FRAME_KERNEL:
		return MP_FLAME_KERNEL;
	default:
		return MP_FLAME_UNKNOWN;
	}
}

/* A Python frame's label: "forward (model.py:59)", the file's base name
 * (the whole path is too long for a frame, and the tree's text and JSON
 * have it). NULL when the frame has no file or line to add. */
static int python_label(const mp_tree_node_t *x, char *buf, size_t size)
{
	const char *base = x->file ? strrchr(x->file, '/') : NULL;

	if (x->kind != MP_FRAME_PYTHON || !x->file || !x->file[0] || x->line <= 0)
		return 0;
	return snprintf(buf, size, "%s (%s:%lld)", x->name, base ? base + 1 : x->file, (long long)x->line);
}

/* The tree's nodes as the chart takes them. Returns 0 or MP_ENOMEM. */
static int panel_nodes(const mp_tree_t *t, flame_panel_t *p)
{
	size_t room = 0, used = 0;
	char tmp[1024];

	for (size_t k = 0; k < t->count; k++) {
		int len = python_label(&t->nodes[k], tmp, sizeof(tmp));
		room += len > 0 ? (size_t)len + 1 : 0;
	}
	if (!(p->nodes = calloc(t->count ? t->count : 1, sizeof(*p->nodes))) || !(p->names = malloc(room ? room : 1)))
		return MP_ENOMEM;
	for (size_t k = 0; k < t->count; k++) {
		const mp_tree_node_t *x = &t->nodes[k];
		const char *name = x->name;
		int len = python_label(x, p->names + used, room - used);
		if (len > 0 && (size_t)len < room - used) {
			name = p->names + used;
			used += (size_t)len + 1;
		}
		p->nodes[k] = (mp_flame_node_t){name, flame_kind(x), x->total_bytes, x->self_bytes, x->total_count,
						x->parent < 0 ? UINT32_MAX : (uint32_t)x->parent};
	}
	p->n = t->count;
	return 0;
}

static const char *what(int kind)
{
	return kind == MP_TREE_LEAKS ? "live at the end" : kind == MP_TREE_ALLOCATED ? "allocated over the run"
										: "live at the peak";
}

/* The panels of input i: its memory ids with a tree of that kind, highest
 * peak first (the solver's order is by id). */
static int input_panels(const cli_inputs_t *ci, int i, int kind, flame_panel_t **ps, size_t *np, size_t *cap)
{
	const mp_solver_t *sv = ci->solvers[i];
	size_t nd = mp_solver_device_count(sv);
	char *done = calloc(nd ? nd : 1, 1);
	int rc = 0;

	if (!done)
		return MP_ENOMEM;
	for (size_t round = 0; round < nd && rc == 0; round++) {
		const mp_solver_device_t *best = NULL;
		size_t bi = 0;
		const mp_tree_t *t;
		const mp_memory_info_t *m;
		flame_panel_t *p;
		for (size_t k = 0; k < nd; k++) {
			const mp_solver_device_t *d = mp_solver_device(sv, k);
			if (done[k] || !d->has_peak || (ci->in[i].device_set && d->id != ci->in[i].device))
				continue;
			if (!best || d->peak_bytes > best->peak_bytes)
				best = d, bi = k;
		}
		if (!best)
			break;
		done[bi] = 1;
		t = mp_calltree_find(ci->trees[i], best->id, kind);
		if (!t || !t->count || !t->nodes[0].total_bytes)
			continue;
		if (MP_VEC_RESERVE(*ps, *cap, *np + 1) < 0) {
			rc = MP_ENOMEM;
			break;
		}
		p = &(*ps)[(*np)++];
		memset(p, 0, sizeof(*p));
		m = mp_source_memory(ci->sources[i], best->id);
		snprintf(p->title, sizeof(p->title), "%s: %s, by call stack", cli_input_title(ci, i), m && m->name ? m->name : "?");
		snprintf(p->subtitle, sizeof(p->subtitle), "%s", what(kind));
		rc = panel_nodes(t, p);
	}
	free(done);
	return rc;
}

int cli_plot_flame(const cli_inputs_t *ci, int kind, const mp_plot_options_t *o, const char *path)
{
	const mp_flame_options_t fo = {0, MP_FLAME_SORT_BYTES, 0};
	double width = o->width > 0 ? o->width : MP_PLOT_DEFAULT_WIDTH, height = 0, y = 0;
	flame_panel_t *ps = NULL;
	size_t np = 0, cap = 0;
	mp_scene_t *scene = NULL;
	mp_diag_t diag;
	int rc = 0, exit_rc = MP_EXIT_OK;

	mp_diag_clear(&diag);
	for (int i = 0; i < ci->n && rc == 0; i++)
		if (ci->trees[i])
			rc = input_panels(ci, i, kind, &ps, &np, &cap);
	if (rc == 0 && !np) {
		mp_cli_error("nothing %s to draw: '%s' not written", what(kind), path);
		exit_rc = MP_EXIT_FAILURE;
		goto out;
	}
	for (size_t k = 0; k < np && rc == 0; k++) {
		ps[k].height = mp_chart_flame_height(ps[k].nodes, ps[k].n, width, &fo, mp_render_measure());
		height += ps[k].height + (k ? GAP : 0);
	}
	if (rc == 0 && !(scene = mp_scene_new(width, height, MP_RGB(MP_COLOR_BACKGROUND))))
		rc = MP_ENOMEM;
	for (size_t k = 0; k < np && rc == 0; k++) {
		mp_chart_area_t a = {scene, mp_render_measure(), {0, y, width, ps[k].height}};
		rc = mp_chart_flame(&a, ps[k].nodes, ps[k].n, ps[k].title, ps[k].subtitle, &fo);
		y += ps[k].height + GAP;
	}
	if (rc == 0) {
		cli_picture_font_check(path);
		if ((rc = cli_picture_write(scene, path, &diag)) < 0)
			exit_rc = mp_cli_diag(&diag);
	} else {
		mp_cli_error("cannot draw the call trees: %s", mp_strerror(rc));
		exit_rc = MP_EXIT_FAILURE;
	}
out:
	for (size_t k = 0; k < np; k++) {
		free(ps[k].nodes);
		free(ps[k].names);
	}
	free(ps);
	mp_scene_free(scene);
	mp_render_shutdown();
	return exit_rc;
}
