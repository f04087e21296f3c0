/* memprof/xplane_export.h - any event source as a TF/JAX profiler capture
 * (XSpace, *.xplane.pb) that TensorBoard's Memory Profile tool reads
 * (`memprof convert --to xplane`). Part of the output side (src/output):
 * it reads only the event model (memprof/source.h) and the solver, never
 * an input format; the xplane reader is memprof/xplane.h.
 */
#ifndef MEMPROF_XPLANE_EXPORT_H
#define MEMPROF_XPLANE_EXPORT_H

#include <memprof/error.h>
#include <memprof/protowire.h>
#include <memprof/source.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_xplane_export_options {
	const char *hostname; /* XSpace.hostnames; NULL = "memprof" */
	int gzip;             /* write gzip-compressed (TensorBoard reads raw only) */
	int64_t start_ns;     /* XLine.timestamp_ns: wall time of event time 0 */
	/* 1: the source's ALLOC/FREE events carry the allocator's stats
	 * (MP_EVENT_F_STATS, as an xplane import's all do): the solver's
	 * pre-pass is skipped, and an event without stats would get the
	 * fallback figures below. 0: the pre-pass runs (events with stats
	 * keep theirs either way). The caller knows what it opened: the
	 * exporter reads no input format itself. */
	int source_has_stats;
} mp_xplane_export_options_t;

/* What mp_xplane_export() wrote. */
typedef struct mp_xplane_export_stats {
	uint64_t events;    /* MemoryAllocation + MemoryDeallocation events written */
	uint64_t skipped;   /* source events xprof cannot represent (regions,
	                     * failed allocations, marks, steps, dropped counts) */
} mp_xplane_export_stats_t;

/* Read src from its first event to its end (rewinding it first) and write an
 * XSpace to path. ALLOC/FREE events become MemoryAllocation/Deallocation
 * events on one line of a /host:CPU plane, with allocator_name = the memory's
 * name and the stats xprof reads. Events with allocator stats keep them;
 * for the others the stats are what memprof's solver computes at that
 * event (a pre-pass): heap = the bytes of the live allocations, stack 0,
 * free = capacity - heap (capacity declared, or the live regions; 0 when
 * unknown), fragmentation from the regions (NaN when there are none:
 * memprof reads it back as n/a), peak = the largest heap so far. Beyond
 * 2 million events per capture the solver keeps a sample of events; the
 * others get free = declared capacity - heap and fragmentation NaN.
 * Streaming: a pre-pass and two passes over src (sizes, then bytes); memory
 * is the live allocations, the distinct strings and the sampled points.
 * opts and stats may be NULL. Returns 0 or a negative code with diag. */
/* One entry of XPlane.event_metadata (field 4) or stat_metadata (field 5),
 * {1: id, 2: X*Metadata {1: id, 2: name}}, appended to plane (an allocation
 * failure sets plane->oom): what the exporter, the generator
 * (memprof_xplane_gen) and the tests' XSpace builder write metadata with. */
void mp_xplane_put_meta(mp_pw_buf_t *plane, uint32_t field, uint64_t id, const char *name);

int mp_xplane_export(mp_source_t *src, const char *path, const mp_xplane_export_options_t *opts,
		     mp_xplane_export_stats_t *stats, mp_diag_t *diag);

#ifdef __cplusplus
}
#endif
#endif
