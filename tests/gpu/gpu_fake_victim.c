/* gpu_fake_victim.c - a "CUDA program" on the fake libcupti (fake_cupti.c):
 * it starts the injection library as the driver would, has the fake GPU
 * reserve two segments, reports two tensors inside the first through the
 * annotation API (as a framework's allocator would), has a 10 MiB
 * cudaMalloc fail (with the driver call nested in it, as CUDA does), waits
 * for a periodic flush, releases the second segment, maps and unmaps a
 * 2 MiB chunk (cuMemMap: callbacks and records, as CUDA 13 reports it),
 * has "cuBLAS" take 1 MiB for itself (the record's source) and exits 3. It also plays the driver's cuDeviceTotalMem (80 GiB) and
 * cuCtxGetDevice (device 0), which the injection library finds with
 * dlsym(RTLD_DEFAULT), and cuDeviceGetCount (1). Usage: gpu_fake_victim INJECTION.so FAKE_CUPTI.so */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB (1ull << 20)
#define A 0x7f0000000000ull
#define B 0x7f0002000000ull
#define C 0x7f0004000000ull
#define D 0x7f0006000000ull

__attribute__((visibility("default"))) int cuDeviceTotalMem_v2(size_t *bytes, int device);
__attribute__((visibility("default"))) int cuCtxGetDevice(int *device);
__attribute__((visibility("default"))) int cuDeviceGetCount(int *count);

int cuDeviceGetCount(int *count)
{
	*count = 1;
	return 0;
}

int cuDeviceTotalMem_v2(size_t *bytes, int device)
{
	*bytes = device == 0 ? 80ull << 30 : 0;
	return 0;
}

int cuCtxGetDevice(int *device)
{
	*device = 0;
	return 0;
}

int main(int argc, char **argv)
{
	void *inj, *fake;
	int (*init)(void), (*declare)(const char *, int, uint64_t), gpu;
	void (*cmalloc)(uint64_t, uint64_t), (*cfree)(uint64_t), (*cfail)(uint64_t);
	void (*cmap)(uint64_t, uint64_t), (*cunmap)(uint64_t, uint64_t);
	void (*clib)(uint64_t, uint64_t, const char *);
	void (*alloc)(int, uint64_t, uint64_t, uint64_t);
	char *host = malloc(123457);

	if (argc < 3 || !host)
		return 1;
	memset(host, 1, 123457);
	if (!(inj = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) || !(fake = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "gpu_fake_victim: %s\n", dlerror());
		return 2;
	}
	*(void **)(void *)&init = dlsym(inj, "InitializeInjection");
	*(void **)(void *)&cmalloc = dlsym(fake, "fake_cuda_malloc");
	*(void **)(void *)&cfree = dlsym(fake, "fake_cuda_free");
	*(void **)(void *)&cfail = dlsym(fake, "fake_cuda_malloc_fails");
	*(void **)(void *)&cmap = dlsym(fake, "fake_cuda_map");
	*(void **)(void *)&cunmap = dlsym(fake, "fake_cuda_unmap");
	*(void **)(void *)&clib = dlsym(fake, "fake_cuda_library_malloc");
	*(void **)(void *)&declare = dlsym(RTLD_DEFAULT, "memprof_memory_declare");
	*(void **)(void *)&alloc = dlsym(RTLD_DEFAULT, "memprof_alloc");
	if (!init || !cmalloc || !cfree || !cfail || !cmap || !cunmap || !clib || init() != 1)
		return 2;
	cmalloc(A, 20 * MiB);
	cmalloc(B, 2 * MiB);
	usleep(150 * 1000); /* the backend has declared GPU:0 (80 GiB) by now */
	if (declare && alloc) { /* under memprof record: the preload's annotation API */
		gpu = declare("GPU:0", 2 /* device */, 0); /* the backend's memory id, by name */
		alloc(gpu, A, 8 * MiB, 8 * MiB);
		alloc(gpu, A + 8 * MiB, 4 * MiB, 4 * MiB);
	}
	cfail(10 * MiB);
	usleep(300 * 1000); /* a periodic flush (MEMPROF_CUPTI_FLUSH_MS=50) writes the above */
	cfree(B);
	cmap(C, 2 * MiB);
	cunmap(C, 2 * MiB);
	clib(D, 1 * MiB, "/usr/local/cuda/lib64/libcublasLt.so.13");
	free(host);
	return 3;
}
