/* columns.c - the reader's check of a chunk's parts, and 1.x columns
 * rewritten as 2.0 parts; see memprof/format/columns.h and docs/format.md
 * ("Columns"). The writer's encoder (records into column parts) is
 * src/core/write/chunkenc.c. */
#include <memprof/format/columns.h>

#include <memprof/format.h>
#include <memprof/format/varint.h>

#include <stdlib.h>
#include <string.h>

/* Which record kinds exist (0xff: not a kind); where each kind's fields
 * go is need_tab below, and docs/format.md. */
static const uint8_t plan_len[16] = {
	0xff, 4, 2, 2, 3, 2, 2, 2, 5, 4, 4, 1, 2, 4, 0xff, 0xff,
};

int mp__varint_rest_long(uint64_t h, const uint8_t **tp, const uint8_t *te, uint64_t *v)
{
	return mp_varint_resume(h & 0x7f, 7, tp, te, v);
}

/* Varints per column (tag, time, address, index, size, misc) each record
 * kind needs, in the order of docs/format.md's record table, the memory id
 * and the optional allocated size aside. */
static const uint8_t need_tab[16][MP_COLS] = {
	[MP_REC_ALLOC] = {0, 1, 1, 0, 1, 0},        [MP_REC_FREE] = {0, 1, 1, 0, 0, 0},
	[MP_REC_ALLOC_FAILED] = {0, 1, 0, 0, 1, 0}, [MP_REC_REGION_ADD] = {0, 1, 1, 0, 1, 0},
	[MP_REC_REGION_REMOVE] = {0, 1, 1, 0, 0, 0}, [MP_REC_STEP] = {0, 1, 0, 0, 0, 1},
	[MP_REC_MARK] = {0, 1, 0, 0, 0, 1},         [MP_REC_REALLOC] = {0, 1, 2, 0, 1, 0},
	[MP_REC_CONTEXT] = {0, 0, 0, 0, 0, 4},      [MP_REC_ALLOC_REUSED] = {0, 1, 0, 1, 1, 0},
	[MP_REC_STACK] = {0, 0, 0, 0, 0, 1},        [MP_REC_FREE_AGED] = {0, 1, 0, 1, 0, 0},
	[MP_REC_ALLOC_REFREED] = {0, 1, 0, 1, 1, 0},
};
/* Kinds whose plan has the optional allocated size (X). */
static const uint8_t has_opt[16] = {
	[MP_REC_ALLOC] = 1, [MP_REC_REALLOC] = 1, [MP_REC_ALLOC_REUSED] = 1, [MP_REC_ALLOC_REFREED] = 1,
};

/* Varint terminators (bytes without the high bit) in [p, p + n). Eight
 * bytes at a time: their high bits moved to the low bit of each byte and
 * summed by a multiply. */
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

int mp__chunk_check(const uint8_t *parts, const uint64_t lens[MP_PARTS], size_t n)
{
	uint64_t need[MP_COLS] = {0}, total = 0, hist[256] = {0};
	const uint8_t *tag = parts, *tend, *head, *tail;
	int c;

	for (c = 0; c < MP_PARTS; c++) {
		if (lens[c] > n - total)
			return -1;
		total += lens[c];
	}
	if (total != n)
		return -1;
	/* Count the tags by value first (one increment each), then the
	 * varints they need. */
	tend = parts + lens[0];
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
	/* One head per varint; every head that continues (high bit set) owns
	 * one run of tail bytes ending in a byte without it. */
	total = lens[0];
	for (c = MP_COL_TIME; c < MP_COLS; c++) {
		uint64_t nh = lens[MP_HEAD(c)], nt = lens[MP_TAIL(c)];
		head = parts + total;
		tail = head + nh;
		if (nh != need[c])
			return -1;
		if (nt && tail[nt - 1] >= 0x80)
			return -1; /* the last run does not end */
		if (nh - count_ends(head, nh) != count_ends(tail, nt))
			return -1;
		total += nh + nt;
	}
	return 0;
}

/* --- 1.x chunks --------------------------------------------------------- */

/* Split a column of whole varints (each terminated: checked) into heads
 * and tails, in order. Branch-free: every byte goes to one of the two. */
static void split_column(const uint8_t *s, size_t n, uint8_t *h, uint8_t *t)
{
	unsigned start = 1;
	size_t i;

	for (i = 0; i < n; i++) {
		uint8_t b = s[i], *d = start ? h : t;
		*d = b;
		h += start;
		t += !start;
		start = b < 0x80;
	}
}

/* Address-column varints of each 1.x kind that go to ADDR (deltas) and to
 * IDX (slots and ages). */
static const uint8_t addr_n[16] = {
	[MP_REC_ALLOC] = 1, [MP_REC_FREE] = 1, [MP_REC_REGION_ADD] = 1, [MP_REC_REGION_REMOVE] = 1,
	[MP_REC_REALLOC] = 2,
};
static const uint8_t idx_n[16] = {[MP_REC_ALLOC_REUSED] = 1, [MP_REC_FREE_AGED] = 1};

/* The 1.x address column dealt out to ADDR and IDX in record order, each
 * split into heads and tails at the four cursors (advanced). The column
 * was checked to hold exactly the varints the tags need, each terminated. */
static void deal_addresses(const uint8_t *tags, size_t ntags, const uint8_t *col, uint8_t *w[4])
{
	uint8_t *ah = w[0], *at = w[1], *ih = w[2], *it = w[3];
	size_t i;

	for (i = 0; i < ntags; i++) {
		unsigned kind = tags[i] & MP_REC_KIND_MASK, k, m = addr_n[kind] + idx_n[kind];
		for (k = 0; k < m; k++) {
			uint8_t b = *col++;
			if (idx_n[kind]) {
				*ih++ = b;
				while (b >= 0x80)
					*it++ = b = *col++;
			} else {
				*ah++ = b;
				while (b >= 0x80)
					*at++ = b = *col++;
			}
		}
	}
	w[0] = ah, w[1] = at, w[2] = ih, w[3] = it;
}

int mp__chunk_upgrade(const uint8_t *cols, const uint64_t lens1[MP_COLS1], size_t n, uint8_t *out,
		      uint64_t lens[MP_PARTS])
{
	/* the 2.0 column of each 1.x varint column (ADDR: ADDR and IDX) */
	static const uint8_t to2[MP_COLS1] = {MP_COL_TAG, MP_COL_TIME, MP_COL_ADDR, MP_COL_SIZE, MP_COL_MISC};
	uint64_t need[MP_COLS1] = {0}, total = 0, hist[256] = {0};
	const uint8_t *col[MP_COLS1];
	uint8_t *w[MP_PARTS], *scratch;
	int c;

	for (c = 0; c < MP_COLS1; c++) {
		if (lens1[c] > n - total)
			return -1;
		col[c] = cols + total;
		total += lens1[c];
	}
	if (total != n)
		return -1;
	/* The checks of a 1.x reader: known kinds (no 13), and each column
	 * exactly the terminated varints its records need. */
	for (total = 0; total < lens1[0]; total++)
		hist[cols[total]]++;
	for (unsigned t = 0; t < 256; t++) {
		unsigned kind = t & MP_REC_KIND_MASK;
		if (!hist[t])
			continue;
		if (plan_len[kind] == 0xff || kind == MP_REC_ALLOC_REFREED)
			return -1;
		need[MP_COL1_TIME] += hist[t] * need_tab[kind][MP_COL_TIME];
		need[MP_COL1_ADDR] += hist[t] * (need_tab[kind][MP_COL_ADDR] + need_tab[kind][MP_COL_IDX]);
		need[MP_COL1_SIZE] += hist[t] * need_tab[kind][MP_COL_SIZE];
		need[MP_COL1_MISC] += hist[t] * (need_tab[kind][MP_COL_MISC] + ((t & MP_RECF_MEMORY) != 0));
		if (has_opt[kind] && !(t & (MP_RECF_EXACT | MP_RECF_USABLE16)))
			need[MP_COL1_SIZE] += hist[t];
	}
	for (c = MP_COL1_TIME; c < MP_COLS1; c++) {
		if (lens1[c] && col[c][lens1[c] - 1] >= 0x80)
			return -1;
		if (count_ends(col[c], lens1[c]) != need[c])
			return -1;
	}
	/* Part lengths and the parts. ADDR and IDX share the old address
	 * column's bytes: their heads are counted by kind, their tails only
	 * by dealing the column out -- IDX goes to scratch first, then after
	 * ADDR's tails. */
	memset(lens, 0, MP_PARTS * sizeof(lens[0]));
	lens[0] = lens1[0];
	for (c = MP_COL1_TIME; c < MP_COLS1; c++)
		if (c != MP_COL1_ADDR) {
			lens[MP_HEAD(to2[c])] = need[c];
			lens[MP_TAIL(to2[c])] = lens1[c] - need[c];
		}
	for (unsigned t = 0; t < 256; t++) {
		lens[MP_HEAD(MP_COL_ADDR)] += hist[t] * addr_n[t & MP_REC_KIND_MASK];
		lens[MP_HEAD(MP_COL_IDX)] += hist[t] * idx_n[t & MP_REC_KIND_MASK];
	}
	/* for now all of ADDR's and IDX's tails as ADDR's: the parts after
	 * them start right */
	lens[MP_TAIL(MP_COL_ADDR)] = lens1[MP_COL1_ADDR] - lens[MP_HEAD(MP_COL_ADDR)] - lens[MP_HEAD(MP_COL_IDX)];
	if (!(scratch = malloc(lens1[MP_COL1_ADDR] + 1)))
		return -2;
	for (c = 0, total = 0; c < MP_PARTS; c++) {
		w[c] = out + total;
		total += lens[c];
	}
	memcpy(w[0], cols, lens1[0]);
	for (c = MP_COL1_TIME; c < MP_COLS1; c++)
		if (c != MP_COL1_ADDR)
			split_column(col[c], lens1[c], w[MP_HEAD(to2[c])], w[MP_TAIL(to2[c])]);
	{
		uint8_t *d[4] = {w[MP_HEAD(MP_COL_ADDR)], w[MP_TAIL(MP_COL_ADDR)], scratch,
				 scratch + lens[MP_HEAD(MP_COL_IDX)]};
		size_t ih = lens[MP_HEAD(MP_COL_IDX)], it;
		deal_addresses(cols, lens1[0], col[MP_COL1_ADDR], d);
		lens[MP_TAIL(MP_COL_ADDR)] = (uint64_t)(d[1] - w[MP_TAIL(MP_COL_ADDR)]);
		it = (size_t)(d[3] - (scratch + ih));
		lens[MP_TAIL(MP_COL_IDX)] = it;
		memcpy(d[1], scratch, ih + it); /* IDX heads, then tails, right after ADDR's */
	}
	free(scratch);
	return 0;
}
