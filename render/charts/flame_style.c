/* flame_style.c - how a flame chart's frames look: a colour per kind, in
 * shades a name hashes to, light enough for dark text; and a frame's name
 * shortened to fit it, keeping its "(file:line)". */
#include "flame_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "\xE2\x80\xA6" /* U+2026 */

/* A kind's hue (degrees), saturation, and the lightness of its lightest
 * and darkest shades. Hues after Okabe and Ito's sky blue, orange, bluish
 * green and reddish purple; every shade keeps a contrast of 4.5:1 or more
 * with MP_COLOR_TEXT (tests check it). */
static const struct {
	double h, s, l_hi, l_lo;
	const char *name;
} kinds[MP_FLAME_KINDS] = {
	[MP_FLAME_PYTHON] = {202, 0.70, 0.84, 0.68, "Python"},
	[MP_FLAME_NATIVE] = {36, 0.92, 0.76, 0.58, "native"},
	[MP_FLAME_KERNEL] = {160, 0.50, 0.78, 0.60, "kernel"},
	[MP_FLAME_UNKNOWN] = {320, 0.42, 0.86, 0.72, "unknown"},
	[MP_FLAME_OTHER] = {0, 0, 0.91, 0.86, "(other): pruned callees"},
};

static double channel(double p, double q, double t)
{
	if (t < 0)
		t += 1;
	if (t > 1)
		t -= 1;
	if (t < 1.0 / 6)
		return p + (q - p) * 6 * t;
	if (t < 0.5)
		return q;
	if (t < 2.0 / 3)
		return p + (q - p) * (2.0 / 3 - t) * 6;
	return p;
}

static uint32_t hsl(double h, double s, double l)
{
	double q = l < 0.5 ? l * (1 + s) : l + s - l * s, p = 2 * l - q, hh = fmod(h + 360, 360) / 360;
	unsigned r = (unsigned)lround(255 * channel(p, q, hh + 1.0 / 3));
	unsigned g = (unsigned)lround(255 * channel(p, q, hh));
	unsigned b = (unsigned)lround(255 * channel(p, q, hh - 1.0 / 3));

	return r << 16 | g << 8 | b;
}

uint32_t fl_color(int kind, unsigned shade)
{
	double f = (double)(shade % FL_SHADES) / (FL_SHADES - 1);

	if (kind < 0 || kind >= MP_FLAME_KINDS)
		kind = MP_FLAME_UNKNOWN;
	/* lightness steps through the range; the hue wanders a little with it,
	 * odd and even shades on either side */
	return hsl(kinds[kind].h + (shade & 1 ? 6 : -6) * f, kinds[kind].s,
		   kinds[kind].l_hi + (kinds[kind].l_lo - kinds[kind].l_hi) * f);
}

uint32_t mp_flame_kind_color(int kind)
{
	return fl_color(kind, FL_SHADES / 2);
}

const char *mp_flame_kind_name(int kind)
{
	return kinds[kind >= 0 && kind < MP_FLAME_KINDS ? kind : MP_FLAME_UNKNOWN].name;
}

unsigned fl_shade(const char *name)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return (h ^ h >> 16) % FL_SHADES;
}

/* Code points of s, as drawn (a byte starting no sequence counts as one). */
static size_t code_points(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* Where the "(file:line)" of "name (file:line)" starts (its space), or 0. */
static size_t location(const char *name)
{
	size_t len = strlen(name);
	const char *p;

	if (len < 4 || name[len - 1] != ')')
		return 0;
	for (p = name + len - 2; p > name; p--)
		if (p[0] == '(' && p[-1] == ' ')
			return (size_t)(p - 1 - name);
	return 0;
}

/* s with `keep` of its code points (offsets off[0..n]): a third before
 * the ellipsis, the rest after it, since the end of a name ("::apply",
 * "py:42)", "+0x12") tells it from its neighbours more than its start. */
static void keep_tail(const char *s, const size_t *off, size_t n, size_t keep, char *out)
{
	size_t head = keep / 3, tail = keep - head;

	memcpy(out, s, off[head]);
	memcpy(out + off[head], ELLIPSIS, sizeof(ELLIPSIS) - 1);
	strcpy(out + off[head] + sizeof(ELLIPSIS) - 1, s + off[n - tail]);
}

/* s shortened to the most code points that fit max_w (out: strlen(s) + 4
 * bytes); returns how many were kept. */
static size_t fit_tail(const mp_text_measure_t *m, const char *s, double size, double max_w, char *out)
{
	size_t len = strlen(s), n = 0, lo = 0, hi, *off = malloc((len + 1) * sizeof(*off));

	out[0] = '\0';
	if (!off)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			off[n++] = i;
	off[n] = len;
	hi = n;
	while (lo < hi) { /* widths grow with the count kept */
		size_t mid = (lo + hi + 1) / 2;
		keep_tail(s, off, n, mid, out);
		if (mp_text_width(m, out, size, 0) <= max_w)
			lo = mid;
		else
			hi = mid - 1;
	}
	keep_tail(s, off, n, lo, out);
	free(off);
	return lo;
}

int fl_label(const mp_text_measure_t *m, const char *name, double size, double max_w, char *out, size_t outsize)
{
	size_t loc = location(name), len = strlen(name);

	if (outsize < len + sizeof(ELLIPSIS)) {
		out[0] = '\0';
		return 0;
	}
	if (mp_text_width(m, name, size, 0) <= max_w) {
		memcpy(out, name, len + 1);
		return 1;
	}
	if (loc >= 3) { /* the function shortened, its location whole */
		const char *tail = name + loc;
		double tw = mp_text_width(m, tail, size, 0);
		char *head = malloc(loc + 1);
		int ok = 0;
		if (head && tw < max_w) {
			memcpy(head, name, loc);
			head[loc] = '\0';
			mp_text_fit(m, head, size, 0, max_w - tw, MP_ELLIPSIS_END, out, outsize);
			if (code_points(out) >= 4) {
				strcat(out, tail);
				ok = mp_text_width(m, out, size, 0) <= max_w; /* kerning across the seam */
			}
		}
		free(head);
		if (ok)
			return 1;
	}
	return fit_tail(m, name, size, max_w, out) >= 3; /* 3 characters at least */
}
