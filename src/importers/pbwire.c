/* pbwire.c - see pbwire.h. */
#include "pbwire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pb_rd_init(pb_rd *r, int fd, uint64_t size, size_t cap, size_t max_cap)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->size = size;
	r->cap = cap;
	r->max_cap = max_cap < cap ? cap : max_cap;
	r->buf = malloc(cap);
	return r->buf ? 0 : MP_ENOMEM;
}

void pb_rd_free(pb_rd *r)
{
	free(r->buf);
	r->buf = NULL;
}

int pb_rd_ptr(pb_rd *r, uint64_t off, size_t n, const uint8_t **out)
{
	size_t want, got = 0;

	if (off > r->size || n > r->size - off)
		return mp_diag_set(r->diag, MP_ETRUNCATED, (int64_t)off, -1,
				   "%zu bytes announced at offset %llu run past the end of the file (%llu bytes)",
				   n, (unsigned long long)off, (unsigned long long)r->size);
	if (off >= r->boff && off - r->boff <= r->blen && n <= r->blen - (off - r->boff)) {
		*out = r->buf + (off - r->boff);
		return 0;
	}
	if (n > r->cap) {
		uint8_t *nb;
		size_t nc = r->cap;

		if (n > r->max_cap)
			return mp_diag_set(r->diag, MP_ELIMIT, (int64_t)off, -1,
					   "a field of %zu bytes at offset %llu exceeds the %zu-byte limit",
					   n, (unsigned long long)off, r->max_cap);
		while (nc < n)
			nc *= 2;
		if (nc > r->max_cap)
			nc = r->max_cap;
		nb = realloc(r->buf, nc);
		if (!nb)
			return MP_ENOMEM;
		r->buf = nb;
		r->cap = nc;
	}
	want = r->cap;
	if (want > r->size - off)
		want = (size_t)(r->size - off);
	while (got < want) {
		ssize_t k = pread(r->fd, r->buf + got, want - got, (off_t)(off + got));

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return mp_diag_set(r->diag, -errno, (int64_t)(off + got), -1, "read failed: %s",
					   strerror(errno));
		}
		if (k == 0)
			return mp_diag_set(r->diag, MP_ETRUNCATED, (int64_t)(off + got), -1,
					   "the file shrank while being read");
		got += (size_t)k;
	}
	r->boff = off;
	r->blen = got;
	*out = r->buf;
	return 0;
}

int pb_varint_mem(const uint8_t *p, const uint8_t *e, uint64_t *v)
{
	uint64_t x = 0;
	int i;

	for (i = 0; i < 10; i++) {
		if (p + i >= e)
			return 0;
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = x;
			return i + 1;
		}
	}
	return -1;
}

static int read_varint(pb_cur *c, uint64_t *v, const char *what)
{
	uint64_t avail = c->end - c->pos;
	const uint8_t *p;
	pb_rd *r = c->rd;
	int n, rc;

	if (avail > 10)
		avail = 10;
	/* fast path: the bytes are in the window */
	if (avail > 0 && c->pos >= r->boff && c->pos - r->boff + avail <= r->blen) {
		p = r->buf + (c->pos - r->boff);
		if (p[0] < 0x80) {
			*v = p[0];
			c->pos++;
			return 0;
		}
	} else {
		rc = pb_rd_ptr(c->rd, c->pos, (size_t)avail, &p);
		if (rc < 0)
			return rc;
	}
	n = pb_varint_mem(p, p + avail, v);
	if (n == 0)
		return mp_diag_set(c->rd->diag, MP_ETRUNCATED, (int64_t)c->pos, -1,
				   "%s: varint cut off by the end of the message", what);
	if (n < 0)
		return mp_diag_set(c->rd->diag, MP_ECORRUPT, (int64_t)c->pos, -1,
				   "%s: varint longer than 10 bytes", what);
	c->pos += (uint64_t)n;
	return 0;
}

int pb_next(pb_cur *c, pb_field *f, const char *what)
{
	uint64_t tag, need;
	const uint8_t *p;
	int rc, i;

	if (c->pos >= c->end)
		return 0;
	f->at = c->pos;
	rc = read_varint(c, &tag, what);
	if (rc < 0)
		return rc;
	f->num = (uint32_t)(tag >> 3);
	f->wt = (int)(tag & 7);
	if ((tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
		return mp_diag_set(c->rd->diag, MP_ECORRUPT, (int64_t)f->at, -1,
				   "%s: invalid field number %llu (not a protobuf message)", what,
				   (unsigned long long)(tag >> 3));
	f->val = 0;
	f->start = f->len = 0;
	switch (f->wt) {
	case PB_VARINT:
		rc = read_varint(c, &f->val, what);
		return rc < 0 ? rc : 1;
	case PB_I64:
	case PB_I32:
		need = f->wt == PB_I64 ? 8 : 4;
		if (c->end - c->pos < need)
			return mp_diag_set(c->rd->diag, MP_ETRUNCATED, (int64_t)c->pos, -1,
					   "%s: field %u cut off by the end of the message", what, f->num);
		rc = pb_rd_ptr(c->rd, c->pos, (size_t)need, &p);
		if (rc < 0)
			return rc;
		for (i = (int)need - 1; i >= 0; i--)
			f->val = (f->val << 8) | p[i];
		c->pos += need;
		return 1;
	case PB_LEN:
		rc = read_varint(c, &f->len, what);
		if (rc < 0)
			return rc;
		if (f->len > c->end - c->pos)
			return mp_diag_set(c->rd->diag, MP_ETRUNCATED, (int64_t)f->at, -1,
					   "%s: field %u announces %llu bytes but only %llu remain in the message",
					   what, f->num, (unsigned long long)f->len,
					   (unsigned long long)(c->end - c->pos));
		f->start = c->pos;
		c->pos += f->len;
		return 1;
	default:
		return mp_diag_set(c->rd->diag, MP_ECORRUPT, (int64_t)f->at, -1,
				   "%s: field %u has wire type %d, which XSpace does not use", what, f->num,
				   f->wt);
	}
}

/* ------------------------------------------------------------------------ */

void pb_buf_free(pb_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void pb_put_raw(pb_buf *b, const void *p, size_t n)
{
	if (b->oom || n == 0)
		return;
	if (b->len + n > b->cap) {
		size_t nc = b->cap ? b->cap : 256;
		uint8_t *nd;

		while (nc < b->len + n)
			nc *= 2;
		nd = realloc(b->data, nc);
		if (!nd) {
			b->oom = 1;
			return;
		}
		b->data = nd;
		b->cap = nc;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

size_t pb_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void pb_put_varint(pb_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	pb_put_raw(b, tmp, n);
}

void pb_put_tag(pb_buf *b, uint32_t field, int wt)
{
	pb_put_varint(b, ((uint64_t)field << 3) | (uint64_t)wt);
}

void pb_put_uint(pb_buf *b, uint32_t field, uint64_t v)
{
	pb_put_tag(b, field, PB_VARINT);
	pb_put_varint(b, v);
}

void pb_put_double(pb_buf *b, uint32_t field, double v)
{
	uint64_t bits;
	uint8_t tmp[8];
	int i;

	memcpy(&bits, &v, 8);
	for (i = 0; i < 8; i++)
		tmp[i] = (uint8_t)(bits >> (8 * i));
	pb_put_tag(b, field, PB_I64);
	pb_put_raw(b, tmp, 8);
}

void pb_put_bytes(pb_buf *b, uint32_t field, const void *p, size_t n)
{
	pb_put_tag(b, field, PB_LEN);
	pb_put_varint(b, n);
	pb_put_raw(b, p, n);
}

void pb_put_str(pb_buf *b, uint32_t field, const char *s)
{
	pb_put_bytes(b, field, s, strlen(s));
}

void pb_put_msg(pb_buf *b, uint32_t field, const pb_buf *msg)
{
	if (msg->oom)
		b->oom = 1;
	pb_put_bytes(b, field, msg->data, msg->len);
}
