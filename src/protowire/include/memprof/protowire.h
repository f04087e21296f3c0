/* memprof/protowire.h - the protobuf wire format: one decoder with two
 * faces, and an encoder.
 *
 * memprof reads protobuf messages without generated code where decoding
 * whole messages would be wasteful: XSpace profiles (*.xplane.pb, gigabytes,
 * of which a few fields matter) and a peek at an HloProto's name and id. The
 * decoding of one field's head (tag, then its value or its length) is
 * mp_pw_head() below; everything else walks messages with it:
 *
 *   - a cursor over a span of memory (mp_pw_cursor_t, mp_pw_next): the
 *     whole input is in memory (hlo/), or one field of a file was read
 *     whole (an XEvent in the xplane reader's hot loop);
 *   - a cursor over a file (mp_pw_fcursor_t, mp_pw_fnext) read through a
 *     window refilled with pread() (mp_pw_window_t): the file is never held
 *     in memory, and a length-delimited field is skipped without reading it.
 *
 * Both faces give the same fields for the same bytes, and fail the same way
 * at the same offset with the same sentence (tests/fuzz/fuzz_protowire.c
 * checks it): a varint longer than 10 bytes or above 2^64 - 1, a field
 * number of 0 or above 2^29 - 1, a wire type other than 0, 1, 2 or 5
 * (groups are not read) are MP_ECORRUPT; a field that runs past the end of
 * its message is MP_ETRUNCATED. The diag's offset is the offset of the
 * field's tag; its text names the message (the `what` of the cursor). Every
 * length is checked against the end of the enclosing message before it is
 * used, so hostile input never leads to an access out of bounds.
 *
 * Offsets are uint64_t: offsets in the input (file offsets for the file
 * face; for the memory face, what the cursor was told the span's first
 * byte is at).
 */
#ifndef MEMPROF_PROTOWIRE_H
#define MEMPROF_PROTOWIRE_H

#include <memprof/error.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Wire types (3 and 4, groups, are deprecated and refused). */
enum { MP_PW_VARINT = 0, MP_PW_I64 = 1, MP_PW_LEN = 2, MP_PW_I32 = 5 };

#define MP_PW_MAX_NUMBER 0x1fffffffu /* largest field number */
/* Longest field head: a tag, then a value or a length, 10 bytes each at most. */
#define MP_PW_HEAD_MAX 20

/* One field. */
typedef struct mp_pw_field {
	uint32_t num;        /* field number, 1 .. MP_PW_MAX_NUMBER */
	uint32_t wt;         /* wire type, MP_PW_* */
	uint64_t val;        /* VARINT: the value; I64, I32: the little-endian bits */
	uint64_t off;        /* offset of the field's tag */
	uint64_t start;      /* LEN: offset of the payload; 0 otherwise */
	uint64_t len;        /* LEN: length of the payload; 0 otherwise */
	const uint8_t *data; /* LEN from a memory cursor: the payload (borrowed
				from the cursor's span); NULL otherwise */
} mp_pw_field_t;

/* ---- the decoder ---------------------------------------------------------- */

/* Why mp_pw_head failed (mp_pw_fail says it in a sentence). */
enum {
	MP_PW_BAD_CUT = -1,    /* a varint runs past the end of the message */
	MP_PW_BAD_LONG = -2,   /* a varint of more than 10 bytes, or above 2^64 - 1 */
	MP_PW_BAD_NUMBER = -3, /* field number 0 or above MP_PW_MAX_NUMBER */
	MP_PW_BAD_TYPE = -4,   /* wire type 3, 4, 6 or 7 */
	MP_PW_BAD_FIXED = -5,  /* a fixed-width value runs past the end */
	MP_PW_BAD_LEN = -6,    /* a length runs past the end */
};

/* Varints of two bytes or more; see mp_pw_varint (*v is 0 on failure). */
int mp_pw_varint_long(const uint8_t *p, size_t avail, uint64_t *v);

/* Decode the varint at p, of which avail bytes may be read: the number of
 * bytes it takes (1 .. 10) and *v, 0 when it runs past avail, -1 when it is
 * longer than 10 bytes or does not fit in 64 bits. Inline for one byte,
 * which most tags and small values take. */
static inline int mp_pw_varint(const uint8_t *p, size_t avail, uint64_t *v)
{
	uint64_t x;
	int n;

	if (avail && p[0] < 0x80) {
		*v = p[0];
		return 1;
	}
	/* Through a local: were v's address given to the out-of-line call,
	 * the caller's whole field (v is one of its members) would have to
	 * live in memory instead of registers. */
	n = mp_pw_varint_long(p, avail, &x);
	*v = x;
	return n;
}

static inline uint64_t mp_pw_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

/* Decode the head of the field at p: its tag, then its value (VARINT, I64,
 * I32) or its payload's length (LEN). avail bytes may be read at p, and room
 * (>= avail) bytes are left in the message from p: lengths are checked
 * against room, everything else against avail. A caller that cannot give
 * the whole message gives avail = min(room, MP_PW_HEAD_MAX): a head never
 * takes more, so the outcome does not depend on how much more is readable.
 * Returns the head's length (> 0) and fills f->num, wt, val and len (not
 * off, start, data: the cursor's), or an MP_PW_BAD_* reason; then f->num
 * is the field number (0 when the tag itself is bad) and f->val, for
 * MP_PW_BAD_NUMBER the number read, for MP_PW_BAD_LEN the bytes left after
 * the head. */
static inline int mp_pw_head(const uint8_t *p, size_t avail, uint64_t room, mp_pw_field_t *f)
{
	uint64_t tag;
	int n = mp_pw_varint(p, avail, &tag), k;

	if (n <= 0) {
		f->num = 0;
		return n == 0 ? MP_PW_BAD_CUT : MP_PW_BAD_LONG;
	}
	f->num = (uint32_t)(tag >> 3);
	f->wt = (uint32_t)(tag & 7);
	f->val = 0;
	f->len = 0;
	if ((tag >> 3) - 1 >= MP_PW_MAX_NUMBER) { /* 0 wraps around */
		f->num = 0;
		f->val = tag >> 3;
		return MP_PW_BAD_NUMBER;
	}
	switch (f->wt) {
	case MP_PW_VARINT:
		k = mp_pw_varint(p + n, avail - (size_t)n, &f->val);
		if (k <= 0)
			return k == 0 ? MP_PW_BAD_CUT : MP_PW_BAD_LONG;
		return n + k;
	case MP_PW_LEN:
		k = mp_pw_varint(p + n, avail - (size_t)n, &f->len);
		if (k <= 0)
			return k == 0 ? MP_PW_BAD_CUT : MP_PW_BAD_LONG;
		n += k;
		if (f->len > room - (uint64_t)n) {
			f->val = room - (uint64_t)n;
			return MP_PW_BAD_LEN;
		}
		return n;
	case MP_PW_I64:
	case MP_PW_I32:
		k = f->wt == MP_PW_I64 ? 8 : 4;
		if (avail - (size_t)n < (size_t)k)
			return MP_PW_BAD_FIXED;
		f->val = mp_pw_le(p + n, k);
		return n + k;
	default:
		return MP_PW_BAD_TYPE;
	}
}

/* The code of an MP_PW_BAD_* reason: MP_ETRUNCATED when the message ends
 * too soon, MP_ECORRUPT when its bytes cannot be protobuf. */
static inline int mp_pw_bad_code(int bad)
{
	return bad == MP_PW_BAD_CUT || bad == MP_PW_BAD_FIXED || bad == MP_PW_BAD_LEN ? MP_ETRUNCATED : MP_ECORRUPT;
}

/* Say why mp_pw_head(p, avail, room) failed on the field whose tag is at
 * offset off: fills diag (may be NULL) with mp_pw_bad_code's code, off and
 * a sentence that starts with what. It decodes the head again to say what
 * is wrong, so that a cursor's field never has its address taken and its
 * caller can keep it in registers. */
void mp_pw_fail(mp_diag_t *diag, const char *what, const uint8_t *p, size_t avail, uint64_t room, uint64_t off);

/* ---- face 1: a span of memory --------------------------------------------- */

/* The fields of one message in [p, end). */
typedef struct mp_pw_cursor {
	const uint8_t *p, *end;
	uint64_t bias;    /* the offset of byte q is (uintptr_t)q + bias (modulo
			     2^64): one addition per field */
	const char *what; /* the message's name, for errors (borrowed) */
	mp_diag_t *diag;  /* where errors go (borrowed, may be NULL) */
} mp_pw_cursor_t;

/* Walk the message in data[0, len), whose first byte is at offset off.
 * Nothing is copied: data must outlive the cursor and its fields. data may
 * be NULL when len is 0 (an empty buffer). */
static inline void mp_pw_cursor_init(mp_pw_cursor_t *c, const uint8_t *data, size_t len, uint64_t off,
				     const char *what, mp_diag_t *diag)
{
	if (!data)
		data = (const uint8_t *)""; /* no arithmetic on a null pointer */
	c->p = data;
	c->end = data + len;
	c->bias = off - (uint64_t)(uintptr_t)data;
	c->what = what;
	c->diag = diag;
}

/* Walk the payload of f, a LEN field that c gave, as a message named what. */
static inline void mp_pw_cursor_sub(mp_pw_cursor_t *sub, const mp_pw_cursor_t *c, const mp_pw_field_t *f,
				    const char *what)
{
	sub->p = f->data;
	sub->end = f->data + f->len;
	sub->bias = c->bias;
	sub->what = what;
	sub->diag = c->diag;
}

/* Next field: 1 and *f, 0 at the end of the message, or MP_ETRUNCATED /
 * MP_ECORRUPT with the diag filled (the cursor then stays on the bad
 * field); *f is all zero unless 1 is returned. A LEN field's payload is
 * skipped; walk it with mp_pw_cursor_sub. */
static inline int mp_pw_next(mp_pw_cursor_t *c, mp_pw_field_t *f)
{
	const uint8_t *p = c->p;
	size_t room = (size_t)(c->end - p);
	int n;

	if (!room) {
		*f = (mp_pw_field_t){0};
		return 0;
	}
	n = mp_pw_head(p, room, room, f);
	f->off = (uint64_t)(uintptr_t)p + c->bias;
	if (n < 0) {
		mp_pw_fail(c->diag, c->what, p, room, room, f->off);
		*f = (mp_pw_field_t){0};
		return mp_pw_bad_code(n);
	}
	p += n;
	f->data = NULL;
	f->start = 0;
	if (f->wt == MP_PW_LEN) {
		f->data = p;
		f->start = f->off + (uint64_t)n;
		p += f->len;
	}
	c->p = p;
	return 1;
}

/* ---- face 2: a file read through a window --------------------------------- */

/* A window of a file: the bytes [boff, boff + blen) are in buf. */
typedef struct mp_pw_window {
	int fd;          /* borrowed */
	uint64_t size;   /* the file's size */
	uint8_t *buf;    /* owned */
	size_t cap;      /* buf's size */
	size_t max_cap;  /* buf grows up to this for one long string */
	uint64_t boff;   /* file offset of buf[0] */
	size_t blen;     /* valid bytes in buf */
	mp_diag_t *diag; /* where errors go (borrowed, may be NULL) */
} mp_pw_window_t;

/* A window of cap bytes (at least MP_PW_HEAD_MAX) over the size bytes of
 * fd, growing up to max_cap for mp_pw_window_get. Returns 0 or MP_ENOMEM;
 * free with mp_pw_window_free(). */
int mp_pw_window_init(mp_pw_window_t *w, int fd, uint64_t size, size_t cap, size_t max_cap);
void mp_pw_window_free(mp_pw_window_t *w);
/* Point the window at another file (or the same one, changed), keeping its
 * buffer: nothing read before is used again. */
void mp_pw_window_retarget(mp_pw_window_t *w, int fd, uint64_t size);
/* Bytes [off, off + n) of the file in *out (borrowed: valid until the next
 * call on w). Fails with MP_ETRUNCATED past the end of the file, MP_ELIMIT
 * when n exceeds max_cap, -errno when pread fails (diag filled), or
 * MP_ENOMEM. */
int mp_pw_window_get(mp_pw_window_t *w, uint64_t off, size_t n, const uint8_t **out);

/* The fields of one message in the file bytes [pos, end). */
typedef struct mp_pw_fcursor {
	mp_pw_window_t *w; /* borrowed; errors go to w->diag */
	uint64_t pos, end;
	const char *what;  /* the message's name, for errors (borrowed) */
} mp_pw_fcursor_t;

static inline void mp_pw_fcursor_init(mp_pw_fcursor_t *c, mp_pw_window_t *w, uint64_t start, uint64_t end,
				      const char *what)
{
	c->w = w;
	c->pos = start;
	c->end = end;
	c->what = what;
}

/* Walk the payload of f, a LEN field that c gave, as a message named what. */
static inline void mp_pw_fcursor_sub(mp_pw_fcursor_t *sub, const mp_pw_fcursor_t *c, const mp_pw_field_t *f,
				     const char *what)
{
	mp_pw_fcursor_init(sub, c->w, f->start, f->start + f->len, what);
}

/* Next field, as mp_pw_next (f->data is NULL: read a payload with
 * mp_pw_window_get(c->w, f->start, f->len, ...)); also the window's
 * errors. Reads at most MP_PW_HEAD_MAX bytes of the file. */
int mp_pw_fnext(mp_pw_fcursor_t *c, mp_pw_field_t *f);

/* ---- the encoder ---------------------------------------------------------- */

/* A growable byte buffer. Start from {0}. An allocation failure sets oom
 * and makes every later call a no-op, so a message is built without
 * checks and oom is tested once at the end. */
typedef struct mp_pw_buf {
	uint8_t *data; /* owned */
	size_t len, cap;
	int oom;
} mp_pw_buf_t;

/* Free b's bytes and reset it to {0}. */
void mp_pw_buf_free(mp_pw_buf_t *b);
void mp_pw_put_raw(mp_pw_buf_t *b, const void *p, size_t n);
void mp_pw_put_varint(mp_pw_buf_t *b, uint64_t v);
void mp_pw_put_tag(mp_pw_buf_t *b, uint32_t field, int wt);
/* A VARINT field (an int64 as its two's complement). */
void mp_pw_put_uint(mp_pw_buf_t *b, uint32_t field, uint64_t v);
/* An I64 field holding a double. */
void mp_pw_put_double(mp_pw_buf_t *b, uint32_t field, double v);
void mp_pw_put_bytes(mp_pw_buf_t *b, uint32_t field, const void *p, size_t n);
void mp_pw_put_str(mp_pw_buf_t *b, uint32_t field, const char *s);
/* A LEN field whose payload is msg's content (msg's oom carries over). */
void mp_pw_put_msg(mp_pw_buf_t *b, uint32_t field, const mp_pw_buf_t *msg);
/* Bytes the varint of v takes. */
size_t mp_pw_varint_size(uint64_t v);

#ifdef __cplusplus
}
#endif
#endif
