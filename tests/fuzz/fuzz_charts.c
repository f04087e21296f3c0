/* fuzz_charts.c - arbitrary event streams (fuzz_events.h) through the
 * solver and every capture chart's layout (timeline, breakdown, the memory
 * maps from a second pass), at widths and heights the input picks, on
 * time scales from nanoseconds to centuries and capacities up to 2^63.
 * Checks beyond "no crash": the layout succeeds or says why with a code it
 * documents, every text stays on the canvas and clear of the others, and
 * every map conserves its regions' bytes. No cairo: texts are measured
 * with the fixed measure. */
#include <memprof/array_source.h>
#include <memprof/plot.h>
#include <memprof/snapshot.h>
#include <memprof/solver.h>

#include "chart_check.h"
#include "plot_reads.h"
#include "fuzz_events.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_map(void *ctx, size_t target, const mp_snapshot_t *snap)
{
	mp_memmap_t m;
	uint64_t regions = 0, tiled = 0;
	int rc = mp_chart_map_geometry(&m, snap, *(const double *)ctx);

	(void)target;
	if (rc == MP_ENODATA || rc == MP_EUSAGE)
		return 0;
	if (rc < 0)
		return rc == MP_ENOMEM ? 0 : rc;
	for (size_t i = 0; i < snap->nregions; i++)
		regions += snap->regions[i].end - snap->regions[i].base;
	for (size_t i = 0; i < m.ncol; i++) {
		uint64_t used = 0;
		for (int t = 0; t < MP_MEMMAP_TYPES; t++)
			used += m.col[i].used[t];
		if (used + m.col[i].free != m.col[i].hi - m.col[i].lo)
			abort();
		tiled += m.col[i].hi - m.col[i].lo;
	}
	if (tiled != regions || m.used_bytes + m.free_bytes != regions || m.largest_free > m.free_bytes)
		abort();
	mp_memmap_free(&m);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const strings[] = {"", "an op name long enough to need an ellipsis in a narrow picture", "float",
					      "[\xff\xfe]"};
	static const uint64_t scales[] = {1, 1000, 1000000, 1000000000, 3600000000000ull, 1ull << 50};
	/* the pool in its producer's words (as a PyTorch snapshot's), the others in memprof's */
	mp_memory_info_t mem[3] = {{"pool", 0, MP_MEMORY_DEVICE, "allocated"}, {"host", 4096, MP_MEMORY_HOST, NULL},
				   {"huge", 1ull << 63, MP_MEMORY_DEVICE, NULL}};
	mp_solver_options_t so;
	mp_plot_options_t po;
	mp_plot_input_t in;
	mp_source_t *src = NULL;
	mp_scene_t *scene = NULL;
	mp_solver_t *s = NULL;
	mp_event_t *ev;
	mp_diag_t d;
	size_t n;
	int rc;

	if (size < 4)
		return 0;
	ev = fuzz_events(data + 4, size - 4, scales[data[0] % 6], &n);
	if (!ev)
		return 0;
	mp_solver_options_init(&so);
	so.timeline_points = 1 + data[1] % 64;
	so.max_oom_records = 6;
	memset(&po, 0, sizeof(po));
	po.charts = 1 + data[2] % 7;
	po.width = 380 + (double)(data[3] % 16) * 100; /* under 480: refused */
	po.height = data[1] & 0x80 ? 200 + (double)(data[2] >> 3) * 60 : 0;
	po.max_oom_maps = 1 + data[3] % 3;
	po.top = 1 + data[0] % 5;
	po.failures_only = data[0] >> 7;
	if (!(s = mp_solver_new(&so)) || mp_array_source_new(&src, ev, n, strings, 4, mem, 3, "fuzz") < 0 ||
	    mp_solver_run(s, src, &d) < 0)
		goto out;
	memset(&in, 0, sizeof(in));
	in.name = "fuzz.memprof";
	in.solver = s;
	in.source = src;
	/* the map of memory 0 at its peak: every byte of its regions in one
	 * column, each column's live and free bytes its range */
	if (mp_solver_find(s, 0) && mp_solver_find(s, 0)->has_peak) {
		mp_snapshot_target_t t = {0, mp_solver_find(s, 0)->peak.event_index};
		if (mp_snapshot_run(src, &t, 1, check_map, &po.width, &d) < 0)
			abort();
	}
	rc = tr_plot_capture(&scene, &in, 1, &po, &mp_text_measure_fixed, &d);
	if (rc == 0) {
		if (!scene || cc_texts_clear(scene, &mp_text_measure_fixed))
			abort();
	} else if (rc != MP_ENODATA && rc != MP_EUSAGE && rc != MP_ENOMEM) {
		abort();
	}
out:
	mp_scene_free(scene);
	mp_source_close(src);
	mp_solver_free(s);
	free(ev);
	return 0;
}
