/* backend.h - where annotation calls go (internal to allocator_hooks).
 *
 * annotate.c implements <memprof/annotate.h> over a capture writer. Which
 * writer, and whether to forward somewhere else, is the backend's business:
 *   - libmemprof.so (backend_env.c): a writer opened on MEMPROF_OUTPUT, or
 *     forwarding to a preload library found in the process;
 *   - the preload library: the writer it records the heap into.
 */
#ifndef MP_ANNOTATE_BACKEND_H
#define MP_ANNOTATE_BACKEND_H

#include <memprof/annotate.h>
#include <memprof/writer.h>

/* The table a preload library exports (symbol MEMPROF_API_TABLE_SYMBOL) so
 * that a statically linked libmemprof can forward to it. Append only. */
typedef struct memprof_api_table {
	int version; /* 2 */
	int (*enabled)(void);
	int (*memory_declare)(const char *, memprof_memory_kind_t, uint64_t);
	void (*region_add)(int, uint64_t, uint64_t);
	void (*region_remove)(int, uint64_t);
	void (*alloc)(int, uint64_t, uint64_t, uint64_t);
	void (*free)(int, uint64_t);
	void (*alloc_failed)(int, uint64_t);
	void (*step)(int64_t);
	void (*mark)(const char *);
	void (*push)(const char *, memprof_region_t, const char *, const char *);
	void (*pop)(void);
	void (*flush)(void);
	/* version 2: a lane on the writer for the GPU backend (allocator_hooks/
	 * cupti), whose events arrive late and carry their own times
	 * (memprof/writer.h, "lanes"). lane_open: NULL when not recording. */
	void *(*lane_open)(void);
	int (*lane_event)(void *lane, int kind, int memory, uint64_t time_ns, uint64_t address, uint64_t bytes);
	void (*lane_hold)(void *lane, uint64_t time_ns);
	void (*lane_dropped)(void *lane, int memory, uint64_t n);
	uint64_t (*origin_ns)(void);
} memprof_api_table_t;

#define MEMPROF_API_TABLE_SYMBOL "memprof_api_table_v1"

/* The backend's answer for the current call. */
typedef struct mp_annotate_target {
	mp_writer_t *writer;                 /* record here, or */
	const memprof_api_table_t *forward;  /* forward there, or neither: do nothing */
} mp_annotate_target_t;

/* Implemented by the backend. Must be cheap after the first call. */
mp_annotate_target_t mp__annotate_target(void);

#endif
