/* fuzz_solver.c - arbitrary event streams through the solver (both passes)
 * and the three report writers. Events come from the input 12 bytes at a
 * time (fuzz_events.h). Checks beyond "no crash": the breakdown sums to
 * the heap at the peak (address model) and fragmentation stays in [0,1]. */
#include <memprof/array_source.h>
#include <memprof/report.h>
#include <memprof/solver.h>

#include "fuzz_events.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_point(const mp_solver_point_t *p)
{
	if (!isnan(p->fragmentation) && (p->fragmentation < 0 || p->fragmentation > 1))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const strings[] = {"", "op,a", "float", "[1,2]"};
	mp_memory_info_t mem[2] = {{"pool", 0, MP_MEMORY_DEVICE}, {"host", 4096, MP_MEMORY_HOST}};
	size_t n;
	mp_event_t *ev = fuzz_events(data, size, 1, &n);
	mp_solver_options_t o;
	mp_source_t *src = NULL;
	mp_solver_t *s;
	mp_diag_t d;

	if (!ev)
		return 0;
	mp_solver_options_init(&o);
	o.timeline_points = 1 + (size ? data[0] % 9 : 0);
	o.top = 3;
	o.max_oom_records = 4;
	if (size && data[size - 1] & 1) {
		o.steps_set = 1;
		o.step_first = 1;
		o.step_last = 3;
	}
	s = mp_solver_new(&o);
	if (s && mp_array_source_new(&src, ev, n, strings, 4, mem, 2, "fuzz") == 0 && mp_solver_run(s, src, &d) == 0) {
		mp_report_input_t in = {.path = "fuzz", .solver = s, .source = src};
		mp_report_options_t ro = {MP_REPORT_PEAK | MP_REPORT_TIMELINE | MP_REPORT_LEAKS | MP_REPORT_OOM, 2, 0, 0, 0, 0, 0};
		FILE *null = fopen("/dev/null", "w");

		for (size_t i = 0; i < mp_solver_device_count(s); i++) {
			const mp_solver_device_t *dv = mp_solver_device(s, i);
			uint64_t sum = 0;
			check_point(&dv->peak);
			for (size_t k = 0; k < dv->timeline_count; k++)
				check_point(&dv->timeline[k]);
			if (dv->timeline_count > o.timeline_points)
				abort();
			for (size_t k = 0; k < dv->breakdown_count; k++)
				sum += dv->breakdown[k].total_bytes;
			if (dv->has_breakdown && !dv->stats_model && sum != dv->peak.heap_bytes)
				abort();
		}
		if (null) {
			mp_report_text(null, &in, 1, &ro);
			mp_report_csv(null, &in, 1, &ro);
			mp_report_json(null, &in, 1, &ro);
			fclose(null);
		}
	}
	mp_source_close(src);
	mp_solver_free(s);
	free(ev);
	return 0;
}
