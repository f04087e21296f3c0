/* ticks.c - axis ticks at "nice" steps (1, 2, 5 x 10^k in the unit people
 * read: binary byte units, ns to hours), labelled with that unit, as dense
 * as the labels allow without touching. */
#include <memprof/error.h>
#include <memprof/layout.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The smallest 1, 2, 5 x 10^k that is >= raw. */
static double nice_125(double raw)
{
	double p = pow(10.0, floor(log10(raw))), m = raw / p;

	if (m <= 1.0 + 1e-9)
		return p;
	if (m <= 2.0 + 1e-9)
		return 2 * p;
	if (m <= 5.0 + 1e-9)
		return 5 * p;
	return 10 * p;
}

/* Decimals needed to print multiples of step exactly (at most 6). */
static int decimals_for(double step)
{
	for (int d = 0; d < 6; d++) {
		double v = step * pow(10.0, d);
		if (fabs(v - round(v)) < 1e-6 * v)
			return d;
	}
	return 6;
}

/* Time steps past 5 s follow the clock: 10 s, 15 s, 30 s, 1 min, ... */
static double time_step(double raw)
{
	static const double clock_s[] = {10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};

	if (raw <= 5e9)
		return nice_125(raw < 1 ? 1 : raw);
	for (size_t i = 0; i < sizeof(clock_s) / sizeof(clock_s[0]); i++)
		if (clock_s[i] * 1e9 >= raw)
			return clock_s[i] * 1e9;
	return 86400e9 * nice_125(raw / 86400e9);
}

typedef struct unit {
	double scale;
	const char *name;
} unit_t;

/* The unit labels use: the largest one the axis end reaches (time: seconds
 * until two minutes, minutes until two hours), one smaller when the step
 * would need more than one decimal in it (15 s, not 0.25 min). */
static unit_t pick_unit(mp_axis_kind_t kind, double hi, double step)
{
	static const unit_t bytes[] = {{1, "B"}, {1024.0, "KiB"}, {1048576.0, "MiB"}, {1073741824.0, "GiB"},
				       {1099511627776.0, "TiB"}, {1125899906842624.0, "PiB"}};
	static const unit_t times[] = {{1, "ns"}, {1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}, {60e9, "min"}, {3600e9, "h"}};
	static const double time_reach[] = {0, 1e3, 1e6, 1e9, 120e9, 7200e9};
	unit_t none = {1, ""}, pct = {1, "%"};
	size_t u = 0;

	/* A step far below the axis' end (a microsecond at 2 s) would need more
	 * decimals than a label should carry: a smaller unit then, whose
	 * labels mp_ticks_fit thins out if they grow too wide. */
	switch (kind) {
	case MP_AXIS_BYTES:
		while (u + 1 < sizeof(bytes) / sizeof(bytes[0]) && hi >= bytes[u + 1].scale)
			u++;
		while (u > 0 && step > 0 && decimals_for(step / bytes[u].scale) > 2)
			u--;
		return bytes[u];
	case MP_AXIS_TIME_NS:
		while (u + 1 < sizeof(times) / sizeof(times[0]) && hi >= time_reach[u + 1])
			u++;
		while (u >= 4 && decimals_for(step / times[u].scale) > 1)
			u--;
		while (u > 0 && step > 0 && decimals_for(step / times[u].scale) > 2)
			u--;
		return times[u];
	case MP_AXIS_PERCENT:
		return pct;
	default:
		return none;
	}
}

/* v with its unit; plain whole numbers from 1000 up grouped ("12,000"). */
static void label_number(char *buf, size_t size, double v, int decimals, const char *unit, int group)
{
	const char *sep = *unit ? (strcmp(unit, "%") ? " " : "") : "";

	if (fabs(v) < 0.5 * pow(10.0, -decimals)) { /* "0 MiB", not "0.0 MiB" or "-0" */
		snprintf(buf, size, "0%s%s", sep, unit);
		return;
	}
	if (group && decimals == 0 && fabs(v) >= 1000 && fabs(v) < 1e18) {
		char digits[32];
		long long iv = llround(v);
		int len = snprintf(digits, sizeof(digits), "%lld", iv < 0 ? -iv : iv), o = 0;
		char grouped[48];
		if (iv < 0)
			grouped[o++] = '-';
		for (int i = 0; i < len; i++) {
			if (i && (len - i) % 3 == 0)
				grouped[o++] = ',';
			grouped[o++] = digits[i];
		}
		grouped[o] = '\0';
		snprintf(buf, size, "%s%s%s", grouped, sep, unit);
		return;
	}
	snprintf(buf, size, "%.*f%s%s", decimals, v, sep, unit);
}

int mp_ticks_nice(mp_ticks_t *t, mp_axis_kind_t kind, double lo, double hi, size_t max_count)
{
	double range, raw, step, first;
	unit_t unit;
	int decimals;

	memset(t, 0, sizeof(*t));
	t->unit = "";
	if (!(hi > lo) || !isfinite(lo) || !isfinite(hi) || max_count < 2)
		return MP_EUSAGE;
	if (max_count > MP_TICKS_MAX)
		max_count = MP_TICKS_MAX;
	range = hi - lo;
	if (range > 1e18)
		range = 1e18;
	raw = range / (double)(max_count - 1);
	switch (kind) {
	case MP_AXIS_TIME_NS:
		step = time_step(raw);
		break;
	case MP_AXIS_BYTES: {
		/* steps nice in the unit of the axis' end (0.5 KiB, not 500 B),
		 * unless that end is far away: a 100 B range at 2 GiB */
		double s = pick_unit(kind, fabs(hi) > fabs(lo) ? fabs(hi) : fabs(lo), 0).scale;
		if (raw / s < 0.001)
			s = pick_unit(kind, raw, 0).scale;
		step = nice_125(raw / s) * s;
		if (step < 1)
			step = 1;
		break;
	}
	case MP_AXIS_INTEGER:
		step = nice_125(raw < 1 ? 1 : raw);
		break;
	default:
		step = nice_125(raw);
		break;
	}
	unit = pick_unit(kind, fabs(hi) > fabs(lo) ? fabs(hi) : fabs(lo), step);
	decimals = decimals_for(step / unit.scale);
	first = ceil(lo / step - 1e-9) * step;
	t->step = step;
	t->unit = unit.name;
	for (size_t i = 0; i < MP_TICKS_MAX; i++) {
		double v = first + (double)i * step;
		if (v > hi + step * 1e-9)
			break;
		if (fabs(v) < step * 1e-9)
			v = 0;
		t->value[i] = v;
		label_number(t->label[i], sizeof(t->label[i]), v / unit.scale, decimals, unit.name, kind == MP_AXIS_NUMBER || kind == MP_AXIS_INTEGER);
		t->count++;
	}
	return 0;
}

int mp_ticks_fit(mp_ticks_t *t, mp_axis_kind_t kind, double lo, double hi, double length, int horizontal,
		 const mp_text_measure_t *m, double font_size)
{
	const double gap = horizontal ? 0.8 * font_size : 0.6 * font_size;
	size_t start = (size_t)(length / (horizontal ? 24.0 : font_size * 1.6)) + 1;
	int rc = MP_EUSAGE;

	if (start > MP_TICKS_MAX)
		start = MP_TICKS_MAX;
	if (start < 2)
		start = 2;
	for (size_t want = start; want >= 2; want--) {
		double px_per = length / (hi - lo);
		int fits = 1;

		if ((rc = mp_ticks_nice(t, kind, lo, hi, want)) < 0)
			return rc;
		for (size_t i = 1; i < t->count && fits; i++) {
			double dist = (t->value[i] - t->value[i - 1]) * px_per, need;
			if (horizontal)
				need = (mp_text_width(m, t->label[i - 1], font_size, 0) +
					mp_text_width(m, t->label[i], font_size, 0)) / 2 + gap;
			else
				need = font_size + gap;
			fits = dist >= need;
		}
		if (fits)
			return 0;
	}
	if (t->count > 1) /* not even two labels fit: keep the first alone */
		t->count = 1;
	return rc;
}
