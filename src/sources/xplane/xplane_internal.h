/* xplane_internal.h - the XSpace reader's data structures (internal).
 *
 * Reading an xplane.pb takes two passes over the file, both streaming:
 *  1. find the first plane named "/host:CPU" and read its metadata maps
 *     (event metadata: which ids are MemoryAllocation/MemoryDeallocation;
 *     stat metadata: stat names and the strings ref_value points to). The
 *     maps are stored after the lines, so this pass skips the lines.
 *  2. walk the plane's lines and events, decode each memory event once (for
 *     its time and allocator) and keep a 16-byte index entry per event.
 * The index is sorted by (time, stored order); next() re-reads each event at
 * its offset through a few small per-line windows.
 */
#ifndef MEMPROF_XPLANE_INTERNAL_H
#define MEMPROF_XPLANE_INTERNAL_H

#include <memprof/protowire.h>
#include <memprof/source.h>
#include <memprof/xplane.h>

#include <memprof/strtab.h>
#include <memprof/vec.h>

/* Stat kinds xprof reads (by XStatMetadata.name). */
enum {
	XS_OTHER = 0,
	XS_ALLOCATOR_NAME,
	XS_INDEX_ON_HOST,
	XS_DEVICE_ORDINAL,
	XS_BYTES_RESERVED,
	XS_BYTES_ALLOCATED,
	XS_BYTES_AVAILABLE,
	XS_FRAGMENTATION,
	XS_PEAK_BYTES_IN_USE,
	XS_REQUESTED_BYTES,
	XS_ALLOCATION_BYTES,
	XS_ADDR,
	XS_TF_OP,
	XS_GROUP_ID,
	XS_REGION_TYPE,
	XS_DATA_TYPE,
	XS_SHAPE,
	XS_COUNT
};

/* Which oneof slot of XStat held the value. */
enum { XV_NONE = 0, XV_DOUBLE = 2, XV_UINT = 3, XV_INT = 4, XV_STR = 5, XV_BYTES = 6, XV_REF = 7, XV_GZSTR = 8 };

typedef struct xp_stat {
	uint8_t slot;   /* XV_* */
	uint64_t val;   /* number bits; for XV_STR/XV_GZSTR the file offset */
	uint64_t len;   /* XV_STR/XV_GZSTR length */
} xp_stat;

typedef struct xp_mev {
	int kind;          /* 1 = MemoryAllocation, 2 = MemoryDeallocation */
	int64_t offset_ps;
	int memkey;        /* XS_ALLOCATOR_NAME / XS_INDEX_ON_HOST / XS_DEVICE_ORDINAL, 0 = none */
	xp_stat st[XS_COUNT];
} xp_mev;

/* One input file. */
typedef struct xp_file {
	char *path;
	char *host;
	int fd;             /* owned */
	int gz;             /* decompressed to a temporary file */
	uint64_t size;
	int has_plane;      /* a /host:CPU plane was found */
	uint64_t plane_start, plane_end;
	mp_i64map_t evmeta;   /* event metadata id -> 1 alloc / 2 dealloc (memory ones only) */
	mp_i64map_t statmeta; /* stat metadata id -> (names id << 5) | XS_* */
	mp_strtab_t names;  /* stat metadata names */
	uint32_t *ref_global; /* names id -> global string id + 1 (0 = not yet) */
	uint32_t *stat_small; /* ids < XP_SMALL_IDS: statmeta value + 1, 0 = absent */
	uint8_t *ev_small;    /* ids < XP_SMALL_IDS: evmeta value, 0 = absent */
	int64_t base_ns;    /* smallest line timestamp_ns of the plane */
	int has_base;
	char hostname[128]; /* XSpace.hostnames[0], "" if none */
} xp_file;

typedef struct xp_entry {
	int64_t t;    /* absolute ns (line timestamp + offset), then relative */
	uint64_t loc; /* file << 56 | line << 40 | offset of the event's tag */
} xp_entry;

#define XP_OFF_BITS 40
#define XP_OFF_MASK ((1ULL << XP_OFF_BITS) - 1)
#define XP_NSLOTS 64
#define XP_SCAN_BUF (1u << 20)  /* window of the two scanning passes */
#define XP_MAX_FIELD (16u << 20) /* longest single string/event accepted */
#define XP_SMALL_IDS 65536 /* metadata ids looked up in flat arrays */

typedef struct xp_mem {
	uint32_t name_id;    /* global string id of the allocator key */
	uint32_t host;       /* file index */
	uint64_t peak_used;  /* xprof's peak (stack + heap), >= in stored order */
	uint64_t capacity;   /* stack + heap + free at that event */
	int have_peak;
	mp_memory_info_t info;
	char *name;          /* owned: "[host/]allocator" */
} xp_mem;

typedef struct xp_source {
	mp_source_t base;
	char *path_label;
	xp_file *files;
	size_t nfiles;
	int prefix;
	int xprof_clock;      /* times = XEvent.offset_ps only, as xprof */
	mp_strtab_t strs;     /* every string the events refer to */
	uint32_t null_id;     /* the id of "(null)" */
	xp_entry *idx;
	uint64_t nidx, capidx;
	xp_mem *mems;         /* sorted by name: position = memory id */
	uint32_t nmems;
	size_t capmems;
	mp_i64map_t mem_of;   /* (file << 32 | key string id) -> memory id */
	mp_pw_window_t slots[XP_NSLOTS];
	int slot_key[XP_NSLOTS];
	int64_t *last_step;   /* per memory: UpdateStepId state */
	uint64_t pos;         /* next index entry; nmems..: MEMORY events first */
	uint64_t emitted;
	uint64_t last_order;
	int have_last;
	int err;              /* sticky error */
	mp_diag_t err_diag;
} xp_source;

/* xplane_meta.c, xplane_scan.c */
int xp_file_open(xp_file *f, const char *path, mp_diag_t *diag);
void xp_file_close(xp_file *f);
int xp_scan_metadata(xp_file *f, mp_diag_t *diag);
int xp_decode_event(xp_file *f, mp_pw_window_t *rd, uint64_t start, uint64_t end, xp_mev *ev);
int xp_build_small_maps(xp_file *f);
int xp_index_file(xp_source *s, uint32_t fi, mp_diag_t *diag);
/* The string value of a stat as a global string id (interned into s->strs);
 * 0 when absent or empty. Negative on error. */
int64_t xp_stat_string(xp_source *s, xp_file *f, mp_pw_window_t *rd, const xp_stat *st);
int64_t xp_stat_int(const xp_stat *st);
double xp_stat_double(const xp_stat *st);
/* Global string id of the allocator key of ev (name or decimal ordinal). */
int64_t xp_memkey(xp_source *s, xp_file *f, mp_pw_window_t *rd, const xp_mev *ev);

#endif
