/* torch_frames.c - a trace entry's frames into the op it is attributed to.
 *
 * A frame is {'filename', 'line', 'name'}, innermost first: Python frames
 * (a .py file, or <frozen ...>/<string>) and, with stacks="all", C/C++
 * frames (any other filename; the name is a demangled function). The rule
 * (docs/torch.md "Attribution"), first that applies:
 *
 *   1. the innermost frame of the user's code: a .py file outside torch,
 *      the standard library and installed packages (site-packages,
 *      dist-packages), or one that opts.user_code names;
 *   2. the innermost frame of a third-party package (not torch);
 *   3. the autograd node and the ATen operator: "SubBackward0: aten::neg";
 *   4. the innermost frame that is not the unwinder's, the allocator's or
 *      other c10/std plumbing; 5. the innermost frame.
 *
 * A stack through the autograd engine is split at its innermost node or
 * engine frame: 1 to 3 look only inside (what the backward ran); a user
 * frame further out is the caller of backward(), named after the op
 * ("(backward of train.py:91 main)"), never the op itself. 3 to 5 say
 * "(backward)" on such a stack. With all_frames set, the innermost frame
 * is always the op.
 *
 * PyTorch shares frame dicts between stacks (and at times a whole frames
 * list), and the pickle refers back to them, so frames are interned once
 * per dict (their kind judged then); a list is a stack id, one per
 * distinct sequence of frames (lists of equal frames are one stack:
 * PyTorch usually gives each entry a list of its own), with its op
 * computed once. Both ids are cached in the object (obj->user), and once
 * the entry holding them is handed over the pickle reader keeps only that
 * number for later references (memprof/pickle.h, MP_PK_TOKEN). The stacks
 * keep their frame ids (4 bytes a frame) for mp_source_stack_frames.
 *
 * A line that is not a line -- Python 3.13 PyTorch writes 2**64-1 where
 * it has none, an integer the pickle reader hands over as MP_PK_BIGINT --
 * or a negative one is unknown: the op reads "name (file:?)" rather than
 * a number no editor can go to, and the source counts such frames
 * (tr_src_t.unknown_lines, once per frame dict, as frames are interned)
 * and keeps the first for the report to name. */
#include "torch_impl.h"

#include <memprof/pyfile.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a frame is (tr_frame_t.kind), judged once when it is interned. */
enum {
	FK_CXX,        /* a C/C++ frame that names none of the below */
	FK_USER,       /* Python: the user's code */
	FK_LIB,        /* Python: a third-party package (not torch) */
	FK_PY,         /* Python: torch, the standard library, <frozen ...>, <string> */
	FK_NODE,       /* an autograd node running: torch::autograd::generated::SubBackward0::apply */
	FK_ENGINE,     /* the autograd engine around nodes: Engine::*, PythonEngine::*, Node::operator() */
	FK_ATEN,       /* an ATen operator: at::_ops::neg::call, ::redispatch */
	FK_ATEN_EMPTY, /* an ATen allocation primitive: at::_ops::empty_strided::call, new_empty, ... */
	FK_PLUMB,      /* the unwinder, the allocator, c10::, at::detail::, std:: */
};

#define NONE UINT32_MAX

static int has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* --- Python frames ---------------------------------------------------------- */

#define LINE_UNKNOWN (-1) /* tr_frame_t.line: see above */

/* The rule of whose code a file is lives in memprof/pyfile.h (captures
 * with Python frames use it too). */
static int python_kind(const char *f, const char *user_code)
{
	static const int kind[] = {[MP_PYFILE_USER] = FK_USER, [MP_PYFILE_PACKAGE] = FK_LIB,
				   [MP_PYFILE_INTERNAL] = FK_PY};

	return kind[mp_pyfile_kind(f, user_code)];
}

/* --- C/C++ frames ----------------------------------------------------------- */

/* The qualified name of a demangled function, without the return type a
 * template carries ("void at::native::f<...>(...)") nor the parameters:
 * *len bytes from the result. "(anonymous namespace)" is part of it. */
static const char *cxx_name(const char *s, size_t *len)
{
	const char *start = s, *p = s;
	int depth = 0;

	for (; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth)
			depth--;
		else if (!depth && *p == ' ')
			start = p + 1;
		else if (!depth && *p == '(') {
			if (strncmp(p, "(anonymous namespace)", 21))
				break;
			p += 20;
		}
	}
	*len = (size_t)(p - start);
	return start;
}

/* The node of "torch::autograd::<ns>::<Node>::apply": its last component,
 * template arguments included (CppNode<MyFunction>); 0 if q is no node's
 * apply (torch::autograd::Node itself is the engine's caller, no node). */
static size_t node_class(const char *q, size_t len, const char **cls)
{
	static const char apply[] = "::apply";
	size_t end, i;
	int depth = 0;

	if (!has_prefix(q, "torch::autograd::") || len < sizeof(apply) ||
	    strncmp(q + len - (sizeof(apply) - 1), apply, sizeof(apply) - 1))
		return 0;
	end = len - (sizeof(apply) - 1);
	for (i = end; i > 0; i--) {
		if (q[i - 1] == '>')
			depth++;
		else if (q[i - 1] == '<' && depth)
			depth--;
		else if (!depth && q[i - 1] == ':')
			break;
	}
	*cls = q + i;
	return end - i == 4 && !strncmp(q + i, "Node", 4) ? 0 : end - i;
}

/* The operator of "at::_ops::<op>::call" (or ::redispatch): *len bytes. */
static const char *aten_op(const char *q, size_t len, size_t *oplen)
{
	const char *op = q + strlen("at::_ops::"), *end = strstr(op, "::");

	*oplen = end && end < q + len ? (size_t)(end - op) : (size_t)(q + len - op);
	return op;
}

/* An operator that only allocates its caller's output: the op that called
 * it is the one that allocated (clone's empty_like, where's resize_ of
 * its out tensor, AccumulateGrad's new_empty_strided). */
static int is_empty_op(const char *op, size_t n)
{
	return (n >= 5 && !strncmp(op, "empty", 5) && (n == 5 || op[5] == '_')) ||
	       (n >= 9 && !strncmp(op, "new_empty", 9)) || (n >= 6 && !strncmp(op, "_empty", 6)) ||
	       (n == 7 && !strncmp(op, "resize_", 7)) || (n == 10 && !strncmp(op, "resize_as_", 10));
}

static int cxx_kind(const char *name)
{
	static const char *const plumbing[] = {
		"torch::unwind::", "torch::CapturedTraceback::", "torch::cuda::(anonymous namespace)::gather",
		"c10::", "at::detail::", "std::", "__gnu_cxx::",
	};
	const char *cls, *op;
	size_t len, n;
	const char *q = cxx_name(name, &len);

	if (has_prefix(q, "at::_ops::")) {
		op = aten_op(q, len, &n);
		return is_empty_op(op, n) ? FK_ATEN_EMPTY : FK_ATEN;
	}
	if (node_class(q, len, &cls))
		return FK_NODE;
	if (has_prefix(q, "torch::autograd::Engine::") || has_prefix(q, "torch::autograd::python::PythonEngine::") ||
	    has_prefix(q, "torch::autograd::Node::"))
		return FK_ENGINE;
	for (size_t i = 0; i < sizeof(plumbing) / sizeof(plumbing[0]); i++)
		if (has_prefix(q, plumbing[i]))
			return FK_PLUMB;
	return FK_CXX;
}

static int frame_kind(const char *file, const char *name, const char *user_code)
{
	if (file[0] == '<' || has_suffix(file, ".py"))
		return python_kind(file, user_code);
	return cxx_kind(name);
}

/* --- interning -------------------------------------------------------------- */

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
	f.kind = (uint8_t)frame_kind(mp_strtab_get(&s->strings, f.file), mp_strtab_get(&s->strings, f.name),
				     s->opts.user_code);
	if (s->frames.n >= UINT32_MAX - 1)
		return mp_diag_set(diag, MP_ELIMIT, -1, -1, "more than 4 billion distinct frames");
	if ((rc = mp_vec_push(&s->frames, &f, sizeof(f))) < 0)
		return rc;
	*fid = (uint32_t)(s->frames.n - 1);
	fv->u.obj->user = *fid + 1;
	return 0;
}

/* --- the op of a stack ------------------------------------------------------ */

/* The frames a stack's op can be made of, innermost of each kind. "Inside"
 * is inner to the stack's innermost node or engine frame (all of it when
 * it has none); "caller" is outer to it. */
typedef struct pick {
	uint32_t first, plain;          /* innermost frame; innermost not plumbing */
	uint32_t user, lib, aten, empty; /* inside; empty: the outermost primitive */
	uint32_t node;                  /* innermost node */
	uint32_t caller_user, caller_lib;
	int backward;                   /* the stack has a node or engine frame */
} pick_t;

static void pick_add(pick_t *p, uint32_t fid, int kind)
{
#define SET(slot) ((slot) = (slot) == NONE ? fid : (slot))
	SET(p->first);
	if (kind != FK_PLUMB)
		SET(p->plain);
	if (kind == FK_NODE || kind == FK_ENGINE)
		p->backward = 1;
	if (kind == FK_NODE)
		SET(p->node);
	if (p->backward) {
		if (kind == FK_USER)
			SET(p->caller_user);
		else if (kind == FK_LIB)
			SET(p->caller_lib);
		return;
	}
	if (kind == FK_USER)
		SET(p->user);
	else if (kind == FK_LIB)
		SET(p->lib);
	else if (kind == FK_ATEN)
		SET(p->aten);
	else if (kind == FK_ATEN_EMPTY)
		p->empty = fid; /* the outermost: what the op asked for */
#undef SET
}

static const tr_frame_t *frame_at(const tr_src_t *s, uint32_t fid)
{
	return &TR_AT(s->frames, tr_frame_t, fid);
}

/* "name (file:line)", the op of a Python frame (and of any frame chosen whole). */
static int frame_text(const tr_src_t *s, uint32_t fid, char *buf, size_t size)
{
	const tr_frame_t *f = frame_at(s, fid);

	if (f->line == LINE_UNKNOWN) /* a line that did not fit (Python 3.13's 2**64-1) */
		return snprintf(buf, size, "%s (%s:?)", mp_strtab_get(&s->strings, f->name),
				mp_strtab_get(&s->strings, f->file));
	return snprintf(buf, size, "%s (%s:%" PRId64 ")", mp_strtab_get(&s->strings, f->name),
			mp_strtab_get(&s->strings, f->file), f->line);
}

/* "SubBackward0: aten::neg", "SubBackward0" or "aten::neg"; 0 when the
 * stack has neither a node nor an ATen operator inside. */
static int cxx_text(const tr_src_t *s, const pick_t *p, char *buf, size_t size)
{
	uint32_t at = p->aten != NONE ? p->aten : p->empty;
	const char *cls = "", *op = "";
	size_t clen = 0, olen = 0, len;
	const char *q;

	if (p->node != NONE) {
		q = cxx_name(mp_strtab_get(&s->strings, frame_at(s, p->node)->name), &len);
		clen = node_class(q, len, &cls);
	}
	if (at != NONE) {
		q = cxx_name(mp_strtab_get(&s->strings, frame_at(s, at)->name), &len);
		op = aten_op(q, len, &olen);
	}
	if (!clen && !olen)
		return 0;
	return snprintf(buf, size, "%.*s%s%s%.*s", (int)clen, cls, clen && olen ? ": " : "", olen ? "aten::" : "",
			(int)olen, op);
}

/* " (backward)", or " (backward of train.py:91 main)": who called it. */
static void backward_suffix(const tr_src_t *s, const pick_t *p, char *buf, size_t size)
{
	uint32_t caller = p->caller_user != NONE ? p->caller_user : p->caller_lib;
	const tr_frame_t *f;

	if (caller == NONE) {
		snprintf(buf, size, " (backward)");
		return;
	}
	f = frame_at(s, caller);
	snprintf(buf, size, " (backward of %s:%" PRId64 " %s)", mp_strtab_get(&s->strings, f->file), f->line,
		 mp_strtab_get(&s->strings, f->name));
}

static void op_text(const tr_src_t *s, const pick_t *p, char *buf, size_t size)
{
	char suffix[512];
	size_t n;

	if (s->opts.all_frames) {
		frame_text(s, p->first, buf, size);
		return;
	}
	if (p->user != NONE || p->lib != NONE) { /* the Python code that ran */
		frame_text(s, p->user != NONE ? p->user : p->lib, buf, size);
		return;
	}
	if (!cxx_text(s, p, buf, size))
		frame_text(s, p->plain != NONE ? p->plain : p->first, buf, size);
	if (!p->backward)
		return;
	backward_suffix(s, p, suffix, sizeof(suffix));
	n = strlen(buf);
	snprintf(buf + n, size - n, "%s", suffix);
}

/* The stack of a list seen before: its id, cached in the list (obj->user)
 * or handed over as the token of it. */
static int known_stack(const tr_src_t *s, uint64_t id, uint32_t *op, uint32_t *stack, mp_diag_t *diag)
{
	if (id < 1 || id > s->stacks.n)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "a stack refers to an object that is not a frames list");
	*stack = (uint32_t)id;
	*op = TR_AT(s->stacks, tr_stack_t, id - 1).op;
	return 0;
}

/* The stack whose frames equal st's (just written at st->first, h their
 * hash): 1 and *stack; or 0 and *key, the free key to file st under (h, or
 * the next one free after it). */
static int same_stack(const tr_src_t *s, const tr_stack_t *st, uint64_t h, uint32_t *stack, uint64_t *key)
{
	const uint32_t *f = &TR_AT(s->stack_fids, uint32_t, st->first);
	uint32_t id;

	for (;; h++) {
		const tr_stack_t *o;
		if (!mp_i64map_get(&s->stack_ids, (int64_t)h, &id)) {
			*key = h;
			return 0;
		}
		o = &TR_AT(s->stacks, tr_stack_t, id - 1);
		if (o->n == st->n && !memcmp(&TR_AT(s->stack_fids, uint32_t, o->first), f, st->n * sizeof(*f))) {
			*stack = id;
			return 1;
		}
	}
}

int tr_frames_op(tr_src_t *s, const mp_pk_value_t *fv, uint32_t *op, uint32_t *stack, mp_diag_t *diag)
{
	char text[1024];
	mp_pk_obj_t *frames;
	pick_t p = {NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, 0};
	tr_stack_t st;
	uint64_t st_key = 0;
	uint32_t fid = 0;
	int rc;

	*op = *stack = 0;
	if (fv->kind == MP_PK_TOKEN) /* a frames list seen before */
		return known_stack(s, (uint64_t)fv->u.i, op, stack, diag);
	if (fv->kind != MP_PK_LIST)
		return 0;
	frames = fv->u.obj;
	if (frames->user)
		return known_stack(s, frames->user, op, stack, diag);
	if (!frames->n)
		return 0;
	if (s->stacks.n >= UINT32_MAX - 1 || s->stack_fids.n + frames->n >= UINT32_MAX)
		return mp_diag_set(diag, MP_ELIMIT, -1, -1, "more than 4 billion frames in distinct stacks");
	st.first = (uint32_t)s->stack_fids.n;
	st.n = (uint32_t)frames->n;
	if (st.n > s->fbuf_cap) { /* room for tr_stack_frames' answer, made now: it is const */
		mp_source_frame_t *b = realloc(s->fbuf, st.n * sizeof(*b));
		if (!b)
			return MP_ENOMEM;
		s->fbuf = b;
		s->fbuf_cap = st.n;
	}
	if (mp_vec_reserve(&s->stack_fids.v, &s->stack_fids.cap, s->stack_fids.n + st.n, sizeof(uint32_t)) < 0)
		return MP_ENOMEM; /* room for its frame ids */
	for (size_t i = 0; i < frames->n; i++) { /* every frame interned: a later list may share them */
		if ((rc = frame_id(s, &frames->items[i], &fid, diag)) < 0)
			return rc;
		TR_AT(s->stack_fids, uint32_t, st.first + i) = fid;
		st_key = (st_key ^ fid) * 0x9e3779b97f4a7c15ull; /* the hash of the frame ids, a word a step */
		st_key ^= st_key >> 29;
	}
	s->stack_fids.n += st.n;
	/* a list equal to one seen before (PyTorch gives each entry a list
	 * of its own, of shared frame dicts) is that stack */
	if (same_stack(s, &st, st_key, stack, &st_key)) {
		s->stack_fids.n = st.first;
		*op = TR_AT(s->stacks, tr_stack_t, *stack - 1).op;
		frames->user = *stack;
		return 0;
	}
	for (uint32_t i = 0; i < st.n; i++) {
		fid = TR_AT(s->stack_fids, uint32_t, st.first + i);
		pick_add(&p, fid, frame_at(s, fid)->kind);
	}
	op_text(s, &p, text, sizeof(text));
	st.op = mp_strtab_intern(&s->strings, text, strlen(text));
	if (st.op == UINT32_MAX || (rc = mp_vec_push(&s->stacks, &st, sizeof(st))) < 0 ||
	    (rc = mp_i64map_put(&s->stack_ids, (int64_t)st_key, (uint32_t)s->stacks.n)) < 0)
		return MP_ENOMEM;
	*op = st.op;
	*stack = (uint32_t)s->stacks.n; /* ids from 1 */
	frames->user = *stack;
	s->info.stacks++;
	return 0;
}

/* A stack's frames as mp_source_frame_t: PyTorch's own names, "??" (its
 * word for an unknown file) as "", an unknown line as 0. */
int tr_stack_frames(const mp_source_t *src, uint32_t stack, const mp_source_frame_t **out, uint32_t *n)
{
	const tr_src_t *s = (const tr_src_t *)src;
	const tr_stack_t *st;

	*out = NULL;
	*n = 0;
	if (!stack || stack > s->stacks.n)
		return MP_ENOTFOUND;
	st = &TR_AT(s->stacks, tr_stack_t, stack - 1);
	for (uint32_t i = 0; i < st->n; i++) {
		const tr_frame_t *f = frame_at(s, TR_AT(s->stack_fids, uint32_t, st->first + i));
		const char *file = mp_strtab_get(&s->strings, f->file);
		int python = file[0] == '<' || has_suffix(file, ".py");
		s->fbuf[i].name = mp_strtab_get(&s->strings, f->name);
		s->fbuf[i].file = strcmp(file, "??") ? file : "";
		s->fbuf[i].line = f->line > 0 ? f->line : 0;
		s->fbuf[i].kind = python ? MP_FRAME_PYTHON : MP_FRAME_NATIVE;
	}
	*out = s->fbuf;
	*n = st->n;
	return 0;
}
