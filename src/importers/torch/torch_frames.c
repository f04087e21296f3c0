/* torch_frames.c - a trace entry's frames into the op it is attributed to.
 *
 * A frame is {'filename', 'line', 'name'}, innermost first. The op is the
 * innermost frame in the user's code, written "name (filename:line)". Not
 * the user's code: frames in PyTorch itself (a filename with a torch/
 * directory), the Python standard library (under lib/pythonX.Y/ but not in
 * its site-packages or dist-packages), C and C++ frames (a filename that
 * does not end in .py: what stacks="all" adds) and Python's internal
 * "<frozen ...>" / "<string>" code. When every frame is such, the innermost
 * one is the op; with all_frames set, the innermost one always is.
 *
 * PyTorch hands identical stacks the same frames list, and the pickle
 * refers back to it, so the op is computed once per list and cached in it
 * (obj->user). */
#include "torch_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static int is_user_file(const char *f)
{
	const char *lib;

	if (!f[0] || f[0] == '<' || !has_suffix(f, ".py"))
		return 0;
	if (!strncmp(f, "torch/", 6) || strstr(f, "/torch/"))
		return 0;
	lib = strstr(f, "/lib/python");
	if (lib && !strstr(lib, "-packages/"))
		return 0;
	return 1;
}

static const char *frame_str(const tr_src_t *s, const mp_pk_value_t *fv, const char *key)
{
	uint32_t id = mp_strtab_find(&s->strings, key, strlen(key));
	const mp_pk_value_t *v = fv->kind == MP_PK_DICT ? mp_pickle_dict_get(fv->u.obj, id) : NULL;

	return v && v->kind == MP_PK_STR ? mp_strtab_get(&s->strings, v->u.str) : "";
}

static int64_t frame_line(const tr_src_t *s, const mp_pk_value_t *fv)
{
	uint32_t id = mp_strtab_find(&s->strings, "line", 4);
	const mp_pk_value_t *v = fv->kind == MP_PK_DICT ? mp_pickle_dict_get(fv->u.obj, id) : NULL;

	return v && v->kind == MP_PK_INT ? v->u.i : 0;
}

int tr_frames_op(tr_src_t *s, mp_pk_obj_t *frames, uint32_t *op, mp_diag_t *diag)
{
	char text[768];
	size_t pick = 0;
	int len;

	if (frames->user) {
		*op = frames->user - 1;
		return 0;
	}
	*op = 0;
	if (!frames->n)
		return 0;
	if (!s->opts.all_frames)
		for (pick = 0; pick < frames->n && !is_user_file(frame_str(s, &frames->items[pick], "filename")); pick++)
			;
	if (pick == frames->n)
		pick = 0;
	/* the strings are copied before the next intern may move them */
	len = snprintf(text, sizeof(text), "%s (%s:%" PRId64 ")", frame_str(s, &frames->items[pick], "name"),
		       frame_str(s, &frames->items[pick], "filename"), frame_line(s, &frames->items[pick]));
	if (len < 0)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "a frame that cannot be written");
	*op = mp_strtab_intern(&s->strings, text, strlen(text));
	if (*op == UINT32_MAX)
		return MP_ENOMEM;
	frames->user = *op + 1;
	s->info.stacks++;
	return 0;
}
