/* tally.c - the tally's memory and its SUMMARY section (see tally.h). */
#include <memprof/format/varint.h>

#include "arena.h"
#include "tally.h"

#include <string.h>

#define FIRST_BUCKETS 2048 /* 128 KiB: 1536 live blocks before the first growth */

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
		mp__tally_round_ids(t, id + 1);
}

static inline unsigned lives(const mp_tally_bucket_t *b)
{
	return (unsigned)(b->lane[0].key != 0) + (b->lane[1].key != 0);
}

/* A free slot of hash h's buckets (of the less full one), else one made
 * by moving a block of theirs to its other bucket, else the stash's next;
 * NULL when the stash is full too. */
static mp_tally_slot_t *room(mp_tally_t *t, uint64_t h)
{
	mp_tally_tab_t tab = mp__tally_tab(t);
	mp_tally_bucket_t *b[2] = {mp__tally_b1(tab, h), mp__tally_b2(tab, h)};
	unsigned i, k, c0 = lives(b[0]), c1 = lives(b[1]);

	if (c1 < c0)
		return &b[1]->lane[b[1]->lane[0].key != 0];
	if (c0 < 2)
		return &b[0]->lane[b[0]->lane[0].key != 0];
	for (i = 0; i < 2; i++)
		for (k = 0; k < 2; k++) {
			mp_tally_slot_t *x = &b[i]->lane[k];
			uint64_t hx = mp__tally_hash(x->key);
			mp_tally_bucket_t *o = mp__tally_b1(tab, hx) == b[i] ? mp__tally_b2(tab, hx) : mp__tally_b1(tab, hx);
			if (lives(o) < 2) {
				o->lane[o->lane[0].key != 0] = *x;
				x->key = 0;
				return x;
			}
		}
	return t->nstash < MP_TALLY_STASH ? &t->stash[t->nstash++] : NULL;
}

/* Every live block of the old table and stash into t's (empty) table;
 * 0, or -1 when the new stash fills. */
static int put_back(mp_tally_t *t, const mp_tally_bucket_t *old, uint64_t old_cap, const mp_tally_slot_t *stash,
		    uint32_t nstash)
{
	uint64_t i;

	for (i = 0; i < 2 * old_cap + nstash; i++) {
		const mp_tally_slot_t *x = i < 2 * old_cap ? &old[i / 2].lane[i % 2] : &stash[i - 2 * old_cap];
		mp_tally_slot_t *s;
		if (!x->key)
			continue;
		if (!(s = room(t, mp__tally_hash(x->key))))
			return -1;
		*s = *x;
	}
	return 0;
}

int mp__tally_reserve(mp_tally_t *t, uint64_t more)
{
	uint64_t cap = t->bucket ? t->mask + 1 : FIRST_BUCKETS, old_cap = t->bucket ? t->mask + 1 : 0;
	mp_tally_bucket_t *old = t->bucket;
	mp_tally_slot_t stash[MP_TALLY_STASH];
	uint32_t nstash = t->nstash;

	/* at most 3 blocks for 4 buckets, and the stash empty: a block in it
	 * sends every allocation at a new address down the far path (so a
	 * table is built again, of the same size, as soon as one is there;
	 * twice larger when its blocks do not all find room) */
	while ((t->n + more) * 4 > cap * 3)
		cap *= 2;
	if (cap == old_cap && !nstash)
		return 0;
	memcpy(stash, t->stash, nstash * sizeof(stash[0]));
	for (;; cap *= 2) {
		mp_tally_bucket_t *b;
		unsigned bits = 0;
		if (cap > (1ull << 31) || !(b = mp_map_pages(cap * sizeof(*b)))) {
			/* the old table stays (the figures stop: failed) */
			t->bucket = old;
			t->mask = old_cap - 1;
			while (old_cap && (1ull << bits) < old_cap)
				bits++;
			t->shift = 64 - bits;
			t->nstash = nstash;
			memcpy(t->stash, stash, nstash * sizeof(stash[0]));
			t->failed = 1;
			return -ENOMEM;
		}
		while ((1ull << bits) < cap)
			bits++;
		t->bucket = b;
		t->mask = cap - 1;
		t->shift = 64 - bits;
		t->nstash = 0;
		if (!put_back(t, old, old_cap, stash, nstash) && !t->nstash)
			break;
		mp_unmap_pages(b, cap * sizeof(*b));
	}
	if (old)
		mp_unmap_pages(old, old_cap * sizeof(*old));
	return 0;
}

int mp__tally_apply_far(mp_tally_t *t, mp_tally_figs_t *f, const mp_tally_ev_t *e)
{
	uint64_t h = mp__tally_hash(e->key);
	mp_tally_bucket_t *b[2] = {mp__tally_b1(mp__tally_tab(t), h), mp__tally_b2(mp__tally_tab(t), h)};
	mp_tally_slot_t *s = NULL, none = {0};
	unsigned i, k;

	for (i = 0; i < 2 && !s; i++)
		for (k = 0; k < 2 && !s; k++)
			if (mp__tally_is(&b[i]->lane[k], e))
				s = &b[i]->lane[k];
	for (k = 0; k < t->nstash && !s; k++)
		if (mp__tally_is(&t->stash[k], e))
			s = &t->stash[k];
	mp__tally_account(f, e->op == MP_TALLY_ALLOC, e->fp, e->req, s ? s : &none, s != NULL);
	t->mem[e->mem].v[MP_SUMF_UNKNOWN_FREES] += e->op == MP_TALLY_FREE && !s; /* (2.5) */
	mp__tally_figs_blocks(f, t); /* (room in a larger table is made on t->n) */
	/* an allocation's room: in the buckets or the stash, else in a larger
	 * table; a free of an address not live changes no slot */
	if (e->op == MP_TALLY_ALLOC && !s && !(s = room(t, h)) && (mp__tally_reserve(t, 1) || !(s = room(t, h)))) {
		t->failed = 1;
		return -ENOMEM;
	}
	if (s)
		mp__tally_put(s, e->op == MP_TALLY_ALLOC, e->key, e->fp, e->req, mp__tally_word(e));
	t->tags_lost |= e->tag && e->key >= MP_TALLY_HIGH; /* (2.5) no room for it */
	if (e->op == MP_TALLY_FREE && s >= t->stash && s < t->stash + MP_TALLY_STASH) /* out of the stash */
		*s = t->stash[--t->nstash];
	mp__tally_sample(f, e->ns);
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
	if (t->bucket)
		mp_unmap_pages(t->bucket, (t->mask + 1) * sizeof(*t->bucket));
	if (t->mem)
		mp_unmap_pages(t->mem, MP_TALLY_MEMS * sizeof(mp_tally_mem_t));
	if (t->reg)
		mp_unmap_pages(t->reg, t->capreg * sizeof(*t->reg));
	mp__tally_tags_release(t);
	mp_mbuf_release(&t->body);
	mp_mbuf_release(&t->cursors);
	memset(t, 0, sizeof(*t));
	t->step = -1;
}
