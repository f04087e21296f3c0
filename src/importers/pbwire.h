/* pbwire.h - a bounded, streaming reader and a small encoder for the
 * protobuf wire format (internal to memprof_import).
 *
 * Reading never holds a whole message: a pb_rd is a window of a file that is
 * refilled with pread() on demand, and a pb_cur walks the fields of one
 * message between two file offsets, skipping length-delimited fields without
 * reading them. Every length is checked against the end of its enclosing
 * message, so hostile input yields MP_ETRUNCATED / MP_ECORRUPT with the file
 * offset, never an out-of-bounds access.
 */
#ifndef MEMPROF_PBWIRE_H
#define MEMPROF_PBWIRE_H

#include <memprof/error.h>

#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* A window of a file. */
typedef struct pb_rd {
	int fd;           /* borrowed */
	uint64_t size;    /* file size */
	uint8_t *buf;     /* owned */
	size_t cap;       /* current buffer size */
	size_t max_cap;   /* the buffer grows up to this for one long string */
	uint64_t boff;    /* file offset of buf[0] */
	size_t blen;      /* valid bytes in buf */
	mp_diag_t *diag;  /* where errors go (borrowed, may be NULL) */
} pb_rd;

int pb_rd_init(pb_rd *r, int fd, uint64_t size, size_t cap, size_t max_cap);
void pb_rd_free(pb_rd *r);
/* Pointer to bytes [off, off+n) of the file; valid until the next call on r.
 * Fails with MP_ELIMIT when n exceeds max_cap, MP_ETRUNCATED past the end. */
int pb_rd_ptr(pb_rd *r, uint64_t off, size_t n, const uint8_t **out);

/* One message being walked: fields in [pos, end). */
typedef struct pb_cur {
	pb_rd *rd;
	uint64_t pos, end;
} pb_cur;

/* One field. For PB_LEN, start/len give the payload (already skipped by the
 * cursor); for the other types, val holds the value (I64/I32 raw bits). */
typedef struct pb_field {
	uint32_t num;
	int wt;
	uint64_t val;
	uint64_t start, len;
	uint64_t at; /* offset of the tag, for messages */
} pb_field;

/* Next field: 1 and fills f, 0 at the end of the message, or a negative code
 * (diag names the offset). `what` names the message for errors. */
int pb_next(pb_cur *c, pb_field *f, const char *what);

/* Decode a varint from memory [p, e): number of bytes used, 0 if it does not
 * end before e, -1 if longer than 10 bytes. */
int pb_varint_mem(const uint8_t *p, const uint8_t *e, uint64_t *v);

/* ------------------------------------------------------------------------ */
/* Encoder: a growable byte buffer. Errors are sticky (oom set once). */
typedef struct pb_buf {
	uint8_t *data;
	size_t len, cap;
	int oom;
} pb_buf;

void pb_buf_free(pb_buf *b);
void pb_put_raw(pb_buf *b, const void *p, size_t n);
void pb_put_varint(pb_buf *b, uint64_t v);
void pb_put_tag(pb_buf *b, uint32_t field, int wt);
void pb_put_uint(pb_buf *b, uint32_t field, uint64_t v);    /* varint field (int64 as two's complement) */
void pb_put_double(pb_buf *b, uint32_t field, double v);
void pb_put_bytes(pb_buf *b, uint32_t field, const void *p, size_t n);
void pb_put_str(pb_buf *b, uint32_t field, const char *s);
/* Length-delimited field whose payload is another buffer's content. */
void pb_put_msg(pb_buf *b, uint32_t field, const pb_buf *msg);
/* Bytes a varint takes. */
size_t pb_varint_size(uint64_t v);

#endif
