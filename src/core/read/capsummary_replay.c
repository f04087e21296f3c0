/* capsummary_replay.c - a capture's summary (memprof/capsummary.h) from its
 * events, for a capture whose writer kept none: one written before format
 * 2.1, one whose tally ran out of memory, one killed before its first
 * round. The live figures are the live-set engine's (memprof/live.h: the
 * solver's rules, which the writer's tally follows too); a realloc is a
 * free and an allocation, counted apart. */
#include <memprof/capsummary.h>
#include <memprof/live.h>
#include <memprof/reader.h>

#include <stdlib.h>
#include <string.h>

/* One memory id's figures, and its live set twice: by footprint (the
 * figures of memprof report) and by requested size (the same rules). */
typedef struct {
	mp_summary_memory_t m;
	mp_live_t live, req;
	mp_live_peak_t peak, peak_req;
} tally_t;

static int apply(tally_t *t, const mp_event_t *ev)
{
	int rc;

	switch (ev->kind) {
	case MP_EV_DROPPED:
		t->m.dropped += ev->requested_bytes; /* its count */
		return 0;
	case MP_EV_ALLOC_FAILED:
		t->m.failed++;
		return 0;
	case MP_EV_FREE:
		t->m.frees += !(ev->flags & MP_EVENT_F_REALLOC);
		mp_live_free(&t->live, ev->address);
		mp_live_free(&t->req, ev->address);
		break;
	case MP_EV_ALLOC:
		if (ev->flags & MP_EVENT_F_REALLOC)
			t->m.reallocs++;
		else
			t->m.allocations++;
		if ((rc = mp_live_alloc(&t->live, ev->address,
					mp_live_footprint(ev->requested_bytes, ev->allocated_bytes), 0, 0)) < 0 ||
		    (rc = mp_live_alloc(&t->req, ev->address, ev->requested_bytes, 0, 0)) < 0)
			return rc;
		/* the peak is looked for after allocations only (the writer's
		 * tally and the solver look at every event of the id: they
		 * differ only while nothing was ever allocated, see
		 * docs/architecture.md) */
		mp_live_peak_at(&t->peak, t->live.bytes, ev->time_ns, ev->index, 0);
		mp_live_peak_at(&t->peak_req, t->req.bytes, ev->time_ns, ev->index, 0);
		break;
	default:
		return 0;
	}
	t->m.live_blocks = t->live.map.count;
	t->m.live_bytes = t->live.bytes;
	t->m.live_requested = t->req.bytes;
	t->m.has_peak = t->peak.has;
	t->m.peak_bytes = t->peak.bytes;
	t->m.peak_time_ns = t->peak.time_ns;
	t->m.peak_requested = t->peak_req.bytes;
	t->m.peak_requested_time_ns = t->peak_req.time_ns;
	return 0;
}

int mp_capture_summary_replay(const char *path, mp_capture_summary_t *out, mp_diag_t *diag)
{
	mp_capture_t *cap;
	mp_source_t *src;
	tally_t *t = NULL;
	size_t nt = 0, i;
	uint64_t last = 0;
	mp_event_t ev;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = mp_capture_open(&cap, path, diag)) < 0)
		return rc;
	src = mp_capture_source(cap);
	while ((rc = mp_source_next(src, &ev, diag)) == 1) {
		if (ev.kind == MP_EV_MEMORY)
			continue;
		out->events += ev.kind != MP_EV_DROPPED;
		last = ev.time_ns;
		if (ev.memory >= nt) {
			tally_t *g = realloc(t, (ev.memory + 1) * sizeof(*t));
			if (!g) {
				rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
				break;
			}
			memset(g + nt, 0, (ev.memory + 1 - nt) * sizeof(*t));
			t = g;
			nt = ev.memory + 1;
		}
		if ((rc = apply(&t[ev.memory], &ev)) < 0) {
			mp_diag_set(diag, rc, -1, -1, "out of memory");
			break;
		}
	}
	if (rc == 0) {
		const mp_capture_trailer_t *tr = mp_capture_trailer(cap);
		out->version_major = mp_capture_header(cap)->version_major;
		out->version_minor = mp_capture_header(cap)->version_minor;
		out->available = 1;
		out->ended_cleanly = tr && !tr->write_errno;
		out->write_errno = tr ? (int)tr->write_errno : 0;
		out->write_offset = tr ? tr->write_offset : 0;
		out->complete_ns = tr ? tr->complete_ns : 0;
		out->horizon_ns = UINT64_MAX;
		out->end_time_ns = tr ? tr->end_time_ns : last;
		out->stacks = mp_capture_stack_count(cap);
		out->blocks = mp_capture_blocks_read(cap);
		out->nmemories = mp_source_memory_count(src);
		if (out->nmemories && !(out->memories = calloc(out->nmemories, sizeof(*out->memories))))
			rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		for (i = 0; rc == 0 && i < out->nmemories; i++) {
			const mp_memory_info_t *info = mp_source_memory(src, (uint32_t)i);
			out->memories[i] = i < nt ? t[i].m : (mp_summary_memory_t){0};
			out->memories[i].id = (uint32_t)i;
			out->memories[i].kind = info->kind;
			if (!(out->memories[i].name = strdup(info->name)))
				rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		}
	}
	for (i = 0; i < nt; i++) {
		mp_live_destroy(&t[i].live);
		mp_live_destroy(&t[i].req);
	}
	free(t);
	mp_capture_close(cap);
	if (rc < 0) {
		mp_capture_summary_free(out);
		memset(out, 0, sizeof(*out));
	}
	return rc < 0 ? rc : 0;
}
