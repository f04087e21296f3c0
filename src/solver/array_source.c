/* array_source.c - mp_source_t over an in-memory event array. */
#include <memprof/array_source.h>

#include <stdlib.h>
#include <string.h>

typedef struct array_source {
	mp_source_t base;
	mp_event_t *ev;
	size_t n, pos;
	char **str;
	size_t nstr;
	mp_memory_info_t *mem;
	uint32_t nmem;
	size_t fail_at;
	int fail_code;
} array_source_t;

static int as_next(mp_source_t *src, mp_event_t *ev, mp_diag_t *diag)
{
	array_source_t *a = (array_source_t *)src;

	if (a->fail_code && a->pos == a->fail_at) {
		mp_diag_set_file(diag, src->path);
		return mp_diag_set(diag, a->fail_code, -1, (int64_t)a->pos, "event %zu: injected failure", a->pos);
	}
	if (a->pos >= a->n)
		return 0;
	*ev = a->ev[a->pos++];
	return 1;
}

static int as_rewind(mp_source_t *src, mp_diag_t *diag)
{
	(void)diag;
	((array_source_t *)src)->pos = 0;
	return 0;
}

static const char *as_string(const mp_source_t *src, uint32_t id)
{
	const array_source_t *a = (const array_source_t *)src;

	return id && id < a->nstr && a->str[id] ? a->str[id] : "";
}

static const mp_memory_info_t *as_memory(const mp_source_t *src, uint32_t id)
{
	const array_source_t *a = (const array_source_t *)src;

	return id < a->nmem ? &a->mem[id] : NULL;
}

static uint32_t as_memory_count(const mp_source_t *src)
{
	return ((const array_source_t *)src)->nmem;
}

static mp_end_status_t as_end_status(const mp_source_t *src)
{
	(void)src;
	return MP_END_CLEAN;
}

static void as_close(mp_source_t *src)
{
	array_source_t *a = (array_source_t *)src;

	for (size_t i = 0; i < a->nstr; i++)
		free(a->str[i]);
	for (uint32_t i = 0; i < a->nmem; i++)
		free((char *)(uintptr_t)a->mem[i].name);
	free(a->str);
	free(a->mem);
	free(a->ev);
	free((char *)(uintptr_t)a->base.path);
	free(a);
}

static const mp_source_ops_t as_ops = {
	as_next, as_rewind, as_string, as_memory, as_memory_count, as_end_status, as_close, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};

int mp_array_source_new(mp_source_t **out, const mp_event_t *events, size_t n,
			const char *const *strings, size_t nstrings,
			const mp_memory_info_t *memories, uint32_t nmemories, const char *path)
{
	array_source_t *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (!a)
		return MP_ENOMEM;
	a->base.ops = &as_ops;
	a->base.path = strdup(path ? path : "<memory>");
	a->ev = malloc((n ? n : 1) * sizeof(*a->ev));
	a->str = calloc(nstrings ? nstrings : 1, sizeof(*a->str));
	a->mem = calloc(nmemories ? nmemories : 1, sizeof(*a->mem));
	if (!a->base.path || !a->ev || !a->str || !a->mem)
		goto nomem;
	if (n)
		memcpy(a->ev, events, n * sizeof(*events));
	for (size_t i = 0; i < n; i++)
		a->ev[i].index = i;
	a->n = n;
	a->nstr = nstrings;
	for (size_t i = 1; i < nstrings; i++)
		if (strings[i] && !(a->str[i] = strdup(strings[i])))
			goto nomem;
	a->nmem = nmemories;
	for (uint32_t i = 0; i < nmemories; i++) {
		a->mem[i] = memories[i];
		if (!(a->mem[i].name = strdup(memories[i].name ? memories[i].name : "")))
			goto nomem;
	}
	*out = &a->base;
	return 0;
nomem:
	as_close(&a->base);
	return MP_ENOMEM;
}

void mp_array_source_fail_at(mp_source_t *src, size_t at, int code)
{
	array_source_t *a = (array_source_t *)src;

	a->fail_at = at;
	a->fail_code = code;
}
