/* memprof/vec.h - the growable array every memprof library uses: a pointer,
 * a count the caller keeps and a capacity (size_t) that grows by doubling.
 *
 *	T *items = NULL; size_t n = 0, cap = 0;
 *	if (MP_VEC_RESERVE(items, cap, n + 1) < 0)
 *		return MP_ENOMEM;
 *	items[n++] = x;
 *	...
 *	free(items);
 *
 * Ownership: the caller owns items (free() it); growing may move it, so no
 * pointer into the array outlives a reserve. Not for the writer's event path
 * (src/core/write, allocator_hooks): it calls realloc. */
#ifndef MEMPROF_VEC_H
#define MEMPROF_VEC_H

#include <memprof/error.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for need items of item_size bytes: *items grown (realloc) to at
 * least need, at least twice *cap, at least 8. 0, or MP_ENOMEM (also when
 * the size overflows) with *items and *cap untouched. */
int mp_vec_reserve(void **items, size_t *cap, size_t need, size_t item_size);

/* The same on a typed pointer: returns the array (the same one, and *cap
 * untouched, on failure: then *cap < need). */
void *mp_vec_grow(void *items, size_t *cap, size_t need, size_t item_size);

/* MP_VEC_RESERVE(items, cap, need) for T *items and size_t cap (lvalues
 * without side effects): 0 when the array holds room for need items, else
 * MP_ENOMEM with items and cap untouched. The arguments are evaluated more
 * than once, need after cap changed: need must not read cap. The common
 * case (room already) costs one compare, inline. */
#define MP_VEC_RESERVE(items, cap, need)                                                  \
	((size_t)(need) <= (cap) ? 0                                                      \
	 : ((items) = mp_vec_grow((items), &(cap), (size_t)(need), sizeof(*(items))), \
	    (size_t)(need) <= (cap) ? 0 : MP_ENOMEM))

/* An untyped array of items of one size, for code that keeps many arrays
 * of several types in one structure (the torch source). Zeroed is empty;
 * it owns v (free(v)). */
typedef struct mp_vec {
	void *v; /* owned: n items, room for cap */
	size_t n, cap;
} mp_vec_t;

/* Append item_size bytes at item: 0 or MP_ENOMEM (v unchanged). */
int mp_vec_push(mp_vec_t *v, const void *item, size_t item_size);
/* Item i of vec as type. */
#define MP_VEC_AT(vec, type, i) (((type *)(vec).v)[i])

#ifdef __cplusplus
}
#endif

#endif
