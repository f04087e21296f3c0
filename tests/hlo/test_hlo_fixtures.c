/* test_hlo_fixtures.c - memprof_hlo on HloProtos written by the tests with
 * protobuf-c (hlo_fixture.c): SHARE_WITH re-use and chains, outputs, the
 * JSON of names that are not UTF-8, nested tuples, tiles and padding.
 * Every expected figure below is worked out by hand in the comments from
 * the reference algorithm (docs/hlo.md). Damaged protos and containers:
 * test_hlo_inputs.c. */
#include "test_common.h"

#include "json_check.h"
#include "hlo_load.h"

#include <jansson.h>

/* ---- fixture A (hlo_load.h): SHARE_WITH re-use, a parameter and an output, a tiny buffer ---- */

static void test_share_with_reuse(void **state)
{
	mp_hlo_module_t *m = load_fx(fixture_a());
	mp_hlo_result_t *r = analyze(m, 0, 16384, 0);
	static const int64_t heap[] = {0, 65536, 65600, 64, 65600, 196672, 131136, 64, 0};
	static const char *const order[] = {"p0", "out", "fusion.b", "fusion.c", "small (<16384 bytes)"};
	static const size_t by_size[] = {3, 2, 0, 1, 4};

	(void)state;
	assert_int_equal(r->trace_id, 0);
	assert_int_equal(r->n_events, 8);
	assert_int_equal(r->peak_heap_bytes, 262208);
	assert_int_equal(r->peak_unpadded_heap_bytes, 262208);
	assert_int_equal(r->peak_position, 4);
	assert_string_equal(r->peak_instruction, "fusion.c");
	assert_int_equal(r->indefinite_bytes, 65536);
	assert_int_equal(r->total_allocation_bytes, 327680);
	assert_int_equal(r->entry_parameter_bytes, 32768);
	assert_int_equal(r->maybe_live_out_bytes, 32768);
	assert_true(r->fragmentation_percent > 24.97558 && r->fragmentation_percent < 24.97559);
	assert_int_equal(r->n_points, 9);
	for (size_t i = 0; i < 9; i++)
		assert_int_equal(r->heap_sizes[i], heap[i] + 65536);
	assert_int_equal(r->n_buffers, 5);
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(r->buffers[i].instruction_name, order[i]);
		assert_int_equal(r->by_size[i], by_size[i]);
	}
	/* the re-used buffer is shown by its current sharer, span from the SHARE_WITH to the FREE */
	assert_int_equal(r->buffers[2].logical_buffer_id, 3);
	assert_int_equal(r->buffers[2].has_span, 1);
	assert_int_equal(r->buffers[2].span_start, 3);
	assert_int_equal(r->buffers[2].span_limit, 5);
	assert_int_equal(r->buffers[3].span_start, 4);
	assert_int_equal(r->buffers[3].span_limit, 6);
	assert_int_equal(r->buffers[0].category, MP_HLO_CAT_PARAMETER);
	assert_int_equal(r->buffers[1].category, MP_HLO_CAT_OUTPUT);
	assert_int_equal(r->buffers[3].category, MP_HLO_CAT_TEMPORARY);
	assert_string_equal(r->buffers[3].shape, "f32[32768]{0}");
	assert_string_equal(r->buffers[3].op_name, "jit(f)/c");
	assert_string_equal(r->buffers[3].source, "model.py:4");
	assert_string_equal(r->buffers[3].label, "fusion.c: f32[32768]{0} # jit(f)/c");
	assert_int_equal(r->buffers[4].size, 64);
	assert_int_equal(r->small_total_bytes, 64);
	mp_hlo_result_free(r);

	/* small buffers off: the tiny buffer is listed in program order before fusion.b */
	r = analyze(m, 1, 0, 0);
	assert_int_equal(r->n_buffers, 5);
	assert_string_equal(r->buffers[2].instruction_name, "tiny");
	assert_int_equal(r->small_total_bytes, 0);
	mp_hlo_result_free(r);
	mp_hlo_module_free(m);
}

/* A three-level SHARE_WITH chain whose memory is released and re-used.
 * A 64 KiB, B and C alias it, D re-uses it after it was freed, E 32 KiB:
 * 0 ALLOC A | 1 SHARE B->A | 2 SHARE C->B | 3 FREE A | 4 FREE B | 5 FREE C (root A
 * released) | 6 SHARE D->C (root A in use again, shown as D) | 7 ALLOC E | 8 FREE D | 9 FREE E.
 * heap before each event: 0, 65536 x5, 0, 65536, 98304, 32768; final 0.
 * Peak 98304 at event 7 (65536 at event 6 only equals the first maximum).
 * Live at the peak: A shown as D (D's own size, 49152, as the reference
 * shows the sharer's size) then E. */
static void test_share_with_chain(void **state)
{
	fx_t *fx = fx_new("chain", 9);
	int64_t d = 16384;
	static const int64_t sizes[] = {65536, 65536, 65536, 49152, 32768};
	static const int64_t heap[] = {0, 65536, 65536, 65536, 65536, 65536, 0, 65536, 98304, 32768, 0};
	Xla__BufferAllocationProto *a;
	Xla__HeapSimulatorTrace *t;
	mp_hlo_module_t *m;
	mp_hlo_result_t *r;

	(void)state;
	a = fx_alloc(fx, 0, 98304, 0, 0);
	for (int i = 0; i < 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "op.%c", 'A' + i);
		fx_instr(fx, 10 + i, name, "fusion", fx_array(fx, F32, 1, &d), NULL);
		fx_lb(fx, 1 + i, sizes[i], 10 + i, 0, NULL, 0);
		fx_assign(fx, a, 1 + i, i == 4 ? 65536 : 0, sizes[i]);
	}
	t = fx_trace(fx);
	fx_event(fx, t, FX_ALLOC, 1, 0, "op.A");
	fx_event(fx, t, FX_SHARE, 2, 1, "op.B");
	fx_event(fx, t, FX_SHARE, 3, 2, "op.C");
	fx_event(fx, t, FX_FREE, 1, 0, "x");
	fx_event(fx, t, FX_FREE, 2, 0, "x");
	fx_event(fx, t, FX_FREE, 3, 0, "x");
	fx_event(fx, t, FX_SHARE, 4, 3, "op.D");
	fx_event(fx, t, FX_ALLOC, 5, 0, "op.E");
	fx_event(fx, t, FX_FREE, 4, 0, "x");
	fx_event(fx, t, FX_FREE, 5, 0, "x");
	m = load_fx(fx);
	r = analyze(m, 1, 0, 0);
	assert_int_equal(r->peak_heap_bytes, 98304);
	assert_int_equal(r->peak_position, 7);
	assert_int_equal(r->n_points, 11);
	for (size_t i = 0; i < 11; i++)
		assert_int_equal(r->heap_sizes[i], heap[i]);
	assert_int_equal(r->n_buffers, 2);
	assert_string_equal(r->buffers[0].instruction_name, "op.D");
	assert_int_equal(r->buffers[0].size, 49152);
	assert_int_equal(r->buffers[0].span_start, 6);
	assert_int_equal(r->buffers[0].span_limit, 8);
	assert_string_equal(r->buffers[1].instruction_name, "op.E");
	assert_int_equal(r->buffers[1].span_start, 7);
	assert_int_equal(r->buffers[1].span_limit, 9);
	mp_hlo_result_free(r);
	mp_hlo_module_free(m);
}

/* JSON and CSV of fixture A, read back. */
static void test_outputs(void **state)
{
	mp_hlo_module_t *m = load_fx(fixture_a());
	mp_hlo_result_t *r = analyze(m, 0, 16384, 0);
	char *path = mp_test_tmpfile(".json");
	FILE *fp = fopen(path, "w+");
	json_error_t err;
	json_t *doc, *b;
	char line[512];

	(void)state;
	assert_int_equal(mp_hlo_write_json(fp, r), 0);
	rewind(fp);
	doc = json_loadf(fp, 0, &err);
	if (!doc)
		fail_msg("json: %s", err.text);
	mp_test_json_valid(doc, "hlo", NULL);
	assert_string_equal(json_string_value(json_object_get(doc, "schema")), "memprof.hlo/1");
	assert_int_equal(json_integer_value(json_object_get(doc, "peak_heap_bytes")), 262208);
	assert_int_equal(json_integer_value(json_object_get(doc, "peak_position")), 4);
	assert_int_equal(json_integer_value(json_object_get(doc, "indefinite_bytes")), 65536);
	assert_int_equal(json_array_size(json_object_get(doc, "heap_sizes")), 9);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(doc, "heap_sizes"), 5)), 262208);
	b = json_array_get(json_object_get(doc, "buffers_by_order"), 2);
	assert_string_equal(json_string_value(json_object_get(b, "name")), "fusion.b");
	assert_int_equal(json_integer_value(json_object_get(b, "span_start")), 3);
	assert_string_equal(json_string_value(json_object_get(b, "category")), "Temporary");
	b = json_array_get(json_object_get(doc, "buffers_by_size"), 0);
	assert_string_equal(json_string_value(json_object_get(b, "name")), "fusion.c");
	assert_int_equal(json_integer_value(json_object_get(b, "order")), 3);
	json_decref(doc);
	fclose(fp);

	fp = fopen(path, "w+");
	assert_int_equal(mp_hlo_write_csv(fp, r), 0);
	rewind(fp);
	assert_non_null(fgets(line, sizeof(line), fp));
	assert_string_equal(line,
			    "InstructionName,UnpaddedSizeMiB,SizeMiB,AllocAt,FreeAt,TfOpName,OpCode,Shape,AllocationType\n");
	assert_non_null(fgets(line, sizeof(line), fp)); /* p0: no span -> 0..N */
	assert_string_equal(line, "p0,0.031250,0.031250,0,8,,parameter,f32[8192]{0},Parameter\n");
	assert_non_null(fgets(line, sizeof(line), fp));
	assert_non_null(fgets(line, sizeof(line), fp));
	assert_string_equal(line, "fusion.b,0.062500,0.062500,3,5,jit(f)/b,fusion,f32[16384]{0},Temporary\n");
	fclose(fp);

	fp = fopen(path, "w+");
	assert_int_equal(mp_hlo_write_text(fp, r, 2, 1), 0);
	rewind(fp);
	assert_non_null(fgets(line, sizeof(line), fp));
	assert_non_null(strstr(line, "fixture_a"));
	fclose(fp);
	unlink(path);
	free(path);
	mp_hlo_result_free(r);
	mp_hlo_module_free(m);
}

/* Names that are not UTF-8 (damaged files) still reach the JSON, as '?'. */
static void test_json_non_utf8(void **state)
{
	fx_t *fx = fx_new("m\xff", 1);
	int64_t d = 8192;
	Xla__BufferAllocationProto *a;
	mp_hlo_module_t *m;
	mp_hlo_result_t *r;
	char *path = mp_test_tmpfile(".json");
	FILE *fp = fopen(path, "w+");
	json_t *doc;
	json_error_t err;

	(void)state;
	fx_instr(fx, 1, "bad\xffname", "parameter", fx_array(fx, F32, 1, &d), NULL);
	fx_lb(fx, 1, 32768, 1, 0, NULL, 0);
	a = fx_alloc(fx, 0, 32768, 0, FX_PARAM);
	fx_assign(fx, a, 1, 0, 32768);
	m = load_fx(fx);
	r = analyze(m, 0, 16384, 0);
	assert_int_equal(mp_hlo_write_json(fp, r), 0);
	rewind(fp);
	doc = json_loadf(fp, 0, &err);
	if (!doc)
		fail_msg("json: %s", err.text);
	mp_test_json_valid(doc, "hlo", NULL);
	assert_string_equal(json_string_value(json_object_get(doc, "module_name")), "m?");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(doc, "buffers_by_order"), 0), "name")),
			    "bad?name");
	json_decref(doc);
	fclose(fp);
	unlink(path);
	free(path);
	mp_hlo_result_free(r);
	mp_hlo_module_free(m);
}

/* ---- fixture B: nested tuples, tiles, sub-byte types, aliased parameter ----
 * async ((f32[1024,1024], f32[16]), s32[4096]): LB10 at {0,0} (4 MiB), LB11 at {1}.
 *   xprof resolves {0,0} by its last element at the top level -> the inner
 *   2-tuple: unpadded 2 x 8 = 16 B; the full walk gives f32[1024,1024] = 4194304 B.
 * tiled f32[5,1000]{1,0:T(8,128)}: padded 8 x 1024 x 4 = 32768, unpadded 20000.
 * int4 s4[1000,33]{1,0:E(4)}: unpadded ceil(33000 x 4 / 8) = 16500 (padded 16512).
 * scalar f32[]{:T(128)}: 512 padded, 4 unpadded.  pred[100]: 100.
 * param.0 f32[4096], parameter aliased with the output: 16384 B, indefinite.
 * trace: ALLOC 10,11,12,13,14,15 then FREE all; peak at event 5:
 *   4194304 + 16384 + 32768 + 16512 + 512 + 100 = 4260580 (+16384 = 4276964).
 *   unpadded compat 16 + 16384 + 20000 + 16500 + 4 + 100 = 53004 (+16384 = 69388);
 *   unpadded full 4247292 (+16384 = 4263676). */
static mp_hlo_module_t *fixture_b(void)
{
	fx_t *fx = fx_new("fixture_b", 8);
	int64_t d2[] = {1024, 1024}, d16 = 16, d4k = 4096, dt[] = {5, 1000}, ds4[] = {1000, 33}, d100 = 100;
	int64_t t8[] = {8, 128}, t128[] = {128}, i00[] = {0, 0}, i1[] = {1};
	Xla__ShapeProto *inner[2], *outer[2], *s;
	Xla__BufferAllocationProto *a;
	Xla__HeapSimulatorTrace *t;
	static const int64_t ids[] = {10, 11, 12, 13, 14, 15};

	inner[0] = fx_array(fx, F32, 2, d2);
	inner[1] = fx_array(fx, F32, 1, &d16);
	outer[0] = fx_tuple(fx, 2, inner);
	outer[1] = fx_array(fx, S32, 1, &d4k);
	fx_instr(fx, 10, "async", "all-gather-start", fx_tuple(fx, 2, outer), "jit(f)/all_gather");
	s = fx_array(fx, F32, 2, dt);
	fx_tile(fx, s, 2, t8);
	fx_instr(fx, 12, "tiled", "fusion", s, NULL);
	s = fx_array(fx, S4, 2, ds4);
	fx_layout_extra(s, 4, 0);
	fx_instr(fx, 13, "int4", "convert", s, NULL);
	s = fx_array(fx, F32, 0, NULL);
	fx_tile(fx, s, 1, t128);
	fx_instr(fx, 14, "scalar", "reduce", s, NULL);
	fx_instr(fx, 15, "mask", "compare", fx_array(fx, PRED, 1, &d100), NULL);
	fx_instr(fx, 16, "param.0", "parameter", fx_array(fx, F32, 1, &d4k), NULL);
	fx_lb(fx, 10, 4194304, 10, 2, i00, 0);
	fx_lb(fx, 11, 16384, 10, 1, i1, 0);
	fx_lb(fx, 12, 32768, 12, 0, NULL, 0);
	fx_lb(fx, 13, 16512, 13, 0, NULL, 0);
	fx_lb(fx, 14, 512, 14, 0, NULL, 0);
	fx_lb(fx, 15, 100, 15, 0, NULL, 0);
	fx_lb(fx, 16, 16384, 16, 0, NULL, 0);
	a = fx_alloc(fx, 0, 16384, 0, FX_PARAM | FX_OUTPUT | FX_ALIASED);
	fx_assign(fx, a, 16, 0, 16384);
	a = fx_alloc(fx, 1, 8 << 20, 0, 0);
	for (int i = 0; i < 6; i++)
		fx_assign(fx, a, ids[i], 0, 1);
	t = fx_trace(fx);
	for (int i = 0; i < 6; i++)
		fx_event(fx, t, FX_ALLOC, ids[i], 0, "x");
	for (int i = 0; i < 6; i++)
		fx_event(fx, t, FX_FREE, ids[i], 0, "y");
	return load_fx(fx);
}

static void test_shapes_and_padding(void **state)
{
	mp_hlo_module_t *m = fixture_b();
	mp_hlo_result_t *c = analyze(m, 1, 0, 0), *d = analyze(m, 0, 0, 0);

	(void)state;
	assert_int_equal(c->peak_position, 5);
	assert_int_equal(c->peak_heap_bytes, 4276964);
	assert_int_equal(d->peak_heap_bytes, 4276964);
	assert_int_equal(c->peak_unpadded_heap_bytes, 69388);
	assert_int_equal(d->peak_unpadded_heap_bytes, 4263676);
	assert_int_equal(c->entry_parameter_bytes, 16384);
	assert_int_equal(c->maybe_live_out_bytes, 16384);
	assert_int_equal(c->indefinite_bytes, 16384);
	assert_int_equal(c->n_buffers, 7);
	assert_string_equal(c->buffers[0].instruction_name, "param.0");
	assert_int_equal(c->buffers[0].category, MP_HLO_CAT_PARAMETER); /* aliased output shows as Parameter */
	assert_string_equal(c->buffers[1].instruction_name, "async{0,0}");
	assert_int_equal(c->buffers[1].unpadded_size, 16);
	assert_string_equal(c->buffers[1].shape, "(f32[1024,1024]{1,0}, f32[16]{0})");
	assert_int_equal(d->buffers[1].unpadded_size, 4194304);
	assert_string_equal(d->buffers[1].shape, "f32[1024,1024]{1,0}");
	assert_string_equal(d->buffers[2].instruction_name, "async{1}");
	assert_int_equal(d->buffers[2].unpadded_size, 16384);
	assert_string_equal(d->buffers[3].shape, "f32[5,1000]{1,0:T(8,128)}");
	assert_int_equal(d->buffers[3].unpadded_size, 20000);
	assert_string_equal(d->buffers[4].shape, "s4[1000,33]{1,0:E(4)}");
	assert_int_equal(d->buffers[4].unpadded_size, 16500);
	assert_string_equal(d->buffers[5].shape, "f32[]{:T(128)}");
	assert_int_equal(d->buffers[5].unpadded_size, 4);
	assert_string_equal(d->buffers[6].shape, "pred[100]{0}");
	assert_int_equal(d->buffers[6].unpadded_size, 100);
	mp_hlo_result_free(c);
	mp_hlo_result_free(d);
	mp_hlo_module_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_share_with_reuse),
		cmocka_unit_test(test_share_with_chain),
		cmocka_unit_test(test_outputs),
		cmocka_unit_test(test_json_non_utf8),
		cmocka_unit_test(test_shapes_and_padding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
