/* deflate_huff.c - Huffman-only and stored deflate blocks (RFC 1951); see
 * deflate_huff.h for why the writer does not use zlib's deflate. */
#include <memprof/format/deflate_huff.h>

#include <memprof/format/cpufeat.h>

#include <stdlib.h>
#include <string.h>

#define NLIT 257     /* byte literals and end-of-block; no length codes */
#define MAXBITS 15   /* deflate's longest code */
#define CL_MAXBITS 7 /* longest code of the code-length alphabet */
#define STORE_GAIN_PCT 7 /* code a segment only if that saves this much */

/* --- bits ---------------------------------------------------------------- */

static inline void put_bits(mp_dh_writer_t *w, uint64_t v, unsigned n)
{
	w->bits |= v << w->nbits;
	w->nbits += n;
	while (w->nbits >= 8) {
		*w->out++ = (uint8_t)w->bits;
		w->bits >>= 8;
		w->nbits -= 8;
	}
}

void mp__dh_begin(mp_dh_writer_t *w, uint8_t *out)
{
	w->out = out;
	w->bits = 0;
	w->nbits = 0;
}

uint8_t *mp__dh_end(mp_dh_writer_t *w)
{
	if (w->nbits)
		*w->out++ = (uint8_t)w->bits;
	w->bits = 0;
	w->nbits = 0;
	return w->out;
}

/* --- code lengths -------------------------------------------------------- */

typedef struct {
	uint32_t freq;
	uint16_t sym;
} leaf_t;

/* Sort leaves, given in symbol order, by (frequency, symbol): an LSD
 * radix sort, a byte of the frequency per pass, as many passes as the
 * largest frequency has bytes (stable, so ties stay in symbol order). A
 * table is built for every column part of every chunk: qsort, or any
 * comparison sort, costs several times this. */
static void sort_leaves(leaf_t *leaf, int n)
{
	leaf_t tmp[NLIT], *src = leaf, *dst = tmp, *t;
	uint32_t max = 0, count[256];
	unsigned shift;
	int i;

	for (i = 0; i < n; i++)
		max |= leaf[i].freq;
	for (shift = 0; shift < 32 && (max >> shift); shift += 8) {
		uint32_t sum = 0;
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(src[i].freq >> shift) & 0xff]++;
		for (i = 0; i < 256; i++) {
			uint32_t c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i].freq >> shift) & 0xff]++] = src[i];
		t = src, src = dst, dst = t;
	}
	if (src != leaf)
		memcpy(leaf, src, (size_t)n * sizeof(*leaf));
}

/* Huffman code lengths, at most limit bits, for nsym symbols (<= NLIT). A
 * tree too deep is rebuilt from flattened frequencies: rare (a segment's
 * rarest byte would have to be thousands of times rarer than its commonest
 * at every level), and it costs a fraction of a percent when it happens.
 * Unused symbols get 0. With one used symbol, a second one gets a code too:
 * zlib only accepts complete codes. */
static void build_lengths(const uint32_t *freq, int nsym, unsigned limit, uint8_t *len)
{
	leaf_t leaf[NLIT];
	uint32_t weight[2 * NLIT];
	uint16_t parent[2 * NLIT];
	uint8_t depth[2 * NLIT];
	int n, i;

	memset(len, 0, (size_t)nsym);
	for (n = 0, i = 0; i < nsym; i++)
		if (freq[i]) {
			leaf[n].freq = freq[i];
			leaf[n++].sym = (uint16_t)i;
		}
	if (n < 2) {
		int other = (n == 1 && leaf[0].sym == 0) ? 1 : 0;
		if (n == 1)
			len[leaf[0].sym] = 1;
		len[other] = 1;
		return;
	}
	sort_leaves(leaf, n);
	for (;;) {
		unsigned maxd = 0;
		int li = 0, ii, next;

		for (i = 0; i < n; i++)
			weight[i] = leaf[i].freq;
		/* Two queues: sorted leaves, and internal nodes in the order made
		 * (their weights only grow). */
		ii = next = n;
		while (next < 2 * n - 1) {
			int pick[2], k;
			for (k = 0; k < 2; k++) {
				if (li < n && (ii >= next || weight[li] <= weight[ii]))
					pick[k] = li++;
				else
					pick[k] = ii++;
			}
			weight[next] = weight[pick[0]] + weight[pick[1]];
			parent[pick[0]] = parent[pick[1]] = (uint16_t)next;
			next++;
		}
		depth[2 * n - 2] = 0;
		for (i = 2 * n - 3; i >= 0; i--) {
			depth[i] = (uint8_t)(depth[parent[i]] + 1);
			if (i < n && depth[i] > maxd)
				maxd = depth[i];
		}
		if (maxd <= limit) {
			for (i = 0; i < n; i++)
				len[leaf[i].sym] = depth[i];
			return;
		}
		/* Flatten and retry: f / 2 + 1 keeps the leaves in order (ties
		 * aside, which any order serves), so no sort again. */
		for (i = 0; i < n; i++)
			leaf[i].freq = leaf[i].freq / 2 + 1;
	}
}

/* Canonical codes (RFC 1951 3.2.2), bit-reversed for an LSB-first writer. */
static void make_codes(const uint8_t *len, int nsym, uint16_t *code)
{
	uint16_t count[MAXBITS + 1] = {0}, next[MAXBITS + 1];
	unsigned c = 0;
	int i, b;

	for (i = 0; i < nsym; i++)
		count[len[i]]++;
	count[0] = 0;
	for (b = 1; b <= MAXBITS; b++) {
		c = (c + count[b - 1]) << 1;
		next[b] = (uint16_t)c;
	}
	for (i = 0; i < nsym; i++) {
		unsigned v;
		if (!len[i]) {
			code[i] = 0;
			continue;
		}
		/* the len[i]-bit code reversed: all 16 bits by swaps, then
		 * shifted down */
		v = next[len[i]]++;
		v = ((v >> 1) & 0x5555u) | ((v & 0x5555u) << 1);
		v = ((v >> 2) & 0x3333u) | ((v & 0x3333u) << 2);
		v = ((v >> 4) & 0x0f0fu) | ((v & 0x0f0fu) << 4);
		v = ((v >> 8) & 0x00ffu) | ((v & 0x00ffu) << 8);
		code[i] = (uint16_t)(v >> (16 - len[i]));
	}
}

/* --- blocks -------------------------------------------------------------- */

static void stored(mp_dh_writer_t *w, const uint8_t *data, size_t n, int final)
{
	do {
		size_t k = n > 65535 ? 65535 : n;
		put_bits(w, (uint64_t)(final && k == n), 3); /* BFINAL, BTYPE 00 */
		if (w->nbits)
			put_bits(w, 0, 8 - w->nbits);
		put_bits(w, k | ((uint64_t)(~k & 0xffff) << 16), 32);
		memcpy(w->out, data, k);
		w->out += k;
		data += k;
		n -= k;
	} while (n);
}

/* The 257 literal/length lengths then the one (unused, 0) distance length,
 * run-length coded with the code-length alphabet (16: repeat the previous
 * 3-6 times, 17: 3-10 zeros, 18: 11-138 zeros). */
typedef struct {
	uint8_t sym, extra_bits, extra;
} clsym_t;

static int rle_lengths(const uint8_t *len, int n, clsym_t *out)
{
	int i = 0, k = 0;

	while (i < n) {
		int v = len[i], run = 1;
		while (i + run < n && len[i + run] == v)
			run++;
		i += run;
		if (v == 0) {
			while (run >= 11) {
				int r = run > 138 ? 138 : run;
				out[k++] = (clsym_t){18, 7, (uint8_t)(r - 11)};
				run -= r;
			}
			if (run >= 3) {
				out[k++] = (clsym_t){17, 3, (uint8_t)(run - 3)};
				run = 0;
			}
		} else {
			out[k++] = (clsym_t){(uint8_t)v, 0, 0};
			run--;
			while (run >= 3) {
				int r = run > 6 ? 6 : run;
				out[k++] = (clsym_t){16, 2, (uint8_t)(r - 3)};
				run -= r;
			}
		}
		while (run-- > 0)
			out[k++] = (clsym_t){(uint8_t)v, 0, 0};
	}
	return k;
}

static const uint8_t cl_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

/* Byte histogram, four tables so that runs of one byte do not serialise on
 * one counter. */
static void histogram(const uint8_t *p, size_t n, uint32_t *freq)
{
	uint32_t h[4][256];
	size_t i = 0;
	int s;

	memset(h, 0, sizeof(h));
	for (; i + 4 <= n; i += 4) {
		h[0][p[i]]++;
		h[1][p[i + 1]]++;
		h[2][p[i + 2]]++;
		h[3][p[i + 3]]++;
	}
	for (; i < n; i++)
		h[0][p[i]]++;
	for (s = 0; s < 256; s++)
		freq[s] = h[0][s] + h[1][s] + h[2][s] + h[3][s];
}

/* The data: three codes (<= 45 bits), or four where none is longer than
 * 14 bits (nearly always: byte literals; <= 56 bits), on top of < 8
 * pending bits fit the 64-bit accumulator; then whole bytes go out with one
 * unaligned store (the bound's slack covers the bytes written past the
 * end). Code and length from their own tables: no unpacking. */
static inline __attribute__((always_inline)) void code_bytes_x(mp_dh_writer_t *w, const uint8_t *data, size_t n,
								const uint16_t *code, const uint8_t *len,
								unsigned maxlen)
{
	uint64_t bits = w->bits;
	unsigned nb = w->nbits;
	uint8_t *o = w->out;
	size_t j = 0;

#define PUT(x) (bits |= (uint64_t)code[x] << nb, nb += len[x])
#define SPILL() (memcpy(o, &bits, 8), o += nb >> 3, bits >>= nb & ~7u, nb &= 7)
	if (maxlen <= 14)
		for (; j + 4 <= n; j += 4) {
			PUT(data[j]), PUT(data[j + 1]), PUT(data[j + 2]), PUT(data[j + 3]);
			SPILL();
		}
	for (; j + 3 <= n; j += 3) {
		PUT(data[j]), PUT(data[j + 1]), PUT(data[j + 2]);
		SPILL();
	}
#undef PUT
#undef SPILL
	w->out = o;
	w->bits = bits;
	w->nbits = nb;
	for (; j < n; j++)
		put_bits(w, code[data[j]], len[data[j]]);
}

static void code_bytes_plain(mp_dh_writer_t *w, const uint8_t *data, size_t n, const uint16_t *code,
			     const uint8_t *len, unsigned maxlen)
{
	code_bytes_x(w, data, n, code, len, maxlen);
}

/* x86-64 with BMI2: shifts by a variable count as shlx/shrx, one
 * micro-op each where shl/shr by %cl take three on Intel (they keep the
 * flags): the loop above is mostly such shifts. */
#ifdef MP_HAVE_X86_VARIANTS
__attribute__((target("bmi2"))) static void code_bytes_bmi2(mp_dh_writer_t *w, const uint8_t *data, size_t n,
							     const uint16_t *code, const uint8_t *len,
							     unsigned maxlen)
{
	code_bytes_x(w, data, n, code, len, maxlen);
}

static void code_bytes(mp_dh_writer_t *w, const uint8_t *data, size_t n, const uint16_t *code, const uint8_t *len,
		       unsigned maxlen)
{
	if (mp__cpu_features() & MP_CPU_BMI2)
		code_bytes_bmi2(w, data, n, code, len, maxlen);
	else
		code_bytes_plain(w, data, n, code, len, maxlen);
}
#else
#define code_bytes code_bytes_plain
#endif

#define NOISE_GAIN_PCT 3 /* coding would save less than this: MP_DH_NOISE */

int mp__dh_segment(mp_dh_writer_t *w, const uint8_t *data, size_t n, int final, int store_only)
{
	uint32_t freq[NLIT], clfreq[19] = {0};
	uint8_t len[NLIT + 1], cllen[19];
	uint16_t code[NLIT], clcode[19];
	clsym_t cl[NLIT + 1];
	uint64_t dyn_bits, stored_bits;
	int ncl, hclen, i;

	if (store_only || n < 64) {
		stored(w, data, n, final);
		return MP_DH_STORED;
	}
	histogram(data, n, freq);
	freq[256] = 1;
	build_lengths(freq, NLIT, MAXBITS, len);
	len[NLIT] = 0; /* the one distance code: unused */
	ncl = rle_lengths(len, NLIT + 1, cl);
	for (i = 0; i < ncl; i++)
		clfreq[cl[i].sym]++;
	build_lengths(clfreq, 19, CL_MAXBITS, cllen);
	for (hclen = 19; hclen > 4 && cllen[cl_order[hclen - 1]] == 0; hclen--)
		;

	/* Exact sizes of both choices, in bits. */
	dyn_bits = 3 + 5 + 5 + 4 + 3 * (uint64_t)hclen;
	for (i = 0; i < ncl; i++)
		dyn_bits += cllen[cl[i].sym] + cl[i].extra_bits;
	for (i = 0; i < NLIT; i++)
		dyn_bits += (uint64_t)freq[i] * len[i];
	stored_bits = 8 * (uint64_t)n + 40 * (n / 65535 + 1) + 7;
	/* Coding costs several times what storing does: not worth it for
	 * less than STORE_GAIN_PCT percent (address columns, nearly random,
	 * save 4%). */
	if (dyn_bits * 100 >= stored_bits * (100 - STORE_GAIN_PCT)) {
		stored(w, data, n, final);
		return dyn_bits * 100 >= stored_bits * (100 - NOISE_GAIN_PCT) ? MP_DH_NOISE : MP_DH_STORED;
	}

	make_codes(len, NLIT, code);
	make_codes(cllen, 19, clcode);
	put_bits(w, (uint64_t)(final ? 1 : 0) | (2u << 1), 3); /* BFINAL, BTYPE 10 */
	put_bits(w, (NLIT - 257) | (0u << 5) | ((uint64_t)(hclen - 4) << 10), 14);
	for (i = 0; i < hclen; i++)
		put_bits(w, cllen[cl_order[i]], 3);
	for (i = 0; i < ncl; i++) {
		put_bits(w, clcode[cl[i].sym], cllen[cl[i].sym]);
		if (cl[i].extra_bits)
			put_bits(w, cl[i].extra, cl[i].extra_bits);
	}

	{
		unsigned maxlen = 0;

		for (i = 0; i < 256; i++)
			maxlen = len[i] > maxlen ? len[i] : maxlen;
		code_bytes(w, data, n, code, len, maxlen);
		put_bits(w, code[256], len[256]);
	}
	return MP_DH_CODED;
}
