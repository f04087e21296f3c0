/* capture_helpers.h - reading a capture back whole, for the read and write tests. */
#ifndef MP_TEST_CAPTURE_HELPERS_H
#define MP_TEST_CAPTURE_HELPERS_H

#include <memprof/capture.h>

#include <stdio.h>
#include <stdlib.h>

/* Read every event of a capture into a malloc'd array (*out, caller frees).
 * Returns the count; *rc receives the final return of next() (0 or error)
 * and *diag its diagnostic. The capture status is left in *end. */
static inline size_t read_all(const char *path, mp_event_t **out, int *rc, mp_diag_t *diag, mp_end_status_t *end)
{
	mp_source_t *src = NULL;
	size_t n = 0, cap = 0;
	mp_event_t ev, *arr = NULL;
	int r;

	*out = NULL;
	r = mp_capture_open_source(&src, path, diag);
	if (r) {
		*rc = r;
		return 0;
	}
	while ((r = mp_source_next(src, &ev, diag)) == 1) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			arr = realloc(arr, cap * sizeof(*arr));
			if (!arr)
				abort();
		}
		arr[n++] = ev;
	}
	*rc = r;
	if (end)
		*end = mp_source_end_status(src);
	mp_source_close(src);
	*out = arr;
	return n;
}

#endif
