/* replay.c - what a capture's charts show that the solver does not keep
 * (memprof/replay.h): the phases and the step marks of an input for its
 * timelines, MARK events with MP_EVENT_F_PHASE_BEGIN/END paired as the
 * solver pairs them and the STEP events (the solver keeps only each
 * event's step); and owned copies of the memory maps' snapshots. Here, on
 * the analysis side, so that the layout never reads an input. */
#include <memprof/replay.h>

#include <memprof/vec.h>

#include <stdlib.h>
#include <string.h>

#define MAX_PHASES 100000 /* spans kept per input (a lane draws at most a span a pixel) */
#define MAX_OPEN 64       /* nesting kept, as the solver keeps it (deeper ones are counted) */

typedef struct phase_run {
	mp_replay_phase_t *v;
	size_t n, cap;
	size_t open[MAX_OPEN]; /* the open phases, outermost first: their span, or SIZE_MAX when not kept */
	uint32_t label[MAX_OPEN];
	uint32_t nopen;        /* open phases; those past MAX_OPEN are counted, not kept */
} phase_run_t;

/* A phase begins or ends, paired as the solver pairs them: an end closes
 * the innermost open phase of its label and those opened inside it; an
 * end of a phase not open is ignored. */
static int phase_event(phase_run_t *r, const mp_source_t *src, const mp_event_t *ev)
{
	if (ev->flags & MP_EVENT_F_PHASE_BEGIN) {
		if (r->nopen < MAX_OPEN) {
			size_t at = SIZE_MAX;
			if (r->n < MAX_PHASES) {
				if (MP_VEC_RESERVE(r->v, r->cap, r->n + 1) < 0)
					return MP_ENOMEM;
				at = r->n++;
				r->v[at] = (mp_replay_phase_t){mp_source_string(src, ev->label), ev->time_ns, UINT64_MAX,
							      r->nopen};
			}
			r->open[r->nopen] = at;
			r->label[r->nopen] = ev->label;
		}
		r->nopen++;
		return 0;
	}
	if (r->nopen > MAX_OPEN) { /* inside phases too deep to name */
		r->nopen--;
		return 0;
	}
	for (uint32_t i = r->nopen; i-- > 0;) {
		if (r->label[i] != ev->label)
			continue;
		for (uint32_t k = i; k < r->nopen; k++)
			if (r->open[k] != SIZE_MAX)
				r->v[r->open[k]].t1_ns = ev->time_ns;
		r->nopen = i;
		break;
	}
	return 0;
}

/* The step marks: every MP_EV_STEP event but one that marks the step
 * already current again (another thread, the same step). An input without
 * any (xplane: each event carries its step, per allocator, so that the
 * allocators' events interleave steps 0 and 1) gets one at the first event
 * of each step id, of any memory id, in time order. Kept up to MAX_STEPS. */
#define MAX_STEPS 1000000

typedef struct step_run {
	mp_replay_step_t *v;
	size_t n, cap;
	int marked;         /* an MP_EV_STEP was seen: the events' steps are not used */
	int64_t derived;    /* the step of the events so far (-1: none) */
	mp_replay_step_t *d; /* the marks derived from the events' steps */
	size_t nd, capd;
} step_run_t;

static int step_push(mp_replay_step_t **v, size_t *n, size_t *cap, uint64_t time_ns, int64_t step)
{
	if (*n && (*v)[*n - 1].step == step)
		return 0;
	if (*n >= MAX_STEPS)
		return 0;
	if (MP_VEC_RESERVE(*v, *cap, *n + 1) < 0)
		return MP_ENOMEM;
	(*v)[(*n)++] = (mp_replay_step_t){time_ns, step};
	return 0;
}

static int step_event(step_run_t *r, const mp_event_t *ev)
{
	if (ev->kind == MP_EV_STEP) {
		r->marked = 1;
		return ev->step >= 0 ? step_push(&r->v, &r->n, &r->cap, ev->time_ns, ev->step) : 0;
	}
	if (r->marked || ev->step < 0 || ev->step == r->derived || ev->kind == MP_EV_MEMORY ||
	    ev->kind == MP_EV_MARK || ev->kind == MP_EV_DROPPED)
		return 0;
	r->derived = ev->step;
	return step_push(&r->d, &r->nd, &r->capd, ev->time_ns, ev->step);
}

static int by_step(const void *a, const void *b)
{
	const mp_replay_step_t *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

static int by_time(const void *a, const void *b)
{
	const mp_replay_step_t *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

/* The first event of each step id, in time order. */
static size_t first_of_each(mp_replay_step_t *v, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), by_step);
	for (size_t i = 0; i < n; i++)
		if (!k || v[k - 1].step != v[i].step)
			v[k++] = v[i];
	qsort(v, k, sizeof(*v), by_time);
	return k;
}

/* Rewind src and read its phases and step marks. */
static int read_marks(mp_source_t *src, const char *name, mp_replay_phase_t **out, size_t *nout, mp_replay_step_t **steps,
		      size_t *nsteps, mp_diag_t *diag)
{
	step_run_t sr = {NULL, 0, 0, 0, -1, NULL, 0, 0};

	enum { BATCH = 1024 };
	mp_event_t *ev = malloc(BATCH * sizeof(*ev));
	phase_run_t r;
	uint64_t last = 0;
	int rc;

	memset(&r, 0, sizeof(r));
	*out = NULL;
	*nout = 0;
	*steps = NULL;
	*nsteps = 0;
	if (!ev)
		return MP_ENOMEM;
	rc = mp_source_rewind(src, diag);
	while (rc >= 0) {
		size_t n = 0;
		int more = mp_source_next_batch(src, ev, BATCH, &n, diag);
		for (size_t i = 0; i < n && rc >= 0; i++) {
			if (ev[i].time_ns > last)
				last = ev[i].time_ns;
			if (ev[i].kind == MP_EV_MARK && (ev[i].flags & (MP_EVENT_F_PHASE_BEGIN | MP_EVENT_F_PHASE_END)))
				rc = phase_event(&r, src, &ev[i]);
			else
				rc = step_event(&sr, &ev[i]);
		}
		if (more <= 0) {
			if (more < 0)
				rc = more;
			break;
		}
	}
	free(ev);
	if (sr.marked) {
		free(sr.d);
	} else {
		free(sr.v);
		sr.v = sr.d;
		sr.n = first_of_each(sr.d, sr.nd);
	}
	if (rc < 0) {
		free(r.v);
		free(sr.v);
		if (diag && !diag->file[0])
			mp_diag_set_file(diag, name);
		return rc;
	}
	for (size_t i = 0; i < r.n; i++)
		if (r.v[i].t1_ns == UINT64_MAX)
			r.v[i].t1_ns = last > r.v[i].t0_ns ? last : r.v[i].t0_ns;
	*out = r.v;
	*nout = r.n;
	*steps = sr.v;
	*nsteps = sr.n;
	return 0;
}

/* Each snapshot as it comes, copied: the callback's is borrowed. */
static int keep_snapshot(void *ctx, size_t target, const mp_snapshot_t *snap)
{
	mp_snapshot_t *d = &((mp_snapshot_t *)ctx)[target];
	mp_snapshot_region_t *r = malloc((snap->nregions ? snap->nregions : 1) * sizeof(*r));
	mp_snapshot_block_t *b = malloc((snap->nblocks ? snap->nblocks : 1) * sizeof(*b));

	if (!r || !b) {
		free(r);
		free(b);
		return MP_ENOMEM;
	}
	if (snap->nregions)
		memcpy(r, snap->regions, snap->nregions * sizeof(*r));
	if (snap->nblocks)
		memcpy(b, snap->blocks, snap->nblocks * sizeof(*b));
	*d = *snap;
	d->regions = r;
	d->blocks = b;
	return 0;
}

int mp_replay_read(mp_source_t *src, const char *name, const mp_snapshot_target_t *targets, size_t nt, int marks,
		   mp_replay_t *out, mp_diag_t *diag)
{
	return mp_replay_read_from(src, NULL, name, targets, nt, marks, out, diag);
}

int mp_replay_read_from(mp_source_t *src, const struct mp_checkpoint *from, const char *name,
			const mp_snapshot_target_t *targets, size_t nt, int marks, mp_replay_t *out, mp_diag_t *diag)
{
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (nt) {
		if (!(out->maps = calloc(nt, sizeof(*out->maps))))
			return MP_ENOMEM;
		out->nmaps = nt;
		rc = mp_snapshot_run_from(src, from, targets, nt, keep_snapshot, out->maps, diag);
		if (rc < 0 && diag && !diag->file[0])
			mp_diag_set_file(diag, name);
	}
	if (rc == 0 && marks)
		rc = read_marks(src, name, &out->phases, &out->nphases, &out->steps, &out->nsteps, diag);
	if (rc < 0)
		mp_replay_free(out);
	return rc < 0 ? rc : 0;
}

void mp_replay_free(mp_replay_t *r)
{
	for (size_t i = 0; i < r->nmaps; i++) { /* the copies keep_snapshot made: const to their readers */
		free((void *)(uintptr_t)r->maps[i].regions);
		free((void *)(uintptr_t)r->maps[i].blocks);
	}
	free(r->maps);
	free(r->phases);
	free(r->steps);
	memset(r, 0, sizeof(*r));
}
