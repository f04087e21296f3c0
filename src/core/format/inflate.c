/* inflate.c - raw deflate (RFC 1951) decoder for block payloads; see
 * inflate.h for why the reader does not use zlib's inflate.
 *
 * Decoding tables. A Huffman code is decoded by looking up the next LBITS
 * (DBITS for distances) bits of the stream in a primary table; codes longer
 * than that continue in a sub-table of 2^(15 - LBITS) entries per prefix.
 * Each 32-bit entry holds what to do:
 *
 *   bits  0-4   bits to drop: the code's length (in this table), plus the
 *               extra bits of a length or distance; for a sub-table pointer,
 *               the primary bits
 *   bits  5-6   how many literals the entry holds (0 to 3)
 *   literal entries (bits 5-6 are tested first: the literals overlap the
 *   flags of the other entries):
 *   bits  8-31  the literals, the first in bits 8-15
 *   other entries:
 *   bits  8-11  the code's length alone (extra bits start there); for a
 *               sub-table pointer, the sub-table's index bits
 *   bit  14     sub-table pointer
 *   bit  15     exceptional: end of block (value 0) or invalid symbol (1)
 *   bits 16-31  the length or distance base, or the sub-table's offset
 *
 * Entries with several literals: when a literal's code leaves room in the
 * primary bits for the whole codes of the next one or two literals, the
 * entry holds them all. Column bytes get 2-6 bit codes, so most lookups
 * yield two bytes or more.
 *
 * Bit buffer: 64 bits, filled LSB first. While at least 16 input bytes and
 * FAST_OUT bytes of output room remain, the fast loop refills it with one
 * unaligned 8-byte load and copies matches 8 bytes at a time (it may write
 * a few bytes past the match, never past out_len). Near the ends the
 * careful loop takes over: byte-wise refills that pad with zero bytes past
 * the input's end, counted in `ovr`, so reading past the end is noticed
 * the moment a padding bit is consumed (8 * ovr > bits left).
 */
#include <memprof/format/inflate.h>

#include <memprof/error.h>

#include <string.h>

#define LBITS 11    /* primary literal/length table index bits */
#define DBITS 9     /* primary distance table index bits */
#define MAXLEN 15   /* deflate's longest code */
#define LSUB (MAXLEN - LBITS)
#define DSUB (MAXLEN - DBITS)
#define NLITLEN 288 /* literal/length symbols (286, 287 are invalid) */
#define NDIST 32    /* distance symbols (30, 31 are invalid) */
/* A sub-table per prefix of a long code: at most one per symbol. */
#define LTABLE ((1u << LBITS) + NLITLEN * (1u << LSUB))
#define DTABLE ((1u << DBITS) + NDIST * (1u << DSUB))
#define FAST_IN 16   /* two 8-byte refills per fast iteration */
#define FAST_OUT 272 /* a 258-byte match copied 8 bytes at a time, rounded up */

#define E_LIT1 (1u << 5)
#define E_LITS (3u << 5)
#define E_DROP(e) ((e) & 31)
#define E_NLIT(e) (((e) >> 5) & 3)
#define E_SUB (1u << 14)
#define E_EXC (1u << 15)
#define E_EOB E_EXC
#define E_BAD (E_EXC | (1u << 16))

#define MASK(n) (((uint64_t)1 << (n)) - 1)

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
				      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
				      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
				       193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
/* The order the code-length code's lengths are sent in. */
static const uint8_t cl_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

/* A literal's code, for merge_literals(). */
typedef struct {
	uint16_t rev; /* the code, first bit lowest (the table index) */
	uint8_t len;
	uint8_t sym;
} lcode_t;

typedef struct {
	uint32_t lit[LTABLE];
	uint32_t dist[DTABLE];
	int fixed; /* the tables hold the fixed codes (built once per call) */
} tables_t;

static inline void put_le32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* The entry for symbol sym whose code takes len bits of this table. */
static uint32_t lit_entry(unsigned sym, unsigned len)
{
	if (sym < 256)
		return (uint32_t)sym << 8 | E_LIT1 | len;
	if (sym == 256)
		return E_EOB | len;
	if (sym < 286)
		return (uint32_t)len_base[sym - 257] << 16 | len << 8 | (len + len_extra[sym - 257]);
	return E_BAD | len;
}

static uint32_t dist_entry(unsigned sym, unsigned len)
{
	if (sym < 30)
		return (uint32_t)dist_base[sym] << 16 | len << 8 | (len + dist_extra[sym]);
	return E_BAD | len;
}

/* Build the table t (tb primary bits) for the code lengths lens[0..n);
 * for a literal/length code (lits not NULL), lits[0..*nlits) gets the
 * literals whose codes are shorter than tb, shortest first. zlib's rules:
 * over-subscribed is an error; incomplete is an error unless the code has
 * no codes at all or a single code of length 1 (the missing half then
 * decodes as an invalid symbol). Returns NULL, or why not. */
static const char *build(uint32_t *t, const uint8_t *lens, unsigned n, unsigned tb, lcode_t *lits, unsigned *nlits)
{
	int dist = lits == NULL;
	unsigned count[MAXLEN + 1] = {0}, offs[MAXLEN + 2], len, sym, i, code, max = 0, nsub = 0;
	unsigned last = ~0u, sub = MAXLEN - tb, base = 0;
	uint16_t sorted[NLITLEN];
	int left = 1;

	for (sym = 0; sym < n; sym++)
		count[lens[sym]]++;
	for (len = 1; len <= MAXLEN; len++) {
		left = (left << 1) - (int)count[len];
		if (left < 0)
			return dist ? "over-subscribed distance code" : "over-subscribed literal/length code";
		if (count[len])
			max = len;
	}
	if (left > 0) {
		if (max > 1)
			return dist ? "incomplete distance code" : "incomplete literal/length code";
		for (i = 0; i < (1u << tb); i++)
			t[i] = E_BAD | 1;
	}
	offs[1] = 0;
	for (len = 1; len <= MAXLEN; len++)
		offs[len + 1] = offs[len] + count[len];
	for (sym = 0; sym < n; sym++)
		if (lens[sym])
			sorted[offs[lens[sym]]++] = (uint16_t)sym;
	/* Canonical codes, in increasing order: offs[len] now ends each run. */
	code = 0;
	i = 0;
	for (len = 1; len <= max; len++, code <<= 1) {
		for (; i < offs[len]; i++, code++) {
			unsigned rev = 0, c = code, k;

			sym = sorted[i];
			for (k = 0; k < len; k++, c >>= 1)
				rev = rev << 1 | (c & 1);
			if (len <= tb) {
				uint32_t e = dist ? dist_entry(sym, len) : lit_entry(sym, len);
				for (k = rev; k < (1u << tb); k += 1u << len)
					t[k] = e;
				if (!dist && sym < 256 && len < tb) {
					lits[*nlits].rev = (uint16_t)rev;
					lits[*nlits].len = (uint8_t)len;
					lits[*nlits].sym = (uint8_t)sym;
					++*nlits;
				}
			} else {
				unsigned pre = rev & ((1u << tb) - 1), rl = len - tb;
				uint32_t e = dist ? dist_entry(sym, rl) : lit_entry(sym, rl);

				if (pre != last) { /* codes sharing a prefix are adjacent */
					base = (1u << tb) + nsub++ * (1u << sub);
					t[pre] = (uint32_t)base << 16 | E_SUB | sub << 8 | tb;
					last = pre;
				}
				for (k = rev >> tb; k < (1u << sub); k += 1u << rl)
					t[base + k] = e;
			}
		}
	}
	return NULL;
}

/* Merge the codes of up to three literals that fit the primary bits into
 * one entry (see the top). lc[0..n) are the literals with codes shorter
 * than LBITS, shortest first (as build() found them). Enumerating the
 * combinations writes each merged entry directly: no entry is read, and
 * the work is proportional to the table (each prefix a, a+b, a+b+c covers
 * its own entries, at most 2^LBITS of them per level). */
static void merge_literals(uint32_t *t, const lcode_t *lc, unsigned n)
{
	unsigned a, b, c, k;

	for (a = 0; a < n; a++) {
		unsigned la = lc[a].len;

		for (b = 0; b < n && la + lc[b].len <= LBITS; b++) {
			unsigned l2 = la + lc[b].len, base = lc[a].rev | (unsigned)lc[b].rev << la;
			uint32_t pair = (uint32_t)lc[a].sym << 8 | (uint32_t)lc[b].sym << 16 | 2u << 5 | l2;

			for (k = base; k < (1u << LBITS); k += 1u << l2)
				t[k] = pair;
			for (c = 0; c < n && l2 + lc[c].len <= LBITS; c++) {
				unsigned l3 = l2 + lc[c].len;
				uint32_t triple = (pair & ~(uint32_t)0x7f) | (uint32_t)lc[c].sym << 24 | 3u << 5 | l3;

				for (k = base | (unsigned)lc[c].rev << l2; k < (1u << LBITS); k += 1u << l3)
					t[k] = triple;
			}
		}
	}
}

static void build_fixed(tables_t *tb)
{
	uint8_t lens[NLITLEN];
	lcode_t lits[256];
	unsigned nlits = 0;

	memset(lens, 8, 144);
	memset(lens + 144, 9, 112);
	memset(lens + 256, 7, 24);
	memset(lens + 280, 8, 8);
	(void)build(tb->lit, lens, NLITLEN, LBITS, lits, &nlits);
	merge_literals(tb->lit, lits, nlits);
	memset(lens, 5, NDIST);
	(void)build(tb->dist, lens, NDIST, DBITS, NULL, NULL);
	tb->fixed = 1;
}

/* The bit buffer, as macros over the locals of mp__inflate (so they stay
 * in registers). REFILL: at least 56 bits, padding past the end. */
#define REFILL()                                                                                                       \
	do {                                                                                                           \
		while (bl < 56) {                                                                                      \
			if (in < in_end) {                                                                             \
				bb |= (uint64_t)*in++ << bl;                                                           \
			} else {                                                                                       \
				if (8 * ovr > bl)                                                                      \
					goto truncated;                                                                \
				ovr++;                                                                                 \
			}                                                                                              \
			bl += 8;                                                                                       \
		}                                                                                                      \
	} while (0)
/* Only while in_end - in >= 8. The bytes past the 56..63 bits counted are
 * already in the buffer's top bits: the next refill ORs them in again. */
#define REFILL_FAST()                                                                                                  \
	do {                                                                                                           \
		bb |= load_le64(in) << bl;                                                                             \
		in += (63 - bl) >> 3;                                                                                  \
		bl |= 56;                                                                                              \
	} while (0)
#define NEED(n)                                                                                                        \
	do {                                                                                                           \
		if (bl < (n))                                                                                          \
			REFILL();                                                                                      \
	} while (0)
#define DROP(n)                                                                                                        \
	do {                                                                                                           \
		bb >>= (n);                                                                                            \
		bl -= (n);                                                                                             \
	} while (0)
#define FAIL(msg)                                                                                                      \
	do {                                                                                                           \
		reason = (msg);                                                                                        \
		goto corrupt;                                                                                          \
	} while (0)
/* Output entry e's literals (one to three, written as four bytes) and look
 * up the next entry. */
#define LIT_STEP()                              \
	do {                                    \
		DROP(E_DROP(e));                \
		put_le32(out, e >> 8);          \
		out += E_NLIT(e);               \
		e = tb.lit[bb & MASK(LBITS)];   \
	} while (0)

/* Entry e is a length: decode it (e's base, its extra bits), the distance
 * code and its extra bits into len and dist, and check the distance
 * against the output so far. Uses the locals d and saved. */
#define MATCH()                                                                                                        \
	do {                                                                                                           \
		saved = bb;                                                                                            \
		DROP(E_DROP(e));                                                                                       \
		len = (e >> 16) + (unsigned)((saved & MASK(E_DROP(e))) >> ((e >> 8) & 15));                         \
		d = tb.dist[bb & MASK(DBITS)];                                                                         \
		if (d & E_SUB) {                                                                                       \
			DROP(DBITS);                                                                                   \
			d = tb.dist[(d >> 16) + (bb & MASK(DSUB))];                                                    \
		}                                                                                                      \
		if (d & E_EXC)                                                                                         \
			FAIL("invalid distance symbol");                                                               \
		saved = bb;                                                                                            \
		DROP(E_DROP(d));                                                                                       \
		dist = (d >> 16) + (unsigned)((saved & MASK(E_DROP(d))) >> ((d >> 8) & 15));                         \
		if (dist > (size_t)(out - out_start))                                                                  \
			FAIL("distance farther back than the output so far");                                          \
	} while (0)

int mp__inflate(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len, const char **why)
{
	static uint8_t none[1];
	const uint8_t *in_end;
	uint8_t *out_start, *out_end;
	uint64_t bb = 0;
	unsigned bl = 0, ovr = 0, final;
	const char *reason = NULL;
	tables_t tb;

	if (!out)
		out = none, out_len = 0;
	if (!in || !in_len)
		goto truncated;
	in_end = in + in_len;
	out_start = out;
	out_end = out + out_len;
	tb.fixed = 0;
	do {
		unsigned type;

		NEED(3);
		final = bb & 1;
		type = (bb >> 1) & 3;
		DROP(3);
		if (type == 0) {
			/* Stored: back to the byte boundary, give back the whole
			 * bytes buffered (none of them padding) and copy. */
			size_t n;

			DROP(bl & 7);
			if (8 * ovr > bl)
				goto truncated;
			in -= bl / 8 - ovr;
			bb = 0;
			bl = ovr = 0;
			if (in_end - in < 4)
				goto truncated;
			n = (size_t)in[0] | (size_t)in[1] << 8;
			if ((in[2] ^ in[0]) != 0xff || (in[3] ^ in[1]) != 0xff)
				FAIL("stored block length does not match its complement");
			in += 4;
			if ((size_t)(in_end - in) < n)
				goto truncated;
			if ((size_t)(out_end - out) < n)
				FAIL("output longer than announced");
			if (n)
				memcpy(out, in, n);
			in += n;
			out += n;
			continue;
		}
		if (type == 3)
			FAIL("invalid block type");
		if (type == 1) {
			if (!tb.fixed)
				build_fixed(&tb);
		} else {
			uint8_t lens[NLITLEN + NDIST], cl[19] = {0};
			uint8_t clt[128];
			lcode_t lits[256];
			unsigned nlits = 0;
			unsigned nlen, ndist, ncl, i, count[8] = {0}, len, code, k;
			int left = 1;

			NEED(14);
			nlen = 257 + (unsigned)(bb & 31);
			ndist = 1 + (unsigned)((bb >> 5) & 31);
			ncl = 4 + (unsigned)((bb >> 10) & 15);
			DROP(14);
			if (nlen > 286 || ndist > 30)
				FAIL("too many length or distance codes");
			for (i = 0; i < ncl; i++) {
				NEED(3);
				cl[cl_order[i]] = bb & 7;
				DROP(3);
			}
			/* The code-length code must be complete (zlib: no exception). */
			for (i = 0; i < 19; i++)
				count[cl[i]]++;
			for (len = 1; len <= 7; len++) {
				left = (left << 1) - (int)count[len];
				if (left < 0)
					FAIL("over-subscribed code-length code");
			}
			if (left)
				FAIL("incomplete code-length code");
			/* 7-bit table of (symbol << 3 | length), canonical order. */
			for (len = 1, code = 0; len <= 7; len++, code <<= 1)
				for (i = 0; i < 19; i++) {
					unsigned rev = 0, c = code, j;

					if (cl[i] != len)
						continue;
					for (j = 0; j < len; j++, c >>= 1)
						rev = rev << 1 | (c & 1);
					for (k = rev; k < 128; k += 1u << len)
						clt[k] = (uint8_t)(i << 3 | len);
					code++;
				}
			for (i = 0; i < nlen + ndist;) {
				unsigned e, sym, rep, val;

				NEED(14);
				e = clt[bb & 127];
				sym = e >> 3;
				DROP(e & 7);
				if (sym < 16) {
					lens[i++] = (uint8_t)sym;
					continue;
				}
				if (sym == 16) {
					if (i == 0)
						FAIL("code-length repeat with no previous length");
					val = lens[i - 1];
					rep = 3 + (unsigned)(bb & 3);
					DROP(2);
				} else if (sym == 17) {
					val = 0;
					rep = 3 + (unsigned)(bb & 7);
					DROP(3);
				} else {
					val = 0;
					rep = 11 + (unsigned)(bb & 127);
					DROP(7);
				}
				if (rep > nlen + ndist - i)
					FAIL("code-length repeat past the last code");
				memset(lens + i, (int)val, rep);
				i += rep;
			}
			if (!lens[256])
				FAIL("no end-of-block code");
			if ((reason = build(tb.lit, lens, nlen, LBITS, lits, &nlits)) != NULL ||
			    (reason = build(tb.dist, lens + nlen, ndist, DBITS, NULL, NULL)) != NULL)
				goto corrupt;
			merge_literals(tb.lit, lits, nlits);
			tb.fixed = 0;
		}

		/* Fast loop: see the top for the margins. */
		while (in_end - in >= FAST_IN && out_end - out >= FAST_OUT) {
			uint32_t e, d;
			uint64_t saved;
			unsigned len, dist;
			uint8_t *dst;
			const uint8_t *src;

			REFILL_FAST();
			e = tb.lit[bb & MASK(LBITS)];
		fast_entry:
			if (e & E_LITS) {
				/* Four primary entries (44 bits of the 56) and the
				 * lookup of a fifth (55), made before the refill so
				 * that the refill is off the lookups' critical path.
				 * 12 bytes written (+ 1 past them). */
				LIT_STEP();
				if (!(e & E_LITS))
					goto fast_other;
				LIT_STEP();
				if (!(e & E_LITS))
					goto fast_other;
				LIT_STEP();
				if (!(e & E_LITS))
					goto fast_other;
				LIT_STEP();
				if (in_end - in < FAST_IN || out_end - out < FAST_OUT)
					break;
				REFILL_FAST();
				goto fast_entry;
			fast_other:
				REFILL_FAST(); /* the second since the margins' check */
			}
			if (e & E_SUB) {
				DROP(LBITS);
				e = tb.lit[(e >> 16) + (bb & MASK(LSUB))];
				if (e & E_LITS) {
					DROP(E_DROP(e));
					*out++ = (uint8_t)(e >> 8);
					continue;
				}
			}
			if (e & E_EXC) {
				if (e != (E_EOB | (E_DROP(e))))
					FAIL("invalid literal/length symbol");
				DROP(E_DROP(e));
				goto block_done;
			}
			MATCH(); /* <= 20 + 28 bits: the margins cover it */
			dst = out;
			src = out - dist;
			out += len;
			if (dist >= 8) {
				do {
					memcpy(dst, src, 8);
					dst += 8;
					src += 8;
				} while (dst < out);
			} else if (dist == 1) {
				uint64_t v = 0x0101010101010101ull * *src;
				do {
					memcpy(dst, &v, 8);
					dst += 8;
				} while (dst < out);
			} else {
				do
					*dst++ = *src++;
				while (dst < out);
			}
		}

		/* Careful loop: every bit and byte checked. */
		for (;;) {
			uint32_t e, d;
			uint64_t saved;
			unsigned len, dist, n, k;

			REFILL();
			e = tb.lit[bb & MASK(LBITS)];
			if (!(e & E_LITS) && (e & E_SUB)) {
				DROP(LBITS);
				e = tb.lit[(e >> 16) + (bb & MASK(LSUB))];
			}
			if (e & E_LITS) {
				n = E_NLIT(e);
				if ((size_t)(out_end - out) < n)
					FAIL("output longer than announced");
				DROP(E_DROP(e));
				for (k = 0; k < n; k++)
					out[k] = (uint8_t)(e >> (8 + 8 * k));
				out += n;
				continue;
			}
			if (e & E_EXC) {
				if (e != (E_EOB | (E_DROP(e))))
					FAIL("invalid literal/length symbol");
				DROP(E_DROP(e));
				break;
			}
			MATCH();
			if (len > (size_t)(out_end - out))
				FAIL("output longer than announced");
			for (n = 0; n < len; n++)
				out[n] = out[(ptrdiff_t)n - (ptrdiff_t)dist];
			out += len;
		}
	block_done:;
	} while (!final);

	if (8 * ovr > bl)
		goto truncated;
	if (out != out_end)
		FAIL("output shorter than announced");
	if (bl - 8 * ovr >= 8 || in != in_end)
		FAIL("trailing bytes after the final block");
	return 0;

truncated:
	if (why)
		*why = "input ends inside the stream";
	return MP_ETRUNCATED;
corrupt:
	if (why)
		*why = reason;
	return MP_ECORRUPT;
}
