/* chunkcodec.c - split records into columns and join them back; see
 * chunkcodec.h and docs/format.md ("Columns"). */
#include "chunkcodec.h"

#include "format.h"

#include <string.h>

/* The column of each varint field that follows a record's tag (after the
 * memory id varint, which goes to MISC when the tag has MP_RECF_MEMORY).
 * 'x' is the optional allocated-size varint, present unless the tag says
 * EXACT or USABLE16; it goes to SIZE. */
static const char *const layout[16] = {
	[MP_REC_ALLOC] = "tasx",
	[MP_REC_FREE] = "ta",
	[MP_REC_ALLOC_FAILED] = "ts",
	[MP_REC_REGION_ADD] = "tas",
	[MP_REC_REGION_REMOVE] = "ta",
	[MP_REC_STEP] = "tm",
	[MP_REC_MARK] = "tm",
	[MP_REC_REALLOC] = "taasx",
	[MP_REC_CONTEXT] = "mmmm",
	[MP_REC_ALLOC_REUSED] = "tasx",
	[MP_REC_STACK] = "m",
	[MP_REC_FREE_AGED] = "ta",
};

static int column_of(char f)
{
	switch (f) {
	case 't':
		return MP_COL_TIME;
	case 'a':
		return MP_COL_ADDR;
	case 's':
	case 'x':
		return MP_COL_SIZE;
	default:
		return MP_COL_MISC;
	}
}

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

/* Walk the records; with out == NULL only count column lengths. */
static int walk(const uint8_t *rows, size_t n, uint8_t *out, uint64_t lens[MP_COLS], uint64_t pos[MP_COLS])
{
	const uint8_t *p = rows, *end = rows + n;
	int c;

	for (c = 0; c < MP_COLS; c++)
		lens[c] = 0;
	while (p < end) {
		uint8_t tag = *p++;
		const char *f = layout[tag & MP_REC_KIND_MASK];
		size_t k;

		if (!f)
			return -1;
		if (out)
			out[pos[MP_COL_TAG]++] = tag;
		lens[MP_COL_TAG]++;
		if (tag & MP_RECF_MEMORY) {
			if (!(k = varint_len(p, end)))
				return -1;
			if (out) {
				memcpy(out + pos[MP_COL_MISC], p, k);
				pos[MP_COL_MISC] += k;
			}
			lens[MP_COL_MISC] += k;
			p += k;
		}
		for (; *f; f++) {
			if (*f == 'x' && (tag & (MP_RECF_EXACT | MP_RECF_USABLE16)))
				continue;
			if (!(k = varint_len(p, end)))
				return -1;
			c = column_of(*f);
			if (out) {
				memcpy(out + pos[c], p, k);
				pos[c] += k;
			}
			lens[c] += k;
			p += k;
		}
	}
	return 0;
}

int mp__chunk_split(const uint8_t *rows, size_t n, uint8_t *out, uint64_t lens[MP_COLS])
{
	uint64_t pos[MP_COLS];
	int c;

	if (walk(rows, n, NULL, lens, NULL))
		return -1;
	pos[0] = 0;
	for (c = 1; c < MP_COLS; c++)
		pos[c] = pos[c - 1] + lens[c - 1];
	return walk(rows, n, out, lens, pos);
}

int mp__chunk_join(const uint8_t *cols, const uint64_t lens[MP_COLS], uint8_t *rows, size_t n)
{
	const uint8_t *col[MP_COLS], *cend[MP_COLS];
	uint8_t *w = rows, *wend = rows + n;
	uint64_t total = 0;
	int c;

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
		uint8_t tag = *col[MP_COL_TAG]++;
		const char *f = layout[tag & MP_REC_KIND_MASK];
		size_t k;

		if (!f || w >= wend)
			return -1;
		*w++ = tag;
		if (tag & MP_RECF_MEMORY) {
			if (!(k = varint_len(col[MP_COL_MISC], cend[MP_COL_MISC])) || (size_t)(wend - w) < k)
				return -1;
			memcpy(w, col[MP_COL_MISC], k);
			w += k;
			col[MP_COL_MISC] += k;
		}
		for (; *f; f++) {
			if (*f == 'x' && (tag & (MP_RECF_EXACT | MP_RECF_USABLE16)))
				continue;
			c = column_of(*f);
			if (!(k = varint_len(col[c], cend[c])) || (size_t)(wend - w) < k)
				return -1;
			memcpy(w, col[c], k);
			w += k;
			col[c] += k;
		}
	}
	for (c = 0; c < MP_COLS; c++)
		if (col[c] != cend[c])
			return -1;
	return w == wend ? 0 : -1;
}

/* --- aged frees ------------------------------------------------------------ */

#include "varint.h"

typedef struct {
	uint64_t addr;  /* 0 = empty slot (address 0 is never allocated) */
	uint64_t index; /* allocation number within the chunk, from 1 */
} age_slot_t;

static void age_put(age_slot_t *tab, uint64_t mask, uint64_t addr, uint64_t index)
{
	uint64_t i = (addr * 0x9E3779B97F4A7C15ull) >> 20;

	for (;; i++) {
		age_slot_t *s = &tab[i & mask];
		if (s->addr == 0 || s->addr == addr) {
			s->addr = addr;
			s->index = index;
			return;
		}
	}
}

static uint64_t age_get(const age_slot_t *tab, uint64_t mask, uint64_t addr)
{
	uint64_t i = (addr * 0x9E3779B97F4A7C15ull) >> 20;

	for (;; i++) {
		const age_slot_t *s = &tab[i & mask];
		if (s->addr == addr)
			return s->index;
		if (s->addr == 0)
			return 0;
	}
}

size_t mp__chunk_age_frees(const uint8_t *rows, size_t n, const uint64_t *st, uint8_t *out, mp_mbuf_t *scratch)
{
	const uint8_t *p = rows, *end = rows + n;
	uint64_t addr, reuse[16], reuse_pos, nallocs = 0, mask, slots;
	uint8_t *w = out;
	age_slot_t *tab;
	int i;

	/* st: time, addr, memory, op, region, dtype, shape, reuse_pos, reuse[16] */
	addr = st[1];
	reuse_pos = st[7];
	for (i = 0; i < 16; i++)
		reuse[i] = st[8 + i];
	/* A table twice the largest possible number of allocations (2+ bytes each). */
	for (slots = 64; slots < n; slots *= 2)
		;
	mask = slots - 1;
	scratch->len = 0;
	if (mp_mbuf_reserve(scratch, slots * sizeof(age_slot_t)))
		return (size_t)-1;
	tab = (age_slot_t *)(void *)scratch->data;
	memset(tab, 0, slots * sizeof(age_slot_t));

	while (p < end) {
		const uint8_t *rec = p, *fields;
		uint8_t tag = *p++;
		int kind = tag & MP_REC_KIND_MASK;
		const char *f = layout[kind];
		uint64_t v[6];
		int nf = 0;

		if (!f)
			return (size_t)-1;
		if ((tag & MP_RECF_MEMORY) && mp_varint_get(&p, end, &v[0]))
			return (size_t)-1;
		fields = p;
		for (; *f; f++) {
			if (*f == 'x' && (tag & (MP_RECF_EXACT | MP_RECF_USABLE16)))
				continue;
			if (mp_varint_get(&p, end, &v[nf++]))
				return (size_t)-1;
		}
		switch (kind) {
		case MP_REC_ALLOC:
		case MP_REC_REGION_ADD:
		case MP_REC_REGION_REMOVE:
		case MP_REC_FREE: {
			int64_t d = mp_unzigzag(v[1]);
			uint64_t a = addr + (uint64_t)(tag & MP_RECF_ALIGN16 ? d * 16 : d);
			if (kind == MP_REC_ALLOC) {
				age_put(tab, mask, a, ++nallocs);
			} else if (kind == MP_REC_FREE) {
				uint64_t idx = a ? age_get(tab, mask, a) : 0;
				reuse[reuse_pos++ & 15] = a;
				if (idx) {
					/* FREE_AGED: tag (memory flag kept), [memory], dt, age */
					uint8_t tmp[3 * MP_VARINT_MAX + 1], *q = tmp;
					size_t mlen = (size_t)(fields - (rec + 1));

					*q++ = (uint8_t)((tag & MP_RECF_MEMORY) | MP_REC_FREE_AGED);
					memcpy(q, rec + 1, mlen);
					q += mlen;
					q = mp_varint_put(q, v[0]);              /* dt */
					q = mp_varint_put(q, nallocs + 1 - idx); /* age >= 1 */
					if ((size_t)(q - tmp) <= (size_t)(p - rec)) {
						memcpy(w, tmp, (size_t)(q - tmp));
						w += q - tmp;
						addr = a;
						continue;
					}
				}
			}
			addr = a;
			break;
		}
		case MP_REC_ALLOC_REUSED:
			if (v[1] >= 16)
				return (size_t)-1;
			addr = reuse[v[1]];
			age_put(tab, mask, addr, ++nallocs);
			break;
		case MP_REC_REALLOC: {
			int64_t d1 = mp_unzigzag(v[1]), d2 = mp_unzigzag(v[2]);
			uint64_t a = addr + (uint64_t)(tag & MP_RECF_ALIGN16 ? d1 * 16 : d1);
			addr = a + (uint64_t)(tag & MP_RECF_ALIGN16 ? d2 * 16 : d2);
			age_put(tab, mask, addr, ++nallocs);
			break;
		}
		default:
			break;
		}
		memmove(w, rec, (size_t)(p - rec)); /* in place: w never passes rec */
		w += p - rec;
	}
	return (size_t)(w - out);
}
