/* file.c - the opened file's list of modules, which load.c fills from an
 * HloProto and xspace.c from a profile, and the string copies the file and
 * the model own. Below load, xspace, model and shape: it calls none of them
 * (see internal.h). */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *mp_hlo_strdup(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char *d = malloc(n + 1);

	if (d) {
		if (n)
			memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static char *strndup_bytes(const uint8_t *p, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		if (n)
			memcpy(d, p, n);
		d[n] = '\0';
	}
	return d;
}

int mp_hlo_file_add_module(mp_hlo_file_t *f, const char *name, size_t name_len, const char *display,
		      size_t display_len, uint64_t id, const uint8_t *bytes, size_t len)
{
	module_entry_t *m, *nm = realloc(f->mods, (f->n_mods + 1) * sizeof(*f->mods));
	char *n, *d;

	if (!nm)
		return MP_ENOMEM;
	f->mods = nm;
	m = &f->mods[f->n_mods];
	n = strndup_bytes((const uint8_t *)name, name_len);
	if (display)
		d = strndup_bytes((const uint8_t *)display, display_len);
	else if (n && (d = malloc(name_len + 32)) != NULL)
		snprintf(d, name_len + 32, "%s(%" PRIu64 ")", n, id);
	else
		d = NULL;
	if (!n || !d) {
		free(n);
		free(d);
		return MP_ENOMEM;
	}
	m->name = n;
	m->display = d;
	m->info.name = n;
	m->info.display = d;
	m->info.program_id = id;
	m->info.size = len;
	m->bytes = bytes;
	m->len = len;
	f->n_mods++;
	return 0;
}
