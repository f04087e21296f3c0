/* tally_rounds.c - the ROUND section (format 2.5, docs/format.md "Round"):
 * per flush round, what the timeline chart draws at a round's resolution,
 * so that `memprof plot --chart timeline` of a capture hours long reads
 * a few bytes a round instead of replaying every event (issue 43).
 *
 * The figures are kept by the tally as it takes each event (tally.h:
 * mp__tally_sample keeps the round's least and most live bytes and its
 * first and last moments, in the registers of its loops; tally_regions.c the live
 * regions' bytes; mp__tally_apply the failed allocations), so that this
 * file only writes them out once a round and starts them again. Runs on
 * the flusher after the round's SUMMARY, never on the event path, and
 * calls no malloc (the tally's body buffer is reused).
 *
 * (3.0) A kept run's whole-run file (wkeep.c) must stay small for days of
 * recording, so it gets a ROUND only every few rounds, of the span of
 * rounds since its last one: the rounds' figures folded together here
 * (least and most over the span with their first times, failures summed),
 * exact at the span's resolution.
 */
#include "tally.h"

#include <memprof/format/varint.h>

#include <string.h>

static int put(mp_mbuf_t *b, uint64_t v)
{
	uint8_t tmp[MP_VARINT_MAX];

	return mp_mbuf_append(b, tmp, (size_t)(mp_varint_put(tmp, v) - tmp));
}

/* (only the ids met: the others' pages stay untouched, unmapped) */
static void start(mp_tally_t *t, uint32_t from, uint32_t to)
{
	uint32_t i;

	for (i = from; t->mem && i < to; i++) {
		mp_tally_mem_t *m = &t->mem[i];
		m->r_min = m->r_max = m->v[MP_SUMF_LIVE];
		m->r_min_ns = m->r_max_ns = t->round_start;
		m->r_max_step = t->step;
		m->r_last_ns = UINT64_MAX;
		m->rsv_max = m->reserved;
		m->rsv_max_ns = t->round_start;
		m->r_failed = m->r_failed_ns = m->r_failed_req = 0;
	}
}

void mp__tally_round_reset(mp_tally_t *t)
{
	start(t, 0, t->nmem);
}

void mp__tally_round_ids(mp_tally_t *t, uint32_t n)
{
	start(t, t->nmem, n);
	t->nmem = n;
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* The ROUND figures of m: the round's, or (span) the span's. */
static void figures(const mp_tally_mem_t *m, int span, uint64_t v[MP_ROUNDF_COUNT])
{
	const mp_tally_span_t *s = &m->span;

	v[MP_ROUNDF_LIVE] = m->v[MP_SUMF_LIVE];
	v[MP_ROUNDF_RESERVED] = m->reserved;
	if (span) {
		v[MP_ROUNDF_MIN] = s->min;
		v[MP_ROUNDF_MIN_NS] = s->min_ns;
		v[MP_ROUNDF_MAX] = s->max;
		v[MP_ROUNDF_MAX_NS] = s->max_ns;
		v[MP_ROUNDF_MAX_STEP] = zigzag(s->max_step);
		v[MP_ROUNDF_FIRST_NS] = s->first_ns;
		v[MP_ROUNDF_LAST_NS] = s->last_ns;
		v[MP_ROUNDF_RESERVED_MAX] = s->rsv_max;
		v[MP_ROUNDF_RESERVED_MAX_NS] = s->rsv_max_ns;
		v[MP_ROUNDF_FAILED] = s->failed;
		v[MP_ROUNDF_FAILED_NS] = s->failed_ns;
		v[MP_ROUNDF_FAILED_REQ] = s->failed_req;
		return;
	}
	v[MP_ROUNDF_MIN] = m->r_min;
	v[MP_ROUNDF_MIN_NS] = m->r_min_ns;
	v[MP_ROUNDF_MAX] = m->r_max;
	v[MP_ROUNDF_MAX_NS] = m->r_max_ns;
	v[MP_ROUNDF_MAX_STEP] = zigzag(m->r_max_step);
	v[MP_ROUNDF_FIRST_NS] = m->r_first_ns;
	v[MP_ROUNDF_LAST_NS] = m->r_last_ns;
	v[MP_ROUNDF_RESERVED_MAX] = m->rsv_max;
	v[MP_ROUNDF_RESERVED_MAX_NS] = m->rsv_max_ns;
	v[MP_ROUNDF_FAILED] = m->r_failed;
	v[MP_ROUNDF_FAILED_NS] = m->r_failed_ns;
	v[MP_ROUNDF_FAILED_REQ] = m->r_failed_req;
}

static int had_moment(const mp_tally_mem_t *m, int span)
{
	return span ? m->span.moment : m->r_last_ns != UINT64_MAX;
}

/* A ROUND section from start to horizon, of the round's figures or the
 * span's, appended to b. */
static int put_section(mp_tally_t *t, mp_mbuf_t *b, uint64_t horizon, uint64_t start, int span)
{
	mp_mbuf_t *body = &t->body;
	uint32_t i, n = 0;
	uint8_t tag = MP_SEC_ROUND;
	int rc;

	for (i = 0; i < t->nmem; i++)
		n += had_moment(&t->mem[i], span);
	body->len = 0;
	if ((rc = put(body, t->step_back[span] ? MP_ROUND_F_STEP_BACK : 0)) || (rc = put(body, horizon)) ||
	    (rc = put(body, start)) ||
	    (rc = put(body, zigzag(t->step))) || (rc = put(body, t->events)) || (rc = put(body, n)))
		return rc;
	for (i = 0; i < t->nmem; i++) {
		uint64_t v[MP_ROUNDF_COUNT];
		int k;
		if (!had_moment(&t->mem[i], span))
			continue;
		figures(&t->mem[i], span, v);
		if ((rc = put(body, i)) || (rc = put(body, MP_ROUNDF_COUNT)))
			return rc;
		for (k = 0; k < MP_ROUNDF_COUNT; k++)
			if ((rc = put(body, v[k])))
				return rc;
	}
	if ((rc = mp_mbuf_append(b, &tag, 1)) || (rc = put(b, body->len)) ||
	    (rc = mp_mbuf_append(b, body->data, body->len)))
		return rc;
	t->step_back[span] = 0;
	return 0;
}

/* (3.0) The round just ended folded into every memory id's span. A round
 * without a moment of an id still counts: its least and most are the live
 * bytes held from its start, so a span that begins with such rounds says
 * the value's first time as the span's start, which is exact. */
static void fold(mp_tally_t *t)
{
	for (uint32_t i = 0; i < t->nmem; i++) {
		const mp_tally_mem_t *m = &t->mem[i];
		mp_tally_span_t *s = &t->mem[i].span;
		int moment = m->r_last_ns != UINT64_MAX;
		if (!s->rounds) {
			s->min = m->r_min;
			s->min_ns = m->r_min_ns;
			s->max = m->r_max;
			s->max_ns = m->r_max_ns;
			s->max_step = m->r_max_step;
			s->rsv_max = m->rsv_max;
			s->rsv_max_ns = m->rsv_max_ns;
			s->failed = s->failed_ns = s->failed_req = 0;
			s->moment = 0;
		} else {
			if (m->r_min < s->min)
				s->min = m->r_min, s->min_ns = m->r_min_ns;
			if (m->r_max > s->max)
				s->max = m->r_max, s->max_ns = m->r_max_ns, s->max_step = m->r_max_step;
			if (m->rsv_max > s->rsv_max)
				s->rsv_max = m->rsv_max, s->rsv_max_ns = m->rsv_max_ns;
		}
		if (moment) {
			if (!s->moment)
				s->first_ns = m->r_first_ns;
			s->last_ns = m->r_last_ns;
			s->moment = 1;
		}
		if (m->r_failed) {
			if (!s->failed)
				s->failed_ns = m->r_failed_ns, s->failed_req = m->r_failed_req;
			s->failed += m->r_failed;
		}
		s->rounds++;
	}
}

int mp__tally_put_round(mp_tally_t *t, mp_mbuf_t *b, uint64_t horizon)
{
	int rc;

	if (t->failed || !t->mem)
		return 0;
	if ((rc = put_section(t, b, horizon, t->round_start, 0)))
		return rc;
	if (t->span_on)
		fold(t);
	t->round_start = horizon;
	mp__tally_round_reset(t);
	return 0;
}

int mp__tally_put_span(mp_tally_t *t, mp_mbuf_t *b, uint64_t horizon)
{
	int rc;

	if (!t->span_on || t->failed || !t->mem)
		return 0;
	if ((rc = put_section(t, b, horizon, t->span_start, 1)))
		return rc;
	for (uint32_t i = 0; i < t->nmem; i++)
		t->mem[i].span.rounds = 0;
	t->span_start = horizon;
	return 0;
}
