/* run_internal.h - what run.c gets from a capture (internal to the reader). */
#ifndef MP_RUN_INTERNAL_H
#define MP_RUN_INTERNAL_H

#include <memprof/reader.h>
#include <memprof/run.h>

/* One capture's figures: per memory id (names owned: free() each),
 * events, the time of the last one, and whether it ended cleanly. */
typedef struct {
	size_t memory_count;
	mp_run_memory_t *memories; /* owned: free() */
	uint64_t events;
	uint64_t last_time_ns;
	int clean;
} mp__run_figures_t;

/* Read every event of cap (opened, not yet read) for its figures
 * (run_tally.c). Returns 0 or a negative error code (diag set). */
int mp__run_tally(mp_capture_t *cap, mp__run_figures_t *out, mp_diag_t *diag);

#endif
