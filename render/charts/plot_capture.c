/* plot_capture.c - the picture of analysed captures: per memory id (highest
 * peak first) its timeline, its breakdown at the peak and its memory maps
 * (at the peak and at the first failed allocations), stacked top to bottom
 * at one width.
 *
 * Maps need the live blocks' addresses, which the solver does not keep,
 * and timelines the phases and step marks, which it does not keep either:
 * the layout reads no input for them. mp_plot_capture_reads says what the
 * picture needs; the caller reads it (mp_replay_read, on the analysis
 * side) and hands it over in mp_plot_input_t.replay. */
#include "charts_impl.h"

#include <memprof/plot.h>
#include <memprof/vec.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_TIMELINE, P_BREAKDOWN, P_MAP, P_NOTE };

typedef struct panel {
	int kind;
	const mp_plot_input_t *in;
	const mp_solver_device_t *dev;
	double height;
	/* breakdown */
	mp_chart_bar_t *bars;
	size_t nbars;
	uint64_t rest_bytes, rest_count;
	const char *rest_what;
	int by_function;
	char *text;
	/* map */
	mp_memmap_t map;
	const mp_snapshot_block_t *blocks; size_t nblocks; /* the map's live blocks, for hover (the input's replay) */
	int have_map, map_rc;
	size_t oom;        /* the OOM record shown, or SIZE_MAX for the peak */
	uint64_t requested; /* its request */
	uint64_t event;    /* its event */
	char title[320], subtitle[512];
} panel_t;

typedef struct plot {
	panel_t *p;
	size_t n, cap;
	double width;
} plot_t;

unsigned mp_plot_chart_parse(const char *name)
{
	if (!strcmp(name, "timeline"))
		return MP_PLOT_TIMELINE;
	if (!strcmp(name, "breakdown"))
		return MP_PLOT_BREAKDOWN;
	if (!strcmp(name, "map"))
		return MP_PLOT_MAP;
	if (!strcmp(name, "all"))
		return MP_PLOT_ALL;
	return 0;
}

static panel_t *add(plot_t *pl, int kind, const mp_plot_input_t *in, const mp_solver_device_t *d)
{
	panel_t *p;

	if (MP_VEC_RESERVE(pl->p, pl->cap, pl->n + 1) < 0)
		return NULL;
	p = &pl->p[pl->n++];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->in = in;
	p->dev = d;
	p->oom = SIZE_MAX;
	return p;
}

static const char *memory_name(const mp_plot_input_t *in, uint32_t id, char *buf, size_t n)
{
	const mp_memory_info_t *m = mp_source_memory(in->source, id);

	if (m && m->name && m->name[0])
		snprintf(buf, n, "%s (%s)", m->name, mp_memory_kind_name(m->kind));
	else
		snprintf(buf, n, "memory %" PRIu32, id);
	return buf;
}

/* "allocated " where the memory id has its own word for what it holds,
 * else "". */
static const char *word_of(const mp_plot_input_t *in, uint32_t id, char *buf, size_t n)
{
	const mp_memory_info_t *m = mp_source_memory(in->source, id);

	buf[0] = '\0';
	if (m && m->in_use_name && m->in_use_name[0])
		snprintf(buf, n, "%s ", m->in_use_name);
	return buf;
}

static const char *step_text(char *buf, size_t n, int64_t step)
{
	if (step >= 0)
		snprintf(buf, n, ", step %" PRId64, step);
	else
		buf[0] = '\0';
	return buf;
}

static const char *cause_text(const mp_solver_oom_t *o)
{
	const char *c = mp_solver_oom_cause(o);

	if (!c)
		return o->at.has_free ? "cause not known (no regions to find the largest free chunk in)"
				      : "cause not known (no capacity or regions to compare with)";
	if (!strcmp(c, "full"))
		return "cause: memory was full (the request exceeds the free bytes)";
	if (!strcmp(c, "fragmented"))
		return "cause: fragmentation (enough bytes free, but no free chunk that large)";
	return "cause: a free chunk was large enough (a limit outside the tracked regions)";
}

static void input_span(const mp_plot_input_t *in, uint64_t *t0, uint64_t *t1);

/* Time as every panel says it: from the input's first event, as the
 * timeline's axis counts it (trace entries as they are). */
static uint64_t since(const mp_plot_input_t *in, uint64_t time_ns)
{
	uint64_t t0, t1;

	if (in->source && mp_source_time_unit(in->source))
		return time_ns;
	input_span(in, &t0, &t1);
	return time_ns > t0 ? time_ns - t0 : 0;
}

static int breakdown_panel(panel_t *p, const mp_plot_options_t *o)
{
	const mp_solver_device_t *d = p->dev;
	size_t top = o->top ? o->top : 12;
	char name[160], b1[48], b2[48], b3[32], w[48];

	memory_name(p->in, d->id, name, sizeof(name));
	word_of(p->in, d->id, w, sizeof(w));
	for (size_t i = 0; i < p->in->nfunctions; i++) {
		const mp_plot_function_bars_t *f = &p->in->functions[i];
		if (f->memory != d->id)
			continue;
		p->bars = NULL;
		p->nbars = f->n < top ? f->n : top;
		p->rest_bytes = f->rest_bytes;
		p->rest_count = f->rest_count;
		for (size_t k = p->nbars; k < f->n; k++) {
			p->rest_bytes += f->bars[k].bytes;
			p->rest_count++;
		}
		p->rest_what = "functions";
		p->by_function = 1;
		snprintf(p->title, sizeof(p->title), "Live at the peak by allocating function: %s", name);
		snprintf(p->subtitle, sizeof(p->subtitle), "%s%s%s at %s%s", w[0] ? "peak " : "", w,
			 mp_bytes_exact(b1, sizeof(b1), d->peak_bytes),
			 cx_fmt_at(p->in->source, b2, sizeof(b2), since(p->in, d->peak.time_ns)), step_text(b3, sizeof(b3), d->peak.step));
		p->height = mp_chart_breakdown_height(p->nbars + (p->rest_count ? 1 : 0));
		return 0;
	}
	p->bars = calloc(top ? top : 1, sizeof(*p->bars));
	p->text = malloc(top * 400 + 1);
	if (!p->bars || !p->text)
		return MP_ENOMEM;
	p->nbars = mp_chart_bars_from_rows(p->bars, top, d->breakdown, d->breakdown_count, p->in->source, p->text,
					   top * 400 + 1, &p->rest_bytes, &p->rest_count);
	p->rest_what = "groups";
	snprintf(p->title, sizeof(p->title), "Live at the peak: %s", name);
	{
		uint64_t count = 0;
		for (size_t i = 0; i < d->breakdown_count; i++)
			count += d->breakdown[i].occurrences;
		snprintf(p->subtitle, sizeof(p->subtitle), "%s%s%s in %" PRIu64 " allocations (%zu groups) at %s%s",
			 w[0] ? "peak " : "", w, mp_bytes_exact(b1, sizeof(b1), d->peak.heap_bytes), count,
			 (size_t)(p->nbars + p->rest_count), cx_fmt_at(p->in->source, b2, sizeof(b2), since(p->in, d->peak.time_ns)),
			 step_text(b3, sizeof(b3), d->peak.step));
	}
	p->height = mp_chart_breakdown_height(p->nbars + (p->rest_count ? 1 : 0));
	return 0;
}

static void map_titles(panel_t *p)
{
	const mp_solver_device_t *d = p->dev;
	char name[160], b1[48], b2[48], b3[32], w[48];

	memory_name(p->in, d->id, name, sizeof(name));
	if (p->oom == SIZE_MAX) {
		word_of(p->in, d->id, w, sizeof(w));
		snprintf(p->title, sizeof(p->title), "Memory map of %s at the peak", name);
		snprintf(p->subtitle, sizeof(p->subtitle), "at %s%s: %s %.*s",
			 cx_fmt_at(p->in->source, b1, sizeof(b1), since(p->in, d->peak.time_ns)), step_text(b3, sizeof(b3), d->peak.step),
			 mp_bytes_exact(b2, sizeof(b2), d->peak_bytes), w[0] ? (int)strlen(w) - 1 : 6, w[0] ? w : "in use");
		return;
	}
	{
		const mp_solver_oom_t *o = &d->oom[p->oom];
		const char *op = o->op ? mp_source_string(p->in->source, o->op) : "";
		snprintf(p->title, sizeof(p->title), "Memory map of %s at failed allocation %zu of %" PRIu64 ": %s asked", name,
			 p->oom + 1, d->oom_total, mp_fmt_bytes(b1, sizeof(b1), o->requested_bytes));
		snprintf(p->subtitle, sizeof(p->subtitle), "at %s%s%s%s · %s",
			 cx_fmt_at(p->in->source, b2, sizeof(b2), since(p->in, o->at.time_ns)),
			 step_text(b3, sizeof(b3), o->at.step), op[0] ? ", op " : "", op, cause_text(o));
		p->requested = o->requested_bytes;
	}
}

/* The snapshot the caller read for a map's event (mp_plot_capture_reads). */
static const mp_snapshot_t *snapshot_of(const panel_t *p)
{
	const mp_replay_t *r = p->in->replay;

	for (size_t i = 0; r && i < r->nmaps; i++)
		if (r->maps[i].memory == p->dev->id && r->maps[i].event_index == p->event)
			return &r->maps[i];
	return NULL;
}

/* Each map's snapshot into pixel columns at the picture's width. */
static int build_maps(plot_t *pl, const mp_text_measure_t *m, mp_diag_t *diag)
{
	for (size_t k = 0; k < pl->n; k++) {
		panel_t *p = &pl->p[k];
		const mp_snapshot_t *snap;
		int rc;
		if (p->kind != P_MAP)
			continue;
		if (!(snap = snapshot_of(p))) {
			rc = mp_diag_set(diag, MP_ENOTFOUND, -1, -1,
					 "the map of memory %" PRIu32 " at event %" PRIu64 " was not read (mp_plot_capture_reads)",
					 p->dev->id, p->event);
			if (diag && !diag->file[0])
				mp_diag_set_file(diag, p->in->name);
			return rc;
		}
		if ((rc = mp_chart_map_geometry(&p->map, snap, pl->width)) == MP_ENOMEM)
			return MP_ENOMEM;
		if (rc == 0 && snap->nblocks) { /* kept for the map's hover */
			p->blocks = snap->blocks;
			p->nblocks = snap->nblocks;
		}
		p->map_rc = rc;
		p->have_map = rc == 0;
	}
	/* what cannot be drawn becomes a line saying why: too many regions,
	 * a panel of its own; no regions, left out, all of them named in one
	 * line at the end of the picture */
	{
		panel_t none;
		size_t kept = 0, nnone = 0;
		int full = 0;
		memset(&none, 0, sizeof(none));
		for (size_t k = 0; k < pl->n; k++) {
			panel_t *p = &pl->p[k];
			if (p->kind == P_MAP && !p->have_map && p->map_rc != MP_EUSAGE) {
				char item[256], name[160];
				size_t len = strlen(none.title);
				memory_name(p->in, p->dev->id, name, sizeof(name));
				if (p->oom == SIZE_MAX)
					snprintf(item, sizeof(item), "%s", name);
				else
					snprintf(item, sizeof(item), "%s at failed allocation %zu", name, p->oom + 1);
				if (!nnone++) {
					none.kind = P_NOTE;
					none.in = p->in;
					none.dev = p->dev;
					none.map_rc = p->map_rc;
					none.oom = SIZE_MAX;
					len = (size_t)snprintf(none.title, sizeof(none.title), "no memory map for %s", item);
				} else if (!full && len + strlen(item) + 2 + 64 < sizeof(none.title)) {
					snprintf(none.title + len, sizeof(none.title) - len, ", %s", item);
				} else if (!full) {
					snprintf(none.title + len, sizeof(none.title) - len, ", ...");
					full = 1;
				}
				mp_memmap_free(&p->map);
				continue;
			}
			if (p->kind == P_MAP && p->have_map) {
				mp_chart_map_t c = {p->title, p->subtitle, &p->map, p->requested, NULL, 0, NULL};
				p->height = mp_chart_map_height(&c, m);
			} else if (p->kind == P_MAP) {
				p->kind = P_NOTE;
				snprintf(p->subtitle, sizeof(p->subtitle), "%s",
					 "more regions than the map has pixels: narrow the capture with --steps, or widen the picture");
				p->height = cx_header_height(1);
			}
			pl->p[kept++] = *p;
		}
		pl->n = kept;
		if (nnone) { /* room for it: the panels left out freed at least one slot */
			size_t len = strlen(none.title);
			snprintf(none.title + len, sizeof(none.title) - len, "%s",
				 ": no regions (pools, segments, arenas) were declared");
			none.height = cx_header_height(0);
			pl->p[pl->n++] = none;
		}
	}
	return 0;
}

/* The input's memory ids: its own devices (a timeline from rounds), or
 * the solver's. */
static size_t in_count(const mp_plot_input_t *in)
{
	return in->devices ? in->ndevices : mp_solver_device_count(in->solver);
}

static const mp_solver_device_t *in_device(const mp_plot_input_t *in, size_t i)
{
	return in->devices ? &in->devices[i] : mp_solver_device(in->solver, i);
}

static int by_peak(const void *a, const void *b)
{
	const mp_solver_device_t *x = *(const mp_solver_device_t *const *)a, *y = *(const mp_solver_device_t *const *)b;

	if (x->peak_bytes != y->peak_bytes)
		return x->peak_bytes > y->peak_bytes ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The panels of one input: devices by peak, each with its charts. */
static int plan_input(plot_t *pl, const mp_plot_input_t *in, const mp_plot_options_t *o)
{
	size_t nd = in_count(in), k = 0;
	const mp_solver_device_t **dv = calloc(nd ? nd : 1, sizeof(*dv));
	size_t maps = o->max_oom_maps ? o->max_oom_maps : 4;
	int rc = 0;

	if (!dv)
		return MP_ENOMEM;
	for (size_t i = 0; i < nd; i++) {
		const mp_solver_device_t *d = in_device(in, i);
		if (d->has_peak && (!in->device_set || d->id == in->device))
			dv[k++] = d;
	}
	qsort(dv, k, sizeof(*dv), by_peak);
	for (size_t i = 0; i < k && rc == 0; i++) {
		const mp_solver_device_t *d = dv[i];
		panel_t *p;
		if (o->charts & MP_PLOT_TIMELINE) {
			if (!(p = add(pl, P_TIMELINE, in, d)))
				rc = MP_ENOMEM;
			else
				p->height = mp_chart_timeline_height();
		}
		if (rc == 0 && (o->charts & MP_PLOT_BREAKDOWN)) {
			if (!(p = add(pl, P_BREAKDOWN, in, d)))
				rc = MP_ENOMEM;
			else
				rc = breakdown_panel(p, o);
		}
		for (size_t m = o->failures_only; rc == 0 && (o->charts & MP_PLOT_MAP) && m <= d->oom_count && m <= maps; m++) {
			if (!(p = add(pl, P_MAP, in, d))) {
				rc = MP_ENOMEM;
				break;
			}
			p->oom = m == 0 ? SIZE_MAX : m - 1;
			p->event = m == 0 ? d->peak.event_index : d->oom[m - 1].at.event_index;
			map_titles(p);
		}
	}
	free(dv);
	return rc;
}

static void free_plot(plot_t *pl)
{
	for (size_t i = 0; i < pl->n; i++) {
		if (!pl->p[i].by_function)
			free(pl->p[i].bars);
		free(pl->p[i].text);
		mp_memmap_free(&pl->p[i].map);
	}
	free(pl->p);
}

/* Heights: fixed panels keep theirs; timelines share what is left of a
 * height given, else take theirs (700 px when alone). */
static int share_height(plot_t *pl, double asked, double *total, mp_diag_t *diag)
{
	double fixed = 0;
	size_t ntl = 0;

	for (size_t i = 0; i < pl->n; i++) {
		if (pl->p[i].kind == P_TIMELINE)
			ntl++;
		else
			fixed += pl->p[i].height;
	}
	if (!asked) {
		if (pl->n == 1 && ntl == 1)
			pl->p[0].height = MP_PLOT_DEFAULT_HEIGHT;
		*total = 0;
		for (size_t i = 0; i < pl->n; i++)
			*total += pl->p[i].height;
		return 0;
	}
	if (asked < fixed + (double)ntl * MP_CHART_TIMELINE_MIN_HEIGHT) {
		if (pl->n == 1)
			return mp_diag_set(diag, MP_EUSAGE, -1, -1,
					   "a height of %.0f px is too small for the chart: it needs at least %.0f px", asked,
					   fixed + (double)ntl * MP_CHART_TIMELINE_MIN_HEIGHT);
		return mp_diag_set(diag, MP_EUSAGE, -1, -1,
				   "a height of %.0f px is too small for these %zu charts: they need at least %.0f px", asked,
				   pl->n, fixed + (double)ntl * MP_CHART_TIMELINE_MIN_HEIGHT);
	}
	for (size_t i = 0; i < pl->n; i++)
		if (pl->p[i].kind == P_TIMELINE)
			pl->p[i].height = (asked - fixed) / (double)ntl;
	*total = asked;
	return 0;
}

/* The time every timeline of one input spans: the first to the last point
 * of all its memory ids, so that their panels line up. */
static void input_span(const mp_plot_input_t *in, uint64_t *t0, uint64_t *t1)
{
	*t0 = UINT64_MAX;
	*t1 = 0;
	for (size_t i = 0; i < in_count(in); i++) {
		const mp_solver_device_t *d = in_device(in, i);
		if (!d->timeline_count)
			continue;
		if (d->timeline[0].time_ns < *t0)
			*t0 = d->timeline[0].time_ns;
		if (d->timeline[d->timeline_count - 1].time_ns > *t1)
			*t1 = d->timeline[d->timeline_count - 1].time_ns;
	}
	if (*t0 > *t1)
		*t0 = *t1 = 0;
}

/* The name of the first bar of the breakdown by function, the one the
 * panel under the timeline shows first; NULL when there is none. */
static const char *first_function(const mp_plot_input_t *in, uint32_t memory)
{
	for (size_t i = 0; i < in->nfunctions; i++)
		if (in->functions[i].memory == memory && in->functions[i].n && in->functions[i].bars[0].label &&
		    in->functions[i].bars[0].label[0])
			return in->functions[i].bars[0].label;
	return NULL;
}

/* Whether an event of any memory id the solver kept is in a step. */
static int has_steps(const mp_solver_t *s)
{
	for (size_t i = 0; i < mp_solver_device_count(s); i++) {
		const mp_solver_device_t *d = mp_solver_device(s, i);
		for (size_t k = 0; d && k < d->timeline_count; k++)
			if (d->timeline[k].step >= 0)
				return 1;
	}
	return 0;
}

static int draw_panel(const mp_chart_area_t *a, panel_t *p)
{
	char title[320], name[160];

	switch (p->kind) {
	case P_TIMELINE: {
		mp_chart_memory_t m;
		const char *base = strrchr(p->in->name, '/');
		memset(&m, 0, sizeof(m));
		/* the file's name: its directories only push the memory's name out */
		snprintf(title, sizeof(title), "%s: %s", base && base[1] ? base + 1 : p->in->name,
			 memory_name(p->in, p->dev->id, name, sizeof(name)));
		m.title = title;
		m.dev = p->dev;
		m.source = p->in->source;
		m.rounds = !p->in->devices ? 0 : p->in->spans ? 2 : 1;
		if (m.rounds && p->in->bands) { /* (p->dev: one of them) */
			m.bands = p->in->bands[p->dev - p->in->devices];
			m.nbands = p->in->nbands[p->dev - p->in->devices];
		}
		input_span(p->in, &m.t0_ns, &m.t1_ns);
		/* the peak's label names the largest group as the breakdown does */
		m.top_name = first_function(p->in, p->dev->id);
		if (p->in->replay) { /* read where mp_plot_capture_reads asked for them */
			m.phases = p->in->replay->phases;
			m.nphases = p->in->replay->nphases;
			m.steps = p->in->replay->steps;
			m.nsteps = p->in->replay->nsteps;
		}
		return mp_chart_timeline(a, &m);
	}
	case P_BREAKDOWN: {
		mp_chart_bars_t b = {p->title, p->subtitle, p->bars, p->nbars, p->rest_bytes, p->rest_count, p->rest_what,
				     !p->by_function};
		if (p->by_function)
			for (size_t i = 0; i < p->in->nfunctions; i++)
				if (p->in->functions[i].memory == p->dev->id)
					b.bars = p->in->functions[i].bars;
		return mp_chart_breakdown(a, &b);
	}
	case P_MAP: {
		mp_chart_map_t c = {p->title, p->subtitle, &p->map, p->requested, p->blocks, p->nblocks, p->in->source};
		return mp_chart_map(a, &c);
	}
	default:
		cx_header(a, p->title, p->subtitle[0] ? p->subtitle : NULL);
		return mp_scene_status(a->scene);
	}
}

int mp_plot_capture(mp_scene_t **out, const mp_plot_input_t *in, size_t n, const mp_plot_options_t *opt,
		    const mp_text_measure_t *m, mp_diag_t *diag)
{
	mp_plot_options_t o = *opt;
	plot_t pl = {NULL, 0, 0, opt->width ? opt->width : MP_PLOT_DEFAULT_WIDTH};
	double total = 0, y = 0;
	int rc = 0, any_map = 0;

	*out = NULL;
	if (pl.width < MP_PLOT_MIN_WIDTH)
		return mp_diag_set(diag, MP_EUSAGE, -1, -1, "a width of %.0f px is too narrow for the charts (at least %.0f)",
				   pl.width, MP_PLOT_MIN_WIDTH);
	if (!o.charts)
		o.charts = MP_PLOT_TIMELINE;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = plan_input(&pl, &in[i], &o);
	if (rc == 0 && !pl.n)
		rc = mp_diag_set(diag, MP_ENODATA, -1, -1, "no memory events to draw");
	if (rc == 0 && (o.charts & MP_PLOT_MAP))
		rc = build_maps(&pl, m, diag);
	for (size_t i = 0; i < pl.n; i++)
		any_map |= pl.p[i].kind != P_NOTE;
	if (rc == 0 && !any_map) { /* only maps asked, and none can be drawn: say which memory and why */
		char name[160];
		rc = mp_diag_set(diag, MP_ENODATA, -1, -1, "no memory map to draw: %s %s",
				 memory_name(pl.p[0].in, pl.p[0].dev->id, name, sizeof(name)),
				 pl.p[0].map_rc == MP_EUSAGE ? "has more regions than the map has pixels"
							     : "has no regions (pools, segments, arenas) at the peak or at a failed allocation");
		if (diag && n == 1)
			mp_diag_set_file(diag, in[0].name);
	}
	if (rc == 0)
		rc = share_height(&pl, o.height, &total, diag);
	if (rc == 0 && !(*out = mp_scene_new(pl.width, total, MP_RGB(MP_COLOR_BACKGROUND))))
		rc = MP_ENOMEM;
	for (size_t i = 0; rc == 0 && i < pl.n; i++) {
		mp_chart_area_t a = {*out, m, {0, y, pl.width, pl.p[i].height}};
		if ((rc = draw_panel(&a, &pl.p[i])) == MP_ENODATA)
			rc = 0;
		y += pl.p[i].height;
		if (i + 1 < pl.n) {
			mp_style_t sep = cx_stroke(MP_COLOR_GRID, 1, MP_DASH_SOLID);
			mp_scene_line(*out, 0, cx_crisp(y), pl.width, cx_crisp(y), &sep);
		}
	}
	if (rc == MP_EUSAGE && diag && !diag->text[0])
		mp_diag_set(diag, rc, -1, -1, "the picture is too small for its charts (%.0fx%.0f px)", pl.width, total);
	if (rc == 0)
		rc = mp_scene_status(*out);
	if (rc < 0) {
		if (rc == MP_ENOMEM && diag && !diag->text[0])
			mp_diag_set(diag, rc, -1, -1, "out of memory while laying out the picture");
		mp_scene_free(*out);
		*out = NULL;
	}
	free_plot(&pl);
	return rc;
}

int mp_plot_capture_reads(const mp_plot_input_t *in, const mp_plot_options_t *opt, mp_snapshot_target_t **targets,
			  size_t *ntargets, int *marks)
{
	mp_plot_options_t o = *opt;
	plot_t pl = {NULL, 0, 0, opt->width ? opt->width : MP_PLOT_DEFAULT_WIDTH};
	size_t nt = 0;
	int rc;

	*targets = NULL;
	*ntargets = 0;
	*marks = 0;
	if (!o.charts)
		o.charts = MP_PLOT_TIMELINE;
	rc = plan_input(&pl, in, &o);
	for (size_t k = 0; rc == 0 && k < pl.n; k++)
		nt += pl.p[k].kind == P_MAP;
	if (rc == 0 && nt && !(*targets = calloc(nt, sizeof(**targets))))
		rc = MP_ENOMEM;
	for (size_t k = 0; rc == 0 && k < pl.n; k++)
		if (pl.p[k].kind == P_MAP)
			(*targets)[(*ntargets)++] = (mp_snapshot_target_t){pl.p[k].dev->id, pl.p[k].event};
	/* a pass for them only where the solver saw phases or steps */
	if (rc == 0 && (o.charts & MP_PLOT_TIMELINE) && pl.n && !in->devices)
		*marks = mp_solver_phase_marks(in->solver) || has_steps(in->solver);
	free_plot(&pl);
	return rc;
}
