/* memprof/cupti_translate.h - CUPTI memory records into memprof events.
 *
 * Pure code: no CUDA header, no libcupti call, no I/O. The injection
 * library (cupti_backend.c) feeds it the buffers CUPTI completes; tests and
 * the replay of dumped buffers (memprof/cupti_dump.h) feed it synthesized
 * or recorded ones. Layouts: cupti_layout.h (CUPTI 12.x/13.0).
 *
 * What becomes what (docs/gpu.md):
 *   - device memory (cudaMalloc, cuMemAlloc, arrays, static device
 *     memory): a segment reserved from the driver = a REGION of the
 *     device's memory id "GPU:<device>"; frameworks' tensors annotated
 *     into the same memory id are the allocations inside it;
 *   - stream-ordered allocations (cudaMallocAsync, isAsync records): an
 *     ALLOC inside its pool, which is a REGION sized by the pool's
 *     reported size (MEMORY_POOL records and each record's pool size);
 *   - pinned / pageable host and managed memory: an ALLOC of the memory ids
 *     "CUDA:pinned_host" and "CUDA:managed";
 *   - virtual memory management (each cuMemMap'd chunk, PyTorch's
 *     expandable segments): a REGION of the device, from its MEMORY2
 *     records (contextId CUPTI_INVALID_CONTEXT_ID; measured on an H200,
 *     CUDA 13.0: every map and unmap is reported), not from callbacks,
 *     which would count each chunk twice;
 *   - device memory of modules' statics (DEVICE_STATIC): a REGION of
 *     "GPU:<device>:static";
 *   - a segment a CUDA library allocated for itself (the record's source,
 *     where the translator's is_library tells it): a REGION of
 *     "GPU:<device>:libraries";
 *   - a failed allocation call (callbacks): ALLOC_FAILED with its size.
 */
#ifndef MEMPROF_CUPTI_TRANSLATE_H
#define MEMPROF_CUPTI_TRANSLATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where an event lands: its memory id is named from this. */
enum {
	MP_GPU_SPACE_DEVICE = 0, /* "GPU:<device>" */
	MP_GPU_SPACE_PINNED = 1, /* "CUDA:pinned_host" (pinned and pageable host memory) */
	MP_GPU_SPACE_MANAGED = 2, /* "CUDA:managed" */
	/* "GPU:<device>:static": the device memory of loaded modules'
	 * __device__ variables (MEMORY2 kind DEVICE_STATIC), which the driver
	 * places itself, no allocation call of the program's: kept out of
	 * GPU:<device> so that its reserved bytes are those of the program's
	 * calls (what a framework counts as reserved) */
	MP_GPU_SPACE_STATIC = 3,
	/* "GPU:<device>:libraries": segments that CUDA's own libraries
	 * (cuBLAS, cuDNN, ...) allocated for themselves, told by the
	 * allocation's source (the translator's is_library): not the
	 * framework's reserved memory either */
	MP_GPU_SPACE_LIBRARY = 4
};

typedef struct mp_gpu_event {
	uint64_t time_ns;   /* CUPTI's timestamp (the capture's clock: see the backend) */
	uint64_t address;   /* ALLOC, FREE, REGION_ADD, REGION_REMOVE */
	uint64_t bytes;     /* ALLOC, ALLOC_FAILED, REGION_ADD */
	uint32_t device;    /* CUDA device ordinal (space DEVICE) */
	uint32_t context;   /* CUDA context id, 0 when unknown */
	uint32_t correlation; /* the API call's correlation id, 0 when unknown */
	uint8_t kind;       /* mp_event_kind_t: ALLOC, FREE, ALLOC_FAILED, REGION_ADD, REGION_REMOVE */
	uint8_t space;      /* MP_GPU_SPACE_* */
} mp_gpu_event_t;

/* What the translation saw, for the user's summary and the tests. */
typedef struct mp_cupti_stats {
	uint64_t records;         /* records handed to mp_cupti_translate */
	uint64_t events;          /* events it produced */
	uint64_t skipped_kinds;   /* records of kinds memprof does not translate */
	uint64_t invalid;         /* memory records with an unknown operation or memory kind */
	uint64_t truncated_bytes; /* bytes at a buffer's end too short for a record (or of a
				     kind whose length memprof does not know) */
	uint64_t pools_full;      /* pools beyond MP_CUPTI_MAX_POOLS (their resizes are lost), library
				     segments beyond MP_CUPTI_MAX_LIBRARY_SEGMENTS (left in GPU:N) */
} mp_cupti_stats_t;

/* The state the translation keeps: the pools' current sizes, so that a
 * pool that grows or is trimmed becomes a REGION_REMOVE + REGION_ADD. */
#define MP_CUPTI_MAX_POOLS 64
typedef struct mp_cupti_pool {
	uint64_t address, size;
	uint32_t device;
	uint8_t live;
} mp_cupti_pool_t;

/* The segments put in MP_GPU_SPACE_LIBRARY, so that their releases go
 * there too (a release record need not carry its source). */
#define MP_CUPTI_MAX_LIBRARY_SEGMENTS 64
typedef struct mp_cupti_translator {
	mp_cupti_pool_t pools[MP_CUPTI_MAX_POOLS];
	mp_cupti_stats_t stats;
	/* Optional (NULL: every segment is GPU:N's): 1 when the record's
	 * source (MEMORY2's `source`, a const char * of the traced process,
	 * passed as an integer: the translation never reads it) names a CUDA
	 * library. Set only where the pointer is valid: the backend, not a
	 * replay. */
	int (*is_library)(uint64_t source);
	mp_cupti_pool_t library_segments[MP_CUPTI_MAX_LIBRARY_SEGMENTS]; /* live ones: device, address (size unused) */
} mp_cupti_translator_t;

void mp_cupti_translator_init(mp_cupti_translator_t *t);

/* Walk a completed buffer's first `valid` bytes the way
 * cuptiActivityGetNextRecord does: *pos is the offset of the next record
 * (0 to start). Returns 1 with *rec and *len set for each record, 0 at the
 * end. A tail too short for a whole record, or a record of a kind whose
 * length memprof does not know, ends the walk: its bytes are counted in
 * t->stats.truncated_bytes. */
int mp_cupti_next_record(mp_cupti_translator_t *t, const uint8_t *buf, size_t valid, size_t *pos,
			 const uint8_t **rec, size_t *len);

/* Translate one record of len bytes (len may be more than the record:
 * the real iterator does not say). Writes 0 to MP_CUPTI_MAX_OUT events to
 * out and returns how many; unknown kinds and invalid records give 0 and
 * are counted. */
#define MP_CUPTI_MAX_OUT 3
int mp_cupti_translate(mp_cupti_translator_t *t, const void *rec, size_t len, mp_gpu_event_t *out);

/* Translate a runtime/driver callback (CUpti_CallbackData) of a call that
 * just returned (site EXIT; ENTER gives 0): a failed allocation call gives
 * ALLOC_FAILED with its size (cuMemMap / cuMemUnmap give nothing: their
 * MEMORY2 records are the mappings). device: the calling thread's current device
 * (the callback data does not say), now_ns: the time. Returns the number
 * of events (0 or 1). */
int mp_cupti_translate_callback(mp_cupti_translator_t *t, uint32_t domain, uint32_t cbid, const void *cbdata,
				uint32_t device, uint64_t now_ns, mp_gpu_event_t *out);

/* Whether a callback is a call of the program's own (1) or a driver call
 * that a runtime call we watch makes inside itself (0: cudaMalloc calls
 * cuMemAlloc; its failure is the runtime call's, counted once at the
 * runtime call's exit). *depth is the calling thread's count of watched
 * runtime calls in progress, kept by the caller (thread-local) and updated
 * here at their ENTER and EXIT sites. Pure: no CUPTI call. */
int mp_cupti_callback_is_own(uint32_t domain, const void *cbdata, unsigned *depth);

/* 1 when path (an allocation's source: a shared object's path) is one of
 * CUDA's own libraries: libcublas, libcublasLt, libcudnn*, libcufft,
 * libcusparse, libcusolver, libcurand, libnccl, libcutensor. */
int mp_cupti_source_is_library(const char *path);

/* The memory id's name of an event ("GPU:0", "CUDA:pinned_host", ...) into
 * buf; returns buf. */
const char *mp_gpu_memory_name(const mp_gpu_event_t *e, char *buf, size_t size);

/* The mp_memory_kind_t of an event's memory id: device (2), pinned host
 * (3) or managed (4). */
int mp_gpu_memory_kind(const mp_gpu_event_t *e);

#ifdef __cplusplus
}
#endif
#endif
