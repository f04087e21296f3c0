/* vec.c - see memprof/vec.h. */
#include <memprof/vec.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *mp_vec_grow(void *items, size_t *cap, size_t need, size_t item_size)
{
	size_t nc = *cap > SIZE_MAX / 2 ? need : *cap * 2;
	void *p;

	if (need <= *cap)
		return items;
	if (nc < need)
		nc = need;
	if (nc < 8)
		nc = 8;
	if (item_size && nc > SIZE_MAX / item_size)
		return items;
	p = realloc(items, item_size ? nc * item_size : 1);
	if (!p)
		return items;
	*cap = nc;
	return p;
}

int mp_vec_reserve(void **items, size_t *cap, size_t need, size_t item_size)
{
	*items = mp_vec_grow(*items, cap, need, item_size);
	return need <= *cap ? 0 : MP_ENOMEM;
}

int mp_vec_push(mp_vec_t *v, const void *item, size_t item_size)
{
	if (mp_vec_reserve(&v->v, &v->cap, v->n + 1, item_size) < 0)
		return MP_ENOMEM;
	memcpy((char *)v->v + v->n * item_size, item, item_size);
	v->n++;
	return 0;
}
