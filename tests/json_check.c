/* json_check.c - the schema check of the tests' JSON (json_check.h). */
#include "json_check.h"
#include "json_schema.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

/* Schemas read so far, by name: a test validates many documents. */
static struct {
	char name[32];
	json_t *doc;
} cache[4];

static const json_t *schema_named(const char *name)
{
	char path[4096], err[512];
	json_error_t jerr;
	size_t i;

	for (i = 0; i < sizeof(cache) / sizeof(cache[0]) && cache[i].doc; i++)
		if (!strcmp(cache[i].name, name))
			return cache[i].doc;
	if (i == sizeof(cache) / sizeof(cache[0]) || strlen(name) >= sizeof(cache[i].name))
		fail_msg("schema '%s': too many schemas or too long a name", name);
	snprintf(path, sizeof(path), "%s/docs/schema/%s.schema.json", MEMPROF_SOURCE_DIR, name);
	cache[i].doc = json_load_file(path, 0, &jerr);
	if (!cache[i].doc)
		fail_msg("%s: %s (line %d)", path, jerr.text, jerr.line);
	if (mp_schema_check(cache[i].doc, err, sizeof(err)) < 0)
		fail_msg("%s: %s", path, err);
	snprintf(cache[i].name, sizeof(cache[i].name), "%s", name);
	return cache[i].doc;
}

void mp_test_json_valid(const json_t *doc, const char *schema, const char *def)
{
	const json_t *root = schema_named(schema), *sub = root;
	char ref[96], err[2048];

	if (def) {
		snprintf(ref, sizeof(ref), "#/$defs/%s", def);
		if (!(sub = mp_schema_resolve(root, ref)))
			fail_msg("schema '%s' has no $defs/%s", schema, def);
	}
	if (!doc)
		fail_msg("no JSON document to validate against the '%s' schema", schema);
	if (mp_schema_validate(root, sub, doc, err, sizeof(err)) < 0)
		fail_msg("JSON not valid against docs/schema/%s.schema.json%s%s: %s", schema, def ? "#/$defs/" : "",
			 def ? def : "", err);
}

json_t *mp_test_json_loads(const char *text, const char *schema)
{
	json_error_t jerr;
	json_t *doc = json_loads(text ? text : "", 0, &jerr);

	if (!doc)
		fail_msg("not JSON: %s (line %d)", jerr.text, jerr.line);
	mp_test_json_valid(doc, schema, NULL);
	return doc;
}

json_t *mp_test_json_loadf(FILE *in, size_t flags, const char *schema, json_error_t *err)
{
	json_error_t local;
	json_t *doc = json_loadf(in, flags, err ? err : &local);

	if (doc)
		mp_test_json_valid(doc, schema, NULL);
	return doc;
}

json_int_t mp_test_json_int(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	assert_non_null(v);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

const char *mp_test_json_str(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	assert_non_null(v);
	assert_true(json_is_string(v));
	return json_string_value(v);
}
