/* units.c - byte counts for people (memprof/output/units.h). */
#include <memprof/output/units.h>

#include <inttypes.h>
#include <stdio.h>

static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
#define TOP_UNIT 6

const char *mp_bytes_human(char *buf, size_t size, uint64_t bytes)
{
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024.0 && u < TOP_UNIT) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%" PRIu64 " B", bytes);
	else
		snprintf(buf, size, "%.2f %s", v, units[u]);
	return buf;
}

const char *mp_bytes_human_signed(char *buf, size_t size, int64_t bytes)
{
	if (bytes >= 0)
		return mp_bytes_human(buf, size, (uint64_t)bytes);
	if (size < 2) { /* room for the '-' at most: truncated like snprintf */
		if (size)
			buf[0] = '\0';
		return buf;
	}
	/* a '-' and the magnitude's text: printf rounds -x as it rounds x */
	buf[0] = '-';
	mp_bytes_human(buf + 1, size - 1, -(uint64_t)bytes);
	return buf;
}

const char *mp_bytes_exact(char *buf, size_t size, uint64_t bytes)
{
	char h[MP_BYTES_BUF];

	if (bytes < 1024)
		snprintf(buf, size, "%" PRIu64 " B", bytes);
	else
		snprintf(buf, size, "%" PRIu64 " B (%s)", bytes, mp_bytes_human(h, sizeof(h), bytes));
	return buf;
}
