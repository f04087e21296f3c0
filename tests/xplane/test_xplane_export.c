/* test_xplane_export.c - export to XSpace and read back: the same report
 * figures (solver: peak, time, stack/heap/free, capacity, fragmentation,
 * breakdown rows; xprof-compatible table for real TF captures). */
#include "test_common.h"

#include <memprof/array_source.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>
#include <memprof/xplane_export.h>
#include <memprof/xprof_compat.h>

#include <math.h>

static mp_solver_t *solve(mp_source_t *src)
{
	mp_solver_t *s = mp_solver_new(NULL);
	mp_diag_t diag;

	assert_non_null(s);
	assert_int_equal(mp_source_rewind(src, &diag), 0);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	return s;
}

static int same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

/* Every memory's solver figures and breakdown rows agree between sources. */
static void same_solver_figures(mp_source_t *a, mp_source_t *b)
{
	mp_solver_t *sa = solve(a), *sb = solve(b);
	size_t i, r;

	assert_int_equal(mp_solver_device_count(sa), mp_solver_device_count(sb));
	for (i = 0; i < mp_solver_device_count(sa); i++) {
		const mp_solver_device_t *x = mp_solver_device(sa, i), *y = NULL;
		const char *name = mp_source_memory(a, x->id)->name;
		size_t j;

		for (j = 0; j < mp_solver_device_count(sb); j++) {
			const mp_solver_device_t *d = mp_solver_device(sb, j);

			if (!strcmp(mp_source_memory(b, d->id)->name, name))
				y = d;
		}
		assert_non_null(y);
		assert_int_equal(x->peak_bytes, y->peak_bytes);
		assert_int_equal(x->peak.time_ns, y->peak.time_ns);
		assert_int_equal(x->peak.stack_bytes, y->peak.stack_bytes);
		assert_int_equal(x->peak.heap_bytes, y->peak.heap_bytes);
		/* without allocator stats the capacity may be unknown; the
		 * stats model of the export then reads it as stack + heap */
		if (x->peak.has_free) {
			assert_int_equal(x->peak.free_bytes, y->peak.free_bytes);
			assert_int_equal(x->capacity_bytes, y->capacity_bytes);
		} else {
			assert_int_equal(y->peak.free_bytes, 0);
			assert_int_equal(y->capacity_bytes, x->peak_bytes);
		}
		assert_true(same_double(x->peak.fragmentation, y->peak.fragmentation));
		assert_int_equal(x->allocations, y->allocations);
		assert_int_equal(x->breakdown_count, y->breakdown_count);
		for (r = 0; r < x->breakdown_count; r++) {
			const mp_solver_row_t *p = &x->breakdown[r], *q = &y->breakdown[r];

			assert_string_equal(mp_source_string(a, p->op), mp_source_string(b, q->op));
			assert_string_equal(mp_source_string(a, p->dtype), mp_source_string(b, q->dtype));
			assert_string_equal(mp_source_string(a, p->shape), mp_source_string(b, q->shape));
			assert_int_equal(p->region, q->region);
			assert_int_equal(p->requested_bytes, q->requested_bytes);
			assert_int_equal(p->allocated_bytes, q->allocated_bytes);
			assert_int_equal(p->occurrences, q->occurrences);
			assert_int_equal(p->unknown_origin, q->unknown_origin);
		}
	}
	mp_solver_free(sa);
	mp_solver_free(sb);
}

static mp_source_t *reopen(const char *path)
{
	mp_source_t *src = NULL;
	mp_diag_t diag;

	if (mp_xplane_open_source(&src, &path, 1, NULL, &diag) != 0)
		fail_msg("%s", diag.text);
	return src;
}

/* A capture without allocator stats (what `memprof record` makes): heap
 * tracked from the events, strings kept, fragmentation unknown. */
static void address_model_round_trip(void **state)
{
	static const char *const strings[] = {"", "matmul", "float", "[128,256]", "float32", "[7]", "conv"};
	mp_event_t ev[8];
	mp_memory_info_t mems[2] = {{"host", 0, MP_MEMORY_HOST, NULL}, {"GPU_0_bfc", 1 << 20, MP_MEMORY_DEVICE, NULL}};
	mp_source_t *orig = NULL, *back;
	mp_xplane_export_stats_t st;
	mp_diag_t diag;
	char *path = mp_test_tmpfile(".xplane.pb");
	int i;

	(void)state;
	memset(ev, 0, sizeof(ev));
	for (i = 0; i < 8; i++) {
		ev[i].time_ns = 1000 + (uint64_t)i * 10;
		ev[i].step = i / 3;
		ev[i].memory = (uint32_t)(i & 1);
	}
	ev[0] = (mp_event_t){.time_ns = 1000, .kind = MP_EV_ALLOC, .memory = 0, .address = 0x10, .requested_bytes = 100,
			     .allocated_bytes = 112, .op = 1, .dtype = 2, .shape = 3, .region = MP_REGION_OUTPUT, .step = 0};
	ev[1] = (mp_event_t){.time_ns = 1010, .kind = MP_EV_ALLOC, .memory = 1, .address = 0x20, .requested_bytes = 4000,
			     .allocated_bytes = 4096, .op = 6, .dtype = 4, .shape = 5, .region = MP_REGION_TEMP, .step = 0};
	ev[2] = (mp_event_t){.time_ns = 1020, .kind = MP_EV_ALLOC, .memory = 0, .address = 0x30, .requested_bytes = 50,
			     .op = 1, .dtype = 2, .shape = 3, .region = MP_REGION_OUTPUT, .step = 1};
	ev[3] = (mp_event_t){.time_ns = 1030, .kind = MP_EV_MARK, .label = 1, .step = 1};
	ev[4] = (mp_event_t){.time_ns = 1040, .kind = MP_EV_FREE, .memory = 1, .address = 0x20, .step = 1};
	ev[5] = (mp_event_t){.time_ns = 1050, .kind = MP_EV_ALLOC, .memory = 1, .address = 0x40, .requested_bytes = 1000,
			     .allocated_bytes = 1024, .op = 6, .region = MP_REGION_TEMP, .step = 1};
	ev[6] = (mp_event_t){.time_ns = 1060, .kind = MP_EV_FREE, .memory = 0, .address = 0x30, .step = 2};
	ev[7] = (mp_event_t){.time_ns = 1070, .kind = MP_EV_FREE, .memory = 0, .address = 0x999, .step = 2};
	assert_int_equal(mp_array_source_new(&orig, ev, 8, strings, 7, mems, 2, "orig"), 0);
	assert_int_equal(mp_xplane_export(orig, path, NULL, &st, &diag), 0);
	assert_int_equal(st.events, 7);
	assert_int_equal(st.skipped, 1); /* the mark */
	back = reopen(path);
	assert_int_equal(mp_source_memory_count(back), 2);
	same_solver_figures(orig, back);
	{
		/* hand-checked: GPU_0_bfc peaks at 4096 B at 1010 ns, capacity 1 MiB */
		mp_solver_t *s = solve(back);
		const mp_solver_device_t *d = mp_solver_find(s, 0);

		assert_string_equal(mp_source_memory(back, 0)->name, "GPU_0_bfc");
		assert_int_equal(d->peak_bytes, 4096);
		assert_int_equal(d->peak.time_ns, 1010);
		assert_int_equal(d->capacity_bytes, 1 << 20);
		assert_true(isnan(d->peak.fragmentation));
		assert_int_equal(d->breakdown_count, 1);
		assert_string_equal(mp_source_string(back, d->breakdown[0].dtype), "float32");
		d = mp_solver_find(s, 1);
		assert_string_equal(mp_source_memory(back, 1)->name, "host");
		assert_int_equal(d->peak_bytes, 162);
		mp_solver_free(s);
	}
	mp_source_close(back);
	mp_source_close(orig);
	unlink(path);
	free(path);
}

/* Real TF captures: exported and re-read, the same solver figures and the
 * same xprof-compatible summary and table. */
static void tf_capture_round_trip(void **state)
{
	static const char *const rel[] = {
		"xplane/tf24-gpu-e4040-2022/logs/fit/20221104-212610/train/plugins/profile/2022_11_04_21_26_12/"
		"instance-ecbm.xplane.pb",
		"xplane/tf24-8gpu-multiworker/demo/plugins/profile/GPU-multi-worker/34.83.195.179_6003.xplane.pb",
	};
	size_t k, i, r;

	(void)state;
	for (k = 0; k < 2; k++) {
		const char *p = mp_test_shared(rel[k]);
		char *path;
		mp_source_t *orig, *back;
		mp_xprof_profile_t *pa = NULL, *pb = NULL;
		mp_diag_t diag;

		if (!p)
			skip();
		path = mp_test_tmpfile(".xplane.pb"); /* after the skip: it is not freed there */
		orig = reopen(p);
		assert_int_equal(mp_xplane_export(orig, path, NULL, NULL, &diag), 0);
		back = reopen(path);
		assert_int_equal(mp_xplane_memory_event_count(back), mp_xplane_memory_event_count(orig));
		same_solver_figures(orig, back);
		assert_int_equal(mp_xprof_compute(orig, NULL, &pa, &diag), 0);
		assert_int_equal(mp_xprof_compute(back, NULL, &pb, &diag), 0);
		assert_int_equal(pa->n, pb->n);
		for (i = 0; i < pa->n; i++) {
			const mp_xprof_memory_t *x = &pa->mems[i], *y = &pb->mems[i];

			assert_string_equal(x->name, y->name);
			assert_int_equal(x->peak_bytes, y->peak_bytes);
			assert_int_equal(x->capacity_bytes, y->capacity_bytes);
			assert_int_equal(x->lifetime_peak_max, y->lifetime_peak_max);
			if (k == 0) {
				/* one thread: stored order = time order, so even the
				 * tie-dependent figures agree */
				assert_int_equal(x->peak_time_ns, y->peak_time_ns);
				assert_true(x->fragmentation == y->fragmentation);
				assert_int_equal(x->nrows, y->nrows);
				for (r = 0; r < x->nrows; r++) {
					assert_string_equal(x->rows[r].op, y->rows[r].op);
					assert_int_equal(x->rows[r].allocation_bytes, y->rows[r].allocation_bytes);
					assert_int_equal(x->rows[r].occurrences, y->rows[r].occurrences);
					assert_string_equal(x->rows[r].dtype, y->rows[r].dtype);
					assert_string_equal(x->rows[r].region, y->rows[r].region);
					assert_string_equal(x->rows[r].shape, y->rows[r].shape);
				}
			}
		}
		mp_xprof_free(pa);
		mp_xprof_free(pb);
		mp_source_close(back);
		mp_source_close(orig);
		unlink(path);
		free(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(address_model_round_trip),
		cmocka_unit_test(tf_capture_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
