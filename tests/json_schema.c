/* json_schema.c - the tests' JSON Schema validator (json_schema.h). */
#include "json_schema.h"
#include "json_schema_impl.h"

#include <memprof/error.h>

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const json_t *mp_schema_resolve(const json_t *root, const char *ref)
{
	const json_t *at = root;
	char seg[256];

	if (!root || !ref || ref[0] != '#')
		return NULL;
	ref++;
	while (*ref) {
		size_t n = 0;

		if (*ref != '/')
			return NULL;
		ref++;
		while (*ref && *ref != '/') {
			char c = *ref++;
			if (c == '~') {
				if (*ref != '0' && *ref != '1')
					return NULL;
				c = *ref++ == '0' ? '~' : '/';
			}
			if (n + 1 >= sizeof(seg))
				return NULL;
			seg[n++] = c;
		}
		seg[n] = '\0';
		if (json_is_object(at)) {
			at = json_object_get(at, seg);
		} else if (json_is_array(at)) {
			char *end;
			unsigned long i = strtoul(seg, &end, 10);
			at = n && !*end ? json_array_get(at, i) : NULL;
		} else {
			return NULL;
		}
		if (!at)
			return NULL;
	}
	return at;
}

/* ---- validation ------------------------------------------------------------- */

typedef struct vctx {
	const json_t *root;
	char *err;
	size_t errsize;
	jpath_t path;   /* where in the document */
	int depth;
	int bad_schema; /* the schema is not one this validator takes */
} vctx_t;

/* Records why doc is invalid (the first reason only); returns 1. */
static int fail(vctx_t *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->err[0])
		return 1;
	n = snprintf(c->err, c->errsize, "%s: ", c->path.len ? c->path.s : "(document)");
	if (n < 0 || (size_t)n >= c->errsize)
		return 1;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errsize - (size_t)n, fmt, ap);
	va_end(ap);
	return 1;
}

static int bad_schema(vctx_t *c, const char *fmt, ...)
{
	va_list ap;

	c->bad_schema = 1;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errsize, fmt, ap);
	va_end(ap);
	return 1;
}

/* 1 when v is of JSON Schema type t, 0 when not, -1 for an unknown name. */
static int is_type(const json_t *v, const char *t)
{
	if (!strcmp(t, "null"))
		return json_is_null(v);
	if (!strcmp(t, "boolean"))
		return json_is_boolean(v);
	if (!strcmp(t, "object"))
		return json_is_object(v);
	if (!strcmp(t, "array"))
		return json_is_array(v);
	if (!strcmp(t, "string"))
		return json_is_string(v);
	if (!strcmp(t, "number"))
		return json_is_number(v);
	if (!strcmp(t, "integer")) {
		double d = json_real_value(v);
		return json_is_integer(v) || (json_is_real(v) && isfinite(d) && floor(d) == d);
	}
	return -1;
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Equality as JSON Schema defines it: numbers by value, the rest deep. */
static int jeq(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return json_number_value(a) == json_number_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return 0;
	if (json_is_string(a))
		return json_string_length(a) == json_string_length(b) &&
		       !memcmp(json_string_value(a), json_string_value(b), json_string_length(a));
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b))
			return 0;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!jeq(json_array_get(a, i), json_array_get(b, i)))
				return 0;
		return 1;
	}
	if (json_is_object(a)) {
		const char *k;
		json_t *v;
		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach((json_t *)(uintptr_t)a, k, v) {
			const json_t *w = json_object_get(b, k);
			if (!w || !jeq(v, w))
				return 0;
		}
		return 1;
	}
	return 1; /* true, false, null */
}

/* a < b: -1, a == b: 0, a > b: 1 (both numbers). */
static int numcmp(const json_t *a, const json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);
		return x < y ? -1 : x > y;
	}
	double x = json_number_value(a), y = json_number_value(b);
	return x < y ? -1 : x > y;
}

static int validate(vctx_t *c, const json_t *s, const json_t *doc);

/* The alternatives of anyOf / oneOf: how many doc matches; the reasons of
 * those it does not match are listed in why. */
static int count_matches(vctx_t *c, const json_t *alts, const json_t *doc, char *why, size_t whysize, int *which)
{
	size_t used = 0;
	int matches = 0;

	why[0] = '\0';
	for (size_t i = 0; i < json_array_size(alts); i++) {
		char err[400] = "";
		vctx_t sub = {c->root, err, sizeof(err), c->path, c->depth + 1, 0};
		int bad = validate(&sub, json_array_get(alts, i), doc);

		if (sub.bad_schema) {
			bad_schema(c, "%s", err);
			return -1;
		}
		if (!bad) {
			which[matches < 2 ? matches : 1] = (int)i;
			matches++;
		} else if (used + 8 < whysize) {
			int n = snprintf(why + used, whysize - used, "%s[%zu] %s", used ? "; " : "", i, err);
			used = n < 0 ? used : used + (size_t)n < whysize ? used + (size_t)n : whysize - 1;
		}
	}
	return matches;
}

static int validate_object(vctx_t *c, const json_t *s, const json_t *doc)
{
	const json_t *props = json_object_get(s, "properties"), *req = json_object_get(s, "required"),
		     *extra = json_object_get(s, "additionalProperties");
	const char *k;
	json_t *v;

	for (size_t i = 0; i < json_array_size(req); i++) {
		const char *name = json_string_value(json_array_get(req, i));
		if (name && !json_object_get(doc, name))
			return fail(c, "property '%s' is required", name);
	}
	json_object_foreach((json_t *)(uintptr_t)doc, k, v) {
		const json_t *ps = props ? json_object_get(props, k) : NULL;
		size_t old;
		int bad;
		if (!ps && extra && json_is_false(extra))
			return fail(c, "property '%s' is not allowed", k);
		if (!ps && !extra)
			continue;
		old = push(&c->path, k);
		bad = validate(c, ps ? ps : extra, v);
		pop(&c->path, old);
		if (bad)
			return 1;
	}
	return 0;
}

static int validate_array(vctx_t *c, const json_t *s, const json_t *doc)
{
	const json_t *items = json_object_get(s, "items"), *lo = json_object_get(s, "minItems"),
		     *hi = json_object_get(s, "maxItems");
	size_t n = json_array_size(doc);

	if (lo && (json_int_t)n < json_integer_value(lo))
		return fail(c, "%zu items, fewer than minItems %" JSON_INTEGER_FORMAT, n, json_integer_value(lo));
	if (hi && (json_int_t)n > json_integer_value(hi))
		return fail(c, "%zu items, more than maxItems %" JSON_INTEGER_FORMAT, n, json_integer_value(hi));
	for (size_t i = 0; items && i < n; i++) {
		size_t old = push_index(&c->path, i);
		int bad = validate(c, items, json_array_get(doc, i));
		pop(&c->path, old);
		if (bad)
			return 1;
	}
	return 0;
}

static int validate_type(vctx_t *c, const json_t *t, const json_t *doc)
{
	char want[128] = "";

	if (json_is_string(t)) {
		int ok = is_type(doc, json_string_value(t));
		if (ok < 0)
			return bad_schema(c, "unknown type '%s'", json_string_value(t));
		return ok ? 0 : fail(c, "%s, not %s", type_name(doc), json_string_value(t));
	}
	for (size_t i = 0; i < json_array_size(t); i++) {
		const char *name = json_string_value(json_array_get(t, i));
		int ok = name ? is_type(doc, name) : -1;
		if (ok < 0)
			return bad_schema(c, "bad type in a list of types");
		if (ok)
			return 0;
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s", i ? " or " : "", name);
	}
	return fail(c, "%s, not %s", type_name(doc), want);
}

static int validate(vctx_t *c, const json_t *s, const json_t *doc)
{
	const json_t *v;
	const char *k;
	json_t *kv;

	if (++c->depth > MAX_DEPTH) {
		c->depth--;
		return bad_schema(c, "nested deeper than %d (a cycle of $refs?)", MAX_DEPTH);
	}
	if (json_is_true(s) || json_is_false(s)) {
		c->depth--;
		return json_is_false(s) ? fail(c, "no value is allowed here") : 0;
	}
	if (!json_is_object(s)) {
		c->depth--;
		return bad_schema(c, "a schema is an object or a boolean, not %s", type_name(s));
	}
	json_object_foreach((json_t *)(uintptr_t)s, k, kv) {
		if (!listed(keywords, k) && !listed(annotations, k)) {
			c->depth--;
			return bad_schema(c, "keyword '%s' is not supported", k);
		}
	}
	if ((v = json_object_get(s, "$ref"))) {
		const json_t *target = mp_schema_resolve(c->root, json_string_value(v));
		if (!target) {
			c->depth--;
			return bad_schema(c, "$ref '%s' does not resolve", json_string_value(v) ? json_string_value(v) : "?");
		}
		if (validate(c, target, doc))
			goto invalid;
	}
	if ((v = json_object_get(s, "type")) && validate_type(c, v, doc))
		goto invalid;
	if ((v = json_object_get(s, "const")) && !jeq(v, doc)) {
		fail(c, "not the value the schema requires");
		goto invalid;
	}
	if ((v = json_object_get(s, "enum"))) {
		size_t i;
		for (i = 0; i < json_array_size(v) && !jeq(json_array_get(v, i), doc); i++)
			;
		if (i == json_array_size(v)) {
			if (json_is_string(doc))
				fail(c, "'%s' is not one of the values allowed", json_string_value(doc));
			else
				fail(c, "not one of the values allowed");
			goto invalid;
		}
	}
	if (json_is_number(doc)) {
		if ((v = json_object_get(s, "minimum")) && numcmp(doc, v) < 0) {
			fail(c, "%g is below the minimum %g", json_number_value(doc), json_number_value(v));
			goto invalid;
		}
		if ((v = json_object_get(s, "maximum")) && numcmp(doc, v) > 0) {
			fail(c, "%g is above the maximum %g", json_number_value(doc), json_number_value(v));
			goto invalid;
		}
	}
	if (json_is_string(doc) && (v = json_object_get(s, "pattern"))) {
		regex_t re;
		int no;
		if (!json_string_value(v) || regcomp(&re, json_string_value(v), REG_EXTENDED | REG_NOSUB)) {
			c->depth--;
			return bad_schema(c, "pattern is not a POSIX extended regular expression");
		}
		no = regexec(&re, json_string_value(doc), 0, NULL, 0);
		regfree(&re);
		if (no) {
			fail(c, "'%s' does not match %s", json_string_value(doc), json_string_value(v));
			goto invalid;
		}
	}
	if (json_is_array(doc) && validate_array(c, s, doc))
		goto invalid;
	if (json_is_object(doc) && validate_object(c, s, doc))
		goto invalid;
	if ((v = json_object_get(s, "allOf")))
		for (size_t i = 0; i < json_array_size(v); i++)
			if (validate(c, json_array_get(v, i), doc))
				goto invalid;
	if (json_object_get(s, "anyOf") || json_object_get(s, "oneOf")) {
		const char *const names[] = {"anyOf", "oneOf"};
		for (int w = 0; w < 2; w++) {
			char why[900];
			int which[2], m;
			if (!(v = json_object_get(s, names[w])))
				continue;
			m = count_matches(c, v, doc, why, sizeof(why), which);
			if (m < 0) {
				c->depth--;
				return 1;
			}
			if (m == 0) {
				fail(c, "matches none of the %zu schemas of %s: %s", json_array_size(v), names[w], why);
				goto invalid;
			}
			if (w == 1 && m > 1) {
				fail(c, "matches %d schemas of oneOf (%d and %d), not exactly one", m, which[0], which[1]);
				goto invalid;
			}
		}
	}
	c->depth--;
	return 0;
invalid:
	c->depth--;
	return 1;
}

int mp_schema_validate(const json_t *root, const json_t *sub, const json_t *doc, char *err, size_t errsize)
{
	char local[16];
	vctx_t c = {root, err && errsize ? err : local, err && errsize ? errsize : sizeof(local), {"", 0}, 0, 0};

	c.err[0] = '\0';
	if (!root || !doc)
		return bad_schema(&c, "no schema or no document"), MP_EUSAGE;
	if (!validate(&c, sub ? sub : root, doc))
		return 0;
	return c.bad_schema ? MP_EUSAGE : MP_EFORMAT;
}
