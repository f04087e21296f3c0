/* memprof/annotate.h - describe your program's memory to memprof.
 *
 * For frameworks and custom allocators (BFC-style pools, caching allocators)
 * whose allocations malloc hooks cannot see: declare a memory id, add the
 * regions (pools, segments) it carves allocations from, report each
 * allocation and free, failed allocations, step boundaries, and set what the
 * current thread is doing (op, region type, dtype, shape) with push/pop.
 *
 * Link with -lmemprof (libmemprof.so). Then:
 *   - with MEMPROF_OUTPUT unset, every call returns at once (one load and a
 *     branch): ship the instrumentation in production builds;
 *   - with MEMPROF_OUTPUT=path, the calls write a .memprof capture there
 *     (closed cleanly at exit; readable up to the last flush if killed);
 *   - under `memprof record` (the preload library), the same calls land in
 *     the preload's capture, next to the host heap, whether libmemprof is
 *     linked dynamically (the preload's symbols take precedence) or
 *     statically (libmemprof forwards to the preload it finds).
 *
 * Addresses are uint64_t so device addresses need no casts. None of these
 * functions changes errno, and none fails the program: when recording is
 * off or broken they do nothing.
 *
 * Thread safety: every function may be called from any thread. push/pop
 * scopes are per thread.
 */
#ifndef MEMPROF_ANNOTATE_H
#define MEMPROF_ANNOTATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MEMPROF_API __attribute__((visibility("default")))
#else
#define MEMPROF_API
#endif

/* What an allocation is for (TensorFlow's region types plus "stack"). */
typedef enum memprof_region {
	MEMPROF_REGION_INHERIT = -1, /* push: keep the enclosing scope's value */
	MEMPROF_REGION_UNKNOWN = 0,
	MEMPROF_REGION_PERSIST = 1,
	MEMPROF_REGION_DYNAMIC = 2,
	MEMPROF_REGION_OUTPUT = 3,
	MEMPROF_REGION_TEMP = 4,
	MEMPROF_REGION_STACK = 5,
} memprof_region_t;

/* What kind of memory a memory id is. */
typedef enum memprof_memory_kind {
	MEMPROF_MEMORY_OTHER = 0,
	MEMPROF_MEMORY_HOST = 1,
	MEMPROF_MEMORY_DEVICE = 2,
	MEMPROF_MEMORY_PINNED_HOST = 3,
	MEMPROF_MEMORY_MANAGED = 4,
} memprof_memory_kind_t;

/* 1 when a capture is being written, else 0. */
MEMPROF_API int memprof_enabled(void);

/* Declare a memory id ("GPU_0_bfc", "host") of a kind with a capacity in
 * bytes (0 if unknown). Returns the id (>= 0; the same name gives the same
 * id), or -1 when not recording. Pass the id to the calls below. */
MEMPROF_API int memprof_memory_declare(const char *name, memprof_memory_kind_t kind, uint64_t capacity_bytes);

/* A region (pool, segment, arena) that allocations of a memory id are
 * carved from: fragmentation is measured over the free space inside them. */
MEMPROF_API void memprof_region_add(int memory, uint64_t base, uint64_t size_bytes);
MEMPROF_API void memprof_region_remove(int memory, uint64_t base);

/* An allocation: the caller asked for `requested_bytes`, the allocator
 * reserved `allocated_bytes` at `address`. It is tagged with the calling
 * thread's current scope (op, region type, dtype, shape). */
MEMPROF_API void memprof_alloc(int memory, uint64_t address, uint64_t requested_bytes, uint64_t allocated_bytes);
MEMPROF_API void memprof_free(int memory, uint64_t address);
/* An allocation that failed (out of memory, or too fragmented). */
MEMPROF_API void memprof_alloc_failed(int memory, uint64_t requested_bytes);

/* A step (iteration) begins; steps are program-wide. */
MEMPROF_API void memprof_step(int64_t step);
/* A labelled instant ("checkpoint saved"). */
MEMPROF_API void memprof_mark(const char *label);

/* Enter a scope: the calling thread's following allocations carry this op
 * name, region type, dtype and shape (strings are copied; NULL or
 * MEMPROF_REGION_INHERIT keep the enclosing scope's value). Scopes nest up
 * to 64 deep; deeper pushes are counted and balanced by pops but change
 * nothing. Every push needs a pop on the same thread. */
MEMPROF_API void memprof_push(const char *op, memprof_region_t region, const char *dtype, const char *shape);
MEMPROF_API void memprof_pop(void);

/* Write everything recorded so far to disk now (a flush also happens every
 * 90 ms and at exit). */
MEMPROF_API void memprof_flush(void);

#if defined(__GNUC__)
/* A scope that pops itself at the end of the enclosing block (GCC/clang):
 *   { MEMPROF_SCOPE("conv2d", MEMPROF_REGION_TEMP, "float", "[8,64,56,56]"); ... } */
static inline void memprof__scope_end(int *unused) { (void)unused; memprof_pop(); }
#define MEMPROF__CAT2(a, b) a##b
#define MEMPROF__CAT(a, b) MEMPROF__CAT2(a, b)
#define MEMPROF_SCOPE(op, region, dtype, shape)                                              \
	int MEMPROF__CAT(memprof__scope_, __LINE__) __attribute__((cleanup(memprof__scope_end), unused)) = \
		(memprof_push((op), (region), (dtype), (shape)), 0)
#endif

#ifdef __cplusplus
}
#endif
#endif
