/* json_schema_check.c - mp_schema_check (json_schema.h): a schema uses
 * only what the validator checks, and can match something. */
#include "json_schema.h"
#include "json_schema_impl.h"

#include <memprof/error.h>

#include <regex.h>
#include <stdarg.h>
#include <stdint.h>

typedef struct cctx {
	const json_t *root;
	char *err;
	size_t errsize;
	jpath_t path; /* where in the schema */
	int depth;
} cctx_t;

static int cfail(cctx_t *c, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(c->err, c->errsize, "schema %s: ", c->path.len ? c->path.s : "(root)");

	if (n >= 0 && (size_t)n < c->errsize) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errsize - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return 1;
}

static int check(cctx_t *c, const json_t *s);

static int check_at(cctx_t *c, const char *key, const json_t *s)
{
	size_t old = push(&c->path, key);
	int bad = check(c, s);

	if (!bad)
		pop(&c->path, old);
	return bad;
}

static int check_list(cctx_t *c, const char *key, const json_t *v)
{
	size_t old = push(&c->path, key);

	if (!json_is_array(v) || !json_array_size(v))
		return cfail(c, "must be a non-empty array of schemas");
	for (size_t i = 0; i < json_array_size(v); i++) {
		size_t o2 = push_index(&c->path, i);
		if (check(c, json_array_get(v, i)))
			return 1;
		pop(&c->path, o2);
	}
	pop(&c->path, old);
	return 0;
}

static int check_map(cctx_t *c, const char *key, const json_t *v)
{
	size_t old = push(&c->path, key);
	const char *k;
	json_t *x;

	if (!json_is_object(v))
		return cfail(c, "must be an object of schemas");
	json_object_foreach((json_t *)(uintptr_t)v, k, x) {
		if (check_at(c, k, x))
			return 1;
	}
	pop(&c->path, old);
	return 0;
}

static int check_keyword(cctx_t *c, const char *k, const json_t *v)
{
	if (!strcmp(k, "type")) {
		if (json_is_string(v))
			return listed(types, json_string_value(v)) ? 0 : cfail(c, "unknown type '%s'", json_string_value(v));
		if (!json_is_array(v) || !json_array_size(v))
			return cfail(c, "type must be a name or a non-empty array of names");
		for (size_t i = 0; i < json_array_size(v); i++) {
			const char *t = json_string_value(json_array_get(v, i));
			if (!t || !listed(types, t))
				return cfail(c, "type %zu is not a type name", i);
		}
		return 0;
	}
	if (!strcmp(k, "enum"))
		return json_is_array(v) && json_array_size(v) ? 0 : cfail(c, "enum must be a non-empty array");
	if (!strcmp(k, "required")) {
		if (!json_is_array(v))
			return cfail(c, "required must be an array of names");
		for (size_t i = 0; i < json_array_size(v); i++)
			if (!json_is_string(json_array_get(v, i)))
				return cfail(c, "required %zu is not a name", i);
		return 0;
	}
	if (!strcmp(k, "minItems") || !strcmp(k, "maxItems"))
		return json_is_integer(v) && json_integer_value(v) >= 0 ? 0 : cfail(c, "%s must be a count", k);
	if (!strcmp(k, "minimum") || !strcmp(k, "maximum"))
		return json_is_number(v) ? 0 : cfail(c, "%s must be a number", k);
	if (!strcmp(k, "pattern")) {
		regex_t re;
		if (!json_is_string(v) || regcomp(&re, json_string_value(v), REG_EXTENDED | REG_NOSUB))
			return cfail(c, "pattern must be a POSIX extended regular expression");
		regfree(&re);
		return 0;
	}
	if (!strcmp(k, "$ref")) {
		const json_t *t = mp_schema_resolve(c->root, json_string_value(v));
		if (!t)
			return cfail(c, "$ref '%s' does not resolve", json_is_string(v) ? json_string_value(v) : "?");
		return json_is_object(t) || json_is_boolean(t) ? 0 : cfail(c, "$ref '%s' is not a schema", json_string_value(v));
	}
	if (!strcmp(k, "properties") || !strcmp(k, "$defs"))
		return check_map(c, k, v);
	if (!strcmp(k, "allOf") || !strcmp(k, "anyOf") || !strcmp(k, "oneOf"))
		return check_list(c, k, v);
	if (!strcmp(k, "additionalProperties") || !strcmp(k, "items"))
		return check_at(c, k, v);
	return 0; /* const: any value */
}

static int check(cctx_t *c, const json_t *s)
{
	const json_t *req, *props;
	const char *k;
	json_t *v;

	if (json_is_boolean(s))
		return 0;
	if (!json_is_object(s))
		return cfail(c, "a schema is an object or a boolean");
	if (++c->depth > MAX_DEPTH)
		return cfail(c, "nested deeper than %d", MAX_DEPTH);
	json_object_foreach((json_t *)(uintptr_t)s, k, v) {
		if (listed(annotations, k))
			continue;
		if (!listed(keywords, k))
			return cfail(c, "keyword '%s' is not supported", k);
		if (check_keyword(c, k, v))
			return 1;
	}
	/* a closed object that requires what it does not allow matches nothing */
	req = json_object_get(s, "required");
	props = json_object_get(s, "properties");
	if (json_is_false(json_object_get(s, "additionalProperties")))
		for (size_t i = 0; i < json_array_size(req); i++) {
			const char *name = json_string_value(json_array_get(req, i));
			if (!props || !json_object_get(props, name))
				return cfail(c, "'%s' is required but not among the properties", name);
		}
	c->depth--;
	return 0;
}

int mp_schema_check(const json_t *schema, char *err, size_t errsize)
{
	char local[16];
	cctx_t c = {schema, err && errsize ? err : local, err && errsize ? errsize : sizeof(local), {"", 0}, 0};

	c.err[0] = '\0';
	if (!schema)
		return cfail(&c, "no schema"), MP_EFORMAT;
	return check(&c, schema) ? MP_EFORMAT : 0;
}
