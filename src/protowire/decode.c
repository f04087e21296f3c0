/* decode.c - the decoder's out-of-line parts (see memprof/protowire.h):
 * varints longer than a byte, and the sentence for a field that cannot be
 * read, the same whichever face read it (both give it the same bytes). */
#include <memprof/format/varint.h>
#include <memprof/protowire.h>

#include <stdio.h>

int mp_pw_varint_long(const uint8_t *p, size_t avail, uint64_t *v)
{
	const uint8_t *q = p;

	if (mp_varint_get(&q, p + (avail < 10 ? avail : 10), v) == 0)
		return (int)(q - p);
	/* Failed: cut short when fewer than 10 bytes were there (a value
	 * above 2^64 - 1 needs a tenth byte), else too long or too big. */
	*v = 0;
	return avail < 10 ? 0 : -1;
}

void mp_pw_fail(mp_diag_t *diag, const char *what, const uint8_t *p, size_t avail, uint64_t room, uint64_t off)
{
	mp_pw_field_t f;
	int bad = mp_pw_head(p, avail, room, &f), code = mp_pw_bad_code(bad);
	char why[160];

	switch (bad) {
	case MP_PW_BAD_CUT:
		if (!f.num)
			snprintf(why, sizeof(why), "the message ends inside a field's tag");
		else
			snprintf(why, sizeof(why), "field %u: the message ends inside its varint", f.num);
		break;
	case MP_PW_BAD_LONG:
		snprintf(why, sizeof(why), "a varint longer than 10 bytes or above 2^64 (not a protobuf message)");
		break;
	case MP_PW_BAD_NUMBER:
		snprintf(why, sizeof(why), "invalid field number %llu (not a protobuf message)",
			 (unsigned long long)f.val);
		break;
	case MP_PW_BAD_TYPE:
		snprintf(why, sizeof(why), "field %u has wire type %u (groups and unknown types are not read)", f.num,
			 f.wt);
		break;
	case MP_PW_BAD_FIXED:
		snprintf(why, sizeof(why), "field %u: the message ends inside its %d-byte value", f.num,
			 f.wt == MP_PW_I64 ? 8 : 4);
		break;
	default: /* MP_PW_BAD_LEN */
		snprintf(why, sizeof(why), "field %u announces %llu bytes but only %llu remain in the message", f.num,
			 (unsigned long long)f.len, (unsigned long long)f.val);
		break;
	}
	mp_diag_set(diag, code, (int64_t)off, -1, "%s: %s", what, why);
}
