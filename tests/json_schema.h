/* json_schema.h - a JSON Schema validator over jansson for the tests: the
 * part of draft 2020-12 that memprof's schemas (docs/schema/) use, and
 * nothing it does not check. A schema using any other keyword is refused,
 * so a schema can never look stricter than what is checked.
 *
 * Keywords: type (one name or an array; "integer" is any number without a
 * fractional part, as the draft says), enum, const, properties, required,
 * additionalProperties (a boolean or a schema), items (one schema for every
 * element), minItems, maxItems, minimum, maximum, pattern (POSIX extended
 * regular expressions: the same as ECMA 262 for the simple patterns a
 * schema needs), allOf, anyOf, oneOf, $ref (to "#" or a JSON pointer into
 * the same document, e.g. "#/$defs/row"), $defs, and boolean schemas.
 * Annotations that do not constrain ($schema, $id, $comment, title,
 * description, examples) are allowed and ignored. Numbers compare by value
 * (1 equals 1.0 in enum and const). */
#ifndef MEMPROF_TEST_JSON_SCHEMA_H
#define MEMPROF_TEST_JSON_SCHEMA_H

#include <jansson.h>

#include <stddef.h>

/* Check a whole schema: every keyword supported and of the right type,
 * every $ref resolvable, and every name `required` next to
 * "additionalProperties": false listed in `properties` (else no document
 * could match). Returns 0, or MP_EFORMAT with where and what in err (a
 * JSON pointer into the schema). */
int mp_schema_check(const json_t *schema, char *err, size_t errsize);

/* Validate doc against sub, a schema inside root (sub NULL: root itself;
 * $refs resolve in root). Returns 0 when doc is valid; MP_EFORMAT with the
 * first violation in err, as "/devices/0/peak: property 'time_ps' is not
 * allowed" (a JSON pointer into doc); MP_EUSAGE when the schema is not one
 * this validator takes (err says why). */
int mp_schema_validate(const json_t *root, const json_t *sub, const json_t *doc, char *err, size_t errsize);

/* The value a local reference ("#", "#/$defs/row", "~0" and "~1"
 * escaped) names in root, or NULL. Borrowed from root. */
const json_t *mp_schema_resolve(const json_t *root, const char *ref);

#endif
