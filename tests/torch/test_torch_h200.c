/* test_torch_h200.c - two real PyTorch snapshots (torch 2.11.0+cu130 on an
 * H200, Python frames: tests/gpu/real/torch_gpu.py under the native
 * caching allocator and with expandable segments, recorded by
 * scripts/gpu_check.sh) through the snapshot source and the solver.
 * Golden figures: read from the pickles themselves by
 * tests/torch/fixtures/h200_figures.py (python3's pickle, no torch), and
 * equal to what torch.cuda.memory_stats() said in the same runs
 * (tests/gpu/fixtures/h200_plain_figures.txt). No Python at test time. */
#include "test_common.h"
#include "torch_test.h"

#include <memprof/solver.h>
#include <memprof/torch.h>

#define FIXTURES MEMPROF_SOURCE_DIR "/tests/torch/fixtures/"
#define MiB (1ull << 20)

typedef struct {
	const char *file;
	uint64_t entries, peak_allocated, final_allocated, blocks, peak_reserved, final_reserved, segments;
	uint64_t oom_device_free;
} golden_t;

static const golden_t native = {"h200_native.pickle", 32, 389021696, 326107136, 9,
				415236096, 415236096, 4, 148963983360ull};
static const golden_t expandable = {"h200_expandable.pickle", 33, 389021696, 326107136, 9,
				    419430400, 356515840, 1, 149020606464ull};

static const mp_solver_device_t *device_named(mp_solver_t *s, mp_source_t *src, const char *name)
{
	for (size_t i = 0; i < mp_solver_device_count(s); i++) {
		const mp_solver_device_t *d = mp_solver_device(s, i);
		const mp_memory_info_t *m = mp_source_memory(src, d->id);
		if (m && !strcmp(m->name, name))
			return d;
	}
	fail_msg("no memory '%s'", name);
	return NULL;
}

static void check(const golden_t *g)
{
	char path[512], want[64];
	mp_source_t *src;
	mp_solver_t *s;
	mp_solver_options_t so;
	mp_torch_info_t info;
	mp_diag_t diag;
	const mp_solver_device_t *d, *rd;
	const mp_source_note_t *n;

	snprintf(path, sizeof path, FIXTURES "%s", g->file);
	mp_diag_clear(&diag);
	assert_int_equal(mp_torch_open_source(&src, path, NULL, &diag), 0);
	mp_solver_options_init(&so);
	assert_non_null(s = mp_solver_new(&so));
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	mp_torch_info(src, &info);
	assert_int_equal(info.devices, 1);
	assert_int_equal(info.trace_entries, g->entries);
	assert_int_equal(info.segments, g->segments);
	assert_int_equal(info.blocks, g->blocks);
	assert_int_equal(info.before_trace, 0);

	d = device_named(s, src, "cuda:0");
	rd = device_named(s, src, "cuda:0 reserved");
	/* max_memory_allocated(), max_memory_reserved() */
	assert_int_equal(d->peak_bytes, g->peak_allocated);
	assert_int_equal(d->lifetime_peak_bytes, g->peak_allocated);
	assert_int_equal(rd->peak_bytes, g->peak_reserved);
	assert_int_equal(d->reserved_peak_bytes, g->peak_reserved);
	/* memory_allocated(), memory_reserved() at the dump */
	assert_int_equal(d->leak_bytes, g->final_allocated);
	assert_int_equal(rd->leak_bytes, g->final_reserved);
	/* the 1 PiB request, with the device's free bytes torch said */
	assert_int_equal(d->oom_count, 1);
	assert_int_equal(d->oom[0].requested_bytes, 1ull << 50);
	snprintf(want, sizeof want, "device free %llu B", (unsigned long long)g->oom_device_free);
	assert_non_null(strstr(mp_source_string(src, d->oom[0].op), want));
	assert_non_null(strstr(mp_source_string(src, d->oom[0].op), "too_much"));

	assert_non_null(n = mp_test_note(src, d->id, "allocated_peak_bytes"));
	assert_int_equal(n->value, g->peak_allocated);
	assert_non_null(n = mp_test_note(src, d->id, "allocated_final_bytes"));
	assert_int_equal(n->value, g->final_allocated);
	assert_non_null(n = mp_test_note(src, d->id, "dump_check"));
	assert_int_equal(n->warning, 0);
	assert_non_null(strstr(n->text, "ends at the dump's own state"));
	mp_solver_free(s);
	mp_source_close(src);
}

/* Native allocator: four cudaMalloc segments (256 + 20 + 20 + 100 MiB),
 * never released. */
static void test_native(void **state)
{
	(void)state;
	assert_int_equal(256 * MiB + 20 * MiB + 20 * MiB + 100 * MiB, native.peak_reserved);
	check(&native);
}

/* Expandable segments: one segment mapped in four steps to 400 MiB, 60 MiB
 * unmapped after the OOM (torch frees its cache before it retries). */
static void test_expandable(void **state)
{
	(void)state;
	assert_int_equal(20 * 20 * MiB, expandable.peak_reserved);
	check(&expandable);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native),
		cmocka_unit_test(test_expandable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
