/* tally_ckpt.c - the CHECKPOINT sections (format 2.4, docs/format.md
 * "Checkpoint"): the tally's live blocks, per memory id, as of a round's
 * horizon, written at intervals in the block that ends the round, so that
 * a reader can start from one instead of replaying every event before it.
 *
 * It runs on the flusher, after the round's tally, never on the event
 * path, and calls no malloc: the blocks are gathered into mapped pages
 * (unmapped after), sorted there (a radix sort), and coded into
 * the tally's body buffer (mmap-backed). */
#include <memprof/format/varint.h>

#include "arena.h"
#include "tally.h"
#include "writer_internal.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_MB 64
#define CK_ADDR_MASK ((1ull << MP_TALLY_KEY_BITS) - 1) /* a key below MP_TALLY_HIGH: its address */
#define DEFAULT_ROUNDS 16
#define DEFAULT_PER_BLOCK 32

typedef struct {
	uint64_t mem, addr, fp, req, tag;
} ck_block_t;

void mp__tally_ckpt_config(mp_tally_t *t)
{
	uint64_t mb = mp__env_u64("MEMPROF_CHECKPOINT_MB", DEFAULT_MB);
	uint64_t rounds = mp__env_u64("MEMPROF_CHECKPOINT_ROUNDS", DEFAULT_ROUNDS);

	if (mb > (1ull << 40))
		mb = 1ull << 40;
	if (rounds > UINT32_MAX)
		rounds = UINT32_MAX;
	t->step = -1;
	t->ckpt_per_block = mp__env_u64("MEMPROF_CHECKPOINT_RATIO", DEFAULT_PER_BLOCK);
	if (t->ckpt_per_block > (1u << 20))
		t->ckpt_per_block = 1u << 20;
	t->ckpt_bytes_every = mb << 20;
	t->ckpt_rounds_every = mb ? (uint32_t)(rounds ? rounds : DEFAULT_ROUNDS) : 0;
}

/* The memory id of a live slot's key (tally.h: mp__tally_key) */
static uint64_t key_mem(uint64_t key)
{
	return key < MP_TALLY_HIGH ? (key >> MP_TALLY_KEY_BITS) - 1 : (key >> 43) & (MP_TALLY_MEMS - 1);
}

static int before(const ck_block_t *a, const ck_block_t *b)
{
	return a->mem != b->mem ? a->mem < b->mem : a->addr < b->addr;
}

static void sift(ck_block_t *v, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		ck_block_t x;
		if (c >= n)
			return;
		if (c + 1 < n && before(&v[c], &v[c + 1]))
			c++;
		if (!before(&v[i], &v[c]))
			return;
		x = v[i];
		v[i] = v[c];
		v[c] = x;
		i = c;
	}
}

static void heap_sort(ck_block_t *v, size_t n)
{
	size_t i;

	for (i = n / 2; i-- > 0;)
		sift(v, i, n);
	for (i = n; i-- > 1;) {
		ck_block_t x = v[0];
		v[0] = v[i];
		v[i] = x;
		sift(v, 0, i);
	}
}

/* v[0..n) in (memory id, address) order through tmp (room for n): a
 * radix sort, a byte a pass, on the keys (below 2^53 an address's key is
 * (mem + 1) << 53 | address: in that order), the passes whose byte all
 * keys share skipped (a heap sort of 2000 blocks took 600 instructions a
 * block, and more as they grow: too much for a flusher that checkpoints a
 * million blocks every 16 rounds). Returns the sorted array (v or tmp).
 * Keys of addresses above 2^53 (no process has them) go the heap sort's
 * way. */
static inline uint64_t sort_key(const ck_block_t *x)
{
	return ((x->mem + 1) << MP_TALLY_KEY_BITS) | x->addr;
}

static ck_block_t *sort_blocks(ck_block_t *v, ck_block_t *tmp, size_t n)
{
	size_t count[256], i;
	uint64_t vary = 0;
	int b;

	for (i = 0; i < n; i++)
		if (v[i].addr >> MP_TALLY_KEY_BITS) {
			heap_sort(v, n);
			return v;
		}
	/* the bytes in which keys differ: the others need no pass */
	for (i = 0; i < n; i++)
		vary |= sort_key(&v[i]) ^ sort_key(&v[0]);
	for (b = 0; b < 8; b++) {
		size_t sum = 0, c;
		ck_block_t *x;
		if (!((vary >> (8 * b)) & 255))
			continue; /* every key has this byte */
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(sort_key(&v[i]) >> (8 * b)) & 255]++;
		for (c = 0; c < 256; c++) {
			size_t k = count[c];
			count[c] = sum;
			sum += k;
		}
		for (i = 0; i < n; i++)
			tmp[count[(sort_key(&v[i]) >> (8 * b)) & 255]++] = v[i];
		x = v;
		v = tmp;
		tmp = x;
	}
	return v;
}

/* Every live block of the table and the stash into v (room for t->n). */
static size_t gather(const mp_tally_t *t, ck_block_t *v)
{
	const mp_tally_slot_t *x = t->bucket ? t->bucket[0].lane : NULL, *end = x ? x + 2 * (t->mask + 1) : NULL;
	size_t n = 0;
	uint32_t k;

	/* (the slot's word: the tag below MP_TALLY_HIGH, where the key holds
	 * the address; above, the address) */
	for (; x < end; x++)
		if (x->key && n < t->n)
			v[n++] = x->key < MP_TALLY_HIGH ? (ck_block_t){key_mem(x->key), x->key & CK_ADDR_MASK, x->fp, x->req, x->addr}
							: (ck_block_t){key_mem(x->key), x->addr, x->fp, x->req, 0};
	for (k = 0; k < t->nstash; k++) {
		const mp_tally_slot_t *y = &t->stash[k];
		if (n < t->n)
			v[n++] = y->key < MP_TALLY_HIGH ? (ck_block_t){key_mem(y->key), y->key & CK_ADDR_MASK, y->fp, y->req, y->addr}
							: (ck_block_t){key_mem(y->key), y->addr, y->fp, y->req, 0};
	}
	return n;
}

static uint64_t zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* (2.5) the blocks' tags v[0..n) then the tags they use, in id order
 * (used: a bitmap of t->ntag bits, zeroed) */
static uint8_t *code_tags(const mp_tally_t *t, uint8_t *p, const ck_block_t *v, size_t n, uint8_t *used)
{
	uint64_t count = 0, prev = 0;

	for (size_t i = 0; i < n; i++) {
		p = mp_varint_put(p, v[i].tag);
		if (v[i].tag && !(used[(v[i].tag - 1) >> 3] & (1u << ((v[i].tag - 1) & 7)))) {
			used[(v[i].tag - 1) >> 3] |= (uint8_t)(1u << ((v[i].tag - 1) & 7));
			count++;
		}
	}
	p = mp_varint_put(p, count);
	for (uint32_t id = 1; id <= t->ntag; id++)
		if (used[(id - 1) >> 3] & (1u << ((id - 1) & 7))) {
			const mp_tally_tag_t *x = &t->tag[id - 1];
			p = mp_varint_put(p, id - prev);
			p = mp_varint_put(p, x->op);
			p = mp_varint_put(p, x->region);
			p = mp_varint_put(p, x->dtype);
			p = mp_varint_put(p, x->shape);
			p = mp_varint_put(p, x->stack);
			prev = id;
		}
	return p;
}

/* The body of the blocks v[0..n) (sorted) into body. */
static int code(const mp_tally_t *t, mp_mbuf_t *body, const ck_block_t *v, size_t n, uint64_t horizon, uint64_t events,
		uint32_t back)
{
	size_t i, j, nmem = 0, used_bytes = t->ntag / 8 + 1;
	/* (2.5) the tags: when some allocation had one and none was lost */
	int tags = t->tagged && !t->tags_lost;
	uint8_t *p, *used = tags ? mp_map_pages(used_bytes) : NULL;
	int rc;

	if (tags && !used)
		tags = 0; /* no room: a checkpoint without them (a seek replays from the start) */
	for (i = 0; i < n; i++)
		nmem += i == 0 || v[i].mem != v[i - 1].mem;
	body->len = 0;
	if ((rc = mp_mbuf_reserve(body, 8 * MP_VARINT_MAX + n * 3 * MP_VARINT_MAX + nmem * 2 * MP_VARINT_MAX +
					     t->nreg * 3 * MP_VARINT_MAX + 2 * MP_VARINT_MAX +
					     (tags ? n * 7 * MP_VARINT_MAX + MP_VARINT_MAX : 0)))) {
		if (used)
			mp_unmap_pages(used, used_bytes);
		return rc;
	}
	p = body->data;
	p = mp_varint_put(p, (tags ? MP_CKPT_F_TAGS : MP_CKPT_F_NO_TAGS) | MP_CKPT_F_LAST_MARK | MP_CKPT_F_BACK |
				     (t->tagged ? 0 : MP_CKPT_F_UNTAGGED));
	p = mp_varint_put(p, horizon);
	p = mp_varint_put(p, events);
	p = mp_varint_put(p, n);
	p = mp_varint_put(p, nmem);
	for (i = 0; i < n; i = j) {
		uint64_t prev = 0;
		for (j = i; j < n && v[j].mem == v[i].mem; j++)
			;
		p = mp_varint_put(p, i == 0 ? v[i].mem : v[i].mem - v[i - 1].mem - 1);
		p = mp_varint_put(p, j - i);
		for (size_t k = i; k < j; k++) {
			p = mp_varint_put(p, v[k].addr - prev);
			p = mp_varint_put(p, v[k].fp);
			p = mp_varint_put(p, zz((int64_t)(v[k].fp - v[k].req)));
			prev = v[k].addr;
		}
	}
	/* the step and the live regions (tally_regions.c: already in order) */
	p = mp_varint_put(p, zz(t->step));
	p = mp_varint_put(p, t->nreg);
	for (i = 0; i < t->nreg; i++) {
		const mp_tally_region_t *r = &t->reg[i];
		int same = i && r->mem == t->reg[i - 1].mem;
		p = mp_varint_put(p, i ? r->mem - t->reg[i - 1].mem : r->mem);
		p = mp_varint_put(p, same ? r->base - t->reg[i - 1].end : r->base);
		p = mp_varint_put(p, r->end - r->base);
	}
	/* (2.5) the last mark before it (MP_CKPT_F_LAST_MARK): a seek's
	 * peak says which one it came after; the rest a seek needs of the
	 * events before it is in the round's SUMMARY (MP_SUMF_REGION_EVENTS...) */
	p = mp_varint_put(p, t->last_mark);
	if (tags) {
		p = code_tags(t, p, v, n, used);
		mp_unmap_pages(used, used_bytes);
	}
	/* (3.0) where a seek decodes from (MP_CKPT_F_BACK): the events a
	 * lane's hold kept back wait in blocks rounds before this one */
	p = mp_varint_put(p, back);
	body->len = (size_t)(p - body->data);
	return 0;
}

int mp__tally_put_checkpoint(mp_tally_t *t, mp_mbuf_t *b, uint64_t horizon, uint64_t file_off, uint32_t back)
{
	uint8_t tmp[1 + MP_VARINT_MAX], *p = tmp;
	size_t bytes, n;
	ck_block_t *v;
	int rc;

	/* none in the final round: the capture's last block stays small
	 * (capsummary.c reads it from the file's last 64 KiB) */
	if (!t->ckpt_rounds_every || horizon == UINT64_MAX)
		return 0;
	if (++t->ckpt_rounds < t->ckpt_rounds_every && file_off - t->ckpt_off < t->ckpt_bytes_every)
		return 0;
	/* and not before 32 events a live block since the last
	 * one: a checkpoint costs about 100 instructions and a few bytes a
	 * block, so this keeps it within a few % of the events' own cost and
	 * size, whatever the live set (a million blocks cost 0.25 s a
	 * checkpoint: every 16 rounds, 17% of the flusher's core) */
	if (t->events - t->ckpt_events < t->ckpt_per_block * t->n)
		return 0;
	t->ckpt_rounds = 0;
	t->ckpt_off = file_off;
	t->ckpt_events = t->events;
	/* (a block needs under 3 * 10 bytes: larger live sets get none) */
	if (t->failed || !t->mem || t->n > MP_CKPT_BODY_MAX / 8 || t->nreg > MP_CKPT_BODY_MAX / 8)
		return 0;
	bytes = 2 * (t->n ? t->n : 1) * sizeof(*v);
	if (!(v = mp_map_pages(bytes)))
		return 0; /* no room: no checkpoint this time, the capture is whole */
	n = gather(t, v);
	rc = code(t, &t->body, sort_blocks(v, v + (t->n ? t->n : 1), n), n, horizon, t->events, back);
	mp_unmap_pages(v, bytes);
	if (rc || t->body.len > MP_CKPT_BODY_MAX)
		return rc;
	*p++ = MP_SEC_CHECKPOINT;
	p = mp_varint_put(p, t->body.len);
	if ((rc = mp_mbuf_append(b, tmp, (size_t)(p - tmp))))
		return rc;
	return mp_mbuf_append(b, t->body.data, t->body.len);
}
