/* json_check.h - every JSON document a test gets from memprof (`report
 * --json` in all its modes, `hlo --json`, and the library calls behind
 * them) is validated against its published schema, docs/schema/
 * NAME.schema.json (docs/report.md, docs/hlo.md), before any figure of it
 * is asserted. The validator is json_schema.h. */
#ifndef MEMPROF_TEST_JSON_CHECK_H
#define MEMPROF_TEST_JSON_CHECK_H

#include <jansson.h>

#include <stddef.h>
#include <stdio.h>

/* Validate doc against docs/schema/<schema>.schema.json ("report", "hlo"),
 * or against one of its $defs when def is not NULL, failing the test with
 * the first violation. Each schema is read and checked (mp_schema_check)
 * once per process. */
void mp_test_json_valid(const json_t *doc, const char *schema, const char *def);

/* Parse text as JSON and validate it against the schema, failing the test
 * on either. Owned by the caller (json_decref). */
json_t *mp_test_json_loads(const char *text, const char *schema);

/* Read one JSON document from in (flags as json_loadf) and validate it.
 * NULL, with jansson's message in err (may be NULL), when in holds no
 * JSON: the caller says whether that fails or skips its test. Owned by
 * the caller. */
json_t *mp_test_json_loadf(FILE *in, size_t flags, const char *schema, json_error_t *err);

/* o's member k, failing the test unless it is there and an integer /
 * a string (the string is borrowed from o). */
json_int_t mp_test_json_int(const json_t *o, const char *k);
const char *mp_test_json_str(const json_t *o, const char *k);

#endif
