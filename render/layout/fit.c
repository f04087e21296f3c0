/* fit.c - text made safe to draw and to fit: invalid UTF-8 cleaned, a text
 * shortened with an ellipsis to fit a width, cut between code points; and
 * the fixed-width measure tests use. */
#include <memprof/layout.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "\xE2\x80\xA6" /* U+2026 */

/* The code point of the valid sequence of n bytes at p, or -1. */
static long decode(const unsigned char *p, size_t n)
{
	static const long least[5] = {0, 0, 0x80, 0x800, 0x10000};
	long c = n == 2 ? p[0] & 0x1F : n == 3 ? p[0] & 0x0F : p[0] & 0x07;

	for (size_t k = 1; k < n; k++) {
		if ((p[k] & 0xC0) != 0x80)
			return -1;
		c = c << 6 | (p[k] & 0x3F);
	}
	if (c < least[n] || c > 0x10FFFF || (c & 0xFFFFF800) == 0xD800 || (c >= 0xFDD0 && c <= 0xFDEF) ||
	    (c & 0xFFFE) == 0xFFFE)
		return -1;
	return c;
}

/* The length of the valid sequence at p (1 to 4), 0 when p starts none,
 * or SIZE_MAX when the string ends inside it. */
static size_t sequence(const unsigned char *p)
{
	size_t n = p[0] < 0x80 ? 1 : p[0] >= 0xC2 && p[0] <= 0xDF ? 2 : (p[0] & 0xF0) == 0xE0 ? 3
		   : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : 0, k = 1;

	if (n <= 1)
		return n;
	while (k < n && p[k] && (p[k] & 0xC0) == 0x80)
		k++;
	if (k < n && !p[k])
		return SIZE_MAX;
	return decode(p, n) >= 0 ? n : 0;
}

void mp_utf8_clean(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		size_t n = sequence(p);
		if (n == SIZE_MAX) { /* cut off by a truncation: drop it */
			*p = '\0';
			return;
		}
		if (n) {
			p += n;
			continue;
		}
		*p++ = '?';
	}
}

int mp_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = sequence(p);
		if (n == 0 || n == SIZE_MAX)
			return 0;
		p += n;
	}
	return 1;
}

/* Code points of s as it will be drawn: cleaned as mp_utf8_clean cleans
 * it (a '?' for each byte that starts no valid sequence, a sequence cut
 * off at the end dropped), so that a measure agrees with the painter. */
static size_t drawn_code_points(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p) {
		size_t len = sequence(p);
		if (len == SIZE_MAX)
			break;
		p += len ? len : 1;
		n++;
	}
	return n;
}

static double fixed_width(void *ctx, const char *s, double size, int bold)
{
	(void)ctx;
	(void)bold;
	return 0.6 * size * (double)drawn_code_points(s);
}

const mp_text_measure_t mp_text_measure_fixed = {fixed_width, NULL};

/* Byte offset of every code point of s, and one past the end: off[0..n]. */
static size_t *offsets(const char *s, size_t *n)
{
	size_t len = strlen(s), k = 0;
	size_t *off = malloc((len + 1) * sizeof(*off));

	if (!off)
		return NULL;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			off[k++] = i;
	off[k] = len;
	*n = k;
	return off;
}

/* s with `keep` of its n code points kept around the ellipsis. */
static void shorten(const char *s, const size_t *off, size_t n, size_t keep, mp_ellipsis_t where, char *out,
		    size_t outsize)
{
	size_t head = where == MP_ELLIPSIS_END ? keep : where == MP_ELLIPSIS_START ? 0 : (keep + 1) / 2;
	size_t tail = keep - head, hb = off[head], tb = off[n] - off[n - tail];
	size_t need = hb + strlen(ELLIPSIS) + tb + 1;

	if (need > outsize) { /* cannot happen with outsize > strlen(s) + 3 */
		out[0] = '\0';
		return;
	}
	memcpy(out, s, hb);
	memcpy(out + hb, ELLIPSIS, strlen(ELLIPSIS));
	memcpy(out + hb + strlen(ELLIPSIS), s + off[n - tail], tb);
	out[hb + strlen(ELLIPSIS) + tb] = '\0';
}

int mp_text_fit(const mp_text_measure_t *m, const char *s, double size, int bold, double max_w, mp_ellipsis_t where,
		char *out, size_t outsize)
{
	size_t n, lo = 0, hi, *off;
	size_t len = strlen(s);

	if (!outsize)
		return 1;
	if (len < outsize && mp_text_width(m, s, size, bold) <= max_w) {
		memcpy(out, s, len + 1);
		return 0;
	}
	out[0] = '\0';
	if (mp_text_width(m, ELLIPSIS, size, bold) > max_w || !(off = offsets(s, &n)))
		return 1;
	/* the most code points that fit: widths grow with the count kept */
	hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi + 1) / 2;
		shorten(s, off, n, mid, where, out, outsize);
		if (out[0] && mp_text_width(m, out, size, bold) <= max_w)
			lo = mid;
		else
			hi = mid - 1;
	}
	shorten(s, off, n, lo, where, out, outsize);
	free(off);
	return 1;
}

/* Separators of a name's components: paths, scopes, qualified names. */
static int separator(char c)
{
	return c == '/' || c == ':' || c == '.' || c == ' ';
}

/* Bytes s and t share at their start and at their end, the two not
 * overlapping in the shorter. */
static void common_ends(const char *s, size_t ls, const char *t, size_t lt, size_t *pre, size_t *suf)
{
	size_t m = ls < lt ? ls : lt, p = 0, q = 0;

	while (p < m && s[p] == t[p])
		p++;
	while (q < m - p && s[ls - 1 - q] == t[lt - 1 - q])
		q++;
	*pre = p;
	*suf = q;
}

/* s as head…keep…tail, with k of the code points around [lo, hi) kept:
 * half before it, half after, what one side cannot take going to the
 * other. */
static void shorten_around(const char *s, const size_t *off, size_t n, size_t lo_cp, size_t hi_cp, size_t k,
			   char *out, size_t outsize)
{
	size_t before = lo_cp, after = n - hi_cp, h = (k + 1) / 2, t;
	size_t len = 0;

	if (h > before)
		h = before;
	t = k - h;
	if (t > after) {
		t = after;
		h = k - t < before ? k - t : before;
	}
	if (off[n] + 2 * strlen(ELLIPSIS) + 1 > outsize) {
		out[0] = '\0';
		return;
	}
	memcpy(out, s, off[h]);
	len = off[h];
	if (h < before) {
		memcpy(out + len, ELLIPSIS, strlen(ELLIPSIS));
		len += strlen(ELLIPSIS);
	}
	memcpy(out + len, s + off[lo_cp], off[hi_cp] - off[lo_cp]);
	len += off[hi_cp] - off[lo_cp];
	if (t < after) {
		memcpy(out + len, ELLIPSIS, strlen(ELLIPSIS));
		len += strlen(ELLIPSIS);
	}
	memcpy(out + len, s + off[n - t], off[n] - off[n - t]);
	len += off[n] - off[n - t];
	out[len] = '\0';
}

int mp_text_fit_apart(const mp_text_measure_t *m, const char *const *names, size_t count, size_t i, double size,
		      int bold, double max_w, char *out, size_t outsize)
{
	const char *s = names[i];
	size_t ls = strlen(s), a = 0, b = SIZE_MAX, lo, hi, n, lo_cp = 0, hi_cp, *off, klo = 0, khi;
	int others = 0;

	if (!outsize)
		return 1;
	if (ls < outsize && mp_text_width(m, s, size, bold) <= max_w) {
		memcpy(out, s, ls + 1);
		return 0;
	}
	/* where s differs from each other name: [pre, ls - suf); the window
	 * kept must meet every one of them */
	for (size_t j = 0; j < count && ls; j++) {
		size_t pre, suf, from, to;
		if (j == i || !names[j] || !strcmp(names[j], s))
			continue;
		common_ends(s, ls, names[j], strlen(names[j]), &pre, &suf);
		from = pre, to = ls - suf;
		if (to <= from) { /* s is the other's start or end: its end or start tells */
			to = from < ls ? from + 1 : ls;
			from = to - 1;
		}
		if (!others || from > a)
			a = from;
		if (to < b)
			b = to;
		others = 1;
	}
	if (!others)
		return mp_text_fit(m, s, size, bold, max_w, MP_ELLIPSIS_MIDDLE, out, outsize);
	lo = a < b - 1 ? a : b - 1;
	hi = (a > b - 1 ? a : b - 1) + 1;
	/* whole components: back to after a separator, on to the next */
	while (lo > 0 && !separator(s[lo - 1]))
		lo--;
	while (hi < ls && !separator(s[hi]))
		hi++;
	/* and the separators around it: "…/layer_3/…" reads whole */
	if (lo > 0)
		lo--;
	if (hi < ls)
		hi++;
	if (!(off = offsets(s, &n)))
		return mp_text_fit(m, s, size, bold, max_w, MP_ELLIPSIS_MIDDLE, out, outsize);
	while (lo_cp < n && off[lo_cp] < lo)
		lo_cp++;
	hi_cp = lo_cp;
	while (hi_cp < n && off[hi_cp] < hi)
		hi_cp++;
	khi = lo_cp + (n - hi_cp);
	shorten_around(s, off, n, lo_cp, hi_cp, 0, out, outsize);
	if (!out[0] || mp_text_width(m, out, size, bold) > max_w) { /* not even the part that differs */
		free(off);
		return mp_text_fit(m, s, size, bold, max_w, MP_ELLIPSIS_MIDDLE, out, outsize);
	}
	while (klo < khi) {
		size_t mid = (klo + khi + 1) / 2;
		shorten_around(s, off, n, lo_cp, hi_cp, mid, out, outsize);
		if (out[0] && mp_text_width(m, out, size, bold) <= max_w)
			klo = mid;
		else
			khi = mid - 1;
	}
	shorten_around(s, off, n, lo_cp, hi_cp, klo, out, outsize);
	free(off);
	return 1;
}
