/* test_hlo_units.c - the pieces of memprof_hlo below the public API: shape
 * printing and byte sizes (the id map is core/base's: tests/base; the
 * protobuf wire walker is memprof_protowire's: tests/protowire). */
#include "test_common.h"

#include "internal.h"

static Xla__ShapeProto *arr(Xla__ShapeProto *s, Xla__LayoutProto *l, int type, size_t n, int64_t *dims,
			    int64_t *m2m)
{
	xla__shape_proto__init(s);
	s->has_element_type = 1;
	s->element_type = type;
	s->n_dimensions = n;
	s->dimensions = dims;
	if (l) {
		xla__layout_proto__init(l);
		l->n_minor_to_major = n;
		l->minor_to_major = m2m;
		s->layout = l;
	}
	return s;
}

static void test_shapes(void **state)
{
	int64_t d[] = {8, 16}, m2m[] = {1, 0}, td[] = {INT64_MIN, 128};
	protobuf_c_boolean dyn[] = {0, 1};
	Xla__ShapeProto a, tok, tup, *elems[7];
	Xla__LayoutProto la;
	Xla__TileProto tile, *tiles[1] = {&tile};
	char *s;

	(void)state;
	arr(&a, &la, 16, 2, d, m2m); /* bf16[8,<=16]{1,0:T(*,128)S(5)} */
	a.n_is_dynamic_dimension = 2;
	a.is_dynamic_dimension = dyn;
	xla__tile_proto__init(&tile);
	tile.n_dimensions = 2;
	tile.dimensions = td;
	la.n_tiles = 1;
	la.tiles = tiles;
	la.has_memory_space = 1;
	la.memory_space = 5;
	s = mp_hlo_shape_string(&a);
	assert_string_equal(s, "bf16[8,<=16]{1,0:T(*,128)S(5)}");
	free(s);
	assert_int_equal(mp_hlo_shape_unpadded_bytes(&a), 8 * 16 * 2);

	arr(&tok, NULL, 17, 0, NULL, NULL);
	assert_int_equal(mp_hlo_shape_unpadded_bytes(&tok), 0);
	for (int i = 0; i < 7; i++)
		elems[i] = i == 6 ? &tok : &a;
	xla__shape_proto__init(&tup);
	tup.has_element_type = 1;
	tup.element_type = 13;
	tup.n_tuple_shapes = 7;
	tup.tuple_shapes = elems;
	s = mp_hlo_shape_string(&tup);
	/* every 5th element carries an index comment, as XLA prints it */
	assert_non_null(strstr(s, ", /*index=5*/bf16[8,<=16]"));
	assert_non_null(strstr(s, ", token[])"));
	free(s);
	assert_int_equal(mp_hlo_shape_unpadded_bytes(&tup), 7 * 8);
	{
		int64_t idx[] = {3};
		int64_t bad[] = {9};

		assert_ptr_equal(mp_hlo_shape_resolve(&tup, idx, 1, false), &a);
		assert_ptr_equal(mp_hlo_shape_resolve(&tup, bad, 1, false), &tup);
		assert_ptr_equal(mp_hlo_shape_resolve(&tup, bad, 1, true), &tup);
	}
	/* a huge array saturates instead of overflowing */
	{
		int64_t big[] = {INT64_MAX / 2, 4};

		arr(&a, NULL, 11, 2, big, NULL);
		assert_int_equal(mp_hlo_shape_unpadded_bytes(&a), INT64_MAX);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
