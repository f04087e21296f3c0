/* units.c - numbers as people read them on a chart: binary byte units in
 * three digits, time units from ns to hours, grouped counts. The exact
 * form ("66060288 B (63.00 MiB)") is the output layer's mp_bytes_exact(). */
#include <memprof/layout.h>

#include <inttypes.h>
#include <stdio.h>

static const char *const byte_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

/* Three significant digits: 1.18, 63.0, 512. */
static const char *three_digits(char *buf, size_t size, double v, const char *unit)
{
	if (v < 9.995)
		snprintf(buf, size, "%.2f %s", v, unit);
	else if (v < 99.95)
		snprintf(buf, size, "%.1f %s", v, unit);
	else
		snprintf(buf, size, "%.0f %s", v, unit);
	return buf;
}

const char *mp_fmt_bytes(char *buf, size_t size, uint64_t bytes)
{
	double v = (double)bytes;
	int u = 0;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
		return buf;
	}
	/* 1023.9 KiB would print as "1024 KiB": move up once it rounds to 1024. */
	while (v >= 1023.5 && u < 6) {
		v /= 1024.0;
		u++;
	}
	return three_digits(buf, size, v, byte_units[u]);
}

const char *mp_fmt_time(char *buf, size_t size, uint64_t ns)
{
	/* The unit is the largest that leaves at least 1 (seconds until two
	 * minutes, minutes until two hours); each limit sits where the smaller
	 * unit would round up to 1000.0 in four digits. */
	static const struct {
		double limit, ns;
		const char *unit;
	} units[] = {{999.95e3, 1e3, "µs"}, {999.95e6, 1e6, "ms"}, {120e9, 1e9, "s"}, {7200e9, 60e9, "min"},
		     {1e300, 3600e9, "h"}};
	double t = (double)ns;
	size_t u = 0;

	if (ns < 1000) {
		snprintf(buf, size, "%" PRIu64 " ns", ns);
		return buf;
	}
	while (t >= units[u].limit)
		u++;
	t /= units[u].ns;
	if (t < 9.9995)
		snprintf(buf, size, "%.3f %s", t, units[u].unit);
	else if (t < 99.995)
		snprintf(buf, size, "%.2f %s", t, units[u].unit);
	else
		snprintf(buf, size, "%.1f %s", t, units[u].unit);
	return buf;
}

const char *mp_fmt_count(char *buf, size_t size, uint64_t n)
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%" PRIu64, n), o = 0;

	if (size == 0)
		return buf;
	for (int i = 0; i < len && (size_t)o + 1 < size; i++) {
		if (i && (len - i) % 3 == 0) {
			if ((size_t)o + 2 >= size)
				break;
			buf[o++] = ',';
		}
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}
