/* memprof/xplane_dtype.h - TensorFlow's DataType names, the vocabulary the
 * xplane reader (memprof/xplane.h) and the exporter (memprof/xplane_export.h)
 * share: in memprof_base (tf_dtype.c), so that the exporter does not link
 * the reader. */
#ifndef MEMPROF_XPLANE_DTYPE_H
#define MEMPROF_XPLANE_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TensorFlow's name of a DataType enum value ("float", "uint8", "INVALID",
 * "float_ref", "unknown dtype enum (77)"). Returns buf (or a static string). */
const char *mp_tf_dtype_name(int64_t dtype, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
