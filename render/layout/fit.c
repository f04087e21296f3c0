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
