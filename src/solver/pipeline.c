/* pipeline.c - mp_solver_run: reading the source and solving overlap.
 *
 * A reader thread pulls events from the source into a ring of fixed-size
 * batches; the calling thread feeds them to the solver in order. Results are
 * exactly those of feeding the events one by one (the solver sees the same
 * sequence; only the reading happens elsewhere), and memory is bounded by
 * the ring (PIPE_SLOTS * PIPE_BATCH events, 16 MB). The reader thread
 * is the only one that touches the source until it has finished; memory
 * declarations it reads are passed on inside the MEMORY events themselves.
 * A stream that fits in the first batch, read before any thread starts, or
 * any stream when no thread can start, is read inline.
 *
 * A side that would wait (the solver for events, the reader for room) first
 * offers to help the source instead (mp_source_help: a capture inflates its
 * next blocks). On two cores that keeps both busy: the reading side has
 * more work than the solver, and the solver takes part of it whenever it
 * runs ahead, where a third thread for the inflation would only compete.
 */
#include "solver_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The ring holds 128 K events (16 MB; its pages are touched only as far as
 * a stream reaches). It must hold more than either side does in the time
 * the other spends helping with one block (about 2 ms for 85 K events of
 * 450 KB blocks): with 8 K events, the side left alone ran dry or full long
 * before the other came back, and the report took 5.5 s where it now takes
 * 4 s (100 M events, 2 cores). */
#define PIPE_BATCH 1024
#define PIPE_SLOTS 128

typedef struct pipe_batch {
	size_t n;
	int memory; /* holds a MEMORY event */
	mp_event_t ev[PIPE_BATCH];
} pipe_batch_t;

typedef struct pipe {
	pthread_mutex_t mu;
	pthread_cond_t has_data, has_room;
	uint64_t head, tail; /* batches consumed, produced */
	int stop;            /* the solver failed: the reader must stop */
	int done;            /* the reader has published its last batch */
	int cwait, pwait;    /* a side sleeps on its condition */
	int rc;              /* the source's final result (0 or an error) */
	mp_diag_t diag;
	mp_source_t *src;
	pipe_batch_t *slot;  /* PIPE_SLOTS batches */
} pipe_t;

/* Read up to PIPE_BATCH events into b; returns the source's last result
 * (1: the batch is full and more may follow). */
static int fill(mp_source_t *src, pipe_batch_t *b, mp_diag_t *diag)
{
	size_t got = 0;
	int rc;

	b->n = 0;
	b->memory = 0;
	do {
		rc = mp_source_next_batch(src, b->ev + b->n, PIPE_BATCH - b->n, &got, diag);
		for (size_t i = b->n; i < b->n + got; i++) {
			mp_event_t *e = &b->ev[i];
			if (e->kind == MP_EV_MEMORY) {
				/* The capacity as declared (a memory id never changes
				 * meaning); the solver ignores MEMORY events' other
				 * fields. */
				const mp_memory_info_t *m = mp_source_memory(src, e->memory);
				e->requested_bytes = m ? m->capacity_bytes : 0;
				b->memory = 1;
			}
		}
		b->n += got;
	} while (rc > 0 && b->n < PIPE_BATCH);
	return rc;
}

/* Feed one batch; memory declarations apply from their MEMORY event on
 * (the events before it are fed first). */
static int feed_batch(mp_solver_t *s, const pipe_batch_t *b, mp_diag_t *diag)
{
	size_t from = 0;
	int rc;

	for (size_t i = 0; b->memory && i < b->n; i++) {
		const mp_event_t *e = &b->ev[i];
		if (e->kind != MP_EV_MEMORY || e->memory >= MP_SOLVER_MAX_MEMORY)
			continue;
		if ((rc = mp_solver_feed_many(s, b->ev + from, i - from, diag)) < 0)
			return rc;
		from = i;
		if ((rc = mp_solver_declare_memory(s, e->memory, e->requested_bytes)) < 0)
			return mp_diag_set(diag, rc, -1, (int64_t)e->index, "%s", mp_strerror(rc));
	}
	return mp_solver_feed_many(s, b->ev + from, b->n - from, diag);
}

/* Called with p->mu held by a side about to wait: help the source with the
 * lock dropped. Returns 1 when it did, 0 when there was nothing to do. Either
 * way the other side may have moved meanwhile: the caller looks at the ring
 * again before it sleeps (a side that slept on a full or empty ring the
 * other had just emptied or filled would never be woken). */
static int try_help(pipe_t *p)
{
	int did;

	pthread_mutex_unlock(&p->mu);
	did = mp_source_help(p->src);
	pthread_mutex_lock(&p->mu);
	return did;
}

static void *reader(void *arg)
{
	pipe_t *p = arg;
	mp_diag_t diag;
	int rc = 1;

	mp_diag_clear(&diag);
	while (rc > 0) {
		pipe_batch_t *b;
		int stop, help;

		pthread_mutex_lock(&p->mu);
		for (help = 1; p->tail - p->head == PIPE_SLOTS && !p->stop;) { /* woken at half (consume) */
			if (help) {
				help = try_help(p);
				continue; /* the lock was dropped: look again */
			}
			p->pwait = 1;
			pthread_cond_wait(&p->has_room, &p->mu);
			help = 1;
		}
		p->pwait = 0;
		stop = p->stop;
		pthread_mutex_unlock(&p->mu);
		if (stop)
			break;
		b = &p->slot[p->tail % PIPE_SLOTS]; /* the solver does not look at it yet */
		rc = fill(p->src, b, &diag);
		pthread_mutex_lock(&p->mu);
		p->tail++;
		if (rc <= 0) {
			p->done = 1;
			p->rc = rc;
			p->diag = diag;
		}
		/* The solver, when ahead, sleeps until half the ring is full
		 * (or the stream ended): few wake-ups either way. */
		if (p->cwait && (p->tail - p->head >= PIPE_SLOTS / 2 || p->done))
			pthread_cond_signal(&p->has_data);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

/* Without the reader thread: slot 0 holds a batch read with result rc. */
static int run_inline(mp_solver_t *s, pipe_t *p, int rc, mp_diag_t *diag)
{
	for (;;) {
		int r2 = feed_batch(s, &p->slot[0], diag);
		if (r2 < 0)
			return r2;
		if (rc <= 0)
			return rc;
		rc = fill(p->src, &p->slot[0], diag);
	}
}

/* Consume every batch; returns the solver's error, or 0 once the reader has
 * published its last batch (its own result is in p->rc). */
static int consume(mp_solver_t *s, pipe_t *p, mp_diag_t *diag)
{
	for (;;) {
		int rc, last, help;

		pthread_mutex_lock(&p->mu);
		for (help = 1; p->head == p->tail;) {
			if (help) {
				help = try_help(p);
				continue; /* the lock was dropped: look again */
			}
			p->cwait = 1;
			pthread_cond_wait(&p->has_data, &p->mu);
			help = 1;
		}
		p->cwait = 0;
		pthread_mutex_unlock(&p->mu);
		rc = feed_batch(s, &p->slot[p->head % PIPE_SLOTS], diag);
		pthread_mutex_lock(&p->mu);
		p->head++;
		last = p->done && p->head == p->tail;
		if (rc < 0)
			p->stop = 1;
		/* The reader, when ahead, sleeps until half the ring is free:
		 * one wake-up per few batches, not one per batch. */
		if ((p->pwait && p->tail - p->head <= PIPE_SLOTS / 2) || rc < 0)
			pthread_cond_signal(&p->has_room);
		pthread_mutex_unlock(&p->mu);
		if (rc < 0)
			return rc;
		if (last)
			return 0;
	}
}

static int declare_all(mp_solver_t *s, mp_source_t *src)
{
	uint32_t n = mp_source_memory_count(src);

	for (uint32_t i = 0; i < n && i < MP_SOLVER_MAX_MEMORY; i++) {
		const mp_memory_info_t *m = mp_source_memory(src, i);
		int rc = mp_solver_declare_memory(s, i, m ? m->capacity_bytes : 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int run(mp_solver_t *s, mp_source_t *src, int thread, mp_diag_t *diag)
{
	pipe_t *p;
	pthread_t th;
	int rc;

	if ((rc = declare_all(s, src)) < 0)
		return mp_diag_set(diag, rc, -1, -1, "%s", mp_strerror(rc));
	p = calloc(1, sizeof(*p));
	if (!p || !(p->slot = malloc(PIPE_SLOTS * sizeof(*p->slot)))) {
		free(p);
		return mp_diag_set(diag, MP_ENOMEM, -1, -1, "%s", mp_strerror(MP_ENOMEM));
	}
	p->src = src;
	/* The first batch is read here: a stream that fits in it (tests,
	 * small imports) needs no thread. */
	rc = fill(src, &p->slot[0], diag);
	p->tail = 1;
	if (rc > 0 && thread && pthread_mutex_init(&p->mu, NULL) == 0) {
		if (pthread_cond_init(&p->has_data, NULL) == 0) {
			if (pthread_cond_init(&p->has_room, NULL) == 0) {
				if (pthread_create(&th, NULL, reader, p) == 0) {
					rc = consume(s, p, diag);
					pthread_join(th, NULL);
					if (rc == 0 && p->rc < 0) {
						*diag = p->diag;
						rc = p->rc;
					}
					p->src = NULL;
				}
				pthread_cond_destroy(&p->has_room);
			}
			pthread_cond_destroy(&p->has_data);
		}
		pthread_mutex_destroy(&p->mu);
	}
	if (p->src) /* no thread */
		rc = run_inline(s, p, rc, diag);
	free(p->slot);
	free(p);
	if (rc < 0)
		return rc;
	s->end_status = mp_source_end_status(src);
	if ((rc = mp_solver_finish(s)) < 0)
		return mp_diag_set(diag, rc, -1, -1, "%s", mp_strerror(rc));
	return 0;
}

int mp_solver_run(mp_solver_t *s, mp_source_t *src, mp_diag_t *diag)
{
	return run(s, src, 1, diag);
}

int mp_solver_run_inline(mp_solver_t *s, mp_source_t *src, mp_diag_t *diag)
{
	return run(s, src, 0, diag);
}
