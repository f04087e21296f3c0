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
 * PyTorch hands identical stacks the same frames list and the same frame
 * dicts, and the pickle refers back to them, so frames are interned once
 * per dict (the user rule judged then) and the op computed once per list;
 * both are cached in the object (obj->user), and once the entry holding
 * them is handed over the pickle reader keeps only that number for later
 * references (memprof/pickle.h, MP_PK_TOKEN).
 *
 * A line that is not a line -- Python 3.13 PyTorch writes 2**64-1 where
 * it has none, an integer the pickle reader hands over as MP_PK_BIGINT --
 * or a negative one is unknown: the op reads "name (file:?)" rather than
 * a number no editor can go to, and the source counts such frames
 * (tr_src_t.unknown_lines, once per frame dict, as frames are interned)
 * and keeps the first for the report to name. */
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

#define LINE_UNKNOWN (-1) /* tr_frame_t.line: see above */

static const mp_pk_value_t *field(const tr_src_t *s, const mp_pk_obj_t *d, const char *key)
{
	return mp_pickle_dict_get(d, mp_strtab_find(&s->strings, key, strlen(key)));
}

/* f's line (the value line) is unknown: counted, the first one kept as
 * "name (file): line <what it was>". */
static void unknown_line(tr_src_t *s, tr_frame_t *f, const mp_pk_value_t *line)
{
	char val[64];

	f->line = LINE_UNKNOWN;
	if (s->unknown_lines++)
		return;
	if (line->kind == MP_PK_INT)
		snprintf(val, sizeof(val), "%" PRId64, line->u.i);
	else if (line->big_u64)
		snprintf(val, sizeof(val), "%" PRIu64, line->u.u);
	else
		snprintf(val, sizeof(val), "%s integer of %" PRIu32 " bytes", line->big_neg ? "a negative" : "an",
			 line->big_len);
	snprintf(s->unknown_line_example, sizeof(s->unknown_line_example), "%s (%s): line %s",
		 mp_strtab_get(&s->strings, f->name), mp_strtab_get(&s->strings, f->file), val);
}

/* A frame's id in s->frames: interned once per frame dict (PyTorch shares
 * the dict of a frame between stacks), or the token of one seen before. */
static int frame_id(tr_src_t *s, const mp_pk_value_t *fv, uint32_t *fid, mp_diag_t *diag)
{
	const mp_pk_value_t *file, *name, *line;
	tr_frame_t f = {0};
	int rc;

	if (fv->kind == MP_PK_TOKEN) {
		if (fv->u.i < 1 || (uint64_t)fv->u.i > s->frames.n)
			return mp_diag_set(diag, MP_EFORMAT, -1, -1, "a frame refers to an object that is not a frame");
		*fid = (uint32_t)(fv->u.i - 1);
		return 0;
	}
	if (fv->kind != MP_PK_DICT)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "a frame is not a dict");
	if (fv->u.obj->user) {
		*fid = fv->u.obj->user - 1;
		return 0;
	}
	file = field(s, fv->u.obj, "filename");
	name = field(s, fv->u.obj, "name");
	line = field(s, fv->u.obj, "line");
	f.file = file && file->kind == MP_PK_STR ? file->u.str : 0;
	f.name = name && name->kind == MP_PK_STR ? name->u.str : 0;
	f.line = line && line->kind == MP_PK_INT ? line->u.i : 0;
	if (line && (line->kind == MP_PK_BIGINT || (line->kind == MP_PK_INT && line->u.i < 0)))
		unknown_line(s, &f, line);
	f.user = (uint8_t)is_user_file(mp_strtab_get(&s->strings, f.file));
	if (s->frames.n >= UINT32_MAX - 1)
		return mp_diag_set(diag, MP_ELIMIT, -1, -1, "more than 4 billion distinct frames");
	if ((rc = tr_vec_push(&s->frames, &f, sizeof(f))) < 0)
		return rc;
	*fid = (uint32_t)(s->frames.n - 1);
	fv->u.obj->user = *fid + 1;
	return 0;
}

int tr_frames_op(tr_src_t *s, const mp_pk_value_t *fv, uint32_t *op, mp_diag_t *diag)
{
	char text[768];
	mp_pk_obj_t *frames;
	const tr_frame_t *f;
	uint32_t fid = 0, pick = UINT32_MAX, first = UINT32_MAX;
	int rc;

	*op = 0;
	if (fv->kind == MP_PK_TOKEN) { /* a frames list seen before */
		*op = (uint32_t)(fv->u.i - 1);
		return 0;
	}
	if (fv->kind != MP_PK_LIST)
		return 0;
	frames = fv->u.obj;
	if (frames->user) {
		*op = frames->user - 1;
		return 0;
	}
	if (!frames->n)
		return 0;
	for (size_t i = 0; i < frames->n; i++) {
		if ((rc = frame_id(s, &frames->items[i], &fid, diag)) < 0)
			return rc;
		if (first == UINT32_MAX)
			first = fid;
		if (pick == UINT32_MAX && (s->opts.all_frames || TR_AT(s->frames, tr_frame_t, fid).user))
			pick = fid; /* every frame is still interned: a later list may share them */
	}
	f = &TR_AT(s->frames, tr_frame_t, pick == UINT32_MAX ? first : pick);
	if (f->line == LINE_UNKNOWN)
		snprintf(text, sizeof(text), "%s (%s:?)", mp_strtab_get(&s->strings, f->name),
			 mp_strtab_get(&s->strings, f->file));
	else
		snprintf(text, sizeof(text), "%s (%s:%" PRId64 ")", mp_strtab_get(&s->strings, f->name),
			 mp_strtab_get(&s->strings, f->file), f->line);
	*op = mp_strtab_intern(&s->strings, text, strlen(text));
	if (*op == UINT32_MAX)
		return MP_ENOMEM;
	frames->user = *op + 1;
	s->info.stacks++;
	return 0;
}
