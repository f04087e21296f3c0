/* cupti_abi_check.c - memprof's CUPTI declarations against the real ones.
 *
 * Compiled only where the CUDA toolkit is installed (CMake finds
 * CUDA::cupti): every offset, size and value in cupti_layout.h and
 * cupti_api.h is checked against <cupti.h> at build time, so a CUPTI
 * release that moves a field breaks the build here instead of
 * mistranslating records on users' machines. Nothing in it runs.
 */
#include <cupti.h>
#include <stddef.h>

#include "cupti_api.h"
#include "cupti_layout.h"

#define SAME(a, b) _Static_assert((a) == (b), #a " != " #b)

SAME(MP_CUPTI_KIND_DRIVER, CUPTI_ACTIVITY_KIND_DRIVER);
SAME(MP_CUPTI_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_RUNTIME);
SAME(MP_CUPTI_KIND_MEMORY, CUPTI_ACTIVITY_KIND_MEMORY);
SAME(MP_CUPTI_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY2);
SAME(MP_CUPTI_KIND_MEMORY_POOL, CUPTI_ACTIVITY_KIND_MEMORY_POOL);

SAME(MP_CUPTI_MEM_UNKNOWN, CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN);
SAME(MP_CUPTI_MEM_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
SAME(MP_CUPTI_MEM_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
SAME(MP_CUPTI_MEM_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
SAME(MP_CUPTI_MEM_ARRAY, CUPTI_ACTIVITY_MEMORY_KIND_ARRAY);
SAME(MP_CUPTI_MEM_MANAGED, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED);
SAME(MP_CUPTI_MEM_DEVICE_STATIC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC);
SAME(MP_CUPTI_MEM_MANAGED_STATIC, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC);
SAME(MP_CUPTI_OP_ALLOCATION, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
SAME(MP_CUPTI_OP_RELEASE, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);
SAME(MP_CUPTI_POOL_CREATED, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED);
SAME(MP_CUPTI_POOL_DESTROYED, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED);
SAME(MP_CUPTI_POOL_TRIMMED, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED);

SAME(MP_CUPTI_OFF_KIND, offsetof(CUpti_ActivityMemory4, kind));
SAME(MP_CUPTI_MEM1_SIZE, sizeof(CUpti_ActivityMemory));
SAME(MP_CUPTI_MEM1_MEMORY_KIND, offsetof(CUpti_ActivityMemory, memoryKind));
SAME(MP_CUPTI_MEM1_ADDRESS, offsetof(CUpti_ActivityMemory, address));
SAME(MP_CUPTI_MEM1_BYTES, offsetof(CUpti_ActivityMemory, bytes));
SAME(MP_CUPTI_MEM1_START, offsetof(CUpti_ActivityMemory, start));
SAME(MP_CUPTI_MEM1_END, offsetof(CUpti_ActivityMemory, end));
SAME(MP_CUPTI_MEM1_DEVICE, offsetof(CUpti_ActivityMemory, deviceId));
SAME(MP_CUPTI_MEM1_CONTEXT, offsetof(CUpti_ActivityMemory, contextId));

SAME(MP_CUPTI_MEM4_SIZE, sizeof(CUpti_ActivityMemory4));
SAME(MP_CUPTI_MEM4_OPERATION, offsetof(CUpti_ActivityMemory4, memoryOperationType));
SAME(MP_CUPTI_MEM4_MEMORY_KIND, offsetof(CUpti_ActivityMemory4, memoryKind));
SAME(MP_CUPTI_MEM4_CORRELATION, offsetof(CUpti_ActivityMemory4, correlationId));
SAME(MP_CUPTI_MEM4_ADDRESS, offsetof(CUpti_ActivityMemory4, address));
SAME(MP_CUPTI_MEM4_BYTES, offsetof(CUpti_ActivityMemory4, bytes));
SAME(MP_CUPTI_MEM4_TIMESTAMP, offsetof(CUpti_ActivityMemory4, timestamp));
SAME(MP_CUPTI_MEM4_DEVICE, offsetof(CUpti_ActivityMemory4, deviceId));
SAME(MP_CUPTI_MEM4_CONTEXT, offsetof(CUpti_ActivityMemory4, contextId));
SAME(MP_CUPTI_MEM4_IS_ASYNC, offsetof(CUpti_ActivityMemory4, isAsync));
SAME(MP_CUPTI_MEM4_POOL_ADDRESS, offsetof(CUpti_ActivityMemory4, memoryPoolConfig.address));
SAME(MP_CUPTI_MEM4_POOL_SIZE, offsetof(CUpti_ActivityMemory4, memoryPoolConfig.pool.size));
SAME(MP_CUPTI_MEM4_POOL_UTILIZED, offsetof(CUpti_ActivityMemory4, memoryPoolConfig.utilizedSize));
#if CUPTI_API_VERSION >= 130001 /* the field's age is unknown to us: checked from the release we follow */
SAME(MP_CUPTI_MEM4_SOURCE, offsetof(CUpti_ActivityMemory4, source));
#endif

SAME(MP_CUPTI_POOL3_SIZE, sizeof(CUpti_ActivityMemoryPool3));
SAME(MP_CUPTI_POOL3_OPERATION, offsetof(CUpti_ActivityMemoryPool3, memoryPoolOperationType));
SAME(MP_CUPTI_POOL3_DEVICE, offsetof(CUpti_ActivityMemoryPool3, deviceId));
SAME(MP_CUPTI_POOL3_ADDRESS, offsetof(CUpti_ActivityMemoryPool3, address));
SAME(MP_CUPTI_POOL3_BYTES, offsetof(CUpti_ActivityMemoryPool3, size));
SAME(MP_CUPTI_POOL3_TIMESTAMP, offsetof(CUpti_ActivityMemoryPool3, timestamp));
SAME(MP_CUPTI_POOL3_UTILIZED, offsetof(CUpti_ActivityMemoryPool3, utilizedSize));
SAME(MP_CUPTI_API_SIZE, sizeof(CUpti_ActivityAPI));

SAME(MP_CUPTI_DOMAIN_DRIVER, CUPTI_CB_DOMAIN_DRIVER_API);
SAME(MP_CUPTI_DOMAIN_RUNTIME, CUPTI_CB_DOMAIN_RUNTIME_API);
SAME(MP_CUPTI_API_ENTER, CUPTI_API_ENTER);
SAME(MP_CUPTI_API_EXIT, CUPTI_API_EXIT);
SAME(MP_CUPTI_CB_SITE, offsetof(CUpti_CallbackData, callbackSite));
SAME(MP_CUPTI_CB_PARAMS, offsetof(CUpti_CallbackData, functionParams));
SAME(MP_CUPTI_CB_RETURN, offsetof(CUpti_CallbackData, functionReturnValue));
SAME(MP_CUPTI_CB_CORRELATION, offsetof(CUpti_CallbackData, correlationId));
SAME(MP_CUPTI_CB_SIZE, sizeof(CUpti_CallbackData));

SAME(MP_CUPTI_RT_cudaMalloc, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
SAME(MP_CUPTI_RT_cudaMallocPitch, CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020);
SAME(MP_CUPTI_RT_cudaMallocHost, CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020);
SAME(MP_CUPTI_RT_cudaMallocManaged, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000);
SAME(MP_CUPTI_RT_cudaMallocAsync, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020);
SAME(MP_CUPTI_RT_cudaMallocAsync_ptsz, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020);
SAME(MP_CUPTI_DRV_cuMemAlloc_v2, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2);
SAME(MP_CUPTI_DRV_cuMemAllocManaged, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged);
SAME(MP_CUPTI_DRV_cuMemMap, CUPTI_DRIVER_TRACE_CBID_cuMemMap);
SAME(MP_CUPTI_DRV_cuMemUnmap, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap);
SAME(MP_CUPTI_DRV_cuMemAllocAsync, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync);

SAME(MP_CUPTI_SUCCESS, CUPTI_SUCCESS);
SAME(MP_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
SAME(MP_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
SAME(MP_CUPTI_FLUSH_FORCED, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);

/* The parameter structs: pointer/size first and second. */
SAME(MP_CUPTI_PARAM_SIZE, offsetof(cudaMalloc_v3020_params, size));
SAME(MP_CUPTI_PARAM_SIZE, offsetof(cudaMallocHost_v3020_params, size));
SAME(MP_CUPTI_PARAM_SIZE, offsetof(cudaMallocManaged_v6000_params, size));
SAME(MP_CUPTI_PARAM_SIZE, offsetof(cudaMallocAsync_v11020_params, size));
SAME(MP_CUPTI_PARAM_SIZE, offsetof(cuMemAlloc_v2_params, bytesize));
SAME(MP_CUPTI_PARAM_SIZE, offsetof(cuMemAllocManaged_params, bytesize));
SAME(MP_CUPTI_PARAM_SIZE, offsetof(cuMemAllocAsync_params, bytesize));
SAME(MP_CUPTI_PARAM_PTR, offsetof(cuMemMap_params, ptr));
SAME(MP_CUPTI_PARAM_SIZE, offsetof(cuMemMap_params, size));
SAME(MP_CUPTI_PARAM_PTR, offsetof(cuMemUnmap_params, ptr));

/* A translation unit must declare something. */
int mp__cupti_abi_checked(void);
int mp__cupti_abi_checked(void)
{
	return 1;
}
