/* victim_mmap.c - anonymous mappings the program makes itself, as the
 * memory id "host_mmap" (file mappings are not recorded):
 *   p = mmap(1 MiB, anonymous)          ALLOC p 1048576         live 1048576
 *   f = mmap(this program's file)       -
 *   munmap(p, 256 KiB)                  FREE p, ALLOC p+256K    live 786432
 *   q = mremap(p+256K, 768 KiB, 2 MiB)  REALLOC -> q            live 2097152 <- peak
 *   munmap(q, 2 MiB)                    FREE q                  live 0
 *   munmap(f)                           -
 * 2 allocations, 1 realloc, 2 frees, peak 2097152, nothing live.
 *
 * "reserve": address space reserved, then made usable in pieces and given
 * back, as the JVM and V8 do (M = MiB, r the reservation's start):
 *   r = mmap(64M, PROT_NONE)          -                       live 0
 *   mprotect(r, 1M, RW)               ALLOC r 1M              live 1M
 *   mmap(r+4M, 2M, RW, MAP_FIXED)     ALLOC r+4M 2M           live 3M
 *   mprotect(r+5M, 1M, PROT_NONE)     FREE r+4M, ALLOC r+4M 1M live 2M
 *   mprotect(f, 4K, PROT_READ)        - (a file mapping)
 *   mprotect(r, 64M, RW)              ALLOC r+1M 3M, r+5M 1M, r+6M 58M
 *                                                             live 64M <- peak
 *   munmap(r+8M, 8M)                  FREE r+6M, ALLOC r+6M 2M, r+16M 48M
 *                                                             live 56M
 *   mmap(r+20M, 1M, PROT_NONE, MAP_FIXED)
 *                                     FREE r+16M, ALLOC r+16M 4M, r+21M 43M
 *                                                             live 55M
 *   munmap(r, 64M)                    FREE the 7 blocks       live 0
 * 10 allocations, 10 frees, peak 67108864, nothing live.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)

static int reserve(void *f)
{
	size_t m = 1u << 20;
	char *r = mmap(NULL, 64 * m, PROT_NONE, ANON | MAP_NORESERVE, -1, 0);

	if (r == MAP_FAILED || mprotect(r, m, RW))
		return 10;
	r[0] = 1;
	if (mmap(r + 4 * m, 2 * m, RW, ANON | MAP_FIXED, -1, 0) != r + 4 * m)
		return 11;
	if (mprotect(r + 5 * m, m, PROT_NONE) || mprotect(f, 4096, PROT_READ) || mprotect(r, 64 * m, RW))
		return 12;
	r[63 * m] = 1;
	if (munmap(r + 8 * m, 8 * m) || mmap(r + 20 * m, m, PROT_NONE, ANON | MAP_FIXED, -1, 0) != r + 20 * m)
		return 13;
	return munmap(r, 64 * m) ? 14 : 0;
}

int main(int argc, char **argv)
{
	size_t mib = 1u << 20, head = 256u << 10;
	int fd = open("/proc/self/exe", O_RDONLY);
	char *p, *q;
	void *f;

	f = fd >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	if (f == MAP_FAILED)
		return 3;
	if (argc > 1 && !strcmp(argv[1], "reserve"))
		return reserve(f);
	p = mmap(NULL, mib, RW, ANON, -1, 0);
	if (p == MAP_FAILED)
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
