/* decode.c - the decoder's out-of-line parts (see memprof/protowire.h):
 * varints longer than a byte, and the sentence for a field that cannot be
 * read, the same whichever face read it. */
#include <memprof/protowire.h>

int mp_pw_varint_long(const uint8_t *p, size_t avail, uint64_t *v)
{
	size_t lim = avail < 10 ? avail : 10;
	uint64_t x = 0;

	for (size_t i = 0; i < lim; i++) {
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] < 0x80) {
			/* The tenth byte holds bit 63 alone: more is a value
			 * no 64-bit field can have, not a bigger number. */
			if (i == 9 && p[i] > 1)
				return -1;
			*v = x;
			return (int)i + 1;
		}
	}
	return lim == 10 ? -1 : 0;
}

int mp_pw_fail(mp_diag_t *diag, int bad, const char *what, const mp_pw_field_t *f)
{
	int64_t off = (int64_t)f->off;

	switch (bad) {
	case MP_PW_BAD_CUT:
		if (!f->num)
			return mp_diag_set(diag, MP_ETRUNCATED, off, -1,
					   "%s: the message ends inside a field's tag", what);
		return mp_diag_set(diag, MP_ETRUNCATED, off, -1, "%s: field %u: the message ends inside its varint",
				   what, f->num);
	case MP_PW_BAD_LONG:
		return mp_diag_set(diag, MP_ECORRUPT, off, -1,
				   "%s: a varint longer than 10 bytes or above 2^64 (not a protobuf message)", what);
	case MP_PW_BAD_NUMBER:
		return mp_diag_set(diag, MP_ECORRUPT, off, -1, "%s: invalid field number %llu (not a protobuf message)",
				   what, (unsigned long long)f->val);
	case MP_PW_BAD_TYPE:
		return mp_diag_set(diag, MP_ECORRUPT, off, -1,
				   "%s: field %u has wire type %u (groups and unknown types are not read)", what,
				   f->num, f->wt);
	case MP_PW_BAD_FIXED:
		return mp_diag_set(diag, MP_ETRUNCATED, off, -1, "%s: field %u: the message ends inside its %d-byte value",
				   what, f->num, f->wt == MP_PW_I64 ? 8 : 4);
	default: /* MP_PW_BAD_LEN */
		return mp_diag_set(diag, MP_ETRUNCATED, off, -1,
				   "%s: field %u announces %llu bytes but only %llu remain in the message", what,
				   f->num, (unsigned long long)f->len, (unsigned long long)f->val);
	}
}
