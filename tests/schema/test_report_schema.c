/* test_report_schema.c - the published schemas (docs/schema/NAME.schema.json)
 * are whole (every keyword one the validator checks, every $ref resolved)
 * and say what docs/report.md and docs/hlo.md say: hand-written documents
 * of each mode pass, and each way of breaking the contract fails where it
 * breaks it -- version 1's --compat=xprof names, a renamed field, a
 * compat-only field in the default report, the wrong version or mode. The
 * documents memprof writes are validated by every test that reads them
 * (json_check.h). */
#include "test_common.h"

#include "json_check.h"
#include "json_schema.h"

#include <memprof/error.h>

/* The default report of a hand-made capture: one memory id with a peak, a
 * breakdown row, a timeline point and an OOM record. */
static const char *const default_doc =
	"{\"format\": \"memprof-report\", \"version\": 2, \"compat\": null, \"file\": \"a.memprof\", \"end\": \"clean\","
	" \"events\": 5, \"dropped_events_unattributed\": 0, \"time_unit\": \"ns\","
	" \"source_notes\": [{\"key\": \"dump_check\", \"kind\": \"flag\", \"value\": true, \"text\": \"ok\","
	" \"warning\": false}], \"steps\": {\"first\": 0, \"last\": 4},"
	" \"devices\": [{\"id\": 0, \"name\": \"GPU_0_bfc\", \"kind\": \"device\", \"model\": \"addresses\","
	" \"capacity_bytes\": 1048576, \"events\": 5, \"allocations\": 2, \"deallocations\": 0,"
	" \"failed_allocations\": 1, \"dropped_events\": 0, \"unknown_frees\": 0, \"duplicate_allocations\": 0,"
	" \"rejected_regions\": 0, \"lifetime_peak_bytes\": 2048, \"source_notes\": [{\"key\": \"allocated_peak_bytes\","
	" \"kind\": \"bytes\", \"value\": 2048, \"text\": \"2048 B\", \"warning\": false}],"
	" \"reserved_peak\": {\"bytes\": 65536, \"time_ns\": 1000, \"event_index\": 0},"
	" \"peak\": {\"bytes\": 2048, \"time_ns\": 3000, \"step\": 4, \"event_index\": 2, \"after_mark\": null, \"phase\": null, \"stack_bytes\": 0,"
	" \"heap_bytes\": 2048, \"free_bytes\": 1046528, \"reserved_bytes\": 65536, \"largest_free_chunk_bytes\": 62464,"
	" \"region_free_bytes\": 63488, \"fragmentation\": 0.016129032258064502,"
	" \"fragmentation_unknown_reason\": null},"
	" \"breakdown\": [{\"op\": \"matmul\", \"region\": \"persist\", \"dtype\": \"float\", \"shape\": \"[2]\","
	" \"metadata\": null, \"requested_bytes\": 1000, \"allocated_bytes\": 1024, \"occurrences\": 2, \"total_bytes\": 2048,"
	" \"unknown_origin\": false}], \"breakdown_omitted_rows\": 0, \"breakdown_omitted_bytes\": 0,"
	" \"timeline\": [{\"time_ns\": 3000, \"event_index\": 2, \"step\": 4, \"stack_bytes\": 0, \"heap_bytes\": 2048,"
	" \"free_bytes\": null, \"reserved_bytes\": null, \"fragmentation\": null}],"
	" \"oom\": [{\"time_ns\": 4000, \"event_index\": 3, \"step\": 4, \"op\": \"oom,op\", \"requested_bytes\": 102400,"
	" \"stack_bytes\": 0, \"heap_bytes\": 2048, \"free_bytes\": 1046528, \"largest_free_chunk_bytes\": 62464,"
	" \"region_free_bytes\": 63488, \"fragmentation\": 0.016129032258064502, \"cause\": \"full\", \"top\": []}],"
	" \"oom_total\": 1}]}";

/* --compat=xprof of the TF 2.4 run (tests/xplane/test_xplane_cli.c), its
 * first row. */
static const char *const xprof_doc =
	"{\"format\": \"memprof-report\", \"version\": 2, \"compat\": \"xprof\", \"file\": \"run.xplane.pb\","
	" \"xprof\": {\"memory_ids\": [\"GPU_0_bfc\"]},"
	" \"devices\": [{\"id\": 0, \"name\": \"GPU_0_bfc\", \"kind\": \"device\", \"model\": \"allocator_stats\","
	" \"capacity_bytes\": 14648653952, \"events\": 155, \"allocations\": 77, \"deallocations\": 77,"
	" \"lifetime_peak_bytes\": 107324160,"
	" \"peak\": {\"bytes\": 53543168, \"time_ns\": 303747097, \"time_ps\": 303747097000, \"step\": 0,"
	" \"stack_bytes\": 0, \"heap_bytes\": 53543168, \"free_bytes\": 14595110784, \"fragmentation\": 0.00055418},"
	" \"breakdown\": [{\"op\": \"preallocated/unknown\", \"region\": \"persist/dynamic\", \"dtype\": \"INVALID\","
	" \"shape\": \"unknown\", \"metadata\": null, \"requested_bytes\": 1913088, \"allocated_bytes\": 1913088, \"occurrences\": 1,"
	" \"total_bytes\": 1913088, \"unknown_origin\": true, \"special\": true}],"
	" \"xprof\": {\"peak_bytes_usage_lifetime\": 107324160}}]}";

/* Version 1 of --compat=xprof --json: what scripts of that version read. */
static const char *const xprof_v1_doc =
	"{\"file\": \"run.xplane.pb\", \"compat\": \"xprof\", \"memory_ids\": [\"GPU_0_bfc\"],"
	" \"memories\": [{\"id\": 0, \"name\": \"GPU_0_bfc\", \"events\": 154, \"allocations\": 77,"
	" \"deallocations\": 77, \"peak_bytes\": 53543168, \"peak_time_ps\": 303747097000, \"stack_bytes\": 0,"
	" \"heap_bytes\": 53543168, \"free_bytes\": 14595110784, \"capacity_bytes\": 14648653952,"
	" \"fragmentation\": 0.00055418, \"peak_step\": 0, \"lifetime_peak_bytes_xprof\": 107324160,"
	" \"lifetime_peak_bytes\": 107324160, \"breakdown\": [{\"op\": \"x\", \"allocation_bytes\": 256,"
	" \"requested_bytes\": 4, \"occurrences\": 1, \"region\": \"output\", \"dtype\": \"int32\", \"shape\": \"[]\","
	" \"special\": false}]}]}";

static json_t *schema(const char *name)
{
	char path[4096];
	json_error_t err;
	json_t *s;

	snprintf(path, sizeof(path), "%s/docs/schema/%s.schema.json", MEMPROF_SOURCE_DIR, name);
	s = json_load_file(path, 0, &err);
	if (!s)
		fail_msg("%s: %s (line %d)", path, err.text, err.line);
	return s;
}

/* text with its first `from` replaced by `to`. Caller frees. */
static char *with(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
	char *out = malloc(n);

	assert_non_null(at);
	assert_non_null(out);
	snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return out;
}

static int validate_text(const json_t *s, const char *text, char *err, size_t errsize)
{
	json_error_t jerr;
	json_t *d = json_loads(text, 0, &jerr);
	int rc;

	if (!d)
		fail_msg("bad JSON in the test: %s", jerr.text);
	rc = mp_schema_validate(s, NULL, d, err, errsize);
	json_decref(d);
	return rc;
}

static void must_pass(const json_t *s, const char *text)
{
	char err[2048];

	if (validate_text(s, text, err, sizeof(err)) != 0)
		fail_msg("should pass: %s\n%s", err, text);
}

/* Fails, and the message names the place and the reason. */
static void must_fail(const json_t *s, const char *text, const char *why)
{
	char err[2048];

	if (validate_text(s, text, err, sizeof(err)) != MP_EFORMAT)
		fail_msg("should fail (%s): %s", why, text);
	if (!strstr(err, why))
		fail_msg("'%s' does not say '%s'", err, why);
}

/* Both schemas are whole: what they say is what is checked. */
static void test_schemas_whole(void **state)
{
	static const char *const names[] = {"report", "hlo", "diff"};
	char err[512];

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		json_t *s = schema(names[i]);
		if (mp_schema_check(s, err, sizeof(err)) != 0)
			fail_msg("docs/schema/%s.schema.json: %s", names[i], err);
		assert_string_equal(json_string_value(json_object_get(s, "$schema")),
				    "https://json-schema.org/draft/2020-12/schema");
		json_decref(s);
	}
}

static void test_report_contract(void **state)
{
	json_t *s = schema("report");
	char *t, *files;
	size_t n;

	(void)state;
	must_pass(s, default_doc);
	must_pass(s, xprof_doc);
	t = with(xprof_doc, "\"compat\": \"xprof\"", "\"compat\": \"xprof-v1\"");
	must_pass(s, t);
	free(t);
	/* several inputs: each a report of its mode; never one alone */
	n = 2 * (strlen(default_doc) + strlen(xprof_doc)) + 32;
	files = malloc(n);
	assert_non_null(files);
	snprintf(files, n, "{\"files\": [%s, %s]}", default_doc, default_doc);
	must_pass(s, files);
	snprintf(files, n, "{\"files\": [%s, %s]}", xprof_doc, xprof_doc);
	must_pass(s, files);
	snprintf(files, n, "{\"files\": [%s]}", xprof_doc);
	must_fail(s, files, "/files: 1 items, fewer than minItems 2");
	free(files);
	/* a memory with no peak, an unknown capacity, no steps window */
	{
		json_t *d = json_loads(default_doc, 0, NULL), *dev;
		char err[1024];
		assert_non_null(d);
		dev = json_array_get(json_object_get(d, "devices"), 0);
		json_object_set_new(dev, "peak", json_null());
		json_object_set_new(dev, "capacity_bytes", json_null());
		json_object_set_new(d, "steps", json_null());
		assert_int_equal(mp_schema_validate(s, NULL, d, err, sizeof(err)), 0);
		json_object_set_new(dev, "capacity_bytes", json_integer(-1));
		assert_int_equal(mp_schema_validate(s, NULL, d, err, sizeof(err)), MP_EFORMAT);
		assert_non_null(strstr(err, "/devices/0/capacity_bytes: -1 is below the minimum 0"));
		json_decref(d);
	}

	/* version 1's --compat=xprof: memories[], peak_bytes, ... */
	must_fail(s, xprof_v1_doc, "[1] (document): property 'format' is required");
	must_fail(s, xprof_v1_doc, "matches none of the 3 schemas of oneOf");
	/* the old names, one at a time */
	t = with(xprof_doc, "\"allocated_bytes\"", "\"allocation_bytes\"");
	must_fail(s, t, "/devices/0/breakdown/0: property 'allocated_bytes' is required");
	free(t);
	t = with(xprof_doc, "\"devices\"", "\"memories\"");
	must_fail(s, t, "[1] (document): property 'devices' is required");
	free(t);
	t = with(xprof_doc, "\"lifetime_peak_bytes\": 107324160,", "\"lifetime_peak_bytes_xprof\": 107324160,");
	must_fail(s, t, "/devices/0: property 'lifetime_peak_bytes' is required");
	free(t);
	t = with(xprof_doc, "\"time_ps\"", "\"peak_time_ps\"");
	must_fail(s, t, "/devices/0/peak: property 'time_ps' is required");
	free(t);
	t = with(default_doc, "\"allocated_bytes\"", "\"allocation_bytes\"");
	must_fail(s, t, "[0] /devices/0/breakdown/0: property 'allocated_bytes' is required");
	free(t);
	/* a compat-only field in the default report, and the reverse */
	t = with(default_doc, "\"time_ns\": 3000, \"step\"", "\"time_ns\": 3000, \"time_ps\": 3000000, \"step\"");
	must_fail(s, t, "[0] /devices/0/peak: property 'time_ps' is not allowed");
	free(t);
	t = with(xprof_doc, "\"time_ps\": 303747097000,", "\"time_ps\": 303747097000, \"event_index\": 2,");
	must_fail(s, t, "[1] /devices/0/peak: property 'event_index' is not allowed");
	free(t);
	t = with(xprof_doc, ", \"special\": true", "");
	must_fail(s, t, "[1] /devices/0/breakdown/0: property 'special' is required");
	free(t);
	/* version and mode */
	t = with(default_doc, "\"version\": 2", "\"version\": 1");
	must_fail(s, t, "[0] /version: not the value the schema requires");
	free(t);
	t = with(xprof_doc, "\"compat\": \"xprof\"", "\"compat\": null");
	must_fail(s, t, "[1] /compat: not one of the values allowed");
	free(t);
	t = with(default_doc, "\"compat\": null", "\"compat\": \"xprof\"");
	must_fail(s, t, "[0] /compat: a string, not null");
	free(t);
	/* values: a region type, a fragmentation, a step, a cause */
	t = with(default_doc, "\"region\": \"persist\"", "\"region\": \"persist/dynamic\"");
	must_fail(s, t, "/devices/0/breakdown/0/region: 'persist/dynamic' is not one of the values allowed");
	free(t);
	t = with(default_doc, "\"fragmentation\": 0.016129032258064502,", "\"fragmentation\": 1.5,");
	must_fail(s, t, "/devices/0/peak/fragmentation: 1.5 is above the maximum 1");
	free(t);
	t = with(default_doc, "\"step\": 4", "\"step\": -1");
	must_fail(s, t, "/devices/0/peak/step: -1 is below the minimum 0");
	free(t);
	t = with(default_doc, "\"cause\": \"full\"", "\"cause\": \"oom\"");
	must_fail(s, t, "/devices/0/oom/0/cause: 'oom' is not one of the values allowed");
	free(t);
	t = with(default_doc, "\"bytes\": 2048", "\"bytes\": 2048.5");
	must_fail(s, t, "/devices/0/peak/bytes: a real number, not integer");
	free(t);
	json_decref(s);
}

#define FN_EMPTY "\"functions\": {\"symbolizer\": \"none\", \"distinct_stacks\": 0, \"rows\": []}, "

/* The functions table (report --by-function) and the HLO document. */
static void test_functions_and_hlo(void **state)
{
	static const char *const fn =
		"{\"symbolizer\": \"libdw\", \"distinct_stacks\": 5, \"rows\": [{\"memory\": \"host\", \"memory_id\": 0,"
		" \"function\": \"alloc_a\", \"object\": \"/t/victim_stacks\", \"file\": \"\", \"line\": 0, \"kind\": \"native\","
		" \"allocations\": 3, \"requested_bytes\": 3000,"
		" \"failed_allocations\": 0, \"peak_bytes\": 3000, \"peak_count\": 3, \"peak_requested_bytes\": 3000, \"leak_bytes\": 0, \"leak_count\": 0,"
		" \"stacks\": 1, \"stack\": [{\"address\": \"0x55d0c2a01177\", \"function\": \"alloc_a\","
		" \"object\": \"/t/victim_stacks\", \"offset\": \"0x1177\", \"kind\": \"native\"}, {\"address\": \"0x7f00\","
		" \"function\": null, \"object\": null, \"offset\": \"0\", \"kind\": \"native\"},"
		" {\"address\": \"0x8000000000000001\", \"function\": \"main\", \"object\": null, \"offset\": \"0\","
		" \"kind\": \"python\", \"file\": \"/home/u/train.py\", \"line\": 12}]}]}";
	static const char *const hlo =
		"{\"schema\": \"memprof.hlo/1\", \"module_name\": \"m\", \"program_id\": \"18446744073709551615\","
		" \"entry_computation_name\": \"main\", \"mode\": \"xprof\", \"color\": 0, \"colors\": [0, 5],"
		" \"small_buffer_size\": 16384, \"heap_simulator_trace\": null, \"events\": 0, \"peak_heap_bytes\": 64,"
		" \"peak_position\": 0, \"peak_instruction\": \"\", \"peak_unpadded_heap_bytes\": 64,"
		" \"padding_overhead_bytes\": 0, \"total_allocation_bytes\": 64, \"indefinite_bytes\": 64,"
		" \"indefinite_allocation_bytes\": 64, \"entry_parameter_bytes\": 64, \"maybe_live_out_bytes\": 0,"
		" \"non_reusable_bytes\": 0, \"small_buffer_total_bytes\": 0, \"fragmentation_percent\": 0.0,"
		" \"heap_sizes\": [], \"unpadded_heap_sizes\": [], \"point_instruction_names\": [],"
		" \"buffers_by_order\": [{\"order\": 0, \"name\": \"p0\", \"logical_buffer_id\": 1, \"allocation_index\": 0,"
		" \"category\": \"Parameter\", \"size_bytes\": 64, \"unpadded_size_bytes\": 0, \"expansion\": null,"
		" \"extra_bytes\": 0, \"shape\": \"f32[16]{0}\", \"op_name\": \"\", \"opcode\": \"parameter\", \"source\": \"\","
		" \"label\": \"p0: f32[16]{0}\", \"span_start\": null, \"span_limit\": null}], \"buffers_by_size\": [],"
		" \"warnings\": []}";
	json_t *r = schema("report"), *h = schema("hlo"), *doc;
	const json_t *def;
	char err[1024], *t;

	(void)state;
	def = mp_schema_resolve(r, "#/$defs/functions");
	assert_non_null(def);
	assert_non_null(doc = json_loads(fn, 0, NULL));
	assert_int_equal(mp_schema_validate(r, def, doc, err, sizeof(err)), 0);
	json_object_set_new(json_object_get(json_array_get(json_object_get(doc, "rows"), 0), "stack"),
			    "bad", json_true()); /* an array: setting a key fails, the document is unchanged */
	json_object_set_new(json_array_get(json_object_get(json_array_get(json_object_get(doc, "rows"), 0), "stack"), 1),
			    "offset", json_string("4660"));
	assert_int_equal(mp_schema_validate(r, def, doc, err, sizeof(err)), MP_EFORMAT);
	assert_non_null(strstr(err, "/rows/0/stack/1/offset: '4660' does not match"));
	json_decref(doc);
	/* the functions table belongs in a default report, not in a compat one */
	t = with(default_doc, "\"devices\": [", FN_EMPTY "\"devices\": [");
	must_pass(r, t);
	free(t);
	t = with(xprof_doc, "\"devices\": [", FN_EMPTY "\"devices\": [");
	must_fail(r, t, "[1] (document): property 'functions' is not allowed");
	free(t);

	must_pass(h, hlo);
	t = with(hlo, "\"program_id\": \"18446744073709551615\"", "\"program_id\": 1");
	must_fail(h, t, "/program_id: an integer, not string");
	free(t);
	t = with(hlo, "\"category\": \"Parameter\"", "\"category\": \"Param\"");
	must_fail(h, t, "/buffers_by_order/0/category: 'Param' is not one of the values allowed");
	free(t);
	t = with(hlo, "\"size_bytes\"", "\"size\"");
	must_fail(h, t, "/buffers_by_order/0: property 'size_bytes' is required");
	free(t);
	t = with(hlo, "\"schema\": \"memprof.hlo/1\"", "\"schema\": \"memprof.hlo/2\"");
	must_fail(h, t, "/schema: not the value the schema requires");
	free(t);
	json_decref(r);
	json_decref(h);
}

/* memprof diff --json (docs/diff.md): a capture pair with one new row
 * and a failed gate, then each way of breaking it. */
static void test_diff_contract(void **state)
{
	static const char *const diff =
		"{\"format\": \"memprof-diff\", \"version\": 1, \"kind\": \"capture\", \"rows_by\": \"breakdown\","
		" \"a\": {\"file\": \"a.memprof\", \"time_unit\": \"ns\"}, \"b\": {\"file\": \"b.memprof\", \"time_unit\": \"ns\"},"
		" \"memories\": [{\"a\": {\"name\": \"gpu\", \"id\": 0, \"peak_bytes\": 12288, \"time_ns\": 10, \"time\": \"0.000010 ms\","
		" \"step\": 1, \"phase\": null, \"reserved_bytes\": 1048576, \"fragmentation\": 0.003952569169960474,"
		" \"failed_allocations\": 0}, \"b\": {\"name\": \"gpu\", \"id\": 0, \"peak_bytes\": 20480, \"time_ns\": 12,"
		" \"time\": \"0.000012 ms\", \"step\": 1, \"phase\": \"forward\", \"reserved_bytes\": null, \"fragmentation\": null,"
		" \"failed_allocations\": 1}, \"change_bytes\": 8192, \"change\": \"+8.00 KiB\", \"change_percent\": 66.67,"
		" \"has_rows\": true, \"grown\": 0, \"shrunk\": 0, \"new\": 1, \"gone\": 0, \"unchanged_rows\": 2,"
		" \"unchanged_bytes\": 12288, \"rows\": [{\"kind\": \"new\", \"op\": \"attn\", \"region\": \"output\","
		" \"dtype\": \"float\", \"shape\": \"[64]\", \"metadata\": null, \"a_bytes\": 0, \"b_bytes\": 8192,"
		" \"change_bytes\": 8192, \"a_count\": 0, \"b_count\": 1}], \"rows_omitted\": 0}],"
		" \"only_in_a\": [], \"only_in_b\": [\"cpu\"], \"gates\": [{\"gate\": \"5%\", \"memory\": \"gpu\","
		" \"a_bytes\": 12288, \"b_bytes\": 20480, \"change_bytes\": 8192, \"failed\": true}]}";
	json_t *s = schema("diff");
	char *t;

	(void)state;
	must_pass(s, diff);
	t = with(diff, "\"op\": \"attn\", \"region\": \"output\", \"dtype\": \"float\", \"shape\": \"[64]\", \"metadata\": null",
		 "\"function\": \"attn\"");
	must_pass(s, t); /* --by-function */
	free(t);
	t = with(diff, "\"metadata\": null,", "\"metadata\": null, \"function\": \"attn\",");
	must_fail(s, t, "/memories/0/rows/0: matches 2 schemas of oneOf (0 and 1), not exactly one");
	free(t);
	t = with(diff, "\"kind\": \"new\"", "\"kind\": \"same\"");
	must_fail(s, t, "/memories/0/rows/0/kind: 'same' is not one of the values allowed");
	free(t);
	t = with(diff, "\"kind\": \"capture\"", "\"kind\": \"hlo\"");
	must_fail(s, t, "/kind: 'hlo' is not one of the values allowed");
	free(t);
	t = with(diff, "\"change_bytes\": 8192, \"change\"", "\"change_bytes\": 8192.5, \"change\"");
	must_fail(s, t, "/memories/0/change_bytes: a real number, not integer");
	free(t);
	t = with(diff, "\"version\": 1", "\"version\": 2");
	must_fail(s, t, "/version: not the value the schema requires");
	free(t);
	t = with(diff, ", \"gates\": [", ", \"gate\": [");
	must_fail(s, t, "property 'gates' is required");
	free(t);
	json_decref(s);
}

/* The tests' shared check (json_check.h) accepts what the schemas accept. */
static void test_shared_check(void **state)
{
	json_t *doc;

	(void)state;
	doc = mp_test_json_loads(default_doc, "report");
	mp_test_json_valid(json_array_get(json_object_get(json_array_get(json_object_get(doc, "devices"), 0), "breakdown"), 0),
			   "report", "row");
	json_decref(doc);
	json_decref(mp_test_json_loads(xprof_doc, "report"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schemas_whole),
		cmocka_unit_test(test_report_contract),
		cmocka_unit_test(test_functions_and_hlo),
		cmocka_unit_test(test_diff_contract),
		cmocka_unit_test(test_shared_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
