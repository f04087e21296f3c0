/* vcpu_pingpong.c - how far apart the machine's first two CPUs are right
 * now: the time one cache line takes to pass from one to the other, in
 * ns (the median of ROUNDS sets of round trips, halved).
 *
 * On the shared 2-vCPU VM this project is measured on, the host moves the
 * two vCPUs between cores that share a cache (a line passes in about
 * 25-35 ns) and cores that do not (about 130-170 ns), from one second to
 * the next. ../shared/bench/alloc_bench.c's two threads update one atomic
 * on every operation, so its plain run takes about 1.7-1.9 s in the first
 * placement and 2.1-2.4 s in the second, and every ratio against it moves
 * with that. scripts/bench_record.sh runs this just before and just after
 * every run and sorts the runs by it (docs/hooks.md, "Cost").
 *
 * usage: vcpu_pingpong [TRIPS (100000)]; prints the ns, or "-" (and exit
 * status 0) on a machine with fewer than two CPUs to run on.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* (the build defines it; a plain cc does not) */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 5

static _Alignas(64) _Atomic long ball;
static long trips = 100000;

/* The n-th CPU the process may run on, or -1. */
static int nth_cpu(const cpu_set_t *set, int n)
{
	int c;

	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set) && n-- == 0)
			return c;
	return -1;
}

static int pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

/* The other side: sends back every odd value as the next even one (on
 * its CPU, or wherever it runs if it cannot be pinned: it must play). */
static void *returner(void *arg)
{
	long i, r;

	(void)pin(*(const int *)arg);
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < trips; i++) {
			long odd = 2 * (r * trips + i) + 1;
			while (atomic_load_explicit(&ball, memory_order_acquire) != odd)
				;
			atomic_store_explicit(&ball, odd + 1, memory_order_release);
		}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	double ns[ROUNDS];
	cpu_set_t set;
	pthread_t t;
	int a, b;
	long i, r;

	if (argc > 1 && (trips = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: vcpu_pingpong [TRIPS]\n");
		return 2;
	}
	if (sched_getaffinity(0, sizeof(set), &set) != 0 || (a = nth_cpu(&set, 0)) < 0 || (b = nth_cpu(&set, 1)) < 0 ||
	    pin(a) != 0 || pthread_create(&t, NULL, returner, &b) != 0) {
		puts("-");
		return 0;
	}
	for (r = 0; r < ROUNDS; r++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < trips; i++) {
			long odd = 2 * (r * trips + i) + 1;
			atomic_store_explicit(&ball, odd, memory_order_release);
			while (atomic_load_explicit(&ball, memory_order_acquire) != odd + 1)
				;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns[r] = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)trips / 2;
	}
	pthread_join(t, NULL);
	qsort(ns, ROUNDS, sizeof(ns[0]), cmp_double);
	printf("%.1f\n", ns[ROUNDS / 2]);
	return 0;
}
