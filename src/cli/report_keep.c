/* report_keep.c - what `report` says of a kept run (`record --keep`,
 * memprof/keep.h) before the window's own report: which segments the
 * window is, where it starts, and the whole run's figures from the
 * whole-run file (every round's SUMMARY: the peak per memory id, exact in
 * bytes, and its time), which outlive the deleted segments. The window's
 * report is then solved from its first checkpoint (report_window.c). */
#include "cli.h"

#include <memprof/keep.h>
#include <memprof/output/units.h>
#include <memprof/report.h>

#include <inttypes.h>

int cli_keep_print(FILE *out, const char *path)
{
	char b1[MP_BYTES_BUF], b2[MP_BYTES_BUF];
	mp_keep_run_t *k;
	mp_checkpoint_t ck;
	mp_diag_t diag;
	size_t i;
	int c;

	if (!mp_keep_is_run(path) || mp_keep_open(&k, path, &diag))
		return 0; /* (opening the window said what is wrong) */
	fprintf(out, "%s: kept run ('record --keep'): the window is segments %" PRIu64 "-%" PRIu64 " of %s.d",
		path, k->segments[0].number, k->segments[k->nsegments - 1].number, path);
	if (k->skipped)
		fprintf(out, " (%zu segment%s left out: damaged, cut before its checkpoint, or before a gap)",
			k->skipped, k->skipped == 1 ? "" : "s");
	fputc('\n', out);
	if (k->whole_ok) {
		fprintf(out, "  the whole run, from every round's figures: %" PRIu64 " events%s\n", k->whole.events,
			k->whole.ended_cleanly ? "" : " (it did not end cleanly: up to its last round)");
		for (i = 0; i < k->whole.nmemories; i++) {
			const mp_summary_memory_t *m = &k->whole.memories[i];
			if (!m->has_peak)
				continue;
			fprintf(out, "    memory %" PRIu32 " '%s': peak %s at %.6f ms, live at the end %s\n", m->id,
				m->name ? m->name : "", mp_bytes_exact(b1, sizeof(b1), m->peak_bytes),
				(double)m->peak_time_ns / 1e6, mp_bytes_exact(b2, sizeof(b2), m->live_bytes));
		}
	} else {
		fprintf(out, "  the whole run's figures: none (the whole-run file %s has no complete round)\n", path);
	}
	c = mp_keep_window_checkpoint(k, &ck, &diag);
	if (c == 1 && k->segments[0].number == 0) {
		fprintf(out, "  the window starts at the process's start\n");
	} else if (c == 0) {
		fprintf(out, "  the window starts at %.6f ms, after the run's first %" PRIu64 " events, from its first "
			     "checkpoint: %zu live blocks\n",
			(double)ck.horizon_ns / 1e6, ck.events, ck.nblocks);
		fprintf(out, "  the window's figures below: those blocks, then its own events (counters from event %" PRIu64
			     " on; the same as 'report --from-event %" PRIu64 "' of a full capture)\n",
			ck.events, ck.events);
		mp_checkpoint_free(&ck);
	} else {
		fprintf(out, "  note: the window's first segment has no checkpoint: its figures lack the blocks born "
			     "before it\n");
	}
	fputc('\n', out);
	mp_keep_close(k);
	return 0;
}

void cli_window_print(FILE *out, const mp_report_input_t *in)
{
	if (!in->window_set || mp_keep_is_run(in->path))
		return; /* (a kept run's: cli_keep_print) */
	fprintf(out, "%s: the window from event %" PRIu64 ": the blocks live after the capture's first %" PRIu64
		     " events, then its own events (counters from event %" PRIu64 " on)\n\n",
		in->path, in->window_from, in->window_from, in->window_from);
}
