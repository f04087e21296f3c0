/* fit.c - a text shortened with an ellipsis to fit a width, cut between
 * UTF-8 code points; and the fixed-width measure tests use. */
#include <memprof/layout.h>

#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "\xE2\x80\xA6" /* U+2026 */

static size_t code_points(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

static double fixed_width(void *ctx, const char *s, double size, int bold)
{
	(void)ctx;
	(void)bold;
	return 0.6 * size * (double)code_points(s);
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
