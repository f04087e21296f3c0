/* reader_stacks.c - the STACK and MODULE sections of a capture (format
 * 1.1): call stacks by id, and the objects loaded in the traced process;
 * the FRAME sections (2.2): interpreter frames that stacks hold as tagged
 * values. Kept for the reader's lifetime (they survive a rewind, like
 * strings).
 * Input is hostile: every count and length is checked against the section
 * and the limits in memprof/format.h before anything is allocated.
 */
#include <memprof/format.h>
#include <memprof/format/varint.h>
#include <memprof/pyfile.h>
#include <memprof/source.h>

#include "reader_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MP_MODULE_MAX_PATH 4096

int mp__read_stack_section(mp_capture_t *cap, const uint8_t **p, const uint8_t *end, int apply)
{
	uint64_t id, n, pc;
	size_t cap_st = cap->cap_stacks;
	uint32_t i;

	if (mp_varint_get(p, end, &id) || mp_varint_get(p, end, &n) || id == 0 || id > UINT32_MAX - 1 || n == 0 ||
	    n > MP_STACK_MAX_FRAMES)
		return -1;
	if (!apply || id <= cap->nstacks) {
		/* checking, or known already (a rewind re-reads definitions) */
		for (i = 0; i < n; i++)
			if (mp_varint_get(p, end, &pc))
				return -1;
		return 0;
	}
	if (id != (uint64_t)cap->nstacks + 1)
		return -1;
	if (mp_vec_reserve((void **)&cap->stack_at, &cap_st, (size_t)cap->nstacks + 2, sizeof(uint64_t)) ||
	    mp_vec_reserve((void **)&cap->frames, &cap->cap_frames, cap->nframes + n, sizeof(uint64_t)))
		return -ENOMEM;
	cap->cap_stacks = (uint32_t)cap_st;
	for (i = 0; i < n; i++) {
		if (mp_varint_get(p, end, &pc))
			return -1;
		cap->frames[cap->nframes + i] = pc;
	}
	/* stack_at holds nstacks + 1 offsets: the last is where the next begins */
	if (cap->nstacks == 0)
		cap->stack_at[0] = 0;
	cap->nframes += n;
	cap->stack_at[++cap->nstacks] = cap->nframes;
	return 0;
}

int mp__read_module_section(mp_capture_t *cap, const uint8_t **p, const uint8_t *end, int apply)
{
	uint64_t plen, bias, blen, nseg, v[3];
	const uint8_t *path, *bid;
	mp_capture_segment_t *segs = NULL;
	mp_capture_module_t *m;
	size_t cap_mod = cap->cap_modules;
	char *copy = NULL;
	uint8_t *bcopy = NULL;
	uint64_t lo = UINT64_MAX, hi = 0;
	uint32_t i;

	if (mp_varint_get(p, end, &plen) || plen > MP_MODULE_MAX_PATH || plen > (uint64_t)(end - *p))
		return -1;
	path = *p;
	*p += plen;
	if (mp_varint_get(p, end, &bias) || mp_varint_get(p, end, &blen) || blen > MP_MODULE_MAX_BUILD_ID ||
	    blen > (uint64_t)(end - *p))
		return -1;
	bid = *p;
	*p += blen;
	if (mp_varint_get(p, end, &nseg) || nseg == 0 || nseg > MP_MODULE_MAX_SEGMENTS)
		return -1;
	apply = apply && cap->module_defs++ >= cap->nmodules; /* else known already (rewind) */
	if (apply && !(segs = calloc(nseg, sizeof(*segs))))
		return -ENOMEM;
	for (i = 0; i < nseg; i++) {
		if (mp_varint_get(p, end, &v[0]) || mp_varint_get(p, end, &v[1]) || mp_varint_get(p, end, &v[2]) ||
		    v[2] > UINT32_MAX || v[1] > UINT64_MAX - v[0] || v[0] + v[1] > UINT64_MAX - bias) {
			free(segs);
			return -1;
		}
		if (bias + v[0] < lo)
			lo = bias + v[0];
		if (bias + v[0] + v[1] > hi)
			hi = bias + v[0] + v[1];
		if (segs) {
			segs[i].vaddr = v[0];
			segs[i].size = v[1];
			segs[i].flags = (uint32_t)v[2];
		}
	}
	if (!apply)
		return 0;
	copy = malloc(plen + 1);
	bcopy = blen ? malloc(blen) : NULL;
	if (!copy || (blen && !bcopy) ||
	    mp_vec_reserve((void **)&cap->modules, &cap_mod, (size_t)cap->nmodules + 1, sizeof(*cap->modules))) {
		free(segs);
		free(copy);
		free(bcopy);
		return -ENOMEM;
	}
	cap->cap_modules = (uint32_t)cap_mod;
	memcpy(copy, path, plen);
	copy[plen] = '\0';
	if (blen)
		memcpy(bcopy, bid, blen);
	m = &cap->modules[cap->nmodules++];
	m->path = copy;
	m->bias = bias;
	m->start = lo;
	m->end = hi;
	m->build_id = bcopy;
	m->build_id_len = (uint32_t)blen;
	m->segment_count = (uint32_t)nseg;
	m->segments = segs;
	return 0;
}

int mp__read_frame_section(mp_capture_t *cap, const uint8_t **p, const uint8_t *end, int apply, const char **why)
{
	static const char *const truncated[5] = {
		"bad interpreter frame definition: its frame id does not parse",
		"bad interpreter frame definition: its function does not parse",
		"bad interpreter frame definition: its file does not parse",
		"bad interpreter frame definition: its line does not parse",
		"bad interpreter frame definition: its kind does not parse",
	};
	uint64_t v[5];
	size_t cap_if = cap->cap_iframes;
	struct mp_iframe *f;
	int i;

	for (i = 0; i < 5; i++)
		if (mp_varint_get(p, end, &v[i])) {
			*why = truncated[i];
			return -1;
		}
	if (v[0] == 0 || v[0] >= UINT32_MAX) {
		*why = "bad interpreter frame definition: its frame id is 0 or beyond 32 bits";
		return -1;
	}
	if (v[1] > UINT32_MAX || v[2] > UINT32_MAX) {
		*why = v[1] > UINT32_MAX ? "bad interpreter frame definition: its function is beyond 32 bits"
					 : "bad interpreter frame definition: its file is beyond 32 bits";
		return -1;
	}
	if (v[3] > UINT32_MAX) {
		*why = "bad interpreter frame definition: its line is beyond 32 bits";
		return -1;
	}
	if (v[4] > MP_FRAME_KIND_MAX) {
		*why = "bad interpreter frame definition: its kind is unknown";
		return -1;
	}
	if (!apply || v[0] <= cap->niframes)
		return 0; /* checking, or known already (a rewind re-reads definitions) */
	if (v[0] != (uint64_t)cap->niframes + 1) {
		*why = "interpreter frame id out of sequence";
		return -1;
	}
	if (v[1] > cap->nstrings) {
		*why = "interpreter frame's function is not a defined string";
		return -1;
	}
	if (v[2] > cap->nstrings) {
		*why = "interpreter frame's file is not a defined string";
		return -1;
	}
	if (mp_vec_reserve((void **)&cap->iframes, &cap_if, (size_t)cap->niframes + 1, sizeof(*cap->iframes)))
		return -ENOMEM;
	cap->cap_iframes = (uint32_t)cap_if;
	f = &cap->iframes[cap->niframes++];
	f->function = (uint32_t)v[1];
	f->file = (uint32_t)v[2];
	f->line = (uint32_t)v[3];
	f->kind = (int)v[4];
	return 0;
}

int mp_capture_frame(const mp_capture_t *cap, uint64_t value, const char **function, const char **file,
		     uint32_t *line, int *kind)
{
	const struct mp_iframe *f;
	uint64_t id = value & ~MP_STACK_FRAME_TAG;

	if (!(value & MP_STACK_FRAME_TAG) || id == 0 || id > cap->niframes) {
		if (function)
			*function = "";
		if (file)
			*file = "";
		if (line)
			*line = 0;
		if (kind)
			*kind = MP_FRAME_UNKNOWN;
		return MP_ENOTFOUND;
	}
	f = &cap->iframes[id - 1];
	if (function)
		*function = f->function ? cap->strings[f->function - 1] : "";
	if (file)
		*file = f->file ? cap->strings[f->file - 1] : "";
	if (line)
		*line = f->line;
	if (kind)
		*kind = f->kind;
	return 0;
}

void mp_capture_set_frame_ops(mp_capture_t *cap, int all_frames, const char *user_code)
{
	if (!cap)
		return;
	cap->frame_ops = 1;
	cap->frame_ops_all = all_frames;
	cap->frame_ops_user = user_code;
}

/* The frame id stack's op names: its innermost Python frame of the user's
 * code, else of a package (memprof/pyfile.h; with all_frames, its
 * innermost Python frame); 0 when it has none. */
static uint32_t op_frame(const mp_capture_t *cap, uint32_t stack)
{
	const uint64_t *pcs;
	const char *fn, *file;
	uint32_t n, i, line, pkg = 0;
	int kind;

	if (mp_capture_stack(cap, stack, &pcs, &n))
		return 0;
	for (i = 0; i < n; i++) {
		if (!(pcs[i] & MP_STACK_FRAME_TAG) || mp_capture_frame(cap, pcs[i], &fn, &file, &line, &kind) ||
		    kind != MP_FRAME_PYTHON || !file[0])
			continue;
		if (cap->frame_ops_all)
			return (uint32_t)(pcs[i] & ~MP_STACK_FRAME_TAG);
		kind = mp_pyfile_kind(file, cap->frame_ops_user);
		if (kind == MP_PYFILE_USER)
			return (uint32_t)(pcs[i] & ~MP_STACK_FRAME_TAG);
		if (kind == MP_PYFILE_PACKAGE && !pkg)
			pkg = (uint32_t)(pcs[i] & ~MP_STACK_FRAME_TAG);
	}
	return pkg;
}

/* Frame f's label, "function (file:line)", made once; 0 or -ENOMEM. */
static int frame_label(mp_capture_t *cap, uint32_t f)
{
	size_t cap_l = cap->cap_frame_label, len;
	const char *fn, *file;
	uint32_t line;
	int kind;

	if (mp_vec_reserve((void **)&cap->frame_label, &cap_l, cap->niframes, sizeof(char *)))
		return -ENOMEM;
	if (cap_l > cap->cap_frame_label)
		memset(cap->frame_label + cap->cap_frame_label, 0, (cap_l - cap->cap_frame_label) * sizeof(char *));
	cap->cap_frame_label = (uint32_t)cap_l;
	if (cap->frame_label[f - 1])
		return 0;
	mp_capture_frame(cap, MP_STACK_FRAME_TAG | f, &fn, &file, &line, &kind);
	len = strlen(fn) + strlen(file) + 24;
	if (!(cap->frame_label[f - 1] = malloc(len)))
		return -ENOMEM;
	if (line)
		snprintf(cap->frame_label[f - 1], len, "%s (%s:%" PRIu32 ")", fn[0] ? fn : "?", file, line);
	else
		snprintf(cap->frame_label[f - 1], len, "%s (%s)", fn[0] ? fn : "?", file);
	return 0;
}

uint32_t mp__stack_op(mp_capture_t *cap, uint32_t stack)
{
	size_t cap_s = cap->cap_stack_op;
	uint32_t f;

	if (stack == 0 || stack > cap->nstacks)
		return 0;
	if (stack > cap->cap_stack_op) {
		if (mp_vec_reserve((void **)&cap->stack_op, &cap_s, cap->nstacks, sizeof(uint32_t)))
			return 0;
		memset(cap->stack_op + cap->cap_stack_op, 0, (cap_s - cap->cap_stack_op) * sizeof(uint32_t));
		cap->cap_stack_op = (uint32_t)cap_s;
	}
	if (!cap->stack_op[stack - 1]) {
		uint32_t op = MP_FRAME_OP_NONE;
		f = op_frame(cap, stack);
		if (f && !frame_label(cap, f))
			op = MP_FRAME_OP_BASE | f;
		else if (!f && (f = mp__stack_label_op(cap, stack)))
			op = f; /* no Python frame of the user's: the caller's label */
		cap->stack_op[stack - 1] = op;
	}
	return cap->stack_op[stack - 1] == MP_FRAME_OP_NONE ? 0 : cap->stack_op[stack - 1];
}

const char *mp__frame_op_label(const mp_capture_t *cap, uint32_t id)
{
	uint32_t f = id & ~MP_FRAME_OP_BASE;

	return f && f <= cap->cap_frame_label && cap->frame_label[f - 1] ? cap->frame_label[f - 1] : "";
}

void mp__stacks_release(mp_capture_t *cap)
{
	mp__labels_release(cap);
	for (uint32_t i = 0; i < cap->cap_frame_label; i++)
		free(cap->frame_label[i]);
	free(cap->frame_label);
	free(cap->stack_op);
	free(cap->iframes);
	uint32_t i;

	for (i = 0; i < cap->nmodules; i++) {
		free((char *)(uintptr_t)cap->modules[i].path);
		free((uint8_t *)(uintptr_t)cap->modules[i].build_id);
		free((mp_capture_segment_t *)(uintptr_t)cap->modules[i].segments);
	}
	free(cap->modules);
	free(cap->frames);
	free(cap->stack_at);
}

uint32_t mp_capture_stack_count(const mp_capture_t *cap)
{
	return cap->nstacks;
}

int mp_capture_stack(const mp_capture_t *cap, uint32_t id, const uint64_t **pcs, uint32_t *n)
{
	if (id == 0 || id > cap->nstacks) {
		*pcs = NULL;
		*n = 0;
		return MP_ENOTFOUND;
	}
	*pcs = cap->frames + cap->stack_at[id - 1];
	*n = (uint32_t)(cap->stack_at[id] - cap->stack_at[id - 1]);
	return 0;
}

size_t mp_capture_module_count(const mp_capture_t *cap)
{
	return cap->nmodules;
}

const mp_capture_module_t *mp_capture_module(const mp_capture_t *cap, size_t i)
{
	return i < cap->nmodules ? &cap->modules[i] : NULL;
}

const mp_capture_module_t *mp_capture_module_at(const mp_capture_t *cap, uint64_t pc)
{
	uint32_t i, s;

	for (i = cap->nmodules; i-- > 0;) {
		const mp_capture_module_t *m = &cap->modules[i];
		if (pc < m->start || pc >= m->end)
			continue;
		for (s = 0; s < m->segment_count; s++)
			if (pc - m->bias >= m->segments[s].vaddr &&
			    pc - m->bias - m->segments[s].vaddr < m->segments[s].size)
				return m;
	}
	return NULL;
}
