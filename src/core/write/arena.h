/* arena.h - an mmap-backed bump allocator (internal).
 *
 * The writer runs inside traced programs, where calling malloc from the
 * event path would recurse into the hooks. Everything the writer needs after
 * open (interned strings, per-thread rings, zlib state) comes from an arena
 * that gets its memory straight from mmap and frees it all at once.
 * Thread-safe: a mutex guards the bump pointer (never taken on the event
 * path: only when a string, thread or memory id is first seen).
 */
#ifndef MP_ARENA_H
#define MP_ARENA_H

#include <pthread.h>
#include <stddef.h>

typedef struct mp_arena_chunk mp_arena_chunk_t;

typedef struct mp_arena {
	pthread_mutex_t mu;
	mp_arena_chunk_t *chunks; /* newest first */
	size_t used, cap;         /* within the newest chunk */
	size_t total;             /* bytes mapped, all chunks */
} mp_arena_t;

void mp_arena_init(mp_arena_t *a);
/* Zeroed, 64-byte aligned memory, or NULL if mmap failed. Owned by the arena. */
void *mp_arena_alloc(mp_arena_t *a, size_t size);
/* Unmap everything. */
void mp_arena_release(mp_arena_t *a);

/* Page-granular mappings outside the arena (per-thread rings). */
void *mp_map_pages(size_t size);
void mp_unmap_pages(void *p, size_t size);

#endif
