/* chunkcodec.c - split records into columns and join them back; see
 * chunkcodec.h and docs/format.md ("Columns"). */
#include "chunkcodec.h"

#include "format.h"

#include <string.h>

/* The column of each varint field that follows a record's tag, in order
 * (after the memory id varint, which goes to MISC when the tag has
 * MP_RECF_MEMORY). OPT marks the allocated-size varint, present unless the
 * tag says EXACT or USABLE16. plan_len is 0xff for kinds that do not exist. */
#define OPT 8
enum { T = MP_COL_TIME, A = MP_COL_ADDR, S = MP_COL_SIZE, X = MP_COL_SIZE | OPT, M = MP_COL_MISC };
static const uint8_t plan[16][6] = {
	[MP_REC_ALLOC] = {T, A, S, X},
	[MP_REC_FREE] = {T, A},
	[MP_REC_ALLOC_FAILED] = {T, S},
	[MP_REC_REGION_ADD] = {T, A, S},
	[MP_REC_REGION_REMOVE] = {T, A},
	[MP_REC_STEP] = {T, M},
	[MP_REC_MARK] = {T, M},
	[MP_REC_REALLOC] = {T, A, A, S, X},
	[MP_REC_CONTEXT] = {M, M, M, M},
	[MP_REC_ALLOC_REUSED] = {T, A, S, X},
	[MP_REC_STACK] = {M},
	[MP_REC_FREE_AGED] = {T, A},
};
static const uint8_t plan_len[16] = {
	0xff, 4, 2, 2, 3, 2, 2, 2, 5, 4, 4, 1, 2, 0xff, 0xff, 0xff,
};

/* Length of the varint at p (bounded by end), or 0 if it does not end. */
static size_t varint_len(const uint8_t *p, const uint8_t *end)
{
	size_t n = 0;

	while (p + n < end && n < 10) {
		if (!(p[n++] & 0x80))
			return n;
	}
	return 0;
}

/* Copy one varint from a column to the rows; 0, or -1 if the column ends
 * inside it. Rows never overflow: they receive exactly the column bytes
 * consumed, and the columns sum to the rows' size. */
static inline int copy_varint(const uint8_t **src, const uint8_t *end, uint8_t **dst)
{
	const uint8_t *s = *src;
	size_t k;

	if (s < end && *s < 0x80) { /* the common one-byte case */
		*(*dst)++ = *s;
		*src = s + 1;
		return 0;
	}
	if (!(k = varint_len(s, end)))
		return -1;
	memcpy(*dst, s, k);
	*dst += k;
	*src = s + k;
	return 0;
}

int mp__chunk_join(const uint8_t *cols, const uint64_t lens[MP_COLS], uint8_t *rows, size_t n)
{
	const uint8_t *col[MP_COLS], *cend[MP_COLS];
	uint8_t *w = rows;
	uint64_t total = 0;
	int c, k;

	for (c = 0; c < MP_COLS; c++) {
		if (lens[c] > n - total)
			return -1;
		col[c] = cols + total;
		total += lens[c];
		cend[c] = cols + total;
	}
	if (total != n)
		return -1;
	while (col[MP_COL_TAG] < cend[MP_COL_TAG]) {
		uint8_t tag = *col[MP_COL_TAG]++, kind = tag & MP_REC_KIND_MASK, m = plan_len[kind];
		int skip_x = (tag & (MP_RECF_EXACT | MP_RECF_USABLE16)) != 0;

		if (m == 0xff)
			return -1;
		*w++ = tag;
		if ((tag & MP_RECF_MEMORY) && copy_varint(&col[MP_COL_MISC], cend[MP_COL_MISC], &w))
			return -1;
		for (k = 0; k < m; k++) {
			uint8_t f = plan[kind][k];
			if ((f & OPT) && skip_x)
				continue;
			c = f & (OPT - 1);
			if (copy_varint(&col[c], cend[c], &w))
				return -1;
		}
	}
	for (c = 0; c < MP_COLS; c++)
		if (col[c] != cend[c])
			return -1;
	return w == rows + n ? 0 : -1;
}

/* Varints per column (tag, time, address, size, misc) each record kind
 * needs, the optional allocated size aside: plan[] counted by column. */
static const uint8_t need_tab[16][MP_COLS] = {
	[MP_REC_ALLOC] = {0, 1, 1, 1, 0},        [MP_REC_FREE] = {0, 1, 1, 0, 0},
	[MP_REC_ALLOC_FAILED] = {0, 1, 0, 1, 0}, [MP_REC_REGION_ADD] = {0, 1, 1, 1, 0},
	[MP_REC_REGION_REMOVE] = {0, 1, 1, 0, 0}, [MP_REC_STEP] = {0, 1, 0, 0, 1},
	[MP_REC_MARK] = {0, 1, 0, 0, 1},         [MP_REC_REALLOC] = {0, 1, 2, 1, 0},
	[MP_REC_CONTEXT] = {0, 0, 0, 0, 4},      [MP_REC_ALLOC_REUSED] = {0, 1, 1, 1, 0},
	[MP_REC_STACK] = {0, 0, 0, 0, 1},        [MP_REC_FREE_AGED] = {0, 1, 1, 0, 0},
};
/* Kinds whose plan has the optional allocated size (X). */
static const uint8_t has_opt[16] = {[MP_REC_ALLOC] = 1, [MP_REC_REALLOC] = 1, [MP_REC_ALLOC_REUSED] = 1};

/* Varint terminators (bytes without the high bit) in [p, p + n): the number
 * of varints a well-formed column holds. Eight bytes at a time: their high
 * bits moved to the low bit of each byte and summed by a multiply. */
static uint64_t count_ends(const uint8_t *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t c = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		c += 8 - ((((w >> 7) & ones) * ones) >> 56);
	}
	for (; i < n; i++)
		c += p[i] < 0x80;
	return c;
}

int mp__chunk_check(const uint8_t *cols, const uint64_t lens[MP_COLS], size_t n)
{
	uint64_t need[MP_COLS] = {0}, total = 0, hist[256] = {0};
	const uint8_t *tag = cols, *tend;
	int c;

	for (c = 0; c < MP_COLS; c++) {
		if (lens[c] > n - total)
			return -1;
		total += lens[c];
	}
	if (total != n)
		return -1;
	/* Count the tags by value first (one increment each), then the
	 * varints they need. */
	tend = cols + lens[MP_COL_TAG];
	for (; tag < tend; tag++)
		hist[*tag]++;
	for (unsigned t = 0; t < 256; t++) {
		unsigned kind = t & MP_REC_KIND_MASK;
		if (!hist[t])
			continue;
		if (plan_len[kind] == 0xff)
			return -1;
		for (c = MP_COL_TIME; c < MP_COLS; c++)
			need[c] += hist[t] * need_tab[kind][c];
		if (t & MP_RECF_MEMORY)
			need[MP_COL_MISC] += hist[t];
		if (has_opt[kind] && !(t & (MP_RECF_EXACT | MP_RECF_USABLE16)))
			need[MP_COL_SIZE] += hist[t];
	}
	total = lens[MP_COL_TAG];
	for (c = MP_COL_TIME; c < MP_COLS; c++) {
		const uint8_t *col = cols + total;
		if (lens[c] && col[lens[c] - 1] >= 0x80)
			return -1; /* the last varint does not end */
		if (count_ends(col, lens[c]) != need[c])
			return -1;
		total += lens[c];
	}
	return 0;
}

/* --- the writer's side: aged frees and columns, in one pass ------------- */

#include "varint.h"

/* Chunk-local allocation table: address -> allocation number. Slots carry
 * the generation (chunk) that wrote them, so a new chunk needs no clearing. */
typedef struct {
	uint64_t addr;
	uint64_t index;
	uint64_t gen;
} age_slot_t;

static inline uint64_t age_hash(uint64_t addr)
{
	return (addr * 0x9E3779B97F4A7C15ull) >> 24;
}

static inline void age_put(mp_chunk_encoder_t *e, uint64_t addr, uint64_t index)
{
	age_slot_t *tab = e->table;
	uint64_t i = age_hash(addr);

	for (;; i++) {
		age_slot_t *s = &tab[i & e->mask];
		if (s->gen != e->gen || s->addr == addr) {
			s->addr = addr;
			s->index = index;
			s->gen = e->gen;
			return;
		}
	}
}

static inline uint64_t age_get(const mp_chunk_encoder_t *e, uint64_t addr)
{
	const age_slot_t *tab = e->table;
	uint64_t i = age_hash(addr);

	for (;; i++) {
		const age_slot_t *s = &tab[i & e->mask];
		if (s->gen != e->gen)
			return 0;
		if (s->addr == addr)
			return s->index;
	}
}

/* Copy one varint from *pp to column c; its value in *v. */
static inline int take(const uint8_t **pp, const uint8_t *end, mp_mbuf_t *col, uint64_t *v)
{
	const uint8_t *p = *pp;

	if (p < end && *p < 0x80) { /* the common one-byte case */
		*v = *p;
		col->data[col->len++] = *p;
		*pp = p + 1;
		return 0;
	}
	if (mp_varint_get(pp, end, v))
		return -1;
	memcpy(col->data + col->len, p, (size_t)(*pp - p));
	col->len += (size_t)(*pp - p);
	return 0;
}

int mp__chunk_encode(mp_chunk_encoder_t *e, const uint8_t *rows, size_t n, const uint64_t *st,
		     uint64_t lens[MP_COLS])
{
	const uint8_t *p = rows, *end = rows + n;
	uint64_t addr = st[1], nallocs = 0, reuse[MP_REUSE_SLOTS], events = 0;
	mp_mbuf_t *col = e->cols;
	int c;

	/* Room: no column outgrows the input; the table has twice as many
	 * slots as there can be allocations (a record is >= 4 bytes). */
	memcpy(reuse, st + MP_ST_REUSE_AT, sizeof(reuse));
	for (c = 0; c < MP_COLS; c++) {
		col[c].len = 0;
		if (mp_mbuf_reserve(&col[c], n))
			return -1;
	}
	{
		uint64_t want = 64;
		while (want < n / 2)
			want *= 2;
		if (want > e->mask + 1 || !e->table) {
			e->tab.len = 0;
			if (mp_mbuf_reserve(&e->tab, want * sizeof(age_slot_t)))
				return -1;
			memset(e->tab.data, 0, want * sizeof(age_slot_t));
			e->table = e->tab.data;
			e->mask = want - 1;
			e->gen = 0;
		}
		e->gen++;
	}

	while (p < end) {
		uint8_t tag = *p++;
		int kind = tag & MP_REC_KIND_MASK, skip_x = (tag & (MP_RECF_EXACT | MP_RECF_USABLE16)) != 0, k;
		uint64_t v[6], a;
		size_t tag_at = col[MP_COL_TAG].len, addr_at = col[MP_COL_ADDR].len;
		int nf = 0;

		if (plan_len[kind] == 0xff || kind == MP_REC_FREE_AGED)
			return -1;
		events += kind == MP_REC_REALLOC ? 2 : (kind == MP_REC_CONTEXT || kind == MP_REC_STACK) ? 0 : 1;
		col[MP_COL_TAG].data[col[MP_COL_TAG].len++] = tag;
		if ((tag & MP_RECF_MEMORY) && take(&p, end, &col[MP_COL_MISC], &v[0]))
			return -1;
		for (k = 0; k < plan_len[kind]; k++) {
			uint8_t f = plan[kind][k];
			if ((f & OPT) && skip_x)
				continue;
			if (take(&p, end, &col[f & (OPT - 1)], &v[nf++]))
				return -1;
		}
		switch (kind) {
		case MP_REC_ALLOC:
		case MP_REC_REGION_ADD:
		case MP_REC_REGION_REMOVE:
		case MP_REC_FREE: {
			int64_t d = mp_unzigzag(v[1]);
			a = addr + (tag & MP_RECF_ALIGN16 ? (uint64_t)d * 16 : (uint64_t)d);
			if (kind == MP_REC_ALLOC) {
				if (!e->no_ages)
					age_put(e, a, ++nallocs);
			} else if (kind == MP_REC_FREE) {
				uint64_t idx = e->no_ages ? 0 : age_get(e, a);
				reuse[mp_reuse_slot(a)] = a;
				if (idx) {
					/* FREE_AGED: replace the address delta by the age
					 * when that is not longer */
					uint8_t tmp[MP_VARINT_MAX];
					size_t old = col[MP_COL_ADDR].len - addr_at;
					size_t len = (size_t)(mp_varint_put(tmp, nallocs + 1 - idx) - tmp);
					if (len <= old) {
						memcpy(col[MP_COL_ADDR].data + addr_at, tmp, len);
						col[MP_COL_ADDR].len = addr_at + len;
						col[MP_COL_TAG].data[tag_at] =
							(uint8_t)((tag & MP_RECF_MEMORY) | MP_REC_FREE_AGED);
					}
				}
			}
			addr = a;
			break;
		}
		case MP_REC_ALLOC_REUSED:
			if (v[1] >= MP_REUSE_SLOTS)
				return -1;
			addr = reuse[v[1]];
			if (!e->no_ages)
				age_put(e, addr, ++nallocs);
			break;
		case MP_REC_REALLOC: {
			int64_t d1 = mp_unzigzag(v[1]), d2 = mp_unzigzag(v[2]);
			a = addr + (tag & MP_RECF_ALIGN16 ? (uint64_t)d1 * 16 : (uint64_t)d1);
			addr = a + (tag & MP_RECF_ALIGN16 ? (uint64_t)d2 * 16 : (uint64_t)d2);
			if (!e->no_ages)
				age_put(e, addr, ++nallocs);
			break;
		}
		default:
			break;
		}
	}
	for (c = 0; c < MP_COLS; c++)
		lens[c] = col[c].len;
	e->events = events;
	return 0;
}

void mp__chunk_encoder_release(mp_chunk_encoder_t *e)
{
	int c;

	for (c = 0; c < MP_COLS; c++)
		mp_mbuf_release(&e->cols[c]);
	mp_mbuf_release(&e->tab);
	e->table = NULL;
	e->mask = 0;
}
