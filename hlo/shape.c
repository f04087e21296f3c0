/* shape.c - shape arithmetic and printing as XLA does it: sub-shape lookup
 * by shape index, the unpadded byte size (ShapeUtil::ByteSizeOf with the
 * default layout) and ShapeUtil::HumanStringWithLayout. */
#include "internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { PT_PRED = 1, PT_TUPLE = 13, PT_OPAQUE = 14, PT_TOKEN = 17, PT_BUFFER = 34 };

static const char *const type_names[] = {
	"invalid", "pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "f32", "f64",
	"tuple", "opaque", "c64", "bf16", "token", "c128", "f8e5m2", "f8e4m3fn", "s4", "u4",
	"f8e4m3b11fnuz", "f8e5m2fnuz", "f8e4m3fnuz", "s2", "u2", "f8e4m3", "f8e3m4", "s1", "u1",
	"f4e2m1fn", "f8e8m0fnu", "b", "f6e3m2fn", "f6e2m3fn",
};

/* Bytes per element (primitive_util::ByteWidth = ceil(bits / 8)). */
static int64_t byte_width(int32_t t)
{
	switch (t) {
	case 3: case 7: case 10: case 16:           /* s16 u16 f16 bf16 */
		return 2;
	case 4: case 8: case 11:                    /* s32 u32 f32 */
		return 4;
	case 5: case 9: case 12: case 15:           /* s64 u64 f64 c64 */
		return 8;
	case 18:                                    /* c128 */
		return 16;
	case 1: case 2: case 6: case 19: case 20: case 21: case 22: case 23: case 24: case 25:
	case 26: case 27: case 28: case 29: case 30: case 31: case 32: case 33: case 35: case 36:
		return 1;
	default:
		return 0;
	}
}

const Xla__ShapeProto *mp_hlo_shape_resolve(const Xla__ShapeProto *shape, const int64_t *index,
					    size_t n, bool compat)
{
	if (!shape || n == 0)
		return shape;
	if (compat) {
		/* xprof / ComputeLogicalBufferUnpaddedSizes: only the last element, at the top level. */
		int64_t last = index[n - 1];

		if (last >= 0 && (uint64_t)last < shape->n_tuple_shapes)
			return shape->tuple_shapes[last];
		return shape;
	}
	for (size_t i = 0; i < n; i++) {
		if (index[i] < 0 || (uint64_t)index[i] >= shape->n_tuple_shapes)
			return shape; /* invalid index: stop at the deepest valid sub-shape */
		shape = shape->tuple_shapes[index[i]];
	}
	return shape;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
	int64_t r;

	if (a < 0 || b < 0)
		return 0;
	if (__builtin_mul_overflow(a, b, &r))
		return INT64_MAX;
	return r;
}

static int64_t elements_bytes(const Xla__ShapeProto *s)
{
	int64_t n = 1, bits = s->layout && s->layout->has_element_size_in_bits ? s->layout->element_size_in_bits : 0;

	for (size_t i = 0; i < s->n_dimensions; i++)
		n = sat_mul(n, s->dimensions[i] < 0 ? 0 : s->dimensions[i]);
	if (bits > 0) {
		int64_t b = sat_mul(n, bits);

		return b == INT64_MAX ? b : (b + 7) / 8;
	}
	return sat_mul(n, byte_width(s->element_type));
}

int64_t mp_hlo_shape_unpadded_bytes(const Xla__ShapeProto *s)
{
	if (!s)
		return 0;
	switch (s->element_type) {
	case PT_TUPLE:
		return sat_mul(8, (int64_t)s->n_tuple_shapes); /* the index table only */
	case PT_BUFFER:
		return s->n_tuple_shapes ? elements_bytes(s->tuple_shapes[0]) : 0;
	case PT_TOKEN:
		return 0;
	case PT_OPAQUE:
		return 8;
	default:
		return elements_bytes(s);
	}
}

/* ---- printing ----------------------------------------------------------------- */

typedef struct sbuf {
	char *p;
	size_t len, cap;
	int oom;
} sbuf_t;

static void sb_printf(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf_t *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if (b->p && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		if (MP_VEC_RESERVE(b->p, b->cap, b->len + (size_t)n + 1) < 0) {
			b->oom = 1;
			return;
		}
	}
}

static const char *type_name(int32_t t)
{
	if (t >= 0 && (size_t)t < sizeof(type_names) / sizeof(type_names[0]))
		return type_names[t];
	return "unknown";
}

static void print_layout(sbuf_t *b, const Xla__LayoutProto *l, int scalar)
{
	int extra = l->n_tiles || (l->has_tail_padding_alignment_in_elements &&
				   l->tail_padding_alignment_in_elements > 1) ||
		    (l->has_element_size_in_bits && l->element_size_in_bits) ||
		    (l->has_memory_space && l->memory_space);

	if (scalar && !extra && l->n_minor_to_major == 0)
		return; /* scalars print no "{}" */
	sb_printf(b, "{");
	for (size_t i = 0; i < l->n_minor_to_major; i++)
		sb_printf(b, "%s%" PRId64, i ? "," : "", l->minor_to_major[i]);
	if (extra) {
		sb_printf(b, ":");
		if (l->n_tiles) {
			sb_printf(b, "T");
			for (size_t t = 0; t < l->n_tiles; t++) {
				const Xla__TileProto *tile = l->tiles[t];

				sb_printf(b, "(");
				for (size_t d = 0; tile && d < tile->n_dimensions; d++) {
					if (tile->dimensions[d] == INT64_MIN)
						sb_printf(b, "%s*", d ? "," : "");
					else
						sb_printf(b, "%s%" PRId64, d ? "," : "", tile->dimensions[d]);
				}
				sb_printf(b, ")");
			}
		}
		if (l->has_tail_padding_alignment_in_elements && l->tail_padding_alignment_in_elements > 1)
			sb_printf(b, "L(%" PRId64 ")", l->tail_padding_alignment_in_elements);
		if (l->has_element_size_in_bits && l->element_size_in_bits)
			sb_printf(b, "E(%" PRId64 ")", l->element_size_in_bits);
		if (l->has_memory_space && l->memory_space)
			sb_printf(b, "S(%" PRId64 ")", l->memory_space);
	}
	sb_printf(b, "}");
}

static void print_shape(sbuf_t *b, const Xla__ShapeProto *s, int depth)
{
	if (!s) {
		sb_printf(b, "?");
		return;
	}
	if (depth > 64) { /* hostile nesting: keep output and stack bounded */
		sb_printf(b, "...");
		return;
	}
	if (s->element_type == PT_TUPLE) {
		sb_printf(b, "(");
		for (size_t i = 0; i < s->n_tuple_shapes; i++) {
			if (i) {
				sb_printf(b, ", ");
				if (i % 5 == 0)
					sb_printf(b, "/*index=%zu*/", i);
			}
			print_shape(b, s->tuple_shapes[i], depth + 1);
		}
		sb_printf(b, ")");
		return;
	}
	if (s->element_type == PT_BUFFER) {
		sb_printf(b, "b(");
		print_shape(b, s->n_tuple_shapes ? s->tuple_shapes[0] : NULL, depth + 1);
		sb_printf(b, ")");
		return;
	}
	sb_printf(b, "%s[", type_name(s->element_type));
	for (size_t i = 0; i < s->n_dimensions; i++) {
		int dyn = i < s->n_is_dynamic_dimension && s->is_dynamic_dimension[i];

		if (s->dimensions[i] == INT64_MIN)
			sb_printf(b, "%s?", i ? "," : "");
		else
			sb_printf(b, "%s%s%" PRId64, i ? "," : "", dyn ? "<=" : "", s->dimensions[i]);
	}
	sb_printf(b, "]");
	if (s->layout && s->element_type != PT_TOKEN && s->element_type != PT_OPAQUE)
		print_layout(b, s->layout, s->n_dimensions == 0);
}

char *mp_hlo_shape_string(const Xla__ShapeProto *s)
{
	sbuf_t b = {0};

	print_shape(&b, s, 0);
	if (b.oom || !b.p) {
		free(b.p);
		return b.oom ? NULL : mp_hlo_strdup("");
	}
	return b.p;
}
