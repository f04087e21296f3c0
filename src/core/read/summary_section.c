/* summary_section.c - the SUMMARY section (format 2.1) parsed: by the
 * reader, which checks it in every block, and by mp_capture_summary_read,
 * which keeps the last one (capsummary.c). */
#include <memprof/capsummary.h>
#include <memprof/event.h>
#include <memprof/format.h>
#include <memprof/format/varint.h>

#include "summary_section.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void mp__summary_clear_figures(mp_capture_summary_t *s)
{
	size_t i;

	for (i = 0; i < s->nmemories; i++)
		free(s->memories[i].name);
	free(s->memories);
	s->memories = NULL;
	s->nmemories = 0;
	s->available = 0;
	s->horizon_ns = s->events = s->stacks = 0;
}

/* One memory id's entry into m (NULL: only checked). */
static int parse_memory(const uint8_t **pp, const uint8_t *end, uint64_t *prev_id, mp_summary_memory_t *m)
{
	uint64_t id = 0, kind, flags, len, k, v[MP_SUMF_COUNT] = {0}, x, i;

	if (mp_varint_get(pp, end, &id) || mp_varint_get(pp, end, &kind) || mp_varint_get(pp, end, &flags) ||
	    mp_varint_get(pp, end, &len))
		return -1;
	/* ids ascending (the first may be 0); kinds the format knows */
	if (id > UINT32_MAX || (*prev_id != UINT64_MAX && id <= *prev_id) || kind > MP_MEMORY_KIND_MAX ||
	    len > MP_SUMMARY_NAME_MAX || len > (uint64_t)(end - *pp))
		return -1;
	if (m) {
		if (!(m->name = malloc(len + 1)))
			return -ENOMEM;
		memcpy(m->name, *pp, len);
		m->name[len] = '\0';
	}
	*pp += len;
	*prev_id = id;
	if (mp_varint_get(pp, end, &k) || k > (uint64_t)(end - *pp))
		return -1;
	for (i = 0; i < k; i++) {
		if (mp_varint_get(pp, end, &x))
			return -1;
		if (i < MP_SUMF_COUNT)
			v[i] = x; /* later fields: skipped */
	}
	if (m) {
		m->id = (uint32_t)id;
		m->kind = (int)kind;
		m->has_peak = (flags & MP_SUMMARY_MEM_F_PEAK) != 0;
		m->allocations = v[MP_SUMF_ALLOCS];
		m->frees = v[MP_SUMF_FREES];
		m->reallocs = v[MP_SUMF_REALLOCS];
		m->failed = v[MP_SUMF_FAILED];
		m->dropped = v[MP_SUMF_DROPPED];
		m->peak_bytes = v[MP_SUMF_PEAK];
		m->peak_time_ns = v[MP_SUMF_PEAK_NS];
		m->peak_requested = v[MP_SUMF_PEAK_REQ];
		m->peak_requested_time_ns = v[MP_SUMF_PEAK_REQ_NS];
		m->live_blocks = v[MP_SUMF_LIVE_BLOCKS];
		m->live_bytes = v[MP_SUMF_LIVE];
		m->live_requested = v[MP_SUMF_LIVE_REQ];
		m->has_seek_figures = k > MP_SUMF_REGION_FLAGS;
		m->region_events = v[MP_SUMF_REGION_EVENTS];
		m->unknown_frees = v[MP_SUMF_UNKNOWN_FREES];
		m->rejected_regions = v[MP_SUMF_REJECTED];
		m->regions_seen = (v[MP_SUMF_REGION_FLAGS] & MP_SUMF_REGION_F_SEEN) != 0;
		m->has_reserved_peak = (v[MP_SUMF_REGION_FLAGS] & MP_SUMF_REGION_F_RESERVED_PEAK) != 0;
		m->reserved_peak_bytes = v[MP_SUMF_RESERVED_PEAK];
		m->reserved_peak_ns = v[MP_SUMF_RESERVED_PEAK_NS];
	}
	return 0;
}

int mp__summary_section_parse(const uint8_t **pp, const uint8_t *end, mp_capture_summary_t *out)
{
	const uint8_t *p = *pp, *bend;
	uint64_t blen, flags, horizon, events, stacks, n, i, prev = UINT64_MAX;
	mp_summary_memory_t *mems = NULL;
	int rc = -1;

	if (mp_varint_get(&p, end, &blen) || blen > (uint64_t)(end - p))
		return -1;
	bend = p + blen;
	if (mp_varint_get(&p, bend, &flags) || mp_varint_get(&p, bend, &horizon) || mp_varint_get(&p, bend, &events) ||
	    mp_varint_get(&p, bend, &stacks) || mp_varint_get(&p, bend, &n))
		return -1;
	/* an entry is at least 6 bytes: a count past that is damage, not a
	 * reason to allocate */
	if (n > MP_SUMMARY_MEMORIES_MAX || n > (uint64_t)(bend - p) / 6)
		return -1;
	if ((flags & MP_SUMMARY_F_UNAVAILABLE) && n)
		return -1;
	if (out && n && !(mems = calloc((size_t)n, sizeof(*mems))))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if ((rc = parse_memory(&p, bend, &prev, mems ? &mems[i] : NULL)))
			goto fail;
	/* later versions may append fields to the body: skipped */
	if (out) {
		mp__summary_clear_figures(out);
		out->available = !(flags & MP_SUMMARY_F_UNAVAILABLE);
		out->horizon_ns = horizon;
		out->events = events;
		out->stacks = stacks;
		out->nmemories = (size_t)n;
		out->memories = mems;
	}
	*pp = bend;
	return 0;
fail:
	if (mems) {
		for (i = 0; i < n; i++)
			free(mems[i].name);
		free(mems);
	}
	return rc;
}
