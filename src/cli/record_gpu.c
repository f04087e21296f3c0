/* record_gpu.c - `memprof record --gpu`: what the CUDA driver needs to load
 * memprof's injection library (allocator_hooks/cupti) into CMD, and the
 * warnings when GPU memory cannot be recorded here. Host memory is
 * recorded either way, and CMD's exit status is its own. */
#include "record.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INJECTION_NAME "libmemprof_cupti.so"

static void warn(const char *what)
{
	fprintf(stderr, "memprof: warning: --gpu: %s; GPU memory is not recorded, host memory is\n", what);
}

int mp_cli_record_gpu_prepare(const char *preload, char *lib, size_t size)
{
#ifndef MEMPROF_GPU
	(void)preload, (void)lib, (void)size;
	warn("this memprof was built without the GPU backend (cmake -DMEMPROF_GPU=ON)");
	return -1;
#else
	const char *env = getenv("MEMPROF_CUPTI_INJECTION"), *other = getenv("CUDA_INJECTION64_PATH");
	char dir[PATH_MAX], msg[PATH_MAX + 200];
	void *cuda;

	if (other && *other) {
		snprintf(msg, sizeof msg, "CUDA_INJECTION64_PATH is already set (%s): another tool's", other);
		warn(msg);
		return -1;
	}
	/* next to the preload library, in the build tree and in an install */
	snprintf(dir, sizeof dir, "%s", preload);
	if (env && *env)
		snprintf(lib, size, "%s", env);
	else
		snprintf(lib, size, "%s/%s", dirname(dir), INJECTION_NAME);
	if (access(lib, R_OK) != 0) {
		snprintf(msg, sizeof msg, "cannot find the injection library '%s' (set MEMPROF_CUPTI_INJECTION)", lib);
		warn(msg);
		return -1;
	}
	/* Without a driver no CUDA program runs, and none loads us: say so
	 * now (the injection library itself warns about the rest: no GPU, no
	 * libcupti, another CUPTI client). */
	if (!(cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL))) {
		warn("no CUDA driver on this machine (libcuda.so.1 cannot be loaded)");
		return -1;
	}
	dlclose(cuda);
	return 0;
#endif
}
