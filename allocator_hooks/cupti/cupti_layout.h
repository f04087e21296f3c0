/* cupti_layout.h - the CUPTI record layouts memprof reads, declared by
 * memprof itself (internal to allocator_hooks/cupti).
 *
 * Why our own declarations: the translation of CUPTI records into memprof
 * events is pure code that CI must build and test on machines without the
 * CUDA toolkit. So this file names only the fields we read, at their byte
 * offsets, with the enum values we compare against. The layouts are those
 * of CUPTI 12.x and 13.0 (CUPTI_API_VERSION 130001, x86_64 and aarch64:
 * records are packed with 8-byte alignment); cupti_abi_check.c compares
 * every offset and size here with the real <cupti_activity.h> whenever the
 * toolkit is installed, so a layout change fails the build instead of
 * mistranslating records.
 *
 * Fields are read with memcpy (mp__cupti_u32/u64): a record in a dumped
 * or truncated buffer need not be aligned.
 */
#ifndef MP_CUPTI_LAYOUT_H
#define MP_CUPTI_LAYOUT_H

#include <stdint.h>
#include <string.h>

/* CUpti_ActivityKind values */
#define MP_CUPTI_KIND_DRIVER 4
#define MP_CUPTI_KIND_RUNTIME 5
#define MP_CUPTI_KIND_MEMORY 45      /* CUpti_ActivityMemory (legacy) */
#define MP_CUPTI_KIND_MEMORY2 49     /* CUpti_ActivityMemory4 */
#define MP_CUPTI_KIND_MEMORY_POOL 50 /* CUpti_ActivityMemoryPool3 */

/* CUpti_ActivityMemoryKind */
#define MP_CUPTI_MEM_UNKNOWN 0
#define MP_CUPTI_MEM_PAGEABLE 1
#define MP_CUPTI_MEM_PINNED 2
#define MP_CUPTI_MEM_DEVICE 3
#define MP_CUPTI_MEM_ARRAY 4
#define MP_CUPTI_MEM_MANAGED 5
#define MP_CUPTI_MEM_DEVICE_STATIC 6
#define MP_CUPTI_MEM_MANAGED_STATIC 7

/* CUpti_ActivityMemoryOperationType */
#define MP_CUPTI_OP_ALLOCATION 1
#define MP_CUPTI_OP_RELEASE 2

/* CUpti_ActivityMemoryPoolOperationType */
#define MP_CUPTI_POOL_CREATED 1
#define MP_CUPTI_POOL_DESTROYED 2
#define MP_CUPTI_POOL_TRIMMED 3

/* Every record starts with its kind (uint32 at offset 0). */
#define MP_CUPTI_OFF_KIND 0

/* CUpti_ActivityMemory (kind MEMORY): one record per allocation, written
 * when it is freed (end = 0: never freed). */
#define MP_CUPTI_MEM1_SIZE 80
#define MP_CUPTI_MEM1_MEMORY_KIND 4
#define MP_CUPTI_MEM1_ADDRESS 8
#define MP_CUPTI_MEM1_BYTES 16
#define MP_CUPTI_MEM1_START 24
#define MP_CUPTI_MEM1_END 32
#define MP_CUPTI_MEM1_DEVICE 60
#define MP_CUPTI_MEM1_CONTEXT 64

/* CUpti_ActivityMemory4 (kind MEMORY2): one record per allocation and per
 * release. */
#define MP_CUPTI_MEM4_SIZE 128
#define MP_CUPTI_MEM4_OPERATION 4
#define MP_CUPTI_MEM4_MEMORY_KIND 8
#define MP_CUPTI_MEM4_CORRELATION 12
#define MP_CUPTI_MEM4_ADDRESS 16
#define MP_CUPTI_MEM4_BYTES 24
#define MP_CUPTI_MEM4_TIMESTAMP 32
#define MP_CUPTI_MEM4_DEVICE 52
#define MP_CUPTI_MEM4_CONTEXT 56
#define MP_CUPTI_MEM4_IS_ASYNC 72
#define MP_CUPTI_MEM4_POOL_ADDRESS 88   /* memoryPoolConfig.address */
#define MP_CUPTI_MEM4_POOL_SIZE 104     /* memoryPoolConfig.pool.size */
#define MP_CUPTI_MEM4_POOL_UTILIZED 112 /* memoryPoolConfig.utilizedSize */
/* const char *source: the shared object the allocation call came from
 * (set when cuptiActivityEnableAllocationSource(1) was called; NULL
 * otherwise, and in the H200's dumps, which predate it). A pointer into
 * the traced process: read only there, never in a replay. */
#define MP_CUPTI_MEM4_SOURCE 120

/* CUpti_ActivityMemoryPool3 (kind MEMORY_POOL) */
#define MP_CUPTI_POOL3_SIZE 80
#define MP_CUPTI_POOL3_OPERATION 4
#define MP_CUPTI_POOL3_DEVICE 20
#define MP_CUPTI_POOL3_ADDRESS 32
#define MP_CUPTI_POOL3_BYTES 40 /* size */
#define MP_CUPTI_POOL3_TIMESTAMP 56
#define MP_CUPTI_POOL3_UTILIZED 64

/* CUpti_ActivityAPI (kinds DRIVER and RUNTIME): skipped, but the iterator
 * must know their length to step over them. */
#define MP_CUPTI_API_SIZE 40

/* CUpti_CallbackDomain, CUpti_ApiCallbackSite */
#define MP_CUPTI_DOMAIN_DRIVER 1
#define MP_CUPTI_DOMAIN_RUNTIME 2
#define MP_CUPTI_API_ENTER 0
#define MP_CUPTI_API_EXIT 1

/* CUpti_CallbackData (x86_64/aarch64: pointers are 8 bytes) */
#define MP_CUPTI_CB_SITE 0
#define MP_CUPTI_CB_PARAMS 16       /* const void *functionParams */
#define MP_CUPTI_CB_RETURN 24       /* void *functionReturnValue (cudaError_t / CUresult) */
#define MP_CUPTI_CB_CORRELATION 64
#define MP_CUPTI_CB_SIZE 72

/* Callback ids (cupti_runtime_cbid.h, cupti_driver_cbid.h) of the calls
 * whose failures the activity records miss. cuMemMap / cuMemUnmap are not
 * subscribed: their MEMORY2 records are the mappings (CUDA 13.0, measured
 * on an H200); their ids stay for the translation's rule and its tests. */
#define MP_CUPTI_RT_cudaMalloc 20
#define MP_CUPTI_RT_cudaMallocPitch 21
#define MP_CUPTI_RT_cudaMallocHost 25
#define MP_CUPTI_RT_cudaMallocManaged 206
#define MP_CUPTI_RT_cudaMallocAsync 373
#define MP_CUPTI_RT_cudaMallocAsync_ptsz 374
#define MP_CUPTI_DRV_cuMemAlloc_v2 243
#define MP_CUPTI_DRV_cuMemAllocManaged 371
#define MP_CUPTI_DRV_cuMemMap 551
#define MP_CUPTI_DRV_cuMemUnmap 552
#define MP_CUPTI_DRV_cuMemAllocAsync 598

/* The parameter structs (generated_cuda_runtime_api_meta.h,
 * generated_cuda_meta.h): every allocation call we watch has the result
 * pointer first and the size second (offset 8); cuMemMap and cuMemUnmap
 * have the address first and the size second. */
#define MP_CUPTI_PARAM_PTR 0
#define MP_CUPTI_PARAM_SIZE 8

static inline uint32_t mp__cupti_u32(const uint8_t *rec, unsigned off)
{
	uint32_t v;
	memcpy(&v, rec + off, sizeof v);
	return v;
}

static inline uint64_t mp__cupti_u64(const uint8_t *rec, unsigned off)
{
	uint64_t v;
	memcpy(&v, rec + off, sizeof v);
	return v;
}

#endif
