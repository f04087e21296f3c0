/* capclock.c - choosing the capture clock and keeping the TSC line on
 * CLOCK_MONOTONIC (see clock.h).
 *
 * The line is re-anchored once a flush round, at the round's horizon: the
 * new line starts exactly where the old one was at that TSC value, so the
 * conversion stays one continuous, increasing function, and its slope is
 * chosen to meet CLOCK_MONOTONIC again about one interval later (the slope
 * itself comes from the long baseline since the origin, so it only gets
 * better). Two lines alternate: recorders may still be converting with the
 * one in effect while the flusher prepares the other, and the flusher only
 * rewrites a line after every thread was seen outside a record since it
 * stopped being in effect (mp__capclock_quiet).
 */
#include "clock.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CALIBRATE_NS 50000u     /* first slope: measured over this much time */
#define CONVERGE_NS 100000000   /* the line meets CLOCK_MONOTONIC this much later */

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

/* A TSC read that no earlier or later instruction is reordered around, and
 * the CLOCK_MONOTONIC time right after it. */
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

/* mult for ns/tsc as a 32.32 fixed-point number; 0 if out of any sane range
 * (a TSC between 100 MHz and 20 GHz). */
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
#if defined(__x86_64__)
	if (fences && !(env && strcmp(env, "monotonic") == 0) && kernel_uses_tsc()) {
		tsc = fenced_tsc();
		c->origin_ns = mp_clock_ns();
		c->cal_tsc = tsc;
		c->cal_ns = 0;
		do {
			now = mp_clock_ns() - c->origin_ns;
		} while (now < CALIBRATE_NS);
		mult = slope(now, fenced_tsc() - tsc);
	}
#else
	(void)fences;
	(void)env;
	(void)tsc;
	(void)now;
#endif
	if (!mult)
		return; /* clock_gettime on every event */
	c->line[0].tsc0 = c->cal_tsc;
	c->line[0].ns0 = 0;
	c->line[0].mult = mult;
	c->spare_free = 1;
	c->use_tsc = 1;
}

uint64_t mp__capclock_read(mp_capclock_t *c)
{
	if (!c->use_tsc)
		return mp_clock_ns() - c->origin_ns;
	return mp_tsc_convert(&c->line[atomic_load_explicit(&c->cur, memory_order_acquire)], fenced_tsc());
}

uint64_t mp__capclock_round(mp_capclock_t *c)
{
	uint32_t cur = atomic_load_explicit(&c->cur, memory_order_relaxed);
	uint64_t tsc, real, horizon, base;
	int64_t offset;
	mp_tsc_line_t *next;

	if (!c->use_tsc)
		return mp_clock_ns() - c->origin_ns;
	tsc = fenced_tsc();
	real = mp_clock_ns() - c->origin_ns;
	horizon = mp_tsc_convert(&c->line[cur], tsc);
	if (!c->spare_free || tsc <= c->cal_tsc || !(base = slope(real - c->cal_ns, tsc - c->cal_tsc)))
		return horizon;
	/* Meet CLOCK_MONOTONIC CONVERGE_NS from now: the line is `offset` ns
	 * ahead of it, so it runs (1 - offset / CONVERGE_NS) as fast. The
	 * change is bounded so the line always moves forward. */
	offset = (int64_t)(horizon - real);
	if (offset > CONVERGE_NS / 2)
		offset = CONVERGE_NS / 2;
	if (offset < -CONVERGE_NS / 2)
		offset = -CONVERGE_NS / 2;
	next = &c->line[cur ^ 1];
	next->tsc0 = tsc;
	next->ns0 = (int64_t)horizon;
	next->mult = (uint64_t)((mp_i128)base * (CONVERGE_NS - offset) / CONVERGE_NS);
	atomic_store_explicit(&c->cur, cur ^ 1, memory_order_release);
	c->spare_free = 0;
	return horizon;
}

void mp__capclock_quiet(mp_capclock_t *c)
{
	c->spare_free = 1;
}
