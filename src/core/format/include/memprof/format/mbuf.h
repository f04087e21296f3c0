/* mbuf.h - a growable byte buffer backed by mmap/mremap (internal).
 * Used by the writer's flusher so that nothing it does calls malloc. */
#ifndef MP_MBUF_H
#define MP_MBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct mp_mbuf {
	uint8_t *data;
	size_t len, cap;
} mp_mbuf_t;

/* Make room for n more bytes; returns 0 or -ENOMEM. */
int mp_mbuf_reserve(mp_mbuf_t *b, size_t n);
/* Append n bytes; returns 0 or -ENOMEM. */
int mp_mbuf_append(mp_mbuf_t *b, const void *p, size_t n);
void mp_mbuf_release(mp_mbuf_t *b);

#endif
