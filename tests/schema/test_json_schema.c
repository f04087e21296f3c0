/* test_json_schema.c - the validator every JSON test relies on
 * (tests/json_schema.h): each keyword on documents that must pass and must
 * fail, with the place and the reason it reports; schemas it must refuse;
 * and the published schemas (docs/schema/), checked whole and tried on
 * hand-written reports: version 2 in both modes passes, version 1's
 * --compat=xprof names and a renamed or misplaced field fail. */
#include "test_common.h"

#include "json_check.h"
#include "json_schema.h"

#include <memprof/error.h>

static json_t *parse(const char *text)
{
	json_error_t err;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &err);

	if (!j)
		fail_msg("bad JSON in the test: %s: %s", err.text, text);
	return j;
}

/* Validate doc against schema (both JSON texts); returns the code, with
 * the validator's message in err. */
static int check_doc(const char *schema, const char *doc, char *err, size_t errsize)
{
	json_t *s = parse(schema), *d = parse(doc);
	int rc = mp_schema_validate(s, NULL, d, err, errsize);

	json_decref(s);
	json_decref(d);
	return rc;
}

#define PASS(schema, doc)                                                                  \
	do {                                                                               \
		char e_[512];                                                              \
		if (check_doc((schema), (doc), e_, sizeof(e_)) != 0)                       \
			fail_msg("should pass: %s against %s: %s", (doc), (schema), e_);   \
	} while (0)

/* Must fail, and say `why` (a part of the message: the place, the reason). */
#define FAIL(schema, doc, why)                                                                       \
	do {                                                                                         \
		char e_[512];                                                                        \
		int rc_ = check_doc((schema), (doc), e_, sizeof(e_));                                \
		if (rc_ != MP_EFORMAT)                                                               \
			fail_msg("should fail: %s against %s (rc %d)", (doc), (schema), rc_);        \
		if (!strstr(e_, (why)))                                                              \
			fail_msg("%s against %s: message '%s' does not say '%s'", (doc), (schema), e_, \
				 (why));                                                             \
	} while (0)

static void test_types(void **state)
{
	(void)state;
	PASS("{\"type\": \"integer\"}", "12");
	PASS("{\"type\": \"integer\"}", "12.0"); /* the draft: no fractional part */
	FAIL("{\"type\": \"integer\"}", "12.5", "a real number, not integer");
	FAIL("{\"type\": \"integer\"}", "\"12\"", "a string, not integer");
	PASS("{\"type\": \"number\"}", "12");
	PASS("{\"type\": \"number\"}", "0.25");
	FAIL("{\"type\": \"number\"}", "null", "null, not number");
	PASS("{\"type\": [\"integer\", \"null\"]}", "null");
	PASS("{\"type\": [\"integer\", \"null\"]}", "7");
	FAIL("{\"type\": [\"integer\", \"null\"]}", "true", "a boolean, not integer or null");
	PASS("{\"type\": \"boolean\"}", "false");
	PASS("{\"type\": \"object\"}", "{}");
	FAIL("{\"type\": \"object\"}", "[]", "an array, not object");
	PASS("{\"type\": \"array\"}", "[1]");
	PASS("{\"type\": \"null\"}", "null");
	PASS("{\"type\": \"string\"}", "\"\"");
	PASS("true", "{\"anything\": 1}");
	FAIL("false", "1", "no value is allowed here");
	PASS("{}", "[1, \"x\", null]");
}

static void test_values(void **state)
{
	(void)state;
	PASS("{\"const\": 2}", "2");
	PASS("{\"const\": 2}", "2.0"); /* numbers by value */
	FAIL("{\"const\": 2}", "1", "not the value the schema requires");
	FAIL("{\"const\": \"memprof-report\"}", "\"memprof-repor\"", "not the value");
	PASS("{\"const\": {\"a\": [1, null]}}", "{\"a\": [1, null]}");
	FAIL("{\"const\": {\"a\": [1, null]}}", "{\"a\": [1]}", "not the value");
	PASS("{\"enum\": [\"clean\", \"abrupt\"]}", "\"abrupt\"");
	FAIL("{\"enum\": [\"clean\", \"abrupt\"]}", "\"cut\"", "'cut' is not one of the values allowed");
	PASS("{\"enum\": [\"full\", null]}", "null");
	FAIL("{\"enum\": [\"full\", null]}", "0", "not one of the values allowed");
	PASS("{\"minimum\": 0, \"maximum\": 1}", "0");
	PASS("{\"minimum\": 0, \"maximum\": 1}", "1.0");
	FAIL("{\"minimum\": 0, \"maximum\": 1}", "-1", "-1 is below the minimum 0");
	FAIL("{\"minimum\": 0, \"maximum\": 1}", "1.5", "1.5 is above the maximum 1");
	/* integers beyond a double's precision compare exactly */
	PASS("{\"maximum\": 9007199254740993}", "9007199254740993");
	FAIL("{\"maximum\": 9007199254740992}", "9007199254740993", "above the maximum");
	PASS("{\"minimum\": 0}", "\"not a number: minimum does not apply\"");
	PASS("{\"pattern\": \"^(0|0x[0-9a-f]+)$\"}", "\"0x55d0c2a01177\"");
	PASS("{\"pattern\": \"^(0|0x[0-9a-f]+)$\"}", "\"0\"");
	FAIL("{\"pattern\": \"^(0|0x[0-9a-f]+)$\"}", "\"0x\"", "'0x' does not match");
	FAIL("{\"pattern\": \"^[0-9]+$\"}", "\"12a\"", "does not match ^[0-9]+$");
	PASS("{\"pattern\": \"^[0-9]+$\"}", "12"); /* only strings */
}

static void test_objects_and_arrays(void **state)
{
	static const char *const closed = "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}, "
					  "\"b\": {\"type\": \"string\"}}, \"required\": [\"a\"], "
					  "\"additionalProperties\": false}";
	static const char *const open_ = "{\"properties\": {\"a\": {\"type\": \"integer\"}}}";
	static const char *const typed = "{\"additionalProperties\": {\"type\": \"integer\"}}";
	static const char *const list = "{\"type\": \"array\", \"items\": {\"type\": \"integer\", \"minimum\": 0}, "
					"\"minItems\": 1, \"maxItems\": 3}";

	(void)state;
	PASS(closed, "{\"a\": 1}");
	PASS(closed, "{\"a\": 1, \"b\": \"x\"}");
	FAIL(closed, "{\"b\": \"x\"}", "(document): property 'a' is required");
	FAIL(closed, "{\"a\": 1, \"c\": 2}", "property 'c' is not allowed");
	FAIL(closed, "{\"a\": \"1\"}", "/a: a string, not integer");
	PASS(open_, "{\"a\": 1, \"c\": [2]}");
	FAIL(open_, "{\"a\": null}", "/a: null, not integer");
	PASS(typed, "{\"x\": 1, \"y\": 2}");
	FAIL(typed, "{\"x\": 1, \"y\": 2.5}", "/y: a real number");
	PASS(list, "[0, 1, 2]");
	FAIL(list, "[]", "0 items, fewer than minItems 1");
	FAIL(list, "[1, 2, 3, 4]", "4 items, more than maxItems 3");
	FAIL(list, "[0, -1]", "/1: -1 is below the minimum 0");
	/* the place of a violation deep in a document, names escaped */
	FAIL("{\"properties\": {\"d/e~f\": {\"items\": {\"properties\": {\"peak\": {\"additionalProperties\": false}}}}}}",
	     "{\"d/e~f\": [{}, {\"peak\": {\"time_ps\": 1}}]}", "/d~1e~0f/1/peak: property 'time_ps' is not allowed");
}

static void test_combinators_and_refs(void **state)
{
	static const char *const one = "{\"oneOf\": [{\"type\": \"integer\"}, {\"minimum\": 5}]}";
	static const char *const any = "{\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}]}";
	static const char *const all = "{\"allOf\": [{\"minimum\": 0}, {\"maximum\": 10}]}";
	static const char *const refs = "{\"$defs\": {\"n\": {\"type\": \"integer\"}, \"row\": {\"type\": \"object\", "
					"\"properties\": {\"v\": {\"$ref\": \"#/$defs/n\"}}, \"required\": [\"v\"]}}, "
					"\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/row\"}}";
	static const char *const self = "{\"properties\": {\"next\": {\"$ref\": \"#\"}}, \"type\": \"object\"}";
	json_t *root;

	(void)state;
	PASS(one, "3");   /* integer, below 5 */
	PASS(one, "7.5"); /* not an integer, above 5 */
	FAIL(one, "7", "matches 2 schemas of oneOf (0 and 1), not exactly one");
	FAIL(one, "2.5", "matches none of the 2 schemas of oneOf: [0] (document): a real number, not integer; "
			 "[1] (document): 2.5 is below the minimum 5");
	PASS(any, "null");
	FAIL(any, "1", "matches none of the 2 schemas of anyOf");
	PASS(all, "10");
	FAIL(all, "11", "above the maximum 10");
	PASS(refs, "[{\"v\": 1}, {\"v\": 2}]");
	FAIL(refs, "[{\"v\": 1}, {\"w\": 2}]", "/1: property 'v' is required");
	FAIL(refs, "[{\"v\": 1.5}]", "/0/v: a real number, not integer");
	PASS(self, "{\"next\": {\"next\": {}}}");
	FAIL(self, "{\"next\": {\"next\": 3}}", "/next/next: an integer, not object");
	root = parse("{\"$defs\": {\"a/b\": {\"x~y\": [1, {\"z\": 2}]}}}");
	assert_int_equal(json_integer_value(mp_schema_resolve(root, "#/$defs/a~1b/x~0y/1/z")), 2);
	assert_true(mp_schema_resolve(root, "#") == root);
	assert_null(mp_schema_resolve(root, "#/$defs/missing"));
	assert_null(mp_schema_resolve(root, "#/$defs/a~1b/x~0y/7"));
	assert_null(mp_schema_resolve(root, "#/$defs/a~2b"));
	assert_null(mp_schema_resolve(root, "other.json#/a"));
	json_decref(root);
}

/* Schemas the validator must refuse rather than half-check. */
static void test_schemas_refused(void **state)
{
	static const struct {
		const char *schema, *why;
	} bad[] = {
		{"{\"format\": \"date-time\"}", "keyword 'format' is not supported"},
		{"{\"properties\": {\"a\": {\"unevaluatedProperties\": false}}}", "/properties/a: keyword 'unevaluatedProperties'"},
		{"{\"$ref\": \"#/$defs/nothing\"}", "$ref '#/$defs/nothing' does not resolve"},
		{"{\"type\": \"float\"}", "unknown type 'float'"},
		{"{\"type\": []}", "non-empty array of names"},
		{"{\"enum\": []}", "enum must be a non-empty array"},
		{"{\"required\": [1]}", "required 0 is not a name"},
		{"{\"minItems\": -1}", "minItems must be a count"},
		{"{\"minimum\": \"0\"}", "minimum must be a number"},
		{"{\"pattern\": \"([a-z\"}", "pattern must be a POSIX extended regular expression"},
		{"{\"oneOf\": []}", "/oneOf: must be a non-empty array of schemas"},
		{"{\"oneOf\": [{\"type\": \"integer\"}, 3]}", "/oneOf/1: a schema is an object or a boolean"},
		{"{\"$defs\": {\"x\": {\"items\": {\"maxItems\": 1.5}}}}", "/$defs/x/items: maxItems must be a count"},
		{"{\"properties\": {\"a\": {}}, \"required\": [\"a\", \"b\"], \"additionalProperties\": false}",
		 "'b' is required but not among the properties"},
		{"[]", "a schema is an object or a boolean"},
	};
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *s = parse(bad[i].schema), *d = parse("1");
		assert_int_equal(mp_schema_check(s, err, sizeof(err)), MP_EFORMAT);
		if (!strstr(err, bad[i].why))
			fail_msg("%s: '%s' does not say '%s'", bad[i].schema, err, bad[i].why);
		json_decref(s);
		json_decref(d);
	}
	/* validating against one: refused as a schema (MP_EUSAGE), not as the document */
	assert_int_equal(check_doc("{\"format\": \"date-time\"}", "1", err, sizeof(err)), MP_EUSAGE);
	assert_non_null(strstr(err, "keyword 'format' is not supported"));
	assert_int_equal(check_doc("{\"$ref\": \"#\"}", "1", err, sizeof(err)), MP_EUSAGE);
	assert_non_null(strstr(err, "a cycle of $refs"));
	assert_int_equal(check_doc("{\"oneOf\": [{\"$ref\": \"#/$defs/x\"}]}", "1", err, sizeof(err)), MP_EUSAGE);
	assert_non_null(strstr(err, "does not resolve"));
	/* annotations are allowed and ignored */
	{
		json_t *s = parse("{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\", \"title\": \"t\", "
				  "\"description\": \"d\", \"$comment\": \"c\", \"examples\": [1], \"type\": \"integer\"}");
		assert_int_equal(mp_schema_check(s, err, sizeof(err)), 0);
		json_decref(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_objects_and_arrays),
		cmocka_unit_test(test_combinators_and_refs),
		cmocka_unit_test(test_schemas_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
