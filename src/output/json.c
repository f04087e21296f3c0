/* json.c - building jansson documents (memprof/output/json.h). */
#include <memprof/output/json.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

json_t *mp_json_u64(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

json_t *mp_json_object(int *bad)
{
	json_t *o = json_object();

	if (!o)
		*bad = 1;
	return o;
}

void mp_json_put(json_t *o, const char *key, json_t *v, int *bad)
{
	if (!v || json_object_set_new(o, key, v) < 0)
		*bad = 1;
}

json_t *mp_json_text(const char *s)
{
	json_t *j = json_string(s ? s : "");
	char *copy;

	if (j || !s)
		return j;
	copy = strdup(s);
	if (!copy)
		return NULL;
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
			*p = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

int mp_json_write(FILE *out, json_t *doc, size_t flags)
{
	int rc = json_dumpf(doc, out, flags);

	json_decref(doc);
	if (rc < 0 || fputc('\n', out) == EOF)
		return errno ? -errno : -EIO;
	return 0;
}
