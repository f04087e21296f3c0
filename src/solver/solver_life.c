/* solver_life.c - a solver before and after its pass over the events
 * (solver.c): options, creation, reading the results, memory accounting,
 * freeing. */
#include "solver_impl.h"

#include <stdlib.h>
#include <string.h>

void mp_solver_options_init(mp_solver_options_t *o)
{
	memset(o, 0, sizeof(*o));
	o->timeline_points = 1000;
	o->top = 10;
	o->max_oom_records = 1000;
	o->breakdown = 1;
	o->timeline = 1;
}

mp_solver_t *mp_solver_new(const mp_solver_options_t *opts)
{
	mp_solver_t *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (opts)
		s->opt = *opts;
	else
		mp_solver_options_init(&s->opt);
	if (!s->opt.timeline_points)
		s->opt.timeline_points = 1000;
	if (!s->opt.top)
		s->opt.top = 10;
	if (!s->opt.max_oom_records)
		s->opt.max_oom_records = 1000;
	s->pass = 1;
	return s;
}

static void dev_free(sv_dev_t *d)
{
	if (!d)
		return;
	lm_destroy(&d->live);
	grp_destroy(&d->groups);
	fx_destroy(&d->fx);
	free(d->rbase);
	free(d->rend);
	free(d->tl);
	free(d->tl_inuse);
	free(d->dirty);
	free(d->lg);
	free(d->pub.breakdown);
	free(d->pub.leaks);
	for (size_t i = 0; i < d->pub.oom_count; i++)
		free(d->pub.oom[i].top);
	free(d->pub.oom);
	free(d);
}

void mp_solver_free(mp_solver_t *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->ndev; i++)
		dev_free(s->dev[i]);
	free(s->dev);
	free(s->list);
	free(s);
}

size_t mp_solver_device_count(const mp_solver_t *s)
{
	return s->nlist;
}

const mp_solver_device_t *mp_solver_device(const mp_solver_t *s, size_t i)
{
	return i < s->nlist ? s->list[i] : NULL;
}

const mp_solver_device_t *mp_solver_find(const mp_solver_t *s, uint32_t id)
{
	return id < s->ndev && s->dev[id] && s->list ? &s->dev[id]->pub : NULL;
}

uint64_t mp_solver_event_count(const mp_solver_t *s)
{
	return s->events;
}

uint64_t mp_solver_phase_marks(const mp_solver_t *s)
{
	return s->phase_marks;
}

uint64_t mp_solver_dropped_unattributed(const mp_solver_t *s)
{
	return s->dropped_unattributed;
}

size_t mp_solver_memory_bytes(const mp_solver_t *s)
{
	size_t b = sizeof(*s) + s->ndev * sizeof(*s->dev);

	for (uint32_t i = 0; i < s->ndev; i++) {
		const sv_dev_t *d = s->dev[i];
		if (!d)
			continue;
		b += sizeof(*d) + d->live.cap * sizeof(lm_entry_t) + d->groups.gcap * sizeof(grp_t) +
		     d->groups.scap * sizeof(uint32_t) + fx_memory_bytes(&d->fx) + (d->rcap + d->rcap_end) * 8 +
		     (d->pub.breakdown_count + d->pub.leak_count) * sizeof(mp_solver_row_t);
		b += d->tl_n * (sizeof(mp_solver_point_t) + 8) + sv_log_bytes(d);
	}
	return b;
}
