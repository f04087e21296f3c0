/* memprof/replay.h - what the charts of a capture show that the solver
 * does not keep, read in one more pass over the source, so that the
 * layout (render/) draws what it is handed and never reads an input:
 *   - the phases (MARK events with MP_EVENT_F_PHASE_BEGIN/END, paired as
 *     the solver pairs them; it names only the innermost phase open at a
 *     peak) and the step marks of the input's timelines;
 *   - the snapshots of the memory maps (regions and live blocks with their
 *     addresses, at the events asked for: mp_snapshot_run's).
 * Memory: every snapshot asked for is kept until mp_replay_free (the map
 * keeps its blocks for hover anyway). */
#ifndef MEMPROF_REPLAY_H
#define MEMPROF_REPLAY_H

#include <memprof/error.h>
#include <memprof/snapshot.h>
#include <memprof/source.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A phase of the input (of any memory id): [t0_ns, t1_ns), depth 0 for
 * one open inside no other. */
typedef struct mp_replay_phase {
	const char *name; /* borrowed from the source's strings */
	uint64_t t0_ns, t1_ns;
	uint32_t depth;
} mp_replay_phase_t;

/* A step mark of the input (an MP_EV_STEP event, of any memory id: the
 * step it starts and when), in the input's order. */
typedef struct mp_replay_step {
	uint64_t time_ns;
	int64_t step;
} mp_replay_step_t;

/* What one pass over an input read. Owned by whoever called
 * mp_replay_read (mp_replay_free). */
typedef struct mp_replay {
	mp_replay_phase_t *phases; /* in the order they begin; NULL when not asked or none */
	size_t nphases;
	mp_replay_step_t *steps;
	size_t nsteps;
	mp_snapshot_t *maps;       /* one per target, in the targets' order; each one's regions
				      and blocks are owned copies */
	size_t nmaps;
} mp_replay_t;

/* Rewind src and read it for the snapshots at targets[0..nt) (none read
 * when nt is 0), then, when marks is set, rewind it again and read its
 * phases (those still open at the end last until its last event; at most
 * 100,000 kept) and its step marks (the rule is in replay.c). On
 * failure *out is empty. Returns 0, MP_ENOMEM, MP_ENOTFOUND (a target's
 * event is not in the stream) or the source's error, diag filled (its
 * file `name` when unset). */
int mp_replay_read(mp_source_t *src, const char *name, const mp_snapshot_target_t *targets, size_t nt, int marks,
		   mp_replay_t *out, mp_diag_t *diag);

/* mp_replay_read of a capture sought to checkpoint `from` and not read
 * since (mp_capture_seek): the snapshots by mp_snapshot_run_from; the
 * marks, when asked, only from there. from NULL: mp_replay_read. */
int mp_replay_read_from(mp_source_t *src, const struct mp_checkpoint *from, const char *name,
			const mp_snapshot_target_t *targets, size_t nt, int marks, mp_replay_t *out, mp_diag_t *diag);

/* Frees what r holds and empties it; r may be empty. */
void mp_replay_free(mp_replay_t *r);

#ifdef __cplusplus
}
#endif
#endif
