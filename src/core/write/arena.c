/* arena.c - mmap-backed bump allocator; see arena.h for why. */
#include "arena.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

struct mp_arena_chunk {
	mp_arena_chunk_t *next;
	size_t size; /* mapping size including this header */
};

#define ARENA_CHUNK (256u << 10)
#define ARENA_ALIGN 64u
#define CHUNK_HDR ((sizeof(mp_arena_chunk_t) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))

void *mp_map_pages(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void mp_unmap_pages(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

void mp_arena_init(mp_arena_t *a)
{
	pthread_mutex_init(&a->mu, NULL);
	a->chunks = NULL;
	a->used = a->cap = a->total = 0;
}

void *mp_arena_alloc(mp_arena_t *a, size_t size)
{
	void *out = NULL;

	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	pthread_mutex_lock(&a->mu);
	if (!a->chunks || a->used + size > a->cap) {
		size_t map = CHUNK_HDR + size > ARENA_CHUNK ? CHUNK_HDR + size : ARENA_CHUNK;
		mp_arena_chunk_t *c = mp_map_pages(map);
		if (!c)
			goto out;
		c->next = a->chunks;
		c->size = map;
		a->chunks = c;
		a->used = CHUNK_HDR;
		a->cap = map;
		a->total += map;
	}
	out = (char *)a->chunks + a->used;
	a->used += size;
out:
	pthread_mutex_unlock(&a->mu);
	return out; /* fresh anonymous pages are zeroed */
}

void mp_arena_release(mp_arena_t *a)
{
	mp_arena_chunk_t *c = a->chunks;

	while (c) {
		mp_arena_chunk_t *next = c->next;
		munmap(c, c->size);
		c = next;
	}
	a->chunks = NULL;
	a->used = a->cap = a->total = 0;
	pthread_mutex_destroy(&a->mu);
}
