/* mbuf.c - mmap-backed growable buffer; see mbuf.h. */
#include <memprof/format/mbuf.h>

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

int mp_mbuf_reserve(mp_mbuf_t *b, size_t n)
{
	size_t want, cap;
	void *p;

	if (b->len + n <= b->cap)
		return 0;
	want = b->len + n;
	cap = b->cap ? b->cap : 65536;
	while (cap < want)
		cap *= 2;
	if (b->data)
		p = mremap(b->data, b->cap, cap, MREMAP_MAYMOVE);
	else
		p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int mp_mbuf_append(mp_mbuf_t *b, const void *p, size_t n)
{
	int rc;

	if (n == 0)
		return 0;
	rc = mp_mbuf_reserve(b, n);
	if (rc)
		return rc;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

void mp_mbuf_release(mp_mbuf_t *b)
{
	if (b->data)
		munmap(b->data, b->cap);
	b->data = NULL;
	b->len = b->cap = 0;
}
