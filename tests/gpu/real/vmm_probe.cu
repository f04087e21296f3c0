// vmm_probe.cu - CUDA memory of every kind memprof records, with known
// sizes, for checking `memprof record --gpu` on a real GPU
// (scripts/gpu_check.sh). Prints what it did as one JSON line.
//
//   cudaMalloc        64 MiB, freed; then 32 MiB kept to the end
//   cudaMallocAsync   3 x 16 MiB on a stream (a pool), freed async
//   cuMemCreate/Map   8 chunks of the granularity, mapped into one range,
//                     unmapped (what PyTorch's expandable segments do)
//   cudaMallocHost    8 MiB pinned
//   cudaMallocManaged 4 MiB
//   cudaMalloc        1 PiB: fails
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>

#define MiB (1ull << 20)
#define CK(x) do { int e_ = (int)(x); if (e_) { fprintf(stderr, "%s: %d\n", #x, e_); return 1; } } while (0)

int main(void)
{
	void *a = 0, *keep = 0, *as[3], *pinned = 0, *managed = 0, *huge = 0;
	cudaStream_t s;
	CK(cudaSetDevice(0));
	CK(cudaMalloc(&a, 64 * MiB));
	CK(cudaFree(a));
	CK(cudaMalloc(&keep, 32 * MiB));
	CK(cudaStreamCreate(&s));
	for (int i = 0; i < 3; i++)
		CK(cudaMallocAsync(&as[i], 16 * MiB, s));
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < 3; i++)
		CK(cudaFreeAsync(as[i], s));
	CK(cudaStreamSynchronize(s));

	CUmemAllocationProp prop = {};
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	size_t gran = 0;
	CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CUdeviceptr base = 0;
	CUmemGenericAllocationHandle h[8];
	CK(cuMemAddressReserve(&base, 8 * gran, 0, 0, 0));
	for (int i = 0; i < 8; i++) {
		CK(cuMemCreate(&h[i], gran, &prop, 0));
		CK(cuMemMap(base + i * gran, gran, 0, h[i], 0));
	}
	CUmemAccessDesc acc = {};
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CK(cuMemSetAccess(base, 8 * gran, &acc, 1));
	CK(cudaMemset((void *)base, 1, 8 * gran));
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < 8; i++) {
		CK(cuMemUnmap(base + i * gran, gran));
		CK(cuMemRelease(h[i]));
	}
	CK(cuMemAddressFree(base, 8 * gran));

	CK(cudaMallocHost(&pinned, 8 * MiB));
	CK(cudaMallocManaged(&managed, 4 * MiB));
	int failed = cudaMalloc(&huge, 1ull << 50) != cudaSuccess;
	cudaGetLastError();
	CK(cudaFreeHost(pinned));
	CK(cudaFree(managed));
	CK(cudaDeviceSynchronize());
	printf("{\"granularity\": %zu, \"vmm_bytes\": %zu, \"failed_huge\": %d, \"keep\": %llu}\n",
	       gran, 8 * gran, failed, 32 * MiB);
	return 0;
}
