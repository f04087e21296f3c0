/* test_hlo_inputs.c - memprof_hlo on damaged HloProtos (bad heap traces,
 * bad modules: a clean error or a warning, never a crash) and on the
 * containers modules come in (gzip, an XSpace embedding two modules),
 * written by the tests with protobuf-c (hlo_fixture.c) and by hand. */
#include "test_common.h"

#include "hlo_load.h"

#include <zlib.h>

/* ---- bad protos ------------------------------------------------------------------ */

/* Two temp LBs (1, 2) of instruction 1 in alloc 0 (and LB 3 in alloc 1); events from the caller. */
static fx_t *small_fx(Xla__HeapSimulatorTrace **t)
{
	fx_t *fx = fx_new("bad", 1);
	int64_t d = 8192;
	Xla__BufferAllocationProto *a;

	fx_instr(fx, 1, "f", "fusion", fx_array(fx, F32, 1, &d), NULL);
	fx_lb(fx, 1, 32768, 1, 0, NULL, 0);
	fx_lb(fx, 2, 32768, 1, 0, NULL, 0);
	fx_lb(fx, 3, 32768, 1, 0, NULL, 0);
	a = fx_alloc(fx, 0, 65536, 0, 0);
	fx_assign(fx, a, 1, 0, 32768);
	fx_assign(fx, a, 2, 32768, 32768);
	a = fx_alloc(fx, 1, 32768, 0, 0);
	fx_assign(fx, a, 3, 0, 32768);
	*t = fx_trace(fx);
	return fx;
}

static int analyze_err(fx_t *fx, mp_diag_t *diag)
{
	mp_hlo_module_t *m = load_fx(fx);
	mp_hlo_options_t opt;
	mp_hlo_result_t *r = NULL;
	int rc;

	mp_hlo_options_init(&opt);
	rc = mp_hlo_analyze(m, &opt, &r, diag);
	if (rc == 0)
		mp_hlo_result_free(r);
	else
		assert_null(r);
	mp_hlo_module_free(m);
	return rc;
}

static void test_bad_traces(void **state)
{
	Xla__HeapSimulatorTrace *t;
	fx_t *fx;
	mp_diag_t diag;
	mp_hlo_module_t *m;
	mp_hlo_result_t *r;

	(void)state;
	fx = small_fx(&t); /* double free */
	fx_event(fx, t, FX_ALLOC, 1, 0, "f");
	fx_event(fx, t, FX_FREE, 1, 0, "f");
	fx_event(fx, t, FX_FREE, 1, 0, "f");
	assert_int_equal(analyze_err(fx, &diag), MP_EHLO);
	assert_int_equal(diag.index, 2);
	assert_non_null(strstr(diag.text, "freed more times"));

	fx = small_fx(&t); /* a trace touching two allocations */
	fx_event(fx, t, FX_ALLOC, 1, 0, "f");
	fx_event(fx, t, FX_ALLOC, 3, 0, "f");
	assert_int_equal(analyze_err(fx, &diag), MP_EHLO);
	assert_int_equal(diag.index, 1);
	assert_non_null(strstr(diag.text, "single allocation"));

	fx = small_fx(&t); /* cyclic SHARE_WITH */
	fx_event(fx, t, FX_ALLOC, 1, 0, "f");
	fx_event(fx, t, FX_SHARE, 2, 1, "f");
	fx_event(fx, t, FX_SHARE, 1, 2, "f");
	assert_int_equal(analyze_err(fx, &diag), MP_EHLO);
	assert_int_equal(diag.index, 2);

	fx = small_fx(&t); /* unknown event kind */
	fx_event(fx, t, 7, 1, 0, "f");
	assert_int_equal(analyze_err(fx, &diag), MP_EHLO);
	assert_non_null(strstr(diag.text, "unknown event kind 7"));

	fx = small_fx(&t); /* unknown buffer id: skipped with a warning */
	fx_event(fx, t, FX_ALLOC, 1, 0, "f");
	fx_event(fx, t, FX_ALLOC, 99, 0, "f");
	fx_event(fx, t, FX_FREE, 1, 0, "f");
	m = load_fx(fx);
	r = analyze(m, 0, 0, 0);
	assert_int_equal(r->peak_heap_bytes, 32768);
	assert_int_equal(r->n_points, 4);
	assert_int_equal(r->n_warnings, 1);
	assert_non_null(strstr(r->warnings[0], "event 1"));
	mp_hlo_result_free(r);
	mp_hlo_module_free(m);
}

static void test_bad_module(void **state)
{
	fx_t *fx = fx_new("legacy", 3);
	int64_t d = 8192;
	Xla__LogicalBufferProto *lb;
	Xla__BufferAllocationProto *a;
	mp_hlo_module_t *m;
	mp_hlo_file_t *f = NULL;
	mp_hlo_result_t *r;
	mp_diag_t diag;
	uint8_t *buf;
	size_t len;

	(void)state;
	fx_instr(fx, 5, "by_name", "fusion", fx_array(fx, F32, 1, &d), NULL);
	lb = fx_lb(fx, 1, 32768, 0, 0, NULL, 0); /* legacy: no instruction_id, a name */
	lb->defined_at->instruction_name = (char *)(uintptr_t)"by_name";
	fx_lb(fx, 2, 32768, 777, 0, NULL, 0);   /* unknown instruction id */
	a = fx_alloc(fx, 0, 65536, 0, FX_CONSTANT);
	fx_assign(fx, a, 1, 0, 32768);
	fx_assign(fx, a, 2, 32768, 32768);
	fx_assign(fx, a, 42, 0, 1);              /* unknown logical buffer */
	buf = fx_pack(fx, &len);
	fx_free(fx);

	m = load_bytes(buf, len, NULL);
	assert_int_equal(mp_hlo_module_warning_count(m), 2);
	assert_non_null(strstr(mp_hlo_module_warning(m, 0), "unknown instruction 777"));
	assert_non_null(strstr(mp_hlo_module_warning(m, 1), "unknown logical buffer 42"));
	r = analyze(m, 1, 0, 0);
	assert_int_equal(r->n_buffers, 1);
	assert_string_equal(r->buffers[0].instruction_name, "by_name");
	assert_int_equal(r->buffers[0].category, MP_HLO_CAT_CONSTANT);
	assert_int_equal(r->peak_heap_bytes, 65536); /* the allocation size, not the LB size */
	mp_hlo_result_free(r);
	mp_hlo_module_free(m);

	/* truncated bytes: a clear error at open, never a crash */
	for (size_t cut = 1; cut < len; cut += len / 7 + 1) {
		int rc = mp_hlo_file_open_mem(buf, cut, NULL, &f, &diag);

		if (rc == 0) { /* cut at a field boundary: decoding must still fail or succeed cleanly */
			rc = mp_hlo_module_load(f, 0, &m, &diag);
			if (rc == 0)
				mp_hlo_module_free(m);
			mp_hlo_file_close(f);
			continue;
		}
		assert_true(rc == MP_ETRUNCATED || rc == MP_EFORMAT);
		assert_null(f);
	}
	free(buf);

	/* warnings are capped at 100, the last one counting the rest */
	fx = fx_new("noisy", 6);
	fx_instr(fx, 1, "x", "parameter", fx_array(fx, F32, 1, &d), NULL);
	a = fx_alloc(fx, 0, 16, 0, FX_PARAM);
	for (int k = 0; k < 150; k++)
		fx_assign(fx, a, 1000 + k, 0, 16);
	buf = fx_pack(fx, &len);
	fx_free(fx);
	m = load_bytes(buf, len, NULL);
	free(buf);
	assert_int_equal(mp_hlo_module_warning_count(m), 100);
	assert_non_null(strstr(mp_hlo_module_warning(m, 98), "1098"));
	assert_string_equal(mp_hlo_module_warning(m, 99), "51 more warnings like these were not listed");
	mp_hlo_module_free(m);

	/* tuples nested 100 deep are refused before decoding (stack guard); 20 are fine */
	for (int depth = 20; depth <= 100; depth += 80) {
		Xla__ShapeProto *sh;

		fx = fx_new("deep", 5);
		sh = fx_array(fx, F32, 1, &d);
		for (int k = 0; k < depth; k++)
			sh = fx_tuple(fx, 1, &sh);
		fx_instr(fx, 1, "deep", "tuple", sh, NULL);
		buf = fx_pack(fx, &len);
		fx_free(fx);
		assert_int_equal(mp_hlo_file_open_mem(buf, len, NULL, &f, &diag), 0);
		m = NULL;
		assert_int_equal(mp_hlo_module_load(f, 0, &m, &diag), depth == 20 ? 0 : MP_ELIMIT);
		if (depth == 100)
			assert_non_null(strstr(diag.text, "nests tuples"));
		mp_hlo_module_free(m);
		mp_hlo_file_close(f);
		free(buf);
	}

	fx = fx_new("before_opt", 4);
	fx_instr(fx, 1, "x", "parameter", fx_array(fx, F32, 1, &d), NULL);
	fx_drop_buffer_assignment(fx);
	buf = fx_pack(fx, &len);
	fx_free(fx);
	assert_int_equal(mp_hlo_file_open_mem(buf, len, NULL, &f, &diag), 0);
	assert_int_equal(mp_hlo_module_load(f, 0, &m, &diag), MP_EHLO);
	assert_non_null(strstr(diag.text, "no buffer assignment"));
	mp_hlo_file_close(f);
	free(buf);
}

/* ---- containers: gzip and an XSpace with two embedded modules ---------------------- */

typedef struct wbuf {
	uint8_t *p;
	size_t len;
} wbuf_t;

static void w_raw(wbuf_t *w, const void *d, size_t n)
{
	w->p = realloc(w->p, w->len + n + 1);
	assert_non_null(w->p);
	memcpy(w->p + w->len, d, n);
	w->len += n;
}

static void w_varint(wbuf_t *w, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	w_raw(w, b, n);
}

static void w_len(wbuf_t *w, uint32_t field, const void *d, size_t n)
{
	w_varint(w, (uint64_t)field << 3 | 2);
	w_varint(w, n);
	w_raw(w, d, n);
}

static void w_int(wbuf_t *w, uint32_t field, uint64_t v)
{
	w_varint(w, (uint64_t)field << 3);
	w_varint(w, v);
}

static void w_sub(wbuf_t *w, uint32_t field, wbuf_t *sub)
{
	w_len(w, field, sub->p, sub->len);
	free(sub->p);
	sub->p = NULL;
	sub->len = 0;
}

static void test_xspace_and_gzip(void **state)
{
	fx_t *fx;
	uint8_t *m1, *m2, gz[8192];
	size_t l1, l2;
	wbuf_t space = {0}, plane = {0}, entry = {0}, em = {0}, stat = {0}, sm = {0};
	mp_hlo_file_t *f = NULL;
	mp_hlo_module_t *m = NULL;
	mp_diag_t diag;
	size_t idx;
	z_stream zs;

	(void)state;
	m1 = fx_pack(fx = fixture_a(), &l1);
	fx_free(fx);
	{
		Xla__HeapSimulatorTrace *t;

		fx = small_fx(&t);
		fx_event(fx, t, FX_ALLOC, 1, 0, "f");
		m2 = fx_pack(fx, &l2);
		fx_free(fx);
	}
	/* an unrelated plane first */
	w_len(&plane, 2, "/host:CPU", 9);
	w_sub(&space, 1, &plane);
	/* /host:metadata: stat metadata 5 "Hlo Proto", 6 "program_id"; two modules */
	w_int(&plane, 1, 3);
	w_len(&plane, 2, "/host:metadata", 14);
	w_int(&stat, 3, 42); /* XStat{metadata_id 6, uint64 42} */
	w_int(&em, 1, 7);
	w_len(&em, 2, "fixture_a(42)", 13);
	{
		wbuf_t s1 = {0};

		w_int(&s1, 1, 5);
		w_len(&s1, 6, m1, l1);
		w_sub(&em, 5, &s1);
		w_int(&s1, 1, 6);
		w_int(&s1, 3, 42);
		w_sub(&em, 5, &s1);
	}
	free(stat.p);
	w_int(&entry, 1, 7);
	w_sub(&entry, 2, &em);
	w_sub(&plane, 4, &entry);
	w_int(&em, 1, 9); /* libtpu style: no program_id stat, the metadata id is the program id */
	w_len(&em, 2, "bad(9)", 6);
	{
		wbuf_t s1 = {0};

		w_int(&s1, 1, 5);
		w_len(&s1, 6, m2, l2);
		w_sub(&em, 5, &s1);
	}
	w_int(&entry, 1, 9);
	w_sub(&entry, 2, &em);
	w_sub(&plane, 4, &entry);
	w_int(&sm, 1, 5);
	w_len(&sm, 2, "Hlo Proto", 9);
	w_int(&entry, 1, 5);
	w_sub(&entry, 2, &sm);
	w_sub(&plane, 5, &entry);
	w_int(&sm, 1, 6);
	w_len(&sm, 2, "program_id", 10);
	w_int(&entry, 1, 6);
	w_sub(&entry, 2, &sm);
	w_sub(&plane, 5, &entry);
	w_sub(&space, 1, &plane);

	/* detected by content even without the .xplane.pb name */
	assert_int_equal(mp_hlo_file_open_mem(space.p, space.len, "profile.bin", &f, &diag), 0);
	assert_true(mp_hlo_file_is_xspace(f));
	assert_int_equal(mp_hlo_file_module_count(f), 2);
	assert_string_equal(mp_hlo_file_module(f, 0)->name, "fixture_a");
	assert_string_equal(mp_hlo_file_module(f, 0)->display, "fixture_a(42)");
	assert_int_equal(mp_hlo_file_module(f, 0)->program_id, 42);
	assert_int_equal(mp_hlo_file_module(f, 0)->size, l1);
	assert_string_equal(mp_hlo_file_module(f, 1)->name, "bad");
	assert_int_equal(mp_hlo_file_module(f, 1)->program_id, 9);
	assert_int_equal(mp_hlo_file_find(f, "9", &idx, &diag), 0);
	assert_int_equal(idx, 1);
	assert_int_equal(mp_hlo_file_find(f, "fixture_a", &idx, &diag), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(mp_hlo_file_find(f, "nope", &idx, &diag), MP_ENOTFOUND);
	assert_int_equal(mp_hlo_module_load(f, 0, &m, &diag), 0);
	mp_hlo_file_close(f);
	{
		mp_hlo_result_t *r = analyze(m, 0, 16384, 0);

		assert_int_equal(r->peak_heap_bytes, 262208);
		mp_hlo_result_free(r);
	}
	mp_hlo_module_free(m);

	/* truncated XSpace: named .xplane.pb, so it must be read as one and fail cleanly */
	assert_true(mp_hlo_file_open_mem(space.p, space.len - 3, "x.xplane.pb", &f, &diag) < 0);
	assert_null(f);

	/* gzip of the plain HloProto */
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = m1;
	zs.avail_in = (uInt)l1;
	zs.next_out = gz;
	zs.avail_out = sizeof(gz);
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(mp_hlo_file_open_mem(gz, zs.total_out, "a.hlo.pb.gz", &f, &diag), 0);
	assert_int_equal(mp_hlo_file_module(f, 0)->program_id, 7);
	mp_hlo_file_close(f);
	assert_true(mp_hlo_file_open_mem(gz, zs.total_out / 2, "a.hlo.pb.gz", &f, &diag) < 0);
	deflateEnd(&zs);
	free(space.p);
	free(m1);
	free(m2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_traces),
		cmocka_unit_test(test_bad_module),
		cmocka_unit_test(test_xspace_and_gzip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
