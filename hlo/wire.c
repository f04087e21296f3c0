/* wire.c - a bounds-checked protobuf wire-format walker. Used where decoding
 * whole messages would be wasteful: XSpace profiles (only the metadata plane
 * matters) and peeking at an HloProto's module name and id. */
#include "internal.h"

void mp_wire_init(mp_wire_t *w, const uint8_t *data, size_t len, const uint8_t *base)
{
	w->p = data;
	w->end = data + len;
	w->base = base ? base : data;
}

static int read_varint(mp_wire_t *w, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (w->p < w->end) {
		uint8_t b = *w->p++;

		if (shift == 63 && (b & 0x7e))
			return MP_EFORMAT; /* more than 64 bits */
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
		shift += 7;
		if (shift > 63)
			return MP_EFORMAT;
	}
	return MP_ETRUNCATED;
}

int mp_wire_next(mp_wire_t *w, mp_wire_field_t *f)
{
	uint64_t tag, len;
	int rc;

	if (w->p >= w->end)
		return 0;
	if ((rc = read_varint(w, &tag)) < 0)
		return rc;
	f->number = (uint32_t)(tag >> 3);
	f->type = (uint32_t)(tag & 7);
	if (f->number == 0 || (tag >> 3) > 0x1fffffff)
		return MP_EFORMAT;
	f->data = NULL;
	f->len = 0;
	f->varint = 0;
	switch (f->type) {
	case 0:
		return read_varint(w, &f->varint) < 0 ? MP_ETRUNCATED : 1;
	case 1:
		if ((size_t)(w->end - w->p) < 8)
			return MP_ETRUNCATED;
		for (int i = 7; i >= 0; i--)
			f->varint = (f->varint << 8) | w->p[i];
		w->p += 8;
		return 1;
	case 5:
		if ((size_t)(w->end - w->p) < 4)
			return MP_ETRUNCATED;
		for (int i = 3; i >= 0; i--)
			f->varint = (f->varint << 8) | w->p[i];
		w->p += 4;
		return 1;
	case 2:
		if ((rc = read_varint(w, &len)) < 0)
			return rc;
		if (len > (uint64_t)(w->end - w->p))
			return MP_ETRUNCATED;
		f->data = w->p;
		f->len = (size_t)len;
		w->p += len;
		return 1;
	default: /* groups (3, 4) are not used by any message we read */
		return MP_EFORMAT;
	}
}
