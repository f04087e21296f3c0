/* clock.h - the capture clock (internal).
 *
 * Event times are nanoseconds of CLOCK_MONOTONIC since the capture's origin.
 * Reading CLOCK_MONOTONIC costs 25-35 ns in a VM, as much as recording the
 * rest of an event, so where the kernel itself keeps time with the TSC the
 * event path stores the raw TSC (one instruction) and the flusher converts
 * it when it encodes the records: through a line (ns = ns0 + (tsc - tsc0) *
 * mult / 2^32) re-anchored on CLOCK_MONOTONIC at every flush round. The
 * conversion is one continuous, increasing function of the TSC (a line per
 * round, each starting where the previous one was at the round's start), so
 * converted times stay within about a microsecond of CLOCK_MONOTONIC and the
 * flusher's horizon (writer_internal.h), converted the same way, is exact.
 */
#ifndef MP_CLOCK_H
#define MP_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t mp_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mp_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__extension__ typedef __int128 mp_i128;
__extension__ typedef unsigned __int128 mp_u128;

/* ns = ns0 + (tsc - tsc0) * mult / 2^32 (signed: a TSC read just before the
 * anchor converts to just before ns0). */
typedef struct mp_tsc_line {
	uint64_t tsc0;
	int64_t ns0;
	uint64_t mult;
} mp_tsc_line_t;

#define MP_CLOCK_LINES 8 /* lines kept: a thread stuck for a few rounds still converts exactly */

typedef struct mp_capclock {
	int use_tsc;
	uint64_t origin_ns;                 /* CLOCK_MONOTONIC of time 0 */
	uint64_t cal_tsc;                   /* the TSC at time 0: the slope's long baseline */
	mp_tsc_line_t line[MP_CLOCK_LINES]; /* line k holds from its tsc0 on; a ring */
	unsigned newest, count;
} mp_capclock_t;

#if defined(__x86_64__)
#include <x86intrin.h>
static inline uint64_t mp_tsc(void)
{
	return __rdtsc();
}
#else
static inline uint64_t mp_tsc(void)
{
	return 0;
}
#endif

static inline uint64_t mp_tsc_convert(const mp_tsc_line_t *l, uint64_t tsc)
{
	int64_t d = (int64_t)(tsc - l->tsc0);

	return (uint64_t)(l->ns0 + (int64_t)(((mp_i128)d * (mp_i128)l->mult) >> 32));
}

/* The event path's clock reading: the raw TSC, or ns since the origin
 * when the TSC is not used. mp__capclock_convert turns it into ns. */
static inline uint64_t mp_capclock_raw(const mp_capclock_t *c)
{
	if (__builtin_expect(c->use_tsc, 1))
		return mp_tsc();
	return mp_clock_ns() - c->origin_ns;
}

/* Flusher-side conversion of a raw reading to ns since the origin. */
static inline uint64_t mp__capclock_convert(const mp_capclock_t *c, uint64_t raw)
{
	unsigned i = c->newest, k;

	if (!c->use_tsc)
		return raw;
	/* the newest line that starts at or before raw (nearly always the
	 * newest or the one before) */
	for (k = 1; k < c->count && (int64_t)(raw - c->line[i].tsc0) < 0; k++)
		i = (i + MP_CLOCK_LINES - 1) % MP_CLOCK_LINES;
	return mp_tsc_convert(&c->line[i], raw);
}

/* mp__capclock_convert with the line it picks kept between records: a
 * thread's times only grow, so nearly every record falls on the line the
 * one before it did. The cache holds [lo, lo + span), the TSC readings for
 * which mp__capclock_convert's search ends at that line; outside it (or
 * without the TSC) the search runs, as it would. */
typedef struct {
	const mp_capclock_t *c;
	const mp_tsc_line_t *line;
	uint64_t lo, span; /* [lo, lo + span), span < 2^63 */
} clock_cache_t;

/* The search, out of line (capclock.c): sets the cache to the line found. */
uint64_t mp__capclock_cache_miss(clock_cache_t *cc, uint64_t raw);

static inline uint64_t clock_convert(clock_cache_t *cc, uint64_t raw)
{
	uint64_t d = raw - cc->lo;

	/* In the range (one unsigned compare: d, negative as int64_t, is
	 * above any span), d = raw - tsc0 >= 0: mp_tsc_convert's product in
	 * unsigned arithmetic, the same value */
	if (__builtin_expect(d < cc->span, 1))
		return (uint64_t)(cc->line->ns0 + (int64_t)(uint64_t)(((mp_u128)d * cc->line->mult) >> 32));
	return mp__capclock_cache_miss(cc, raw);
}

/* capclock.c (the flusher's side: called under its lock) */
/* Set the origin to now and decide between the TSC and clock_gettime: the
 * TSC only when the kernel's clocksource is "tsc" (synchronised across CPUs,
 * constant rate), MEMPROF_CLOCK is not "monotonic", and fences is 1 (the
 * writer has membarrier: the round's ordering argument needs it). */
void mp__capclock_init(mp_capclock_t *c, int fences);
/* The start of a flush round, before its membarrier: returns the horizon
 * (the converted time of a TSC read ordered before everything the round
 * does next) and starts a new line there, aimed at CLOCK_MONOTONIC --
 * unless that would recycle the line of a time at or after keep_ns (the
 * earliest record not yet tallied: it waits for a later round, which must
 * convert it as the encoder did; the current line then goes on). */
uint64_t mp__capclock_round(mp_capclock_t *c, uint64_t keep_ns);
/* Time since the origin now (trailer, thread registration). */
uint64_t mp__capclock_read(const mp_capclock_t *c);

#endif
