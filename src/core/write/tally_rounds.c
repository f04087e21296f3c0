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

int mp__tally_put_round(mp_tally_t *t, mp_mbuf_t *b, uint64_t horizon)
{
	mp_mbuf_t *body = &t->body;
	uint32_t i, n = 0;
	uint8_t tag = MP_SEC_ROUND;
	int rc;

	if (t->failed || !t->mem)
		return 0;
	for (i = 0; i < t->nmem; i++)
		n += t->mem[i].r_last_ns != UINT64_MAX;
	body->len = 0;
	if ((rc = put(body, 0)) || (rc = put(body, horizon)) || (rc = put(body, t->round_start)) ||
	    (rc = put(body, ((uint64_t)t->step << 1) ^ (uint64_t)(t->step >> 63))) || (rc = put(body, t->events)) ||
	    (rc = put(body, n)))
		return rc;
	for (i = 0; i < t->nmem; i++) {
		const mp_tally_mem_t *m = &t->mem[i];
		uint64_t v[MP_ROUNDF_COUNT];
		int k;
		if (m->r_last_ns == UINT64_MAX)
			continue;
		v[MP_ROUNDF_LIVE] = m->v[MP_SUMF_LIVE];
		v[MP_ROUNDF_MIN] = m->r_min;
		v[MP_ROUNDF_MIN_NS] = m->r_min_ns;
		v[MP_ROUNDF_MAX] = m->r_max;
		v[MP_ROUNDF_MAX_NS] = m->r_max_ns;
		v[MP_ROUNDF_MAX_STEP] = ((uint64_t)m->r_max_step << 1) ^ (uint64_t)(m->r_max_step >> 63);
		v[MP_ROUNDF_FIRST_NS] = m->r_first_ns;
		v[MP_ROUNDF_LAST_NS] = m->r_last_ns;
		v[MP_ROUNDF_RESERVED] = m->reserved;
		v[MP_ROUNDF_RESERVED_MAX] = m->rsv_max;
		v[MP_ROUNDF_RESERVED_MAX_NS] = m->rsv_max_ns;
		v[MP_ROUNDF_FAILED] = m->r_failed;
		v[MP_ROUNDF_FAILED_NS] = m->r_failed_ns;
		v[MP_ROUNDF_FAILED_REQ] = m->r_failed_req;
		if ((rc = put(body, i)) || (rc = put(body, MP_ROUNDF_COUNT)))
			return rc;
		for (k = 0; k < MP_ROUNDF_COUNT; k++)
			if ((rc = put(body, v[k])))
				return rc;
	}
	if ((rc = mp_mbuf_append(b, &tag, 1)) || (rc = put(b, body->len)) ||
	    (rc = mp_mbuf_append(b, body->data, body->len)))
		return rc;
	t->round_start = horizon;
	mp__tally_round_reset(t);
	return 0;
}
