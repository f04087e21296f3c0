/* test_hlo_words.c - what a first-time reader of the HLO page tripped on
 * (issue 41, item 6), asserted from the scene of MaxText `jit_train_step`
 * and `jit__unnamed_wrapped_function_`: op names without their primitive's
 * parameters and with their path's end; shapes whole; ranks without gaps
 * between the lanes and the table, the skipped ones said; a colour of its
 * own for each lane's buffer, the same in the strips and the table; a
 * fragmentation of a sliver of the heap given its context, not headlined. */
#include "test_common.h"

#include "hlo_chart_check.h"

#define WRAPPED "hlo/maxtext-h100/module_0003.jit__unnamed_wrapped_function_.sm_9.0_gpu_after_optimizations.hlo.pb"

/* The texts tagged `tag`, in scene order, into out (room for max). */
static size_t texts(const mp_scene_t *s, const char *tag, const mp_scene_item_t **out, size_t max)
{
	const mp_scene_item_t *it;
	size_t n = 0, from = 0;

	while ((it = mp_scene_find(s, tag, &from)) && n < max)
		if (it->kind == MP_SCENE_TEXT)
			out[n++] = it;
	return n;
}

/* The rank a text starting "#n" gives, or 0. */
static size_t rank_of(const char *t)
{
	return t && t[0] == '#' ? (size_t)strtoul(t + 1, NULL, 10) : 0;
}

static int ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), k = strlen(end);

	return n >= k && !memcmp(s + n - k, end, k);
}

static void test_train_step_words(void **state)
{
	const char *shared = mp_test_shared(MAXTEXT);
	const json_t *bysize;
	const mp_scene_item_t *ops[64], *shapes[64], *caps[8], *it;
	char path[4096];
	size_t nops, nshapes, ncaps, from = 0, n = 0, table_rank[64], nt = 0;
	uint32_t lane_fill[32];
	size_t lane_rank[32], nl = 0;
	mp_hlo_result_t *r;
	mp_scene_t *s;
	json_t *doc;
	int gap_said = 0;

	(void)state;
	if (!shared)
		skip();
	snprintf(path, sizeof(path), "%s", shared);
	doc = json_of(path, 0);
	r = analyze(path, 0);
	s = plot(r, 0, 0, 0);
	bysize = json_object_get(doc, "buffers_by_size");

	/* op names: no primitive parameters; the qk product's row ends with
	 * its path's end, `…/btkgd,bskd->bkgts/dot_general` (its op_name is
	 * 330 bytes of which `[dimension_numbers=… preferred_element_type=
	 * bfloat16]` is the last 91) */
	nops = texts(s, "table-op", ops, 64);
	assert_true(nops >= 10);
	for (size_t k = 0; k < nops; k++) {
		const char *t = mp_scene_string(s, ops[k]);
		assert_null(strchr(t, '['));
		assert_null(strstr(t, "element_type"));
		assert_null(strstr(t, "weak_type"));
		if (strstr(mp_scene_item_note(s, ops[k]) ? mp_scene_item_note(s, ops[k]) : "", "qk_product/btkgd")) {
			assert_true(ends_with(t, "btkgd,bskd->bkgts/dot_general"));
			n++;
		}
	}
	assert_int_equal(n, 1); /* #17 custom-call.66.0.peeled_double_buffer{0} */

	/* shapes: whole, dims and all, the row-major layout left out:
	 * bf16[8,2,2048,8192]{3,2,1,0} is drawn bf16[8,2,2048,8192] */
	nshapes = texts(s, "table-shape", shapes, 64);
	assert_int_equal(nshapes, nops);
	for (size_t k = 0; k < nshapes; k++) {
		const char *t = mp_scene_string(s, shapes[k]);
		const char *want = json_string_value(json_object_get(json_array_get(bysize, k), "shape"));
		assert_null(strstr(t, "\xE2\x80\xA6"));
		assert_memory_equal(t, want, strlen(t));
		assert_int_equal(want[strlen(t)], '{'); /* only the layout is left out */
	}
	assert_string_equal(mp_scene_string(s, shapes[0]), "bf16[8,2,2048,8192]");
	{ /* whole in a narrow picture too: the shape is served after the name */
		mp_scene_t *narrow = plot(r, 0, 640, 0);
		const mp_scene_item_t *ns[64];
		size_t nn = texts(narrow, "table-shape", ns, 64);
		assert_int_equal(nn, nshapes);
		for (size_t k = 0; k < nn; k++)
			assert_string_equal(mp_scene_string(narrow, ns[k]), mp_scene_string(s, shapes[k]));
		mp_scene_free(narrow);
	}

	/* ranks: the lanes show #1-#3 and #13-#17 (#4-#12 are parameters, live
	 * throughout); the table has every rank from #1 to #17, no gap, and
	 * the caption says which have no lane and why */
	while ((it = mp_scene_find(s, "lifetime", &from))) {
		assert_non_null(mp_scene_item_note(s, it));
		lane_fill[nl++] = it->style.fill;
	}
	assert_int_equal(nl, 8);
	{
		const mp_scene_item_t *lab[32];
		size_t nlab = texts(s, "lifetime-label", lab, 32);
		static const size_t want[8] = {1, 2, 3, 13, 14, 15, 16, 17};
		assert_int_equal(nlab, 8);
		for (size_t k = 0; k < 8; k++)
			lane_rank[k] = rank_of(mp_scene_string(s, lab[k]));
		assert_memory_equal(lane_rank, want, sizeof(want));
	}
	from = 0;
	while ((it = mp_scene_find(s, "table-row", &from)))
		nt++;
	assert_int_equal(nt, 17);
	{
		const mp_scene_item_t *cells[64];
		size_t nc = 0;
		from = 0;
		/* the rank cells: texts "#n" left of the name's column */
		for (size_t i = 0; i < mp_scene_count(s); i++) {
			const mp_scene_item_t *x = mp_scene_item(s, i);
			if (x->kind == MP_SCENE_TEXT && x->y > ops[0]->y - 10 && rank_of(mp_scene_string(s, x)) &&
			    x->x < 60 && nc < 64)
				cells[nc++] = x;
		}
		assert_int_equal(nc, 17);
		for (size_t k = 0; k < nc; k++)
			table_rank[k] = rank_of(mp_scene_string(s, cells[k]));
		for (size_t k = 0; k < nc; k++)
			assert_int_equal(table_rank[k], k + 1);
	}
	ncaps = texts(s, "lifetime-caption", caps, 8);
	for (size_t k = 0; k < ncaps; k++)
		gap_said |= strstr(mp_scene_string(s, caps[k]), "#4\xE2\x80\x93#12 have no lane: live throughout the trace "
						   "(Parameter)") != NULL;
	assert_true(gap_said);

	/* colours: each lane's buffer its own, the same in both strips (the
	 * rects noted with its rank), none the grey of the others */
	for (size_t k = 0; k < nl; k++) {
		size_t found = 0;
		char want[16];
		for (size_t j = 0; j < k; j++)
			assert_int_not_equal(lane_fill[j], lane_fill[k]);
		snprintf(want, sizeof(want), "#%zu", lane_rank[k]);
		from = 0;
		while ((it = mp_scene_find(s, "buffer", &from))) {
			const char *note = mp_scene_item_note(s, it);
			/* "#n", then the buffer's details (the HTML report's hover) */
			if (note && !strncmp(note, want, strlen(want)) && note[strlen(want)] == '\n') {
				assert_int_equal(it->style.fill, lane_fill[k]);
				found++;
			}
		}
		assert_int_equal(found, 2); /* in program order and by size */
	}

	/* the fragmentation (1.59 % of 3.61 GiB of temporaries) is headlined */
	it = find1(s, "header-fragmentation");
	assert_string_equal(mp_scene_string(s, it), "1.59 %");
	assert_true(it->text_style.bold);
	assert_int_equal(count_tag(s, "header-note"), 0);
	check_texts(s, mp_render_measure());

	mp_scene_free(s);
	json_decref(doc);
	mp_hlo_result_free(r);
}

/* 97.20 % fragmentation of the 7,560 B temporaries share, beside
 * 2,007,644,480 B of outputs: said with its context, not in bold. */
static void test_minor_fragmentation(void **state)
{
	const char *shared = mp_test_shared(WRAPPED);
	const mp_scene_item_t *it, *note;
	char path[4096];
	mp_hlo_result_t *r;
	mp_scene_t *s;
	size_t from = 0, n = 0;

	(void)state;
	if (!shared)
		skip();
	snprintf(path, sizeof(path), "%s", shared);
	r = analyze(path, 0);
	assert_int_equal(r->total_allocation_bytes - r->indefinite_allocation_bytes, 7560);
	s = plot(r, 0, 0, 0);
	it = find1(s, "header-fragmentation");
	assert_string_equal(mp_scene_string(s, it), "97.20 %");
	assert_false(it->text_style.bold);
	note = find1(s, "header-note");
	assert_non_null(strstr(mp_scene_string(s, note), "97.20 % is of the 7.38 KiB that temporaries share"));
	assert_non_null(strstr(mp_scene_string(s, note), "99.9996 % of the 1.87 GiB allocated is indefinite"));
	/* no lane (no buffer has a lifetime): the 8 largest have their colours */
	assert_int_equal(count_tag(s, "lifetime"), 0);
	while ((it = mp_scene_find(s, "buffer", &from)))
		n++;
	assert_int_equal(n, 16); /* 8 in each strip */
	{ /* the grey ones hover too: each once per strip, alone ("#n" and its
	   * instruction) or merged with its thin neighbours ("K buffers") */
		size_t grey = 0, covered = 0;
		const mp_hlo_buffer_t *b9 = &r->buffers[r->by_size[8]];
		int nine = 0;
		for (size_t k = 8; k < r->n_buffers; k++)
			grey += r->buffers[r->by_size[k]].size > 0;
		from = 0;
		while ((it = mp_scene_find(s, "buffer-rest-hit", &from))) {
			const char *nt = mp_scene_item_note(s, it);
			assert_int_equal(it->style.fill, MP_NONE);
			assert_int_equal(it->style.stroke, MP_NONE);
			if (nt[0] == '#')
				covered++;
			else
				covered += strtoul(nt, NULL, 10);
			if (!strncmp(nt, "#9\n", 3)) {
				nine++;
				assert_non_null(strstr(nt, b9->instruction_name));
			}
		}
		assert_true(grey > 0);
		assert_int_equal(covered, 2 * grey);
		assert_int_equal(nine, 2);
	}
	check_texts(s, mp_render_measure());
	mp_scene_free(s);
	mp_hlo_result_free(r);
}

/* 70 parameters (live throughout) larger than 8 temporaries with a
 * lifetime each: the lanes are #71-#78, the table's 64 rows #1-#56 and
 * the lanes', and its subtitle says #57-#70 are not listed and why. */
static void test_table_cap_said(void **state)
{
	static char name[] = "b", shape[] = "f32[8]{0}", empty[] = "", op[] = "fusion";
	int64_t heap[11];
	char *points[11];
	mp_hlo_buffer_t b[78];
	size_t by[78];
	mp_hlo_result_t r;
	mp_scene_t *s;
	const mp_scene_item_t *it;
	size_t from = 0, rows = 0, said = 0;

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(b, 0, sizeof(b));
	for (size_t i = 0; i < 11; i++)
		heap[i] = 1 << 30, points[i] = empty;
	for (size_t i = 0; i < 78; i++) {
		b[i].category = i < 70 ? MP_HLO_CAT_PARAMETER : MP_HLO_CAT_TEMPORARY;
		b[i].size = b[i].unpadded_size = (int64_t)(1000 - i) * 1024;
		b[i].instruction_name = name, b[i].shape = shape, b[i].op_name = empty, b[i].opcode = op;
		b[i].source = empty, b[i].label = name;
		b[i].has_span = i >= 70, b[i].span_start = 1, b[i].span_limit = 8;
		by[i] = i;
	}
	r.module_name = r.entry_computation_name = r.peak_instruction = name;
	r.n_events = 10, r.n_points = 11, r.heap_sizes = r.unpadded_heap_sizes = heap, r.point_names = points;
	r.peak_heap_bytes = r.peak_unpadded_heap_bytes = heap[0], r.peak_position = 5;
	r.buffers = b, r.by_size = by, r.n_buffers = 78, r.small_buffer_size = 16384;
	s = plot(&r, 0, 0, 0);
	while ((it = mp_scene_find(s, "table-row", &from)))
		rows++;
	assert_int_equal(rows, 64);
	for (size_t i = 0; i < mp_scene_count(s); i++) {
		it = mp_scene_item(s, i);
		said += it->kind == MP_SCENE_TEXT &&
			strstr(mp_scene_string(s, it), "(#57\xE2\x80\x93#70 not listed: 64 rows at most)") != NULL;
	}
	assert_int_equal(said, 1);
	mp_scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_train_step_words),
		cmocka_unit_test(test_minor_fragmentation),
		cmocka_unit_test(test_table_cap_said),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	mp_render_shutdown();
	return rc;
}
