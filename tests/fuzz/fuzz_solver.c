/* fuzz_solver.c - arbitrary event streams through the solver (both passes)
 * and the three report writers. Events come from the input 12 bytes at a
 * time: kind, memory id (0-2), flags, region, address slot (addresses are
 * drawn from a small set so frees, duplicates and overlaps are common),
 * size class, step delta. Checks beyond "no crash": the breakdown sums to
 * the heap at the peak (address model) and fragmentation stays in [0,1]. */
#include <memprof/array_source.h>
#include <memprof/report.h>
#include <memprof/solver.h>

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
	size_t n = size / 12;
	mp_event_t *ev = calloc(n ? n : 1, sizeof(*ev));
	mp_solver_options_t o;
	mp_source_t *src = NULL;
	mp_solver_t *s;
	mp_diag_t d;
	int64_t step = 0;

	if (!ev)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *b = data + 12 * i;
		mp_event_t *e = &ev[i];
		uint64_t size_class = (uint64_t)b[5] | (uint64_t)b[6] << 8;
		e->kind = (uint8_t)(1 + b[0] % 9);
		e->memory = b[1] % 3;
		e->flags = b[2] & 3;
		e->region = b[3] % 7;
		e->address = 0x10000 + 256ull * (b[4] % 64);
		if (b[7] == 0xff)
			e->address = UINT64_MAX - b[4]; /* near the top: overflow checks */
		e->requested_bytes = size_class * (b[8] & 0x10 ? 4096 : 16);
		e->allocated_bytes = b[8] & 1 ? 0 : e->requested_bytes + (b[8] >> 5);
		step += b[9] % 3 == 0;
		e->step = b[9] == 0x7f ? -1 : step;
		e->time_ns = i;
		e->op = b[10] % 5;
		e->dtype = b[11] % 4;
		e->shape = (b[11] >> 2) % 4;
		if (e->flags & MP_EVENT_F_STATS) {
			e->stats.stack_bytes = b[10];
			e->stats.heap_bytes = size_class * 8;
			e->stats.free_bytes = b[11] * 100u;
			e->stats.peak_bytes = size_class * 9;
			e->stats.fragmentation = b[8] == 0x42 ? NAN : b[8] / 200.0;
		}
	}
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
		mp_report_input_t in = {"fuzz", s, src, 0, 0};
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
