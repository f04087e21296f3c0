/* phases.c - the phases of an input for its timelines: MARK events with
 * MP_EVENT_F_PHASE_BEGIN/END, which the solver does not keep (it names
 * only the innermost phase open at a peak), read in one more pass over
 * the source and paired as the solver pairs them. */
#include "charts_impl.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PHASES 100000 /* spans kept per input (a lane draws at most a span a pixel) */
#define MAX_OPEN 64       /* nesting kept, as the solver keeps it (deeper ones are counted) */

typedef struct phase_run {
	mp_chart_phase_t *v;
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
				if (r->n == r->cap) {
					size_t nc = r->cap ? r->cap * 2 : 64;
					mp_chart_phase_t *nv = realloc(r->v, nc * sizeof(*nv));
					if (!nv)
						return MP_ENOMEM;
					r->v = nv;
					r->cap = nc;
				}
				at = r->n++;
				r->v[at] = (mp_chart_phase_t){mp_source_string(src, ev->label), ev->time_ns, UINT64_MAX,
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

int cx_collect_phases(mp_source_t *src, const char *name, mp_chart_phase_t **out, size_t *nout, mp_diag_t *diag)
{
	enum { BATCH = 1024 };
	mp_event_t *ev = malloc(BATCH * sizeof(*ev));
	phase_run_t r;
	uint64_t last = 0;
	int rc;

	memset(&r, 0, sizeof(r));
	*out = NULL;
	*nout = 0;
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
		}
		if (more <= 0) {
			if (more < 0)
				rc = more;
			break;
		}
	}
	free(ev);
	if (rc < 0) {
		free(r.v);
		if (diag && !diag->file[0])
			mp_diag_set_file(diag, name);
		return rc;
	}
	for (size_t i = 0; i < r.n; i++)
		if (r.v[i].t1_ns == UINT64_MAX)
			r.v[i].t1_ns = last > r.v[i].t0_ns ? last : r.v[i].t0_ns;
	*out = r.v;
	*nout = r.n;
	return 0;
}
