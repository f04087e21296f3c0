/* test_gpu_h200.c - the CUPTI buffers of memprof's first run on a GPU
 * (an H200, CUDA 13.0 / CUPTI 130001, driver 580.159.04, torch
 * 2.11.0+cu130: scripts/gpu_check.sh), replayed anywhere through
 * mp_cupti_replay and solved, against what the programs themselves said.
 *
 * Fixtures (tests/gpu/fixtures/, raw MEMPROF_CUPTI_DUMP files):
 *   vmm.cupti.bin              tests/gpu/real/vmm_probe.cu
 *   torch_native.cupti.bin     tests/gpu/real/torch_gpu.py, native allocator
 *   torch_expandable.cupti.bin   ... PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
 *   torch_async.cupti.bin        ... backend:cudaMallocAsync
 * Golden figures: PyTorch's own (torch.cuda.memory_stats, run without
 * memprof: h200_plain_figures.txt) and vmm_probe's sizes. The library
 * regions outside torch's allocator (1024 + 131072 + 67108864 B, made at
 * the first matmul) and the modules' statics (21 x 15 + 28 x 1 + 6 + 32 +
 * 112 = 493 B) were read off the raw records by hand (docs/gpu.md).
 * The dumps hold activity records only: failed allocations and the
 * callbacks' side are tested on the fake CUPTI (test_gpu_record.c). */
#include "test_common.h"

#include <memprof/cupti_dump.h>
#include <memprof/reader.h>
#include <memprof/cupti_translate.h>
#include <memprof/solver.h>
#include <memprof/source.h>

#define MiB (1ull << 20)
#define FIXTURES MEMPROF_SOURCE_DIR "/tests/gpu/fixtures/"

/* torch.cuda.memory_stats() of the three runs (h200_plain_figures.txt) */
#define TORCH_MAX_ALLOCATED 389021696ull
#define NATIVE_MAX_RESERVED 415236096ull
#define NATIVE_RESERVED 415236096ull
#define EXPANDABLE_MAX_RESERVED 419430400ull
#define EXPANDABLE_RESERVED 356515840ull
#define ASYNC_MAX_RESERVED 436207616ull
#define ASYNC_RESERVED 436207616ull
/* cuBLAS's own cudaMalloc's at the first matmul (not torch's allocator's) */
#define LIBRARY_BYTES (1024ull + 131072ull + 64 * MiB)
#define STATIC_BYTES 493ull

typedef struct {
	uint64_t reserved_peak, in_use_peak, lifetime_peak, allocations, rejected, unknown_frees;
	uint64_t reserved_end; /* bytes of the regions live at the end */
	int found;
} mem_figures_t;

typedef struct {
	mem_figures_t gpu0, statics, pinned, managed;
	mp_cupti_stats_t st;
} run_figures_t;

/* The regions live at the end of one memory id, summed from its events. */
static uint64_t region_end(mp_source_t *src, uint32_t id, const char *path)
{
	struct {
		uint64_t address, bytes;
	} live[256];
	size_t n = 0, i;
	uint64_t sum = 0;
	mp_event_t ev;
	mp_diag_t diag;

	(void)src;
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	while (mp_source_next(src, &ev, &diag) == 1) {
		if (ev.memory != id)
			continue;
		if (ev.kind == MP_EV_REGION_ADD) {
			assert_true(n < 256);
			live[n].address = ev.address, live[n++].bytes = ev.requested_bytes;
		} else if (ev.kind == MP_EV_REGION_REMOVE) {
			for (i = 0; i < n; i++)
				if (live[i].address == ev.address) {
					live[i] = live[--n];
					break;
				}
		}
	}
	mp_source_close(src);
	for (i = 0; i < n; i++)
		sum += live[i].bytes;
	return sum;
}

static void replay(const char *name, run_figures_t *r)
{
	char dump[512], *out = mp_test_tmpfile(".memprof");
	mp_solver_options_t o;
	mp_source_t *src;
	mp_solver_t *s;
	mp_diag_t diag;
	size_t i;

	memset(r, 0, sizeof *r);
	snprintf(dump, sizeof dump, FIXTURES "%s.cupti.bin", name);
	unlink(out);
	assert_int_equal(mp_cupti_replay(dump, out, &r->st, &diag), 0);
	mp_solver_options_init(&o);
	assert_non_null(s = mp_solver_new(&o));
	assert_int_equal(mp_capture_open_source(&src, out, &diag), 0);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	for (i = 0; i < mp_solver_device_count(s); i++) {
		const mp_solver_device_t *d = mp_solver_device(s, i);
		const mp_memory_info_t *m = mp_source_memory(src, d->id);
		mem_figures_t *f = NULL;
		assert_non_null(m);
		if (!strcmp(m->name, "GPU:0"))
			f = &r->gpu0;
		else if (!strcmp(m->name, "GPU:0:static"))
			f = &r->statics;
		else if (!strcmp(m->name, "CUDA:pinned_host"))
			f = &r->pinned;
		else if (!strcmp(m->name, "CUDA:managed"))
			f = &r->managed;
		if (!f)
			continue;
		f->found = 1;
		f->reserved_peak = d->has_reserved_peak ? d->reserved_peak_bytes : 0;
		f->in_use_peak = d->peak_bytes;
		f->lifetime_peak = d->lifetime_peak_bytes;
		f->allocations = d->allocations;
		f->rejected = d->rejected_regions;
		f->unknown_frees = d->unknown_frees;
		f->reserved_end = region_end(src, d->id, out);
	}
	mp_source_close(src);
	mp_solver_free(s);
	unlink(out);
	free(out);
	/* nothing in the buffers that memprof could not read */
	assert_int_equal(r->st.invalid + r->st.truncated_bytes + r->st.pools_full, 0);
}

/* Native caching allocator: its cudaMalloc segments 256 + 20 + 20 + 100 MiB
 * are torch's reserved bytes, never freed (no empty_cache); beside them
 * cuBLAS's three, and the statics on their own id. */
static void test_torch_native(void **state)
{
	run_figures_t r;

	(void)state;
	replay("torch_native", &r);
	assert_true(r.gpu0.found && r.statics.found);
	assert_int_equal(256 * MiB + 20 * MiB + 20 * MiB + 100 * MiB, NATIVE_MAX_RESERVED);
	assert_int_equal(r.gpu0.reserved_peak, NATIVE_MAX_RESERVED + LIBRARY_BYTES);
	assert_int_equal(r.gpu0.reserved_end, NATIVE_RESERVED + LIBRARY_BYTES);
	assert_int_equal(r.gpu0.rejected, 0);
	assert_int_equal(r.gpu0.allocations, 0); /* torch does not annotate: regions only */
	assert_int_equal(r.statics.reserved_peak, STATIC_BYTES);
	assert_int_equal(r.statics.rejected, 0);
	assert_int_equal(r.st.records, 59);
}

/* Expandable segments: 20 chunks of 20 MiB cuMemMap'd (MEMORY2 records
 * with no context), 3 unmapped at the end: one region each, none rejected;
 * the peak and the end are torch's max_reserved and reserved. */
static void test_torch_expandable(void **state)
{
	run_figures_t r;

	(void)state;
	replay("torch_expandable", &r);
	assert_int_equal(20 * 20 * MiB, EXPANDABLE_MAX_RESERVED);
	assert_int_equal(r.gpu0.rejected, 0);
	assert_int_equal(r.gpu0.reserved_peak, EXPANDABLE_MAX_RESERVED + LIBRARY_BYTES);
	assert_int_equal(r.gpu0.reserved_end, EXPANDABLE_RESERVED + LIBRARY_BYTES);
	assert_int_equal(r.statics.reserved_peak, STATIC_BYTES);
}

/* cudaMallocAsync: torch's tensors are stream-ordered allocations, so
 * memprof sees them: GPU:0's in-use peak is torch's max_allocated exactly,
 * every allocation inside its pool's range, every free known. The pool
 * (created at 32 MiB, its size then carried by each record, 416 MiB when
 * trimmed at the end) is torch's reserved. */
static void test_torch_async(void **state)
{
	run_figures_t r;

	(void)state;
	replay("torch_async", &r);
	assert_int_equal(r.gpu0.in_use_peak, TORCH_MAX_ALLOCATED);
	assert_int_equal(r.gpu0.lifetime_peak, TORCH_MAX_ALLOCATED);
	assert_int_equal(r.gpu0.allocations, 15);
	assert_int_equal(r.gpu0.unknown_frees, 0);
	assert_int_equal(r.gpu0.rejected, 0);
	assert_int_equal(r.gpu0.reserved_peak, ASYNC_MAX_RESERVED + LIBRARY_BYTES);
	assert_int_equal(r.gpu0.reserved_end, ASYNC_RESERVED + LIBRARY_BYTES);
	assert_int_equal(r.statics.reserved_peak, STATIC_BYTES);
}

/* vmm_probe: cudaMalloc 64 MiB (freed) then 32 MiB kept; a pool of 3 x
 * 16 MiB (grown 32 -> 64 MiB: replaced, not rejected); 8 chunks of the
 * 2 MiB granularity mapped and unmapped: 16 MiB, once; 8 MiB pinned, 4 MiB
 * managed. */
static void test_vmm(void **state)
{
	run_figures_t r;

	(void)state;
	replay("vmm", &r);
	assert_int_equal(r.gpu0.rejected, 0);
	assert_int_equal(r.gpu0.in_use_peak, 3 * 16 * MiB);
	assert_int_equal(r.gpu0.allocations, 3);
	/* the kept 32 MiB, the pool at 64 MiB and the 16 MiB of chunks */
	assert_int_equal(r.gpu0.reserved_peak, 32 * MiB + 64 * MiB + 16 * MiB);
	assert_int_equal(r.gpu0.reserved_end, 32 * MiB + 64 * MiB);
	assert_int_equal(r.pinned.in_use_peak, 8 * MiB);
	assert_int_equal(r.managed.in_use_peak, 4 * MiB);
	assert_int_equal(r.statics.found, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torch_native),
		cmocka_unit_test(test_torch_expandable),
		cmocka_unit_test(test_torch_async),
		cmocka_unit_test(test_vmm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
