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


/* --- the writer's side: aged frees and columns, in one pass ------------- */

#include "varint.h"

/* The flusher must split records as fast as a thread records them, so this
 * side is written for speed: one switch per record, varints moved with one
 * unaligned 8-byte load and store each (the ring keeps MP_RING_SLACK
 * readable bytes past its end, the columns 8 spare bytes), and a
 * direct-mapped age table small enough to stay in cache. */

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Length of the varint whose first 8 bytes are x, or 0 if longer than 8. */
static inline unsigned vlen8(uint64_t x)
{
	uint64_t stop = ~x & 0x8080808080808080ull;

	return stop ? (unsigned)(__builtin_ctzll(stop) >> 3) + 1 : 0;
}

/* Bit i set when byte i of x (little-endian) has its top bit clear, i.e.
 * ends a varint: the top bits gathered by one multiplication. */
static inline unsigned mask8(uint64_t x)
{
	uint64_t t = (~x & 0x8080808080808080ull) >> 7;

	return (unsigned)((t * 0x0102040810204080ull) >> 56);
}

/* The value of a varint of len <= 8 bytes whose bytes are x (0 for len 0),
 * without a loop or a branch. */
static inline uint64_t vvalue8(uint64_t x, unsigned len)
{
	uint64_t v = (x & 0x7f) | ((x >> 1) & (0x7full << 7)) | ((x >> 2) & (0x7full << 14)) |
		     ((x >> 3) & (0x7full << 21)) | ((x >> 4) & (0x7full << 28)) | ((x >> 5) & (0x7full << 35)) |
		     ((x >> 6) & (0x7full << 42)) | ((x >> 7) & (0x7full << 49));

	return v & ((1ull << (7 * len)) - 1);
}

/* The varint bytes of v < 2^56 as one word, and their count. */
static inline uint64_t venc8(uint64_t v, unsigned *len)
{
	unsigned l = (unsigned)(64 - __builtin_clzll(v | 1) + 6) / 7;
	uint64_t x = (v & 0x7f) | ((v << 1) & (0x7full << 8)) | ((v << 2) & (0x7full << 16)) |
		     ((v << 3) & (0x7full << 24)) | ((v << 4) & (0x7full << 32)) | ((v << 5) & (0x7full << 40)) |
		     ((v << 6) & (0x7full << 48)) | ((v << 7) & (0x7full << 56));

	*len = l;
	return x | (0x8080808080808080ull & ((1ull << (8 * (l - 1))) - 1));
}

/* Move one varint from *pp to the column cursor *o; its value in *v if v.
 * Returns 0, or -1 when it runs past end or is not a varint. (Cursors, not
 * mp_mbuf_t lengths: byte stores may alias any memory, locals they cannot,
 * so the compiler keeps the cursors in registers.) */
static inline int move(const uint8_t **pp, const uint8_t *end, uint8_t **o, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = load64(p);
	unsigned len = vlen8(x);

	if (__builtin_expect(len == 0, 0)) { /* 9 or 10 bytes: rare */
		uint64_t tmp;
		if (mp_varint_get(pp, end, &tmp))
			return -1;
		memcpy(*o, p, (size_t)(*pp - p));
		*o += *pp - p;
		if (v)
			*v = tmp;
		return 0;
	}
	if (__builtin_expect(p + len > end, 0))
		return -1;
	memcpy(*o, &x, 8);
	*o += len;
	*pp = p + len;
	if (v)
		*v = vvalue8(x, len);
	return 0;
}

/* Chunk-local age table: the allocation number of the block at an
 * address, direct-mapped (a collision just loses that block's age: its free
 * keeps its address delta). Entries carry the chunk's generation, so a new
 * chunk needs no clearing. */
#define AGE_SLOTS (1u << 14)

typedef struct {
	uint64_t addr;
	uint32_t index;
	uint32_t gen;
} age_slot_t;

static inline age_slot_t *age_slot(const mp_chunk_encoder_t *e, uint64_t addr)
{
	return (age_slot_t *)e->table + (((addr >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - 14));
}

static inline void age_put(mp_chunk_encoder_t *e, uint64_t addr, uint32_t index)
{
	age_slot_t *s = age_slot(e, addr);

	s->addr = addr;
	s->index = index;
	s->gen = (uint32_t)e->gen;
}

#define HOT_KINDS ((1u << MP_REC_ALLOC) | (1u << MP_REC_ALLOC_REUSED) | (1u << MP_REC_FREE) | (1u << MP_REC_REALLOC))

int mp__chunk_encode(mp_chunk_encoder_t *e, const uint8_t *rows, size_t n, const uint64_t *st,
		     uint64_t lens[MP_COLS])
{
	const uint8_t *p = rows, *end = rows + n;
	uint64_t addr = st[1], reuse[MP_REUSE_SLOTS], events = 0;
	uint32_t nallocs = 0;
	mp_mbuf_t *col = e->cols;
	uint8_t *ctag, *ctime, *caddr, *csize, *cmisc;
	int ages = !e->no_ages, c;

	/* Room: no column outgrows the input, plus the 8-byte stores' slack. */
	memcpy(reuse, st + MP_ST_REUSE_AT, sizeof(reuse));
	for (c = 0; c < MP_COLS; c++) {
		col[c].len = 0;
		if (mp_mbuf_reserve(&col[c], n + 8))
			return -1;
	}
	ctag = col[MP_COL_TAG].data;
	ctime = col[MP_COL_TIME].data;
	caddr = col[MP_COL_ADDR].data;
	csize = col[MP_COL_SIZE].data;
	cmisc = col[MP_COL_MISC].data;
	if (!e->table) {
		e->tab.len = 0;
		if (mp_mbuf_reserve(&e->tab, AGE_SLOTS * sizeof(age_slot_t)))
			return -1;
		memset(e->tab.data, 0, AGE_SLOTS * sizeof(age_slot_t));
		e->table = e->tab.data;
		e->gen = 0;
	}
	if ((uint32_t)++e->gen == 0) { /* generations wrapped: clear once */
		memset(e->table, 0, AGE_SLOTS * sizeof(age_slot_t));
		e->gen = 1;
	}

	while (p < end) {
		uint8_t tag = *p++;
		int kind = tag & MP_REC_KIND_MASK, exact = (tag & (MP_RECF_EXACT | MP_RECF_USABLE16)) != 0;
		uint8_t *tag_at = ctag;
		uint64_t v, v2;

		*ctag++ = tag;
		/* ALLOC, ALLOC_REUSED, FREE and REALLOC are nearly every record
		 * and come in no predictable order: one path for the four whose
		 * only branches are on rare things (a long varint, a memory id).
		 * Which fields exist and where an address comes from are
		 * selected arithmetically. */
		if (((1u << kind) & HOT_KINDS) && !(tag & MP_RECF_MEMORY)) {
			const uint8_t *q = p;
			uint8_t *addr_at = caddr;
			unsigned is_free = kind == MP_REC_FREE, is_realloc = kind == MP_REC_REALLOC;
			unsigned is_reused = kind == MP_REC_ALLOC_REUSED, shift = (tag & MP_RECF_ALIGN16) ? 4 : 0;
			unsigned take_x = !is_free & !exact, la, e0, e1, e2, e3, e4, l0, l1, l2, l3, l4;
			unsigned ss, ls, sx, lx, last;
			uint32_t m;
			uint64_t a1, a2 = 0, moved, x;

			/* Where the record's varints end, all at once: bit i of m
			 * is set when byte i of the record ends a varint. Fields:
			 * time, address, [second address], [size, [allocated]]. */
			m = mask8(load64(q)) | mask8(load64(q + 8)) << 8 | 0x10000u;
			e0 = (unsigned)__builtin_ctz(m);
			m &= m - 1;
			e1 = (unsigned)__builtin_ctz(m);
			m &= m - 1;
			e2 = (unsigned)__builtin_ctz(m | 0x20000u);
			m &= m - 1;
			e3 = (unsigned)__builtin_ctz(m | 0x20000u);
			m &= m - 1;
			e4 = (unsigned)__builtin_ctz(m | 0x20000u);
			l0 = e0 + 1;
			l1 = e1 - e0;
			l2 = e2 - e1;
			l3 = e3 - e2;
			l4 = e4 - e3;
			/* size and allocated: fields 2 and 3, or 3 and 4 after a
			 * realloc's second address */
			ss = is_realloc ? e2 + 1 : e1 + 1;
			ls = is_realloc ? l3 : l2;
			sx = is_realloc ? e3 + 1 : e2 + 1;
			lx = is_realloc ? l4 : l3;
			last = is_free ? e1 : take_x ? sx + lx - 1 : ss + ls - 1;
			x = load64(q + e0 + 1);
			la = l1;
			a1 = vvalue8(x, la);
			if (__builtin_expect((l0 > 8) | (l1 > 8) | (is_realloc & (l2 > 8)) | (!is_free & (ls > 8)) |
						     (take_x & (lx > 8)) | (last >= 16) | (q + last >= end) |
						     (is_reused & (a1 >= MP_REUSE_SLOTS)),
					     0)) {
				ctag = tag_at + 1; /* the slow path below sorts it out */
				goto slow;
			}
			memcpy(caddr, &x, 8);
			caddr += la;
			if (__builtin_expect(is_realloc, 0)) {
				x = load64(q + e1 + 1);
				memcpy(caddr, &x, 8);
				caddr += l2;
				a2 = vvalue8(x, l2);
			}
			x = load64(q);
			memcpy(ctime, &x, 8);
			ctime += l0;
			x = load64(q + ss);
			memcpy(csize, &x, 8);
			csize += ls & (0u - !is_free);
			x = load64(q + sx);
			memcpy(csize, &x, 8);
			csize += lx & (0u - take_x);
			p = q + last + 1;
			moved = addr + ((uint64_t)mp_unzigzag(a1) << shift) + ((uint64_t)mp_unzigzag(a2) << shift);
			addr = is_reused ? reuse[a1 & (MP_REUSE_SLOTS - 1)] : moved;
			events += 1 + is_realloc;
			{
				unsigned rs = mp_reuse_slot(addr);
				reuse[rs] = is_free ? addr : reuse[rs];
			}
			if (ages) {
				/* allocations enter the age table; a free found there
				 * becomes FREE_AGED when the age is not longer than the
				 * address delta */
				age_slot_t *sl = age_slot(e, addr);
				uint64_t sa = sl->addr, age, abytes;
				uint32_t si = sl->index, sg = sl->gen, gen = (uint32_t)e->gen;
				unsigned alen, use;

				age = (uint64_t)nallocs + 1 - si;
				nallocs += !is_free;
				sl->addr = is_free ? sa : addr;
				sl->index = is_free ? si : nallocs;
				sl->gen = is_free ? sg : gen;
				abytes = venc8(age & ((1ull << 56) - 1), &alen);
				use = is_free & (sg == gen) & (sa == addr) & (alen <= la);
				/* unused, the age lands past the cursor: harmless (and no
				 * reload of bytes just stored, which would stall) */
				memcpy(use ? addr_at : caddr, &abytes, 8);
				caddr = use ? addr_at + alen : caddr;
				*tag_at = use ? (uint8_t)MP_REC_FREE_AGED : tag;
			}
			continue;
		}
	slow:
		if (__builtin_expect(tag & MP_RECF_MEMORY, 0) && move(&p, end, &cmisc, NULL))
			return -1;
		switch (kind) {
		case MP_REC_ALLOC:
			if (move(&p, end, &ctime, NULL) || move(&p, end, &caddr, &v) || move(&p, end, &csize, NULL) ||
			    (!exact && move(&p, end, &csize, NULL)))
				return -1;
			addr += tag & MP_RECF_ALIGN16 ? (uint64_t)mp_unzigzag(v) * 16 : (uint64_t)mp_unzigzag(v);
			if (ages)
				age_put(e, addr, ++nallocs);
			events++;
			break;
		case MP_REC_ALLOC_REUSED:
			if (move(&p, end, &ctime, NULL) || move(&p, end, &caddr, &v) || move(&p, end, &csize, NULL) ||
			    (!exact && move(&p, end, &csize, NULL)) || v >= MP_REUSE_SLOTS)
				return -1;
			addr = reuse[v];
			if (ages)
				age_put(e, addr, ++nallocs);
			events++;
			break;
		case MP_REC_FREE: {
			uint8_t *addr_at = caddr;
			if (move(&p, end, &ctime, NULL) || move(&p, end, &caddr, &v))
				return -1;
			addr += tag & MP_RECF_ALIGN16 ? (uint64_t)mp_unzigzag(v) * 16 : (uint64_t)mp_unzigzag(v);
			reuse[mp_reuse_slot(addr)] = addr;
			events++;
			if (ages) {
				/* FREE_AGED: the number of allocations since, instead
				 * of the address delta, when that is not longer */
				const age_slot_t *s = age_slot(e, addr);
				if (s->gen == (uint32_t)e->gen && s->addr == addr) {
					uint64_t age = nallocs + 1 - s->index;
					size_t old = (size_t)(caddr - addr_at);
					uint8_t tmp[MP_VARINT_MAX];
					size_t len = (size_t)(mp_varint_put(tmp, age) - tmp);
					if (len <= old) {
						memcpy(addr_at, tmp, len);
						caddr = addr_at + len;
						*tag_at = (uint8_t)((tag & MP_RECF_MEMORY) | MP_REC_FREE_AGED);
					}
				}
			}
			break;
		}
		case MP_REC_REALLOC:
			if (move(&p, end, &ctime, NULL) || move(&p, end, &caddr, &v) || move(&p, end, &caddr, &v2) ||
			    move(&p, end, &csize, NULL) || (!exact && move(&p, end, &csize, NULL)))
				return -1;
			if (tag & MP_RECF_ALIGN16)
				addr += (uint64_t)mp_unzigzag(v) * 16 + (uint64_t)mp_unzigzag(v2) * 16;
			else
				addr += (uint64_t)mp_unzigzag(v) + (uint64_t)mp_unzigzag(v2);
			if (ages)
				age_put(e, addr, ++nallocs);
			events += 2;
			break;
		case MP_REC_REGION_ADD:
			if (move(&p, end, &ctime, NULL) || move(&p, end, &caddr, &v) || move(&p, end, &csize, NULL))
				return -1;
			addr += tag & MP_RECF_ALIGN16 ? (uint64_t)mp_unzigzag(v) * 16 : (uint64_t)mp_unzigzag(v);
			events++;
			break;
		case MP_REC_REGION_REMOVE:
			if (move(&p, end, &ctime, NULL) || move(&p, end, &caddr, &v))
				return -1;
			addr += tag & MP_RECF_ALIGN16 ? (uint64_t)mp_unzigzag(v) * 16 : (uint64_t)mp_unzigzag(v);
			events++;
			break;
		case MP_REC_ALLOC_FAILED:
			if (move(&p, end, &ctime, NULL) || move(&p, end, &csize, NULL))
				return -1;
			events++;
			break;
		case MP_REC_STEP:
		case MP_REC_MARK:
			if (move(&p, end, &ctime, NULL) || move(&p, end, &cmisc, NULL))
				return -1;
			events++;
			break;
		case MP_REC_CONTEXT:
			if (move(&p, end, &cmisc, NULL) || move(&p, end, &cmisc, NULL) || move(&p, end, &cmisc, NULL) ||
			    move(&p, end, &cmisc, NULL))
				return -1;
			break;
		case MP_REC_STACK:
			if (move(&p, end, &cmisc, NULL))
				return -1;
			break;
		default: /* FREE_AGED is the encoder's own; others do not exist */
			return -1;
		}
	}
	col[MP_COL_TAG].len = (size_t)(ctag - col[MP_COL_TAG].data);
	col[MP_COL_TIME].len = (size_t)(ctime - col[MP_COL_TIME].data);
	col[MP_COL_ADDR].len = (size_t)(caddr - col[MP_COL_ADDR].data);
	col[MP_COL_SIZE].len = (size_t)(csize - col[MP_COL_SIZE].data);
	col[MP_COL_MISC].len = (size_t)(cmisc - col[MP_COL_MISC].data);
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
}
