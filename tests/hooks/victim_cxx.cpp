// victim_cxx.cpp - C++ new and delete in their forms: new char[1234], new
// std::vector<int>(300) (the object, 24 bytes, and a 1200-byte buffer), new
// int (4 bytes; sized delete), an over-aligned object (128 bytes, aligned
// new and delete), new (std::nothrow) char[77], and a nothrow new of 2^50
// bytes that fails (NULL); then a throwing new of 2^50 bytes, whose
// std::bad_alloc is caught, and new char[55] after it; and new char[321]
// in memprof_victim::make_buffer(unsigned long), a function whose symbol is
// mangled. All deleted. On glibc these reach malloc/free
// through libstdc++; over jemalloc or tcmalloc, which replace operator new
// and delete too, they reach the preload's own operator new and delete.
#include <cstddef>
#include <new>
#include <vector>

struct alignas(64) Aligned {
	char c[100];
};

namespace memprof_victim
{
__attribute__((noinline)) char *make_buffer(std::size_t n)
{
	return new char[n];
}
} // namespace memprof_victim

int main()
{
	char *volatile p = new char[1234];
	std::vector<int> *volatile v = new std::vector<int>(300);
	int *volatile i = new int(7);
	Aligned *volatile a = new Aligned;
	char *volatile n = new (std::nothrow) char[77];
	char *volatile huge = new (std::nothrow) char[(std::size_t)1 << 50];

	int caught = 0;

	if (!n || huge || reinterpret_cast<std::size_t>(a) % 64)
		return 3;
	try {
		char *volatile never = new char[(std::size_t)1 << 50];
		never[0] = 1;
	} catch (const std::bad_alloc &) {
		caught = 1;
	}
	char *volatile after = new char[55];
	if (!caught)
		return 4;
	delete[] after;
	char *volatile named = memprof_victim::make_buffer(321);
	named[0] = 1;
	delete[] named;
	p[0] = 1;
	delete[] p;
	delete v;
	delete i;
	delete a;
	delete[] n;
	return 0;
}
