/* fake_cupti.c - a stand-in for libcupti (MEMPROF_CUPTI_LIB) with the ten
 * entry points the injection library calls, so that its whole path runs on
 * machines without a GPU: the start, the clock callback, buffers handed
 * over at each forced flush, the callbacks of a failed allocation, dropped
 * records. What the "GPU" does is driven by the test program
 * (gpu_fake_victim.c) through the fake_cuda_* functions below; records are
 * written at cupti_layout.h's offsets. Not thread-safe beyond a mutex
 * around the pending buffer: enough for one victim thread and the
 * injection library's flusher. */
#include "cupti_layout.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef void (*req_fn)(uint8_t **, size_t *, size_t *);
typedef void (*done_fn)(void *, uint32_t, uint8_t *, size_t, size_t);
typedef void (*cb_fn)(void *, uint32_t, uint32_t, const void *);

static uint64_t (*clock_cb)(void);
static req_fn on_request;
static done_fn on_done;
static cb_fn on_callback;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Alignas(8) uint8_t pending[64 * MP_CUPTI_MEM4_SIZE];
static size_t pending_len;
static int dropped_told;
static int allocation_source; /* cuptiActivityEnableAllocationSource(1) was called */

API int cuptiGetVersion(uint32_t *v);
API int cuptiGetResultString(int r, const char **s);
API int cuptiActivityRegisterTimestampCallback(uint64_t (*fn)(void));
API int cuptiActivityRegisterCallbacks(req_fn req, done_fn done);
API int cuptiActivityEnable(int kind);
API int cuptiActivityFlushAll(uint32_t flag);
API int cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, void **rec);
API int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t stream, size_t *dropped);
API int cuptiSubscribe(void **sub, cb_fn cb, void *ud);
API int cuptiEnableCallback(uint32_t enable, void *sub, int domain, uint32_t cbid);
API void fake_cuda_malloc(uint64_t address, uint64_t bytes);
API void fake_cuda_free(uint64_t address);
API void fake_cuda_malloc_fails(uint64_t bytes);
API int cuptiActivityEnableAllocationSource(uint8_t enable);
API void fake_cuda_library_malloc(uint64_t address, uint64_t bytes, const char *source);
API void fake_cuda_map(uint64_t address, uint64_t bytes);
API void fake_cuda_unmap(uint64_t address, uint64_t bytes);

int cuptiGetVersion(uint32_t *v)
{
	*v = 130001;
	return 0;
}

int cuptiGetResultString(int r, const char **s)
{
	(void)r;
	*s = "FAKE_CUPTI_RESULT";
	return 0;
}

int cuptiActivityRegisterTimestampCallback(uint64_t (*fn)(void))
{
	clock_cb = fn;
	return 0;
}

int cuptiActivityEnableAllocationSource(uint8_t enable)
{
	allocation_source = enable;
	return 0;
}

int cuptiActivityRegisterCallbacks(req_fn req, done_fn done)
{
	on_request = req, on_done = done;
	return 0;
}

int cuptiActivityEnable(int kind)
{
	return kind == MP_CUPTI_KIND_MEMORY2 || kind == MP_CUPTI_KIND_MEMORY_POOL ? 0 : 21;
}

/* Every pending record, in one buffer the client asked for. */
int cuptiActivityFlushAll(uint32_t flag)
{
	uint8_t *buf = NULL;
	size_t size = 0, max = 0, n;

	(void)flag;
	pthread_mutex_lock(&mu);
	n = pending_len;
	if (n) {
		on_request(&buf, &size, &max);
		if (!buf || size < n) {
			pthread_mutex_unlock(&mu);
			return 1;
		}
		memcpy(buf, pending, n);
		pending_len = 0;
	}
	pthread_mutex_unlock(&mu);
	if (n)
		on_done(NULL, 0, buf, size, n);
	return 0;
}

/* Our records are all CUpti_ActivityMemory4. */
int cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, void **rec)
{
	uint8_t *next = *rec ? (uint8_t *)*rec + MP_CUPTI_MEM4_SIZE : buf;

	if ((size_t)(next - buf) + MP_CUPTI_MEM4_SIZE > valid)
		return 12; /* CUPTI_ERROR_MAX_LIMIT_REACHED: the end */
	*rec = next;
	return 0;
}

int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t stream, size_t *dropped)
{
	(void)ctx, (void)stream;
	*dropped = dropped_told ? 0 : 2; /* two records lost, told once */
	dropped_told = 1;
	return 0;
}

int cuptiSubscribe(void **sub, cb_fn cb, void *ud)
{
	(void)ud;
	on_callback = cb;
	*sub = &on_callback;
	return 0;
}

int cuptiEnableCallback(uint32_t enable, void *sub, int domain, uint32_t cbid)
{
	(void)enable, (void)sub, (void)domain, (void)cbid;
	return 0;
}

static void record_from(uint32_t op, uint64_t address, uint64_t bytes, uint32_t context, const char *source)
{
	uint8_t *r;
	uint64_t t = clock_cb();

	pthread_mutex_lock(&mu);
	r = pending + pending_len;
	memset(r, 0, MP_CUPTI_MEM4_SIZE);
	r[MP_CUPTI_OFF_KIND] = MP_CUPTI_KIND_MEMORY2;
	memcpy(r + MP_CUPTI_MEM4_OPERATION, &op, 4);
	r[MP_CUPTI_MEM4_MEMORY_KIND] = MP_CUPTI_MEM_DEVICE;
	memcpy(r + MP_CUPTI_MEM4_ADDRESS, &address, 8);
	memcpy(r + MP_CUPTI_MEM4_BYTES, &bytes, 8);
	memcpy(r + MP_CUPTI_MEM4_TIMESTAMP, &t, 8);
	memcpy(r + MP_CUPTI_MEM4_CONTEXT, &context, 4);
	if (allocation_source)
		memcpy(r + MP_CUPTI_MEM4_SOURCE, &source, 8);
	if (pending_len + MP_CUPTI_MEM4_SIZE < sizeof pending)
		pending_len += MP_CUPTI_MEM4_SIZE;
	pthread_mutex_unlock(&mu);
}

static void record(uint32_t op, uint64_t address, uint64_t bytes, uint32_t context)
{
	record_from(op, address, bytes, context, "/opt/fake/libfake_program.so");
}

/* A cudaMalloc made by a library (CUPTI names it as the record's source
 * when asked to). */
void fake_cuda_library_malloc(uint64_t address, uint64_t bytes, const char *source)
{
	record_from(MP_CUPTI_OP_ALLOCATION, address, bytes, 1, source);
}

void fake_cuda_malloc(uint64_t address, uint64_t bytes)
{
	record(MP_CUPTI_OP_ALLOCATION, address, bytes, 1);
}

void fake_cuda_free(uint64_t address)
{
	record(MP_CUPTI_OP_RELEASE, address, 0, 1);
}

/* A callback as CUPTI makes it: site, parameters (p0, p1), result. */
static void callback(uint32_t domain, uint32_t cbid, uint32_t site, uint64_t p0, uint64_t p1, int32_t result)
{
	_Alignas(8) uint8_t data[MP_CUPTI_CB_SIZE] = {0};
	uint64_t params[2] = {p0, p1};
	const void *params_p = params, *result_p = &result;

	memcpy(data + MP_CUPTI_CB_SITE, &site, 4);
	memcpy(data + MP_CUPTI_CB_PARAMS, &params_p, 8);
	memcpy(data + MP_CUPTI_CB_RETURN, &result_p, 8);
	on_callback(NULL, domain, cbid, data);
}

/* cudaMalloc(&p, bytes) returning cudaErrorMemoryAllocation (2), with the
 * callbacks the H200 (CUDA 13.0) made for it: the runtime call's ENTER,
 * the cuMemAlloc_v2 it makes inside (ENTER, EXIT: CUDA_ERROR_OUT_OF_MEMORY
 * 2), the runtime call's EXIT. */
void fake_cuda_malloc_fails(uint64_t bytes)
{
	void *ptr = NULL, *pp = &ptr;
	uint64_t out;

	memcpy(&out, &pp, 8);
	callback(MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMalloc, MP_CUPTI_API_ENTER, out, bytes, 0);
	callback(MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemAlloc_v2, MP_CUPTI_API_ENTER, out, bytes, 0);
	callback(MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemAlloc_v2, MP_CUPTI_API_EXIT, out, bytes, 2);
	callback(MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMalloc, MP_CUPTI_API_EXIT, out, bytes, 2);
}

/* cuMemMap(address, bytes, ...) and cuMemUnmap as the H200 reported them:
 * the driver's callbacks (to any client subscribed to them) and a MEMORY2
 * device record with no context (CUPTI_INVALID_CONTEXT_ID) for each. */
void fake_cuda_map(uint64_t address, uint64_t bytes)
{
	callback(MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemMap, MP_CUPTI_API_ENTER, address, bytes, 0);
	callback(MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemMap, MP_CUPTI_API_EXIT, address, bytes, 0);
	record(MP_CUPTI_OP_ALLOCATION, address, bytes, 0xffffffffu);
}

void fake_cuda_unmap(uint64_t address, uint64_t bytes)
{
	callback(MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemUnmap, MP_CUPTI_API_ENTER, address, bytes, 0);
	callback(MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemUnmap, MP_CUPTI_API_EXIT, address, bytes, 0);
	record(MP_CUPTI_OP_RELEASE, address, bytes, 0xffffffffu);
}
