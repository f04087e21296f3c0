/* victim_unwinder.c - which library C++ exceptions would unwind through if
 * this C program loaded C++ code now (with dlopen, as Python loads its
 * extension modules): the definition of _Unwind_RaiseException that the
 * global scope offers. Exits 0 when there is none (no C++ runtime loaded)
 * or it is libgcc_s's, 5 when another library took it over: the preload's
 * libunwind did (it also exports the _Unwind_* functions), even with
 * recording off, until the preload linked libgcc_s ahead of it.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	void *f = dlsym(RTLD_DEFAULT, "_Unwind_RaiseException");
	Dl_info info;

	if (!f)
		return 0;
	if (!dladdr(f, &info) || !info.dli_fname) {
		fprintf(stderr, "victim_unwinder: _Unwind_RaiseException in no known object\n");
		return 4;
	}
	if (!strstr(info.dli_fname, "libgcc_s")) {
		fprintf(stderr, "victim_unwinder: _Unwind_RaiseException comes from %s\n", info.dli_fname);
		return 5;
	}
	return 0;
}
