/* clock.h - the capture clock (internal).
 *
 * Event times are nanoseconds of CLOCK_MONOTONIC since the capture's origin.
 * Reading CLOCK_MONOTONIC costs 25-35 ns in a VM, as much as recording the
 * rest of an event, so where the kernel itself keeps time with the TSC the
 * event path reads the TSC (one instruction) and converts it with a line
 * (ns = ns0 + (tsc - tsc0) * mult / 2^32) that the flusher re-anchors on
 * CLOCK_MONOTONIC every round (capclock.c). Converted times stay within
 * about a microsecond of CLOCK_MONOTONIC and, what matters more, they are
 * one monotone function of the TSC for every thread, so the flusher's
 * horizon (writer_internal.h) computed through the same line is exact.
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

typedef struct mp_capclock {
	/* read on the event path: its own cache line, written once a round */
	_Alignas(64) int use_tsc;
	_Atomic uint32_t cur;      /* which line is in effect */
	mp_tsc_line_t line[2];
	/* flusher-owned calibration state */
	_Alignas(64) uint64_t origin_ns; /* CLOCK_MONOTONIC of time 0 */
	uint64_t cal_tsc, cal_ns;  /* first (tsc, time) pair: the long baseline */
	int spare_free;            /* the line not in effect may be rewritten */
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

/* Time since the origin, on the event path. Called inside a record (seq
 * odd): the flusher only rewrites a line no record can still be reading. */
static inline uint64_t mp_capclock_now(mp_capclock_t *c)
{
	if (__builtin_expect(c->use_tsc, 1)) {
		uint64_t tsc = mp_tsc();
		uint32_t i = atomic_load_explicit(&c->cur, memory_order_acquire);
		return mp_tsc_convert(&c->line[i], tsc);
	}
	return mp_clock_ns() - c->origin_ns;
}

/* capclock.c */
/* Set the origin to now and decide between the TSC and clock_gettime: the
 * TSC only when the kernel's clocksource is "tsc" (synchronised across CPUs,
 * constant rate), MEMPROF_CLOCK is not "monotonic", and fences is 1 (the
 * writer has membarrier: see mp__capclock_round). */
void mp__capclock_init(mp_capclock_t *c, int fences);
/* The flusher's start of a round, before its membarrier: returns the
 * horizon (the time, through the line in effect, of a TSC read ordered
 * before everything the round does next) and, when the spare line is free,
 * re-anchors there on CLOCK_MONOTONIC and puts the new line in effect. */
uint64_t mp__capclock_round(mp_capclock_t *c);
/* The round saw every thread outside a record after its membarrier: no
 * record still converts with the line that was replaced. */
void mp__capclock_quiet(mp_capclock_t *c);
/* Time since the origin, outside the event path (trailer, registration). */
uint64_t mp__capclock_read(mp_capclock_t *c);

#endif
