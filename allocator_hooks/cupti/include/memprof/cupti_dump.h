/* memprof/cupti_dump.h - CUPTI's completed buffers as files, and back.
 *
 * With MEMPROF_CUPTI_DUMP=DIR the GPU backend also appends every buffer
 * CUPTI completes, as it came, to DIR/cupti.<pid>.bin; mp_cupti_replay
 * turns such a file into a .memprof capture through the same translation
 * (docs/gpu.md). A capture from a GPU machine so becomes a
 * test fixture that runs anywhere.
 *
 * The file (little-endian):
 *   0  8  magic "MPCUPTI\0"
 *   8  4  dump format version (1)
 *  12  4  CUPTI_API_VERSION of the library that wrote the records (cuptiGetVersion)
 *  16  4  sizeof CUpti_ActivityMemory, CUpti_ActivityMemory4, CUpti_ActivityMemoryPool3
 *         as memprof knew them (three u32: 16, 20, 24) -- a reader checks them
 *  28  4  0 (reserved)
 *  32  8  CLOCK_MONOTONIC ns of the capture's time 0 (record times minus this)
 *  40     buffers: u64 valid length n (at most 64 MiB), n bytes, 0 to 7 bytes
 *         of padding to the next multiple of 8
 */
#ifndef MEMPROF_CUPTI_DUMP_H
#define MEMPROF_CUPTI_DUMP_H

#include <memprof/error.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MP_CUPTI_DUMP_MAGIC "MPCUPTI"
#define MP_CUPTI_DUMP_VERSION 1
#define MP_CUPTI_DUMP_HEADER 40
#define MP_CUPTI_DUMP_MAX_BUFFER (64u << 20)

typedef struct mp_cupti_dump_header {
	uint32_t version, cupti_version;
	uint32_t sizes[3];
	uint64_t origin_ns;
} mp_cupti_dump_header_t;

/* The header of a new dump into out (MP_CUPTI_DUMP_HEADER bytes). */
void mp_cupti_dump_header(uint8_t *out, uint32_t cupti_version, uint64_t origin_ns);

/* Parse a whole dump held in memory: the header into *h, then each buffer
 * handed to on_buffer(arg, bytes, valid) in file order (a nonzero return
 * stops the walk and is returned). Returns 0, or MP_EFORMAT / MP_EVERSION /
 * MP_ETRUNCATED / MP_ELIMIT with diag naming the offset (path: the name
 * used in the message). */
int mp_cupti_dump_parse(const uint8_t *data, size_t size, const char *path, mp_cupti_dump_header_t *h,
			int (*on_buffer)(void *arg, const uint8_t *buf, size_t valid), void *arg, mp_diag_t *diag);

/* Replay a dump file into a new capture at out_path (must not exist):
 * every buffer through memprof's iterator and mp_cupti_translate, events
 * put in time order, memory ids named as the backend names them (capacity
 * unknown). Statistics of the translation into *stats when not NULL.
 * Returns 0 or an error with diag. */
struct mp_cupti_stats;
int mp_cupti_replay(const char *dump_path, const char *out_path, struct mp_cupti_stats *stats, mp_diag_t *diag);

#ifdef __cplusplus
}
#endif
#endif
