/* victim_mmap.c - anonymous mappings the program makes itself, as the
 * memory id "host_mmap" (file mappings are not recorded):
 *   p = mmap(1 MiB, anonymous)          ALLOC p 1048576         live 1048576
 *   f = mmap(this program's file)       -
 *   munmap(p, 256 KiB)                  FREE p, ALLOC p+256K    live 786432
 *   q = mremap(p+256K, 768 KiB, 2 MiB)  REALLOC -> q            live 2097152 <- peak
 *   munmap(q, 2 MiB)                    FREE q                  live 0
 *   munmap(f)                           -
 * 2 allocations, 1 realloc, 2 frees, peak 2097152, nothing live.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	size_t mib = 1u << 20, head = 256u << 10;
	int fd = open("/proc/self/exe", O_RDONLY);
	char *p, *q;
	void *f;

	p = mmap(NULL, mib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f = fd >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	if (p == MAP_FAILED || f == MAP_FAILED)
		return 3;
	p[0] = 1;
	if (munmap(p, head))
		return 4;
	q = mremap(p + head, mib - head, 2 * mib, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return 5;
	q[0] = 1;
	if (munmap(q, 2 * mib) || munmap(f, 4096))
		return 6;
	close(fd);
	return 0;
}
