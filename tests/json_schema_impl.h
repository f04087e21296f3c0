/* json_schema_impl.h - what the validator (json_schema.c) and the schema
 * check (json_schema_check.c) share: the keywords taken, and JSON pointers
 * built while walking. */
#ifndef MEMPROF_TEST_JSON_SCHEMA_IMPL_H
#define MEMPROF_TEST_JSON_SCHEMA_IMPL_H

#include <stdio.h>
#include <string.h>

/* Deeper than any document or chain of $refs memprof writes; a cycle of
 * $refs ends here instead of in a stack overflow. */
#define MAX_DEPTH 200

static const char *const annotations[] = {"$schema", "$id", "$comment", "title", "description", "examples", NULL};
static const char *const keywords[] = {"type",  "enum",     "const",   "properties", "required", "additionalProperties",
				       "items", "minItems", "maxItems", "minimum",   "maximum",  "pattern",
				       "allOf", "anyOf",    "oneOf",    "$ref",      "$defs",    NULL};
static const char *const types[] = {"null", "boolean", "object", "array", "number", "integer", "string", NULL};

static inline int listed(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return 1;
	return 0;
}

/* A JSON pointer being built while walking a document or a schema. */
typedef struct jpath {
	char s[1024];
	size_t len;
} jpath_t;

/* Appends "/name" (escaped: ~0 ~1) and returns the old length, for pop. */
static inline size_t push(jpath_t *p, const char *name)
{
	size_t old = p->len;

	if (p->len + 1 < sizeof(p->s))
		p->s[p->len++] = '/';
	for (; *name && p->len + 2 < sizeof(p->s); name++) {
		if (*name == '~' || *name == '/') {
			p->s[p->len++] = '~';
			p->s[p->len++] = *name == '~' ? '0' : '1';
		} else {
			p->s[p->len++] = *name;
		}
	}
	p->s[p->len] = '\0';
	return old;
}

static inline size_t push_index(jpath_t *p, size_t i)
{
	char num[32];

	snprintf(num, sizeof(num), "%zu", i);
	return push(p, num);
}

static inline void pop(jpath_t *p, size_t old)
{
	p->len = old;
	p->s[old] = '\0';
}

#endif
