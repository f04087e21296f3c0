/* clock.h - the capture clock: CLOCK_MONOTONIC in nanoseconds (internal). */
#ifndef MP_CLOCK_H
#define MP_CLOCK_H

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

#endif
