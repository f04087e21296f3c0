/* arena.c - bump allocator behind protobuf-c decoding (see internal.h). */
#include "internal.h"

#include <stdlib.h>

#define CHUNK (1u << 20)

typedef struct chunk {
	struct chunk *next;
	size_t used, cap;
	max_align_t data[]; /* aligned payload */
} chunk_t;

struct mp_hlo_arena {
	ProtobufCAllocator alloc;
	chunk_t *head;
};

static void *arena_alloc(void *ctx, size_t n)
{
	mp_hlo_arena_t *a = ctx;
	size_t need = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	chunk_t *c = a->head;

	if (need < n)
		return NULL;
	if (!c || c->cap - c->used < need) {
		size_t cap = need > CHUNK / 4 ? need : CHUNK; /* big blocks get their own chunk */

		if (cap > SIZE_MAX - sizeof(chunk_t))
			return NULL;
		c = malloc(sizeof(chunk_t) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		if (cap == need && a->head) { /* keep filling the current chunk afterwards */
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	c->used += need;
	return (char *)c->data + c->used - need;
}

static void arena_free(void *ctx, void *p)
{
	(void)ctx; /* released with the arena */
	(void)p;
}

mp_hlo_arena_t *mp_hlo_arena_new(void)
{
	mp_hlo_arena_t *a = calloc(1, sizeof(*a));

	if (a) {
		a->alloc.alloc = arena_alloc;
		a->alloc.free = arena_free;
		a->alloc.allocator_data = a;
	}
	return a;
}

void mp_hlo_arena_free(mp_hlo_arena_t *a)
{
	if (!a)
		return;
	while (a->head) {
		chunk_t *n = a->head->next;

		free(a->head);
		a->head = n;
	}
	free(a);
}

ProtobufCAllocator *mp_hlo_arena_allocator(mp_hlo_arena_t *a)
{
	return &a->alloc;
}
