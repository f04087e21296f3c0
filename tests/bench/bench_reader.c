/* bench_reader.c - how fast the capture reader streams events: opens a
 * capture, reads every event, prints events/s. usage: bench_reader FILE */
#include <memprof/capture.h>

#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
	mp_source_t *src;
	mp_diag_t diag;
	mp_event_t ev;
	struct timespec a, b;
	unsigned long long n = 0, bytes = 0;
	double s;
	int rc;

	if (argc != 2)
		return 2;
	if (mp_capture_open_source(&src, argv[1], &diag)) {
		fprintf(stderr, "bench_reader: %s\n", diag.text);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
		n++;
		bytes += ev.allocated_bytes;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	mp_source_close(src);
	if (rc < 0) {
		fprintf(stderr, "bench_reader: %s\n", diag.text);
		return 1;
	}
	s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	printf("events=%llu read_s=%.3f events_per_s=%.3g (checksum %llu)\n", n, s, (double)n / s, bytes);
	return 0;
}
