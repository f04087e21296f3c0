/* pickle_vm.c - the pickle reader's opcodes (see memprof/pickle.h).
 *
 * Bytes come through a 1 MiB buffer refilled from the caller's read
 * function; an opcode's argument is always contiguous in the buffer (a
 * string longer than the buffer is gathered in a side buffer), so each
 * opcode reads its bytes with one bounds check. Offsets in errors are
 * offsets of the opcode in the stream the read function gives (for a
 * gzip file: the decompressed stream). */
#include "pickle_impl.h"

#include <stdlib.h>
#include <string.h>

/* Make n bytes available at p->buf + p->pos (n <= PK_BUF). 0, or
 * MP_ETRUNCATED / the read function's error. */
static int fill(pk_t *p, size_t n)
{
	if (p->len - p->pos >= n)
		return 0;
	memmove(p->buf, p->buf + p->pos, p->len - p->pos);
	p->base += p->pos;
	p->len -= p->pos;
	p->pos = 0;
	while (p->len < n && !p->eof) {
		long got = p->read(p->io, p->buf + p->len, PK_BUF - p->len, p->diag);
		if (got < 0)
			return (int)got;
		if (got == 0)
			p->eof = 1;
		p->len += (size_t)got;
	}
	if (p->len < n)
		return pk_fail(p, MP_ETRUNCATED, "the file ends inside this opcode (%zu of the %zu bytes it needs are "
			       "there); the pickle is truncated", p->len, n);
	return 0;
}

static int take(pk_t *p, size_t n, const uint8_t **out)
{
	int rc;

	if (p->len - p->pos < n && (rc = fill(p, n)) < 0)
		return rc;
	*out = p->buf + p->pos;
	p->pos += n;
	return 0;
}

/* n bytes that may exceed the buffer. */
static int take_long(pk_t *p, uint64_t n, const uint8_t **out)
{
	size_t have = 0;

	if (n <= PK_BUF)
		return take(p, (size_t)n, out);
	if (n > PK_MAX_STRING)
		return pk_fail(p, MP_ELIMIT, "a string of %llu bytes (memprof reads up to %u)", (unsigned long long)n,
			       PK_MAX_STRING);
	if (n > p->bigcap) {
		uint8_t *nb = realloc(p->big, (size_t)n);
		if (!nb)
			return pk_fail(p, MP_ENOMEM, "out of memory");
		p->big = nb;
		p->bigcap = (size_t)n;
	}
	while (have < n) {
		size_t chunk = n - have < PK_BUF ? (size_t)(n - have) : PK_BUF;
		const uint8_t *src;
		int rc = take(p, chunk, &src);
		if (rc < 0)
			return rc;
		memcpy(p->big + have, src, chunk);
		have += chunk;
	}
	*out = p->big;
	return 0;
}

static uint64_t le(const uint8_t *b, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static int push_int(pk_t *p, int64_t i)
{
	mp_pk_value_t v = {.kind = MP_PK_INT, .u.i = i};
	return pk_push(p, &v);
}

/* LONG1 / LONG4: little-endian two's complement of n bytes, any length
 * the protocol allows (LONG1 up to 255, LONG4 up to PK_MAX_LONG here). A
 * value that fits int64 is an INT whatever its encoding (a pickler may pad
 * with sign bytes); one that does not is a BIGINT described by its sign,
 * its uint64 value when it has one, and its shortest length: the bytes
 * themselves are not kept, since nothing in a snapshot can use them. */
static int push_long(pk_t *p, uint64_t n)
{
	const uint8_t *b = NULL;
	mp_pk_value_t v = {.kind = MP_PK_BIGINT};
	uint8_t ext;
	size_t m;
	uint64_t u;
	int rc;

	if (n > INT32_MAX) /* LONG4's length is a signed 32-bit count (Python refuses it too) */
		return pk_fail(p, MP_EFORMAT, "LONG4 with a negative length (%lld)", (long long)(int32_t)(uint32_t)n);
	if (n > PK_MAX_LONG)
		return pk_fail(p, MP_ELIMIT, "an integer of %llu bytes (memprof reads integers up to %u bytes)",
			       (unsigned long long)n, PK_MAX_LONG);
	if ((rc = take(p, (size_t)n, &b)) < 0)
		return rc;
	if (n == 0) /* Python writes 0 as LONG1 with no bytes */
		return push_int(p, 0);
	ext = b[n - 1] & 0x80 ? 0xff : 0x00;
	/* drop the bytes that only repeat the sign: m is the shortest length */
	for (m = (size_t)n; m > 1 && b[m - 1] == ext && (b[m - 2] & 0x80) == (ext & 0x80); m--)
		;
	if (m <= 8) {
		u = le(b, (unsigned)m);
		if (m < 8 && ext)
			u |= ~(uint64_t)0 << (8 * m);
		return push_int(p, (int64_t)u);
	}
	v.big_neg = ext != 0;
	v.big_len = (uint32_t)m;
	if (!ext && m == 9 && b[8] == 0) { /* 2**63 .. 2**64-1: bit 63 set, nothing above */
		v.big_u64 = 1;
		v.u.u = le(b, 8);
	}
	return pk_push(p, &v);
}

static int push_str(pk_t *p, uint64_t n, uint8_t kind)
{
	const uint8_t *b = NULL;
	mp_pk_value_t v = {.kind = kind};
	int rc;

	if ((rc = take_long(p, n, &b)) < 0)
		return rc;
	v.u.str = mp_strtab_intern(p->strings, (const char *)b, strnlen((const char *)b, (size_t)n));
	if (v.u.str == UINT32_MAX)
		return pk_fail(p, MP_ENOMEM, "out of memory (strings)");
	return pk_push(p, &v);
}

static int push_float(pk_t *p)
{
	const uint8_t *b = NULL;
	mp_pk_value_t v = {.kind = MP_PK_FLOAT};
	uint64_t u = 0;
	int rc;

	if ((rc = take(p, 8, &b)) < 0)
		return rc;
	for (int i = 0; i < 8; i++)
		u = u << 8 | b[i]; /* big-endian */
	memcpy(&v.u.f, &u, sizeof(u));
	return pk_push(p, &v);
}

/* A new container: asks the handler where it stands. */
static int open_obj(pk_t *p, mp_pk_obj_t *o)
{
	mp_pk_obj_t *parent, *alt;
	const mp_pk_value_t *key;

	if (!p->h || !p->h->open)
		return 0;
	pk_guess_parent(p, &parent, &key, &alt);
	return p->h->open(p->h->ctx, parent, key, alt, o, p->diag);
}

static int push_new(pk_t *p, uint8_t kind)
{
	mp_pk_obj_t *o = pk_obj_new(p, kind);
	mp_pk_value_t v = {.kind = kind};
	int rc;

	if (!o)
		return pk_fail(p, MP_ENOMEM, "out of memory");
	v.u.obj = o;
	o->refs = 1;
	if (kind != MP_PK_TUPLE && (rc = open_obj(p, o)) < 0) {
		pk_unref(p, &v);
		return rc;
	}
	if ((rc = pk_push(p, &v)) < 0)
		pk_unref(p, &v);
	return rc;
}

/* Attach value (and key, for a dict) to obj: stored, or handed to the
 * handler and released when obj is streamed. The references move. */
static int attach(pk_t *p, mp_pk_obj_t *obj, const mp_pk_value_t *key, const mp_pk_value_t *value)
{
	int rc = 0;

	if (!obj->stream) {
		if (key && (rc = pk_obj_add(p, obj, key)) < 0)
			return rc;
		return pk_obj_add(p, obj, value);
	}
	if (p->h && p->h->item && (rc = p->h->item(p->h->ctx, obj, key, value, p->diag)) < 0)
		pk_note_offset(p);
	if (rc == 0)
		rc = pk_memo_tokenize(p, value);
	if (pk_is_obj(value))
		pk_memo_release(p, value->u.obj);
	if (key)
		pk_unref(p, key);
	pk_unref(p, value);
	return rc;
}

static int want_container(pk_t *p, size_t at, uint8_t kind, const char *op)
{
	if (at >= p->sp || p->st[at].kind != kind)
		return pk_fail(p, MP_EFORMAT, "%s needs a %s below its values", op, kind == MP_PK_LIST ? "list" : "dict");
	return 0;
}

/* APPEND, APPENDS, SETITEM, SETITEMS. */
static int op_append(pk_t *p, int many, int dict)
{
	size_t first, target, step = dict ? 2 : 1;
	int rc = 0;

	if (many) {
		if ((rc = pk_find_mark(p, &first)) < 0)
			return rc;
		target = first - 1 >= 1 ? first - 2 : SIZE_MAX;
	} else {
		if (p->sp < step + 1)
			return pk_fail(p, MP_EFORMAT, "%s with too few values on the stack", dict ? "SETITEM" : "APPEND");
		first = p->sp - step;
		target = first - 1;
	}
	if ((p->sp - first) % step)
		return pk_fail(p, MP_EFORMAT, "SETITEMS with an odd number of values");
	for (size_t i = first; i < p->sp; i++)
		if (p->st[i].kind == MP_PK_MARK)
			return pk_fail(p, MP_EFORMAT, "a MARK among the values of %s", dict ? "SETITEM" : "APPEND");
	if ((rc = want_container(p, target, dict ? MP_PK_DICT : MP_PK_LIST, dict ? "SETITEM(S)" : "APPEND(S)")) < 0)
		return rc;
	for (size_t i = first; i < p->sp; i += step) {
		if (rc == 0)
			rc = attach(p, p->st[target].u.obj, dict ? &p->st[i] : NULL, &p->st[i + step - 1]);
		else {
			if (dict)
				pk_unref(p, &p->st[i]);
			pk_unref(p, &p->st[i + step - 1]);
		}
	}
	if (many)
		pk_drop_mark(p, first);
	else
		p->sp = first;
	return rc;
}

/* TUPLE, LIST, DICT (from a MARK) and TUPLE1..3 (from the top n). */
static int op_build(pk_t *p, uint8_t kind, int n)
{
	size_t first;
	mp_pk_obj_t *o;
	mp_pk_value_t v = {.kind = kind};
	int rc;

	if (n < 0) {
		if ((rc = pk_find_mark(p, &first)) < 0)
			return rc;
	} else {
		if (p->sp < (size_t)n)
			return pk_fail(p, MP_EFORMAT, "TUPLE%d with too few values on the stack", n);
		first = p->sp - (size_t)n;
	}
	if (kind == MP_PK_DICT && (p->sp - first) % 2)
		return pk_fail(p, MP_EFORMAT, "DICT with an odd number of values");
	for (size_t i = first; i < p->sp; i++)
		if (p->st[i].kind == MP_PK_MARK)
			return pk_fail(p, MP_EFORMAT, "a MARK among the values of a tuple");
	if (!(o = pk_obj_new(p, kind)))
		return pk_fail(p, MP_ENOMEM, "out of memory");
	o->refs = 1;
	v.u.obj = o;
	for (size_t i = first; i < p->sp; i++)
		if ((rc = pk_obj_add(p, o, &p->st[i])) < 0)
			return rc; /* the rest is freed with the live list */
	if (n < 0)
		pk_drop_mark(p, first);
	else
		p->sp = first;
	return pk_push(p, &v);
}

static const char *refused_name(uint8_t op)
{
	switch (op) {
	case 'c': return "GLOBAL";
	case 0x93: return "STACK_GLOBAL";
	case 'R': return "REDUCE";
	case 'b': return "BUILD";
	case 'i': return "INST";
	case 'o': return "OBJ";
	case 0x81: return "NEWOBJ";
	case 0x92: return "NEWOBJ_EX";
	case 0x82: case 0x83: case 0x84: return "EXT";
	case 'P': case 'Q': return "PERSID";
	case 0x97: case 0x98: return "an out-of-band buffer";
	default: return NULL;
	}
}

static int refuse(pk_t *p, uint8_t op)
{
	const char *name = refused_name(op);
	char what[160] = "";

	if (op == 'c') { /* name the global: "module name\n" twice */
		size_t avail, k;
		int nl = 0;

		(void)fill(p, 120); /* as much as there is; the diag is set below */
		avail = p->len - p->pos < 120 ? p->len - p->pos : 120;
		memcpy(what, p->buf + p->pos, avail);
		what[avail] = '\0';
		for (k = 0; k < avail; k++)
			if (what[k] == '\n' && nl++ == 0)
				what[k] = ' ';
			else if ((unsigned char)what[k] < 0x20 || (unsigned char)what[k] > 0x7e)
				break;
		what[k] = '\0';
	}
	if (name)
		return pk_fail(p, MP_EFORMAT, "opcode %s (0x%02x)%s%s%s would import or call Python code; memprof "
			       "reads plain data only and refuses it (a memory snapshot needs none)", name, op,
			       what[0] ? " '" : "", what, what[0] ? "'" : "");
	if (strchr("IFLSVpg", op) && op)
		return pk_fail(p, MP_EFORMAT, "text opcode '%c' of pickle protocol 0/1; memprof reads protocols 2 to 5", op);
	if (op >= 0x8f && op <= 0x91)
		return pk_fail(p, MP_EFORMAT, "opcode 0x%02x builds a set; a memory snapshot holds none", op);
	return pk_fail(p, MP_EFORMAT, "unknown opcode 0x%02x", op);
}

/* One opcode. Returns 0, 1 at STOP, or an error. */
static int step(pk_t *p)
{
	const uint8_t *b = NULL;
	mp_pk_value_t v = {0};
	uint8_t op;
	int rc;

	p->op_off = p->base + p->pos;
	if (p->pos == p->len && (rc = fill(p, 1)) < 0)
		return rc == MP_ETRUNCATED ? pk_fail(p, MP_ETRUNCATED, "the file ends before the pickle's STOP "
						     "opcode; it is truncated") : rc;
	p->op_off = p->base + p->pos;
	op = p->buf[p->pos++];
	switch (op) {
	case 0x80: /* PROTO */
		if ((rc = take(p, 1, &b)) < 0)
			return rc;
		if (b[0] < 2 || b[0] > 5)
			return pk_fail(p, MP_EVERSION, "pickle protocol %u; memprof reads protocols 2 to 5", b[0]);
		return 0;
	case 0x95: /* FRAME: its length only helps readers that prefetch */
		return take(p, 8, &b);
	case '.': /* STOP */
		if (!p->sp || p->st[p->sp - 1].kind == MP_PK_MARK)
			return pk_fail(p, MP_EFORMAT, "STOP with nothing on the stack");
		if (p->h && p->h->item && (rc = p->h->item(p->h->ctx, NULL, NULL, &p->st[p->sp - 1], p->diag)) < 0)
			return pk_note_offset(p), rc;
		return 1;
	case '(': return pk_push_mark(p);
	case '0': /* POP */
		if (!p->sp)
			return pk_fail(p, MP_EFORMAT, "POP with an empty stack");
		if (p->st[p->sp - 1].kind == MP_PK_MARK)
			p->nmarks--;
		pk_unref(p, &p->st[--p->sp]);
		return 0;
	case '1': { /* POP_MARK */
		size_t first;
		if ((rc = pk_find_mark(p, &first)) < 0)
			return rc;
		for (size_t i = first; i < p->sp; i++)
			pk_unref(p, &p->st[i]);
		pk_drop_mark(p, first);
		return 0;
	}
	case '2': /* DUP */
		if (!p->sp || p->st[p->sp - 1].kind == MP_PK_MARK)
			return pk_fail(p, MP_EFORMAT, "DUP with no value on top");
		v = p->st[p->sp - 1];
		pk_ref(&v);
		if ((rc = pk_push(p, &v)) < 0)
			pk_unref(p, &v);
		return rc;
	case 'N': v.kind = MP_PK_NONE; return pk_push(p, &v);
	case 0x88: case 0x89: v.kind = MP_PK_BOOL; v.u.i = op == 0x88; return pk_push(p, &v);
	case 'J': return (rc = take(p, 4, &b)) < 0 ? rc : push_int(p, (int32_t)(uint32_t)le(b, 4));
	case 'K': return (rc = take(p, 1, &b)) < 0 ? rc : push_int(p, b[0]);
	case 'M': return (rc = take(p, 2, &b)) < 0 ? rc : push_int(p, (int64_t)le(b, 2));
	case 0x8a: return (rc = take(p, 1, &b)) < 0 ? rc : push_long(p, b[0]);
	case 0x8b: return (rc = take(p, 4, &b)) < 0 ? rc : push_long(p, le(b, 4));
	case 'G': return push_float(p);
	case 0x8c: case 'U': case 'C': /* SHORT_BINUNICODE, SHORT_BINSTRING, SHORT_BINBYTES */
		return (rc = take(p, 1, &b)) < 0 ? rc : push_str(p, b[0], op == 'C' ? MP_PK_BYTES : MP_PK_STR);
	case 'X': case 'T': case 'B': /* BINUNICODE, BINSTRING, BINBYTES */
		return (rc = take(p, 4, &b)) < 0 ? rc : push_str(p, le(b, 4), op == 'B' ? MP_PK_BYTES : MP_PK_STR);
	case 0x8d: case 0x8e: case 0x96: /* BINUNICODE8, BINBYTES8, BYTEARRAY8 */
		return (rc = take(p, 8, &b)) < 0 ? rc : push_str(p, le(b, 8), op == 0x8d ? MP_PK_STR : MP_PK_BYTES);
	case '}': return push_new(p, MP_PK_DICT);
	case ']': return push_new(p, MP_PK_LIST);
	case ')': return push_new(p, MP_PK_TUPLE);
	case 'a': return op_append(p, 0, 0);
	case 'e': return op_append(p, 1, 0);
	case 's': return op_append(p, 0, 1);
	case 'u': return op_append(p, 1, 1);
	case 't': return op_build(p, MP_PK_TUPLE, -1);
	case 'l': return op_build(p, MP_PK_LIST, -1);
	case 'd': return op_build(p, MP_PK_DICT, -1);
	case 0x85: case 0x86: case 0x87: return op_build(p, MP_PK_TUPLE, op - 0x84);
	case 'q': return (rc = take(p, 1, &b)) < 0 ? rc : pk_memo_put(p, b[0]);
	case 'r': return (rc = take(p, 4, &b)) < 0 ? rc : pk_memo_put(p, le(b, 4));
	case 0x94: return pk_memo_put(p, p->nmemo); /* MEMOIZE */
	case 'h': return (rc = take(p, 1, &b)) < 0 ? rc : pk_memo_get(p, b[0]);
	case 'j': return (rc = take(p, 4, &b)) < 0 ? rc : pk_memo_get(p, le(b, 4));
	default: return refuse(p, op);
	}
}

int mp_pickle_read(mp_pk_read_fn read, void *io, struct mp_strtab *strings, const mp_pk_handler_t *h,
		   mp_diag_t *diag)
{
	pk_t p;
	int rc = 0;

	memset(&p, 0, sizeof(p));
	p.read = read;
	p.io = io;
	p.diag = diag;
	p.h = h;
	p.strings = strings;
	if (!(p.buf = malloc(PK_BUF)))
		return mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
	while ((rc = step(&p)) == 0)
		if (p.oom) {
			rc = pk_fail(&p, MP_ENOMEM, "out of memory");
			break;
		}
	pk_free_all(&p);
	return rc == 1 ? 0 : rc;
}
