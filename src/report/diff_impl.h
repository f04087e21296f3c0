/* diff_impl.h - what the diff's computation, writers and gate share. */
#ifndef MEMPROF_DIFF_IMPL_H
#define MEMPROF_DIFF_IMPL_H

#include "report_impl.h"

#include <memprof/diff.h>

struct mp_diff {
	mp_report_input_t a, b;     /* borrowed: paths, solvers, sources */
	const char *kind;           /* "capture", "snapshot", "xplane"; borrowed */
	int by_function;
	mp_diff_memory_t *mem;      /* owned; n used */
	size_t n;
	const char **only_a, **only_b; /* owned arrays of borrowed names */
	size_t n_only_a, n_only_b;
};

/* "+1.50 MiB", "-512 B", "0 B": a signed change in the human unit. */
const char *dp_human_change(char *buf, size_t size, int64_t change);
/* "+5.03%", "-0.10%", "new" (A's peak 0, B's not), "0.00%". */
const char *dp_percent(char *buf, size_t size, const mp_diff_memory_t *m);



/* One gate applied to one memory id (or to the total). */
typedef struct dp_gate_result {
	const char *memory;   /* A's name, or "total" */
	uint64_t a, b;        /* peaks */
	int failed;
} dp_gate_result_t;

/* Apply g to d: results into res (room for mp_diff_count(d) + 1). Returns
 * the count, or MP_EUSAGE when g names a memory id d does not have. */
int dp_gate_eval(const mp_diff_t *d, const mp_diff_gate_t *g, dp_gate_result_t *res);
#endif
