/* hlo_load.h - loading and analysing the HloProtos of hlo_fixture.c, for
 * the HLO tests (after test_common.h: failures fail the test). */
#ifndef MEMPROF_TEST_HLO_LOAD_H
#define MEMPROF_TEST_HLO_LOAD_H

#include "hlo_fixture.h"

#include <memprof/hlo.h>

#include <stdlib.h>

/* XLA's PrimitiveType numbers the fixtures use. */
enum { F32 = 11, S32 = 4, S4 = 21, PRED = 1 };

/* One module of an HloProto in memory (name: how errors call it), failing
 * the test when it cannot be read. Owned by the caller (mp_hlo_module_free). */
static inline mp_hlo_module_t *load_bytes(const uint8_t *buf, size_t len, const char *name)
{
	mp_hlo_file_t *f = NULL;
	mp_hlo_module_t *m = NULL;
	mp_diag_t diag;

	if (mp_hlo_file_open_mem(buf, len, name, &f, &diag) < 0)
		fail_msg("open: %s", diag.text);
	if (mp_hlo_module_load(f, 0, &m, &diag) < 0)
		fail_msg("load: %s", diag.text);
	mp_hlo_file_close(f);
	return m;
}

/* The fixture's module; the fixture is freed. Owned by the caller. */
static inline mp_hlo_module_t *load_fx(fx_t *fx)
{
	size_t len;
	uint8_t *buf = fx_pack(fx, &len);
	mp_hlo_module_t *m = load_bytes(buf, len, "fixture.hlo.pb");

	free(buf);
	fx_free(fx);
	return m;
}

/* The analysis of colour `color` (compat: xprof's mode; small: the small
 * buffer threshold), failing the test on an error. Owned by the caller
 * (mp_hlo_result_free). */
static inline mp_hlo_result_t *analyze(const mp_hlo_module_t *m, int compat, int64_t small, int64_t color)
{
	mp_hlo_options_t opt;
	mp_hlo_result_t *r = NULL;
	mp_diag_t diag;

	mp_hlo_options_init(&opt);
	opt.compat = compat;
	opt.small_buffer_size = small;
	opt.color = color;
	if (mp_hlo_analyze(m, &opt, &r, &diag) < 0)
		fail_msg("analyze: %s", diag.text);
	return r;
}

/* Fixture A (owned by the caller: fx_free, or load_fx): SHARE_WITH re-use,
 * a parameter and an output, a tiny buffer.
 * LB1 p0 f32[8192] param (alloc 0), LB6 out f32[8192] output (alloc 2),
 * temp alloc 1: LB2 fusion.a f32[16384], LB3 fusion.b (shares LB2), LB4 fusion.c
 * f32[32768], LB5 tiny f32[16].
 * events: 0 ALLOC 2 | 1 ALLOC 5 | 2 FREE 2 | 3 SHARE 3->2 | 4 ALLOC 4 | 5 FREE 3 | 6 FREE 4 | 7 FREE 5
 * heap before each event: 0, 65536, 65600, 64, 65600, 196672, 131136, 64, final 0.
 * peak 196672 at event 4; indefinite 32768 + 32768 = 65536 -> 262208. */
static inline fx_t *fixture_a(void)
{
	fx_t *fx = fx_new("fixture_a", 7);
	int64_t d8k = 8192, d16k = 16384, d32k = 32768, d16 = 16;
	Xla__BufferAllocationProto *a0, *a1, *a2;
	Xla__HeapSimulatorTrace *t;

	fx_instr(fx, 1, "p0", "parameter", fx_array(fx, F32, 1, &d8k), NULL);
	fx_instr(fx, 2, "fusion.a", "fusion", fx_array(fx, F32, 1, &d16k), "jit(f)/a");
	fx_instr(fx, 3, "fusion.b", "fusion", fx_array(fx, F32, 1, &d16k), "jit(f)/b");
	fx_instr(fx, 4, "fusion.c", "fusion", fx_array(fx, F32, 1, &d32k), "jit(f)/c");
	fx_instr(fx, 5, "tiny", "add", fx_array(fx, F32, 1, &d16), NULL);
	fx_instr(fx, 6, "out", "copy", fx_array(fx, F32, 1, &d8k), NULL);
	for (int64_t i = 1; i <= 6; i++) {
		static const int64_t sizes[] = {0, 32768, 65536, 65536, 131072, 64, 32768};

		fx_lb(fx, i, sizes[i], i, 0, NULL, 0);
	}
	a0 = fx_alloc(fx, 0, 32768, 0, FX_PARAM);
	fx_assign(fx, a0, 1, 0, 32768);
	a1 = fx_alloc(fx, 1, 262144, 0, 0);
	fx_assign(fx, a1, 2, 0, 65536);
	fx_assign(fx, a1, 3, 0, 65536);
	fx_assign(fx, a1, 4, 65536, 131072);
	fx_assign(fx, a1, 5, 196608, 64);
	a2 = fx_alloc(fx, 2, 32768, 0, FX_OUTPUT);
	fx_assign(fx, a2, 6, 0, 32768);
	t = fx_trace(fx);
	fx_event(fx, t, FX_ALLOC, 2, 0, "fusion.a");
	fx_event(fx, t, FX_ALLOC, 5, 0, "tiny");
	fx_event(fx, t, FX_FREE, 2, 0, "fusion.b");
	fx_event(fx, t, FX_SHARE, 3, 2, "fusion.b");
	fx_event(fx, t, FX_ALLOC, 4, 0, "fusion.c");
	fx_event(fx, t, FX_FREE, 3, 0, "out");
	fx_event(fx, t, FX_FREE, 4, 0, "out");
	fx_event(fx, t, FX_FREE, 5, 0, "out");
	return fx;
}

#endif
