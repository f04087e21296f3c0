/* cupti_api.c - libcupti found and driven through dlsym (cupti_api.h). */
#include "cupti_api.h"

#include "cupti_layout.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef MEMPROF_CUPTI_BUILD_PATH
#define MEMPROF_CUPTI_BUILD_PATH ""
#endif

#define FIND(field, name)                                                                  \
	do {                                                                               \
		if (!(*(void **)(void *)&api->field = dlsym(api->lib, name))) {             \
			snprintf(msg, size, "%s has no %s (CUPTI older than 12?)", path, name); \
			return -1;                                                         \
		}                                                                          \
	} while (0)

/* A driver entry point: global when the program links libcuda, else in
 * the libcuda.so.1 that loaded us (PyTorch's runtime dlopens the driver
 * RTLD_LOCAL: on the H200 run, without this, GPU:0's capacity was
 * unknown). The handle is not closed: the driver stays loaded. */
static void *driver_symbol(const char *name)
{
	static void *driver;
	void *f = dlsym(RTLD_DEFAULT, name);

	if (f)
		return f;
	if (!driver)
		driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	return driver ? dlsym(driver, name) : NULL;
}

int mp__cupti_load(mp_cupti_api_t *api, char *msg, size_t size)
{
	const char *env = getenv("MEMPROF_CUPTI_LIB");
	const char *names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so", MEMPROF_CUPTI_BUILD_PATH};
	const char *path = NULL;
	size_t i;

	if (env && *env) {
		path = env;
		api->lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
	}
	for (i = 0; !env && !api->lib && i < sizeof names / sizeof names[0]; i++)
		if (*names[i] && (api->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)))
			path = names[i];
	if (!api->lib) {
		snprintf(msg, size, "libcupti not found (%s; set MEMPROF_CUPTI_LIB to its path)",
			 env && *env ? env : "tried libcupti.so.13, .so.12, .so");
		return -1;
	}
	FIND(get_version, "cuptiGetVersion");
	FIND(get_result_string, "cuptiGetResultString");
	FIND(register_timestamp, "cuptiActivityRegisterTimestampCallback");
	FIND(register_callbacks, "cuptiActivityRegisterCallbacks");
	FIND(activity_enable, "cuptiActivityEnable");
	FIND(flush_all, "cuptiActivityFlushAll");
	FIND(get_next_record, "cuptiActivityGetNextRecord");
	FIND(get_num_dropped, "cuptiActivityGetNumDroppedRecords");
	FIND(subscribe, "cuptiSubscribe");
	FIND(enable_callback, "cuptiEnableCallback");
	*(void **)(void *)&api->enable_allocation_source = dlsym(api->lib, "cuptiActivityEnableAllocationSource");
	*(void **)(void *)&api->ctx_get_device = driver_symbol("cuCtxGetDevice");
	*(void **)(void *)&api->device_total_mem = driver_symbol("cuDeviceTotalMem_v2");
	*(void **)(void *)&api->device_count = driver_symbol("cuDeviceGetCount");
	return 0;
}

static const char *result(const mp_cupti_api_t *api, int rc)
{
	const char *s = NULL;

	if (api->get_result_string(rc, &s) != MP_CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

int mp__cupti_enable(mp_cupti_api_t *api, mp_cupti_timestamp_fn ts, mp_cupti_buffer_requested_fn req,
		     mp_cupti_buffer_completed_fn done, mp_cupti_callback_fn cb, char *msg, size_t size)
{
	static const struct {
		int domain;
		uint32_t cbid;
	} calls[] = {
		{MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMalloc},
		{MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMallocHost},
		{MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMallocManaged},
		{MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMallocAsync},
		{MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMallocAsync_ptsz},
		{MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemAlloc_v2},
		{MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemAllocManaged},
		{MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemAllocAsync},
	};
	void *sub = NULL;
	size_t i;
	int rc;

	/* the clock first: records made before it would be on CUPTI's own */
	if ((rc = api->register_timestamp(ts)) != MP_CUPTI_SUCCESS ||
	    (rc = api->register_callbacks(req, done)) != MP_CUPTI_SUCCESS) {
		snprintf(msg, size, "CUPTI refused its setup (%s: no GPU, or no usable driver?)", result(api, rc));
		return -1;
	}
	if ((rc = api->subscribe(&sub, cb, NULL)) != MP_CUPTI_SUCCESS) {
		if (rc == MP_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS)
			snprintf(msg, size, "another CUPTI client is attached to this process (Nsight Systems, "
				 "Nsight Compute, torch.profiler, ...); CUPTI takes one at a time");
		else if (rc == MP_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
			snprintf(msg, size, "CUPTI needs privileges this process lacks (%s)", result(api, rc));
		else
			snprintf(msg, size, "CUPTI could not start (%s: no GPU, or no usable driver?)",
				 result(api, rc));
		return -1;
	}
	/* which library made each segment (cuBLAS's own workspace is not the
	 * framework's reserved memory); without it, every segment is GPU:N's */
	if (api->enable_allocation_source)
		api->enable_allocation_source(1);
	for (i = 0; i < sizeof calls / sizeof calls[0]; i++)
		api->enable_callback(1, sub, calls[i].domain, calls[i].cbid); /* failures: the events are missed */
	if ((rc = api->activity_enable(MP_CUPTI_KIND_MEMORY2)) != MP_CUPTI_SUCCESS ||
	    (rc = api->activity_enable(MP_CUPTI_KIND_MEMORY_POOL)) != MP_CUPTI_SUCCESS) {
		snprintf(msg, size, "CUPTI could not record memory activity (%s)", result(api, rc));
		return -1;
	}
	return 0;
}

uint32_t mp__cupti_current_device(const mp_cupti_api_t *api)
{
	int d = 0;

	if (!api->ctx_get_device || api->ctx_get_device(&d) != 0 || d < 0)
		return 0;
	return (uint32_t)d;
}

int mp__cupti_device_count(const mp_cupti_api_t *api)
{
	int n = 0;

	if (!api->device_count || api->device_count(&n) != 0 || n < 0)
		return -1;
	return n;
}

uint64_t mp__cupti_device_memory(const mp_cupti_api_t *api, uint32_t device)
{
	size_t bytes = 0;

	if (!api->device_total_mem || api->device_total_mem(&bytes, (int)device) != 0)
		return 0;
	return bytes;
}
