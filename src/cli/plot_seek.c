/* plot_seek.c - the memory maps of `memprof plot` of a long capture from a
 * checkpoint (issue 43; plot_out.h): the solver sought (report_seek.c),
 * and the maps' second pass, which rebuilds the address layout at the
 * peak and at the failed allocations, starts from the last checkpoint
 * before the earliest of them, its live blocks (footprint, op, region
 * type) and regions, instead of from the first event. The checkpoint's
 * live set is the full replay's at its horizon (the reader checks it
 * against its round's SUMMARY), so the maps are the same bytes. */
#include "plot_out.h"
#include "report_seek.h"
#include "report_window.h"

#include <memprof/checkpoint.h>
#include <memprof/format.h>
#include <memprof/keep.h>
#include <memprof/reader.h>

#include <stdlib.h>
#include <string.h>

/* When the event of target t happened: the solver's peak or OOM record at
 * that index; 0 when neither (then no checkpoint comes before it). */
static uint64_t target_time(const mp_solver_t *s, const mp_snapshot_target_t *t)
{
	const mp_solver_device_t *d = mp_solver_find(s, t->memory);

	if (!d)
		return 0;
	if (d->has_peak && d->peak.event_index == t->event_index)
		return d->peak.time_ns;
	for (size_t k = 0; k < d->oom_count; k++)
		if (d->oom[k].at.event_index == t->event_index)
			return d->oom[k].at.time_ns;
	return 0;
}

int cli_plot_seek_reads(const char *path, const mp_solver_t *s, const mp_snapshot_target_t *t, size_t nt, int marks,
			mp_replay_t *out, mp_diag_t *diag)
{
	mp_source_t *src = NULL;
	mp_capture_round_end_t *re = NULL;
	mp_checkpoint_t ck;
	uint64_t before = UINT64_MAX;
	size_t nre = 0;
	int rc, got = 0;
	const char *say = getenv("MEMPROF_SEEK_SAY");

	memset(&ck, 0, sizeof(ck));
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < nt; i++) {
		uint64_t at = target_time(s, &t[i]);
		before = at < before ? at : before;
	}
	/* a source of its own: the solver's was sought from the checkpoint
	 * before the peak or the first failure, and reads from there again */
	if ((rc = mp_capture_open_source(&src, path, diag)) < 0)
		goto out;
	/* the timeline's marks need every event: no seek with them */
	if (nt && !marks && (rc = mp_capture_round_ends(mp_capture_from_source(src), &re, &nre, diag)) == 0)
		rc = got = cli_seek_checkpoint_before(mp_capture_from_source(src), re, nre, before,
						      MP_CKPT_F_TAGS | MP_CKPT_F_UNTAGGED, &ck, diag);
	if (rc < 0 || (got && (rc = mp_capture_seek(mp_capture_from_source(src), &ck, diag)) < 0))
		goto out;
	if (say && !strcmp(say, "1") && nt)
		fprintf(stderr, "memprof: %s: maps %s%llu\n", path, got ? "from the checkpoint at event " : "from event ",
			(unsigned long long)(got ? ck.events : 0));
	rc = mp_replay_read_from(src, got ? &ck : NULL, path, t, nt, marks, out, diag);
out:
	free(re);
	mp_checkpoint_free(&ck);
	if (src)
		mp_source_close(src);
	return rc;
}

int cli_plot_window_reads(const char *path, mp_source_t *win, const mp_solver_t *s, const mp_snapshot_target_t *t,
			  size_t nt, int marks, mp_replay_t *out, mp_diag_t *diag)
{
	mp_source_t *src = NULL;
	mp_checkpoint_t ck;
	mp_replay_t m;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&ck, 0, sizeof(ck));
	/* the maps: the layout at a moment of the window is the full run's
	 * at that moment, blocks born before the window included -- a full
	 * capture's from its checkpoint before the earliest map (its events'
	 * indices are the window's), a kept run's from its window's first
	 * checkpoint (the window solver's source was sought there: the same
	 * indices) */
	if (mp_keep_is_run(path)) {
		if ((rc = cli_window_kept_source(path, NULL, &src, &ck, diag)) == 1)
			rc = mp_replay_read_from(src, &ck, path, t, nt, 0, out, diag);
		else if (rc == 0) /* (a window from the process's start is no window) */
			rc = mp_diag_set(diag, MP_EUSAGE, -1, -1, "the kept run's window has no checkpoint");
		mp_checkpoint_free(&ck);
		if (src)
			mp_source_close(src);
	} else {
		rc = cli_plot_seek_reads(path, s, t, nt, 0, out, diag);
	}
	/* the phases and steps: the window's own */
	if (rc == 0 && marks) {
		if ((rc = mp_replay_read(win, path, NULL, 0, 1, &m, diag)) < 0) {
			mp_replay_free(out);
			return rc;
		}
		out->phases = m.phases;
		out->nphases = m.nphases;
		out->steps = m.steps;
		out->nsteps = m.nsteps;
	}
	return rc;
}
