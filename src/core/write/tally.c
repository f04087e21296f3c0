/* tally.c - the tally's memory and its SUMMARY section (see tally.h). */
#include <memprof/format/varint.h>

#include "arena.h"
#include "tally.h"

#include <string.h>

#define FIRST_SLOTS 4096 /* 128 KiB: 2048 live blocks before the first growth */

int mp__tally_ready(mp_tally_t *t)
{
	if (!t->mem && !(t->mem = mp_map_pages(MP_TALLY_MEMS * sizeof(mp_tally_mem_t)))) {
		t->failed = 1;
		return -ENOMEM;
	}
	return 0;
}

void mp__tally_declare(mp_tally_t *t, uint32_t id, const char *name, uint32_t len, int kind)
{
	if (id >= MP_TALLY_MEMS || mp__tally_ready(t))
		return;
	t->mem[id].kind = kind;
	t->mem[id].name_len = len;
	t->mem[id].name = name;
	if (id >= t->nmem)
		t->nmem = id + 1;
}

int mp__tally_grow(mp_tally_t *t)
{
	uint64_t cap = t->slot ? 2 * (t->mask + 1) : FIRST_SLOTS, old_cap = t->slot ? t->mask + 1 : 0, i;
	mp_tally_slot_t *old = t->slot, *s;
	unsigned bits = 0;
	int found;

	/* home1 is 32 bits (and 2^31 slots are 64 GiB: the process is out of memory long before) */
	if (cap > (1ull << 31) || !(s = mp_map_pages(cap * sizeof(*s)))) {
		t->failed = 1;
		return -ENOMEM;
	}
	while ((1ull << bits) < cap)
		bits++;
	t->slot = s;
	t->mask = cap - 1;
	t->shift = 64 - bits;
	for (i = 0; i < old_cap; i++) {
		if (old[i].home1) {
			uint32_t home1;
			mp_tally_slot_t *to = mp__tally_find(t, old[i].addr, old[i].mem, &found, &home1);
			*to = old[i];
			to->home1 = home1;
		}
	}
	if (old)
		mp_unmap_pages(old, old_cap * sizeof(*old));
	return 0;
}

static int put(mp_mbuf_t *b, uint64_t v)
{
	uint8_t tmp[MP_VARINT_MAX];

	return mp_mbuf_append(b, tmp, (size_t)(mp_varint_put(tmp, v) - tmp));
}

int mp__tally_put_summary(mp_tally_t *t, mp_mbuf_t *b, uint64_t horizon)
{
	mp_mbuf_t *body = &t->body;
	uint32_t i, n = t->failed || !t->mem ? 0 : t->nmem;
	int rc;

	body->len = 0;
	if ((rc = put(body, t->failed ? MP_SUMMARY_F_UNAVAILABLE : 0)) || (rc = put(body, horizon)) ||
	    (rc = put(body, t->events)) || (rc = put(body, t->stacks)) || (rc = put(body, n)))
		return rc;
	for (i = 0; i < n; i++) {
		const mp_tally_mem_t *m = &t->mem[i];
		int k;
		if ((rc = put(body, i)) || (rc = put(body, (uint64_t)m->kind)) ||
		    (rc = put(body, m->has_peak ? MP_SUMMARY_MEM_F_PEAK : 0)) || (rc = put(body, m->name_len)) ||
		    (rc = mp_mbuf_append(body, m->name, m->name_len)) || (rc = put(body, MP_SUMF_COUNT)))
			return rc;
		for (k = 0; k < MP_SUMF_COUNT; k++)
			if ((rc = put(body, m->v[k])))
				return rc;
	}
	{
		uint8_t tag = MP_SEC_SUMMARY;
		if ((rc = mp_mbuf_append(b, &tag, 1)) || (rc = put(b, body->len)))
			return rc;
	}
	return mp_mbuf_append(b, body->data, body->len);
}

void mp__tally_release(mp_tally_t *t)
{
	if (t->slot)
		mp_unmap_pages(t->slot, (t->mask + 1) * sizeof(*t->slot));
	if (t->mem)
		mp_unmap_pages(t->mem, MP_TALLY_MEMS * sizeof(mp_tally_mem_t));
	mp_mbuf_release(&t->body);
	mp_mbuf_release(&t->cursors);
	memset(t, 0, sizeof(*t));
}
