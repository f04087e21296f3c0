/* plot_rounds.c - `memprof plot --chart timeline` from a capture's ROUND
 * sections (format 2.5, memprof/rounds.h): its timeline at round
 * resolution (about 90 ms) without replaying its events, so that the
 * chart of a capture hours long takes the time of reading a few bytes a
 * round (issue 43).
 *
 * Each memory id becomes an mp_solver_device_t of our own, drawn by the
 * same chart as a replay's: per round, points at its least and most live
 * bytes and at its last moment (each pixel column of the chart shows its
 * highest value, as the replay's 2000 points do), the live regions' bytes
 * ("reserved"), the round's first failed allocation, the step at the
 * round's horizon. The peak is the SUMMARY's, exact in bytes and time.
 * What rounds do not keep is not drawn: fragmentation, the peak's largest
 * group, phases; --replay draws the chart from every event instead.
 */
#include "cli.h"
#include "plot_out.h"
#include "plot_rounds.h"

#include <memprof/array_source.h>
#include <memprof/keep.h>
#include <memprof/rounds.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	mp_capture_rounds_t r;
	mp_solver_device_t *dev;
	size_t ndev;
	mp_chart_band_t **bands; /* per device: its rounds' least and most */
	size_t *nbands;
	mp_source_t *src; /* memory names only */
} rinput_t;

static int oom(void)
{
	mp_cli_error("out of memory");
	return MP_EXIT_FAILURE;
}

static int push(mp_solver_point_t **v, size_t *n, size_t *cap, mp_solver_point_t p)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 256;
		mp_solver_point_t *x = realloc(*v, c * sizeof(*x));
		if (!x)
			return -1;
		*v = x;
		*cap = c;
	}
	(*v)[(*n)++] = p;
	return 0;
}

/* A point of a memory id's line; capacity: its declared one (0: none). */
static mp_solver_point_t point(uint64_t ns, uint64_t heap, uint64_t reserved, int has_reserved, int64_t step,
			       uint64_t capacity)
{
	mp_solver_point_t p;

	memset(&p, 0, sizeof(p));
	p.time_ns = ns;
	p.step = step;
	p.heap_bytes = heap;
	p.fragmentation = NAN;
	p.has_reserved = (uint8_t)has_reserved;
	p.reserved_bytes = reserved;
	if (capacity || has_reserved) { /* free: below the capacity, else inside what the regions hold */
		uint64_t cap = capacity ? capacity : reserved;
		p.has_free = 1;
		p.free_bytes = cap > heap ? cap - heap : 0;
	}
	return p;
}

/* Memory id sm's device and bands (*band, *nband) from the rounds. 0 or
 * -1 (out of memory). */
static int device(const mp_capture_rounds_t *c, const mp_summary_memory_t *sm, mp_solver_device_t *d,
		  mp_chart_band_t **band, size_t *nband)
{
	size_t n = 0, ncap = 0, no = 0, ocap = 0;
	uint64_t cap = sm->id < c->ncapacity ? c->capacity[sm->id] : 0;
	int has_resv = 0, peak_found = 0;

	memset(d, 0, sizeof(*d));
	d->id = sm->id;
	d->declared_capacity = d->capacity_bytes = cap;
	d->has_peak = sm->has_peak;
	d->peak_bytes = d->lifetime_peak_bytes = sm->peak_bytes;
	d->allocations = sm->allocations + sm->reallocs;
	d->deallocations = sm->frees + sm->reallocs;
	d->failed_allocations = d->oom_total = sm->failed;
	d->dropped_events = sm->dropped;
	d->fragmentation_reason = "the rounds keep no fragmentation (plot --replay draws it)";
	d->peak = point(sm->peak_time_ns, sm->peak_bytes, 0, 0, -1, cap);
	if (!(*band = malloc((c->nrounds ? c->nrounds : 1) * sizeof(**band))))
		return -1;
	for (size_t i = 0; i < c->nrounds; i++) {
		const mp_round_t *r = &c->rounds[i];
		const mp_round_memory_t *m = mp_round_memory(c, r, sm->id);
		int64_t step0 = i ? c->rounds[i - 1].step : -1; /* in force at the round's start */
		mp_solver_point_t q[4];
		size_t k = 0;
		if (!m)
			continue;
		(*band)[(*nband)++] = (mp_chart_band_t){m->first_ns, m->last_ns, m->min, m->max};
		has_resv |= m->reserved_max != 0;
		/* the memory id's first moment starts its line (the axis starts
		 * at an input's first event, as a replay's), from the least of
		 * its round: what it held before, or less */
		if (!n)
			q[k++] = point(m->first_ns, m->min, m->reserved_max, has_resv, step0, cap);
		/* the least and most at the round's start level are the
		 * previous point's: only those reached by the round's moments */
		if (m->min_ns >= m->first_ns && m->min_ns < m->max_ns)
			q[k++] = point(m->min_ns, m->min, m->reserved_max, has_resv, step0, cap);
		if (m->max_ns >= m->first_ns)
			q[k++] = point(m->max_ns, m->max, m->reserved_max, has_resv, m->max_step, cap);
		if (m->min_ns >= m->first_ns && m->min_ns > m->max_ns)
			q[k++] = point(m->min_ns, m->min, m->reserved_max, has_resv, m->max_step, cap);
		q[k++] = point(m->last_ns, m->live, m->reserved, has_resv, r->step, cap);
		for (size_t j = 0; j < k; j++) {
			if (n && q[j].time_ns <= d->timeline[n - 1].time_ns) {
				if (j < k - 1)
					continue; /* (the same moment: the round's last point says it) */
				q[j].time_ns = d->timeline[n - 1].time_ns; /* (a late event: time order kept) */
			}
			if (push(&d->timeline, &n, &ncap, q[j]))
				return -1;
		}
		if (!peak_found && m->max == sm->peak_bytes && m->max_ns == sm->peak_time_ns) {
			peak_found = 1;
			d->peak = point(m->max_ns, m->max, m->reserved_max, has_resv, m->max_step, cap);
		}
		if (m->reserved_max > d->reserved_peak_bytes) {
			d->has_reserved_peak = 1;
			d->reserved_peak_bytes = m->reserved_max;
			d->reserved_peak_time_ns = m->reserved_max_ns;
		}
		if (m->failed && no < 1000) { /* the round's first failed allocation */
			mp_solver_oom_t o;
			memset(&o, 0, sizeof(o));
			o.at = point(m->failed_ns, m->live, m->reserved, has_resv, r->step, cap);
			o.requested_bytes = m->failed_req;
			if (no == ocap) {
				size_t cc = ocap ? 2 * ocap : 16;
				mp_solver_oom_t *x = realloc(d->oom, cc * sizeof(*x));
				if (!x)
					return -1;
				d->oom = x;
				ocap = cc;
			}
			d->oom[no++] = o;
		}
	}
	d->timeline_count = n;
	d->oom_count = no;
	if (!peak_found && d->has_peak && push(&d->timeline, &d->timeline_count, &ncap, d->peak))
		return -1; /* (a peak no round holds: drawn where the summary says) */
	return 0;
}

static void release(rinput_t *in)
{
	for (size_t i = 0; i < in->ndev; i++) {
		free(in->dev[i].timeline);
		free(in->dev[i].oom);
	}
	for (size_t i = 0; in->bands && i < in->ndev; i++)
		free(in->bands[i]);
	free(in->bands);
	free(in->nbands);
	free(in->dev);
	if (in->src)
		mp_source_close(in->src);
	mp_capture_rounds_free(&in->r);
}

/* in's devices and its names' source from its rounds. 0 or an exit code. */
static int build(rinput_t *in, const char *path)
{
	const mp_capture_summary_t *s = &in->r.summary;
	uint32_t nmi = 0;
	int rc = 0;

	in->dev = calloc(s->nmemories ? s->nmemories : 1, sizeof(*in->dev));
	in->bands = calloc(s->nmemories ? s->nmemories : 1, sizeof(*in->bands));
	in->nbands = calloc(s->nmemories ? s->nmemories : 1, sizeof(*in->nbands));
	if (!in->dev || !in->bands || !in->nbands)
		return oom();
	for (size_t i = 0; i < s->nmemories && !rc; i++) {
		const mp_summary_memory_t *sm = &s->memories[i];
		if (sm->id >= 65536) /* (the solver's limit too) */
			continue;
		in->ndev++;
		if (device(&in->r, sm, &in->dev[in->ndev - 1], &in->bands[in->ndev - 1], &in->nbands[in->ndev - 1]))
			rc = oom();
	}
	for (size_t i = 0; i < s->nmemories; i++)
		if (s->memories[i].id + 1 > nmi && s->memories[i].id < 65536)
			nmi = s->memories[i].id + 1;
	{
		mp_memory_info_t *byid = calloc(nmi ? nmi : 1, sizeof(*byid));
		if (!byid)
			return oom();
		for (uint32_t i = 0; i < nmi; i++)
			byid[i] = (mp_memory_info_t){"", 0, 0, NULL};
		for (size_t i = 0; i < s->nmemories; i++)
			if (s->memories[i].id < nmi)
				byid[s->memories[i].id] = (mp_memory_info_t){
					s->memories[i].name,
					s->memories[i].id < in->r.ncapacity ? in->r.capacity[s->memories[i].id] : 0,
					s->memories[i].kind, NULL};
		if (!rc && mp_array_source_new(&in->src, NULL, 0, NULL, 0, byid, nmi, path))
			rc = oom();
		free(byid);
	}
	return rc;
}

int cli_plot_rounds(char *const *files, const char *const *labels, int n, const mp_plot_options_t *o,
		    const char *device, int force, const char *out)
{
	rinput_t *ri = calloc((size_t)(n ? n : 1), sizeof(*ri));
	mp_plot_input_t *in = calloc((size_t)(n ? n : 1), sizeof(*in));
	mp_scene_t *scene = NULL;
	mp_diag_t diag;
	int rc = MP_EXIT_OK, i, err = 0;

	mp_diag_clear(&diag);
	if (!ri || !in) {
		free(ri);
		free(in);
		return oom();
	}
	for (i = 0; i < n && rc == MP_EXIT_OK; i++) {
		if (mp_capture_rounds_read(files[i], &ri[i].r, &diag) < 0) {
			rc = CLI_ROUNDS_NONE; /* not a capture, or damaged: the full path says what */
			break;
		}
		if (!ri[i].r.nrounds || !ri[i].r.summary.available) {
			fprintf(stderr, "memprof: %s: no round figures (a capture written before format 2.5): the timeline "
					"replays every event\n",
				files[i]);
			rc = CLI_ROUNDS_NONE;
			break;
		}
		if (!force && ri[i].r.summary.events < CLI_ROUNDS_MIN_EVENTS) {
			rc = CLI_ROUNDS_NONE; /* a replay takes no longer, and draws every event */
			break;
		}
		for (size_t k = 0; k < ri[i].r.bad && k < MP_ROUNDS_SAID; k++)
			fprintf(stderr, "memprof: %s: %s; ignored\n", files[i], ri[i].r.bad_said[k]);
		if (ri[i].r.bad > MP_ROUNDS_SAID)
			fprintf(stderr, "memprof: %s: %llu more bad rounds ignored\n", files[i],
				(unsigned long long)(ri[i].r.bad - MP_ROUNDS_SAID));
		if ((rc = build(&ri[i], files[i])) != MP_EXIT_OK)
			break;
		in[i].name = labels && labels[i] ? labels[i] : files[i];
		in[i].source = ri[i].src;
		in[i].devices = ri[i].dev;
		in[i].ndevices = ri[i].ndev;
		in[i].bands = (const mp_chart_band_t *const *)ri[i].bands;
		in[i].nbands = ri[i].nbands;
		in[i].spans = mp_keep_is_run(files[i]); /* (its whole-run file's rounds) */
		if (device) { /* a number, or a memory's name */
			const mp_summary_memory_t *sm = mp_capture_summary_find(&ri[i].r.summary, device);
			size_t k;
			char *end;
			unsigned long v = strtoul(device, &end, 10);
			in[i].device_set = 1;
			in[i].device = sm ? sm->id : (*device && !*end && v < 65536 ? (uint32_t)v : UINT32_MAX);
			for (k = 0; k < ri[i].ndev && ri[i].dev[k].id != in[i].device; k++)
				;
			if (k == ri[i].ndev) {
				rc = CLI_ROUNDS_NONE; /* the replay says what the memory ids are */
				break;
			}
		}
	}
	if (rc == MP_EXIT_OK) {
		cli_picture_font_check(out);
		err = mp_plot_capture(&scene, in, (size_t)n, o, mp_render_measure(), &diag);
		if (err == 0)
			err = cli_picture_write(scene, out, &diag);
		if (err < 0) {
			rc = mp_cli_diag(&diag);
			if (err == MP_ENODATA)
				rc = MP_EXIT_FAILURE;
		}
	}
	for (i = 0; i < n; i++)
		release(&ri[i]);
	free(ri);
	free(in);
	mp_scene_free(scene);
	if (rc != CLI_ROUNDS_NONE)
		mp_render_shutdown();
	return rc;
}
