/* memprof/event.h - the event model: the shared vocabulary of every source
 * (capture reader, xplane importer, ...) and the solver.
 *
 * An event stream is a sequence of mp_event_t in global timestamp order.
 * Strings (op names, dtypes, shapes, metadata, memory names, mark labels) are interned:
 * events carry 32-bit ids that the source resolves (see memprof/source.h).
 * Id 0 always means "none".
 */
#ifndef MEMPROF_EVENT_H
#define MEMPROF_EVENT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, value, "name") */
#define MP_EVENT_KIND_MAP(X)                                                     \
	X(MP_EV_ALLOC,         1, "alloc")        /* address, requested, allocated */ \
	X(MP_EV_FREE,          2, "free")         /* address */                       \
	X(MP_EV_ALLOC_FAILED,  3, "alloc_failed") /* requested */                     \
	X(MP_EV_REGION_ADD,    4, "region_add")   /* address = base, requested = size */ \
	X(MP_EV_REGION_REMOVE, 5, "region_remove")/* address = base */                \
	X(MP_EV_STEP,          6, "step")         /* step = the new step */           \
	X(MP_EV_MARK,          7, "mark")         /* label = string id */             \
	X(MP_EV_MEMORY,        8, "memory")       /* memory = newly declared id */    \
	X(MP_EV_DROPPED,       9, "dropped")      /* requested = events lost */

typedef enum {
#define MP__EV_ENUM(name, val, str) name = (val),
	MP_EVENT_KIND_MAP(MP__EV_ENUM)
#undef MP__EV_ENUM
	MP_EV_KIND_MAX = 9
} mp_event_kind_t;

/* What an allocation is for (TensorFlow's region types plus "stack"). */
#define MP_REGION_TYPE_MAP(X)          \
	X(MP_REGION_UNKNOWN, 0, "unknown") \
	X(MP_REGION_PERSIST, 1, "persist") \
	X(MP_REGION_DYNAMIC, 2, "dynamic") \
	X(MP_REGION_OUTPUT,  3, "output")  \
	X(MP_REGION_TEMP,    4, "temp")    \
	X(MP_REGION_STACK,   5, "stack")

typedef enum {
#define MP__RT_ENUM(name, val, str) name = (val),
	MP_REGION_TYPE_MAP(MP__RT_ENUM)
#undef MP__RT_ENUM
	MP_REGION_TYPE_MAX = 5
} mp_region_type_t;

/* What kind of memory a memory id describes. */
#define MP_MEMORY_KIND_MAP(X)               \
	X(MP_MEMORY_OTHER,       0, "other")    \
	X(MP_MEMORY_HOST,        1, "host")     \
	X(MP_MEMORY_DEVICE,      2, "device")   \
	X(MP_MEMORY_PINNED_HOST, 3, "pinned_host") \
	X(MP_MEMORY_MANAGED,     4, "managed")

typedef enum {
#define MP__MK_ENUM(name, val, str) name = (val),
	MP_MEMORY_KIND_MAP(MP__MK_ENUM)
#undef MP__MK_ENUM
	MP_MEMORY_KIND_MAX = 4
} mp_memory_kind_t;

/* Event flags. */
enum {
	MP_EVENT_F_REALLOC = 1u << 0, /* this FREE/ALLOC is half of a realloc */
	MP_EVENT_F_STATS = 1u << 1,   /* stats below were reported by the allocator */
	MP_EVENT_F_PHASE_BEGIN = 1u << 2, /* MARK: a phase named by label begins (PyTorch's
	                                   * external_annotations START) */
	MP_EVENT_F_PHASE_END = 1u << 3,   /* MARK: the phase named by label ends */
};

/* Statistics an allocator reports about itself at an event (TF's BFC does,
 * in xplane captures). Valid only when flags & MP_EVENT_F_STATS. */
typedef struct mp_allocator_stats {
	uint64_t stack_bytes;  /* reserved ("stack") bytes */
	uint64_t heap_bytes;   /* allocated ("heap") bytes */
	uint64_t free_bytes;   /* available bytes */
	uint64_t peak_bytes;   /* the allocator's own peak bytes in use */
	double fragmentation;  /* in [0, 1] */
} mp_allocator_stats_t;

typedef struct mp_event {
	uint64_t time_ns;         /* ns since the capture's clock origin */
	uint64_t index;           /* position in the stream, 0-based */
	uint64_t address;         /* ALLOC, FREE, REGION_ADD, REGION_REMOVE */
	uint64_t requested_bytes; /* ALLOC, ALLOC_FAILED; REGION_ADD: size; DROPPED: count */
	uint64_t allocated_bytes; /* ALLOC: what the allocator really reserved */
	int64_t step;             /* step in force at this event; -1 if none */
	uint32_t memory;          /* memory id (see mp_source_memory) */
	uint32_t thread;          /* thread index within the capture */
	uint32_t op;              /* string id of the op name, 0 = none */
	uint32_t dtype;           /* string id, 0 = none */
	uint32_t shape;           /* string id, 0 = none */
	uint32_t label;           /* MARK: string id of the label */
	uint32_t stack;           /* call-stack id, 0 = none */
	uint32_t metadata;        /* string id, 0 = none: a free-form tag the user put on
	                           * the allocation (PyTorch's user_metadata); grouped
	                           * like op, dtype and shape */
	uint16_t flags;           /* MP_EVENT_F_* */
	uint8_t kind;             /* mp_event_kind_t */
	uint8_t region;           /* mp_region_type_t */
	mp_allocator_stats_t stats;
} mp_event_t;

/* Static names; "?" for out-of-range values. Never NULL. */
const char *mp_event_kind_name(int kind);
const char *mp_region_type_name(int region);
const char *mp_memory_kind_name(int kind);

/* A dtype as the report's text and the charts show it: "" for none (NULL,
 * empty, or "INVALID": TensorFlow's name of DataType 0, which means no
 * dtype), else the name itself. Never NULL. */
const char *mp_dtype_shown(const char *dtype);

/* Parse a region type name ("temp"); returns -1 if unknown. */
int mp_region_type_parse(const char *name);

#ifdef __cplusplus
}
#endif
#endif
