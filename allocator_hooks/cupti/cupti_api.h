/* cupti_api.h - the CUPTI and CUDA driver entry points the backend calls,
 * reached with dlopen/dlsym (internal).
 *
 * Declared here, with the types reduced to what crosses the call (ints,
 * pointers), so that the injection library needs no CUDA header to build
 * and no CUDA library to load: where libcupti is missing the backend says
 * so and does nothing. Signatures: cupti_activity.h and cupti_callbacks.h
 * of CUPTI 12.x/13.0 (CUptiResult, the kinds and domains are ints there:
 * enums), transcribed by hand; the constants below are compared with the
 * real ones by cupti_abi_check.c where the toolkit is installed.
 */
#ifndef MP_CUPTI_API_H
#define MP_CUPTI_API_H

#include <stddef.h>
#include <stdint.h>

#define CUPTIAPI
#define MP_CUPTI_SUCCESS 0
#define MP_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS 39
#define MP_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES 35
#define MP_CUPTI_FLUSH_FORCED 1u

typedef void(CUPTIAPI *mp_cupti_buffer_requested_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void(CUPTIAPI *mp_cupti_buffer_completed_fn)(void *context, uint32_t stream_id, uint8_t *buffer,
						     size_t size, size_t valid_size);
typedef void(CUPTIAPI *mp_cupti_callback_fn)(void *userdata, uint32_t domain, uint32_t cbid, const void *data);
typedef uint64_t(CUPTIAPI *mp_cupti_timestamp_fn)(void);

typedef struct mp_cupti_api {
	void *lib;
	int (*get_version)(uint32_t *version);
	int (*get_result_string)(int result, const char **str);
	int (*register_timestamp)(mp_cupti_timestamp_fn fn);
	int (*register_callbacks)(mp_cupti_buffer_requested_fn req, mp_cupti_buffer_completed_fn done);
	int (*activity_enable)(int kind);
	int (*flush_all)(uint32_t flag);
	int (*get_next_record)(uint8_t *buffer, size_t valid, void **record);
	int (*get_num_dropped)(void *context, uint32_t stream_id, size_t *dropped);
	int (*subscribe)(void **subscriber, mp_cupti_callback_fn cb, void *userdata);
	int (*enable_callback)(uint32_t enable, void *subscriber, int domain, uint32_t cbid);
	/* optional (CUPTI 12.6+): records say which shared object allocated */
	int (*enable_allocation_source)(uint8_t enable);
	/* the driver's (libcuda, already loaded by the time we are): optional */
	int (*ctx_get_device)(int *device);
	int (*device_total_mem)(size_t *bytes, int device);
	int (*device_count)(int *count);
} mp_cupti_api_t;

/* dlopen libcupti and find the entry points. 0, or -1 with why in msg. */
int mp__cupti_load(mp_cupti_api_t *api, char *msg, size_t size);

/* Register the clock and the buffer callbacks, subscribe to the callbacks,
 * enable the memory records. 0, or -1 with a sentence in msg (naming the
 * other CUPTI client when there is one). */
int mp__cupti_enable(mp_cupti_api_t *api, mp_cupti_timestamp_fn ts, mp_cupti_buffer_requested_fn req,
		     mp_cupti_buffer_completed_fn done, mp_cupti_callback_fn cb, char *msg, size_t size);

/* The calling thread's current device (0 when the driver does not say). */
uint32_t mp__cupti_current_device(const mp_cupti_api_t *api);
/* The number of devices, or -1 while the driver cannot say (not
 * initialised yet). */
int mp__cupti_device_count(const mp_cupti_api_t *api);
/* A device's memory in bytes (0 when unknown). */
uint64_t mp__cupti_device_memory(const mp_cupti_api_t *api, uint32_t device);

#endif
