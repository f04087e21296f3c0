// victim_cxx.cpp - C++ new/delete reach malloc/free through libstdc++:
// new char[1234], new std::vector<int>(300) (the object and a 1200-byte
// buffer), new int; all deleted.
#include <vector>

int main()
{
	char *volatile p = new char[1234];
	std::vector<int> *volatile v = new std::vector<int>(300);
	int *volatile i = new int(7);

	p[0] = 1;
	delete[] p;
	delete v;
	delete i;
	return 0;
}
