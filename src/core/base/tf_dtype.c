/* xplane_dtype.c - TensorFlow DataType enum values -> TF's names (as
 * DataTypeString prints them: the breakdown's "Data type" column). */
#include <memprof/xplane_dtype.h>

#include <inttypes.h>
#include <stdio.h>

static const char *const names[] = {
	"INVALID", "float", "double", "int32", "uint8", "int16", "int8", "string",
	"complex64", "int64", "bool", "qint8", "quint8", "qint32", "bfloat16",
	"qint16", "quint16", "uint16", "complex128", "half", "resource", "variant",
	"uint32", "uint64", "float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz",
	"float8_e4m3b11fnuz", "float8_e5m2fnuz", "int4", "uint4",
};

const char *mp_tf_dtype_name(int64_t dtype, char *buf, size_t size)
{
	const int64_t n = (int64_t)(sizeof(names) / sizeof(names[0]));

	if (dtype >= 0 && dtype < n)
		return names[dtype];
	/* reference types: DT_FLOAT_REF = 101 ... */
	if (dtype > 100 && dtype < 100 + n) {
		snprintf(buf, size, "%s_ref", names[dtype - 100]);
		return buf;
	}
	snprintf(buf, size, "unknown dtype enum (%" PRId64 ")", dtype);
	return buf;
}
