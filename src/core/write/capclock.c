/* capclock.c - choosing the capture clock and keeping its TSC lines on
 * CLOCK_MONOTONIC (see clock.h).
 *
 * A new line starts at every flush round, at the round's horizon, exactly
 * where the previous line was there: the conversion stays continuous and
 * increasing. Its slope is the long-baseline one (ns since the origin over
 * ticks since the origin, which only gets better) corrected so that the line
 * meets CLOCK_MONOTONIC again about CONVERGE_NS later. Only the flusher
 * (under its lock) touches the lines.
 */
#include "clock.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CALIBRATE_NS 50000u   /* first slope: measured over this much time */
#define CONVERGE_NS 100000000 /* a line meets CLOCK_MONOTONIC this much later */

/* Does the kernel keep time with the TSC? Then it found it constant-rate
 * and synchronised across CPUs; otherwise we don't trust it either. */
static int kernel_uses_tsc(void)
{
	char buf[32];
	ssize_t n;
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strcmp(buf, "tsc\n") == 0 || strcmp(buf, "tsc") == 0;
}

/* A TSC read that no earlier or later instruction is reordered around. */
static uint64_t fenced_tsc(void)
{
#if defined(__x86_64__)
	uint64_t t;
	_mm_lfence();
	t = __rdtsc();
	_mm_lfence();
	return t;
#else
	return 0;
#endif
}

/* A TSC reading and a CLOCK_MONOTONIC reading (ns) taken together: the
 * clock read between two TSC reads, of a few tries the one whose TSC reads
 * were closest, and the TSC halfway. Read one after the other, a
 * preemption between them (a VM's host taking the CPU for a while) would
 * pair the clock with a TSC value that much earlier, and a slope over the
 * 50 us of the first calibration would be off by a large factor until
 * the rounds corrected it. */
#define PAIR_TICKS 4096 /* a pair this tight (a few us) needs no more tries */

static void paired_reading(uint64_t *tsc, uint64_t *ns)
{
	uint64_t a = fenced_tsc(), n = mp_clock_ns(), b = fenced_tsc(), best = b - a;
	int i;

	*tsc = a + best / 2;
	*ns = n;
	for (i = 1; i < 8 && best > PAIR_TICKS; i++) {
		a = fenced_tsc(), n = mp_clock_ns(), b = fenced_tsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + best / 2;
			*ns = n;
		}
	}
}

/* ns per tick as 32.32 fixed point; 0 if out of any sane range (a TSC
 * between 100 MHz and 20 GHz). */
static uint64_t slope(uint64_t dns, uint64_t dtsc)
{
	mp_u128 m;

	if (dtsc == 0)
		return 0;
	m = ((mp_u128)dns << 32) / dtsc;
	if (m < (((mp_u128)1 << 32) / 20) || m > ((mp_u128)10 << 32))
		return 0;
	return (uint64_t)m;
}

void mp__capclock_init(mp_capclock_t *c, int fences)
{
	const char *env = getenv("MEMPROF_CLOCK");
	uint64_t tsc, now, mult = 0;

	memset(c, 0, sizeof(*c));
	c->origin_ns = mp_clock_ns();
	if (!fences || (env && strcmp(env, "monotonic") == 0) || !kernel_uses_tsc())
		return; /* clock_gettime on every event */
#if defined(__x86_64__)
	{
		uint64_t t1, n1;
		paired_reading(&tsc, &c->origin_ns);
		do
			paired_reading(&t1, &n1);
		while ((now = n1 - c->origin_ns) < CALIBRATE_NS);
		mult = slope(now, t1 - tsc);
	}
#else
	(void)tsc;
	(void)now;
#endif
	if (!mult)
		return;
	c->cal_tsc = tsc;
	c->line[0].tsc0 = tsc;
	c->line[0].ns0 = 0;
	c->line[0].mult = mult;
	c->newest = 0;
	c->count = 1;
	c->use_tsc = 1;
}

uint64_t mp__capclock_read(const mp_capclock_t *c)
{
	if (!c->use_tsc)
		return mp_clock_ns() - c->origin_ns;
	return mp__capclock_convert(c, fenced_tsc());
}

uint64_t mp__capclock_round(mp_capclock_t *c, uint64_t keep_ns)
{
	uint64_t tsc, real, horizon, base;
	int64_t offset;
	mp_tsc_line_t *next;

	if (!c->use_tsc)
		return mp_clock_ns() - c->origin_ns;
	paired_reading(&tsc, &real);
	real -= c->origin_ns;
	horizon = mp__capclock_convert(c, tsc);
	if ((int64_t)(tsc - c->line[c->newest].tsc0) <= 0 || !(base = slope(real, tsc - c->cal_tsc)))
		return horizon;
	/* The ring full, the line a new one would replace (the oldest) is
	 * still a record's, when the next one starts after keep_ns. (Records
	 * past a round's horizon are encoded in it, tallied in a later one: a
	 * lane's promise may hold the horizon back for many rounds.) */
	if (keep_ns != UINT64_MAX && c->count == MP_CLOCK_LINES &&
	    c->line[(c->newest + 2) % MP_CLOCK_LINES].ns0 > (int64_t)keep_ns)
		return horizon;
	/* The line is `offset` ns ahead of CLOCK_MONOTONIC: run (1 - offset /
	 * CONVERGE_NS) as fast for a while. Bounded, so it always moves on. */
	offset = (int64_t)(horizon - real);
	if (offset > CONVERGE_NS / 2)
		offset = CONVERGE_NS / 2;
	if (offset < -CONVERGE_NS / 2)
		offset = -CONVERGE_NS / 2;
	c->newest = (c->newest + 1) % MP_CLOCK_LINES;
	if (c->count < MP_CLOCK_LINES)
		c->count++;
	next = &c->line[c->newest];
	next->tsc0 = tsc;
	next->ns0 = (int64_t)horizon;
	next->mult = (uint64_t)((mp_i128)base * (CONVERGE_NS - offset) / CONVERGE_NS);
	return horizon;
}

uint64_t mp__capclock_cache_miss(clock_cache_t *cc, uint64_t raw)
{
	const mp_capclock_t *c = cc->c;
	unsigned i = c->newest, k, j, m;

	cc->lo = cc->span = 0; /* empty: every reading misses */
	if (!c->use_tsc) {
		/* times as they are: through a line of slope 1 (exact below
		 * 2^62, which times since the origin are) */
		static const mp_tsc_line_t identity = {0, 0, 1ull << 32};
		cc->span = 1ull << 62;
		cc->line = &identity;
		return raw;
	}
	for (k = 1; k < c->count && (int64_t)(raw - c->line[i].tsc0) < 0; k++)
		i = (i + MP_CLOCK_LINES - 1) % MP_CLOCK_LINES;
	if ((int64_t)(raw - c->line[i].tsc0) >= 0) {
		/* raw is at or after line i's start (not merely before the
		 * oldest line): the range ends at the earliest start of the
		 * lines newer than i, or far in the future for the newest */
		uint64_t lo = c->line[i].tsc0, hi = lo + (1ull << 62);
		for (j = i, m = k - 1; m > 0; m--) {
			j = (j + 1) % MP_CLOCK_LINES;
			if ((int64_t)(c->line[j].tsc0 - hi) < 0)
				hi = c->line[j].tsc0;
		}
		if ((int64_t)(hi - lo) > 0) {
			cc->lo = lo;
			cc->span = hi - lo;
			cc->line = &c->line[i];
		}
	}
	return mp_tsc_convert(&c->line[i], raw);
}
