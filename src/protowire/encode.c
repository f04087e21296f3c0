/* encode.c - the protobuf encoder (see memprof/protowire.h): fields
 * appended to a growable buffer whose allocation failure is sticky. */
#include <memprof/protowire.h>
#include <memprof/vec.h>

#include <stdlib.h>
#include <string.h>

void mp_pw_buf_free(mp_pw_buf_t *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void mp_pw_put_raw(mp_pw_buf_t *b, const void *p, size_t n)
{
	if (b->oom || n == 0)
		return;
	if (MP_VEC_RESERVE(b->data, b->cap, b->len + n) < 0) {
		b->oom = 1;
		return;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

size_t mp_pw_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void mp_pw_put_varint(mp_pw_buf_t *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	mp_pw_put_raw(b, tmp, n);
}

void mp_pw_put_tag(mp_pw_buf_t *b, uint32_t field, int wt)
{
	mp_pw_put_varint(b, ((uint64_t)field << 3) | (uint64_t)wt);
}

void mp_pw_put_uint(mp_pw_buf_t *b, uint32_t field, uint64_t v)
{
	mp_pw_put_tag(b, field, MP_PW_VARINT);
	mp_pw_put_varint(b, v);
}

void mp_pw_put_double(mp_pw_buf_t *b, uint32_t field, double v)
{
	uint64_t bits;
	uint8_t tmp[8];

	memcpy(&bits, &v, 8);
	for (int i = 0; i < 8; i++)
		tmp[i] = (uint8_t)(bits >> (8 * i));
	mp_pw_put_tag(b, field, MP_PW_I64);
	mp_pw_put_raw(b, tmp, 8);
}

void mp_pw_put_bytes(mp_pw_buf_t *b, uint32_t field, const void *p, size_t n)
{
	mp_pw_put_tag(b, field, MP_PW_LEN);
	mp_pw_put_varint(b, n);
	mp_pw_put_raw(b, p, n);
}

void mp_pw_put_str(mp_pw_buf_t *b, uint32_t field, const char *s)
{
	mp_pw_put_bytes(b, field, s, strlen(s));
}

void mp_pw_put_msg(mp_pw_buf_t *b, uint32_t field, const mp_pw_buf_t *msg)
{
	if (msg->oom)
		b->oom = 1;
	mp_pw_put_bytes(b, field, msg->data, msg->len);
}
