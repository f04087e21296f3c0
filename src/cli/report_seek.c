/* report_seek.c - `memprof report` of a capture from a checkpoint (issue
 * 43; report_seek.h): instead of replaying every event, the solver starts
 * from the last good checkpoint before the moment the sections need and
 * replays only what follows. The moment comes from the capture's final
 * SUMMARY (the peak's time of every memory id; for --oom, a checkpoint
 * before the first failed allocation), the state and the figures of the
 * events before it from the checkpoint and its round's SUMMARY. The
 * result is checked against the final SUMMARY (allocations, frees,
 * failures, peak and its time, what is live at the end): any difference,
 * or a peak before the checkpoint, and the report replays in full. */
#include "report_seek.h"

#include "cli.h"

#include <memprof/capsummary.h>
#include <memprof/checkpoint.h>
#include <memprof/live.h>
#include <memprof/reader.h>
#include <memprof/seed_checkpoint.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_seek_checkpoint_before(mp_capture_t *cap, const mp_capture_round_end_t *re, size_t n, uint64_t ns, uint32_t need,
			       mp_checkpoint_t *ck, mp_diag_t *diag)
{
	for (size_t i = n; i-- > 0;) {
		int rc = re[i].horizon_ns <= ns ? mp_capture_checkpoint_at(cap, &re[i], ck, diag) : 0;
		if (rc < 0 || (rc == 1 && (!need || (ck->flags & need))))
			return rc;
		if (rc == 1)
			mp_checkpoint_free(ck);
	}
	return 0;
}

/* The index of the event of memory id `mem` at time `ns` where its live
 * regions first hold `bytes` (a checkpoint's reserved peak): read from the
 * last checkpoint at or before it (one interval of events, no solver), the
 * regions kept by the live-set engine's rules. UINT64_MAX when not found. */
static uint64_t reserved_index(const char *path, const mp_capture_round_end_t *re, size_t n, uint32_t mem, uint64_t ns,
			       uint64_t bytes)
{
	mp_checkpoint_t ck;
	mp_live_regions_t rs;
	mp_source_t *src = NULL;
	mp_diag_t diag = {0};
	uint64_t found = UINT64_MAX;
	int rc = 0;

	memset(&ck, 0, sizeof(ck));
	mp_live_regions_init(&rs);
	if (mp_capture_open_source(&src, path, &diag) < 0)
		goto out;
	if ((rc = cli_seek_checkpoint_before(mp_capture_from_source(src), re, n, ns, 0, &ck, &diag)) < 0)
		goto out; /* the last good one at or before ns (one at 0 else) */
	if (rc == 1) {
		for (size_t k = 0; k < ck.nregions; k++) {
			size_t pos;
			uint64_t old;
			if (ck.regions[k].memory == mem &&
			    mp_live_region_add(&rs, ck.regions[k].base, ck.regions[k].end - ck.regions[k].base, &pos, &old) < 0)
				goto out;
		}
		if (mp_capture_seek(mp_capture_from_source(src), &ck, &diag) < 0)
			goto out;
	}
	for (;;) {
		mp_event_t ev;
		size_t pos;
		uint64_t old;
		if (mp_source_next(src, &ev, &diag) <= 0 || ev.time_ns > ns)
			break;
		if (ev.memory != mem || (ev.kind != MP_EV_REGION_ADD && ev.kind != MP_EV_REGION_REMOVE))
			continue;
		if (ev.kind == MP_EV_REGION_ADD ? mp_live_region_add(&rs, ev.address, ev.requested_bytes, &pos, &old) < 0
						 : mp_live_region_remove(&rs, ev.address, &old) < 0)
			break;
		if (ev.time_ns == ns && rs.bytes == bytes) {
			found = ev.index;
			break;
		}
	}
out:
	mp_live_regions_destroy(&rs);
	mp_checkpoint_free(&ck);
	if (src)
		mp_source_close(src);
	return found;
}

/* Whether the seeded solver s agrees with the final summary: NULL or why
 * not. stopped: the read stopped after the peaks (their figures only). */
const char *cli_seek_disagrees(const mp_solver_t *s, const mp_capture_summary_t *sum, int stopped)
{
	if (mp_solver_seed_missed(s))
		return "the peak is before the checkpoint";
	for (size_t i = 0; i < sum->nmemories; i++) {
		const mp_summary_memory_t *m = &sum->memories[i];
		const mp_solver_device_t *d = mp_solver_find(s, m->id);
		if (!d)
			return "a memory id is missing";
		if (d->has_reserved_peak && d->reserved_peak_event == UINT64_MAX)
			return "the reserved peak is before the checkpoint";
		if (m->has_seek_figures &&
		    (d->has_reserved_peak != m->has_reserved_peak ||
		     (m->has_reserved_peak && (d->reserved_peak_bytes != m->reserved_peak_bytes ||
					       d->reserved_peak_time_ns != m->reserved_peak_ns))))
			return "its reserved peak disagrees with the summary";
		if (stopped) {
			if (d->has_peak != m->has_peak ||
			    (m->has_peak && (d->peak_bytes != m->peak_bytes || d->peak.time_ns != m->peak_time_ns)))
				return "its peak disagrees with the summary";
			continue;
		}
		if (d->allocations != m->allocations + m->reallocs || d->deallocations != m->frees + m->reallocs ||
		    d->failed_allocations != m->failed || d->has_peak != m->has_peak ||
		    (m->has_peak && (d->peak_bytes != m->peak_bytes || d->peak.time_ns != m->peak_time_ns)) ||
		    d->leak_bytes != m->live_bytes)
			return "its figures disagree with the summary";
	}
	return NULL;
}

int cli_seek_usable(const mp_checkpoint_t *ck)
{
	int figs = 1;

	for (size_t k = 0; k < ck->nfigures; k++)
		figs &= !ck->figures[k].in_summary || ck->figures[k].has_figures;
	return (ck->flags & MP_CKPT_F_LAST_MARK) && (ck->flags & (MP_CKPT_F_UNTAGGED | MP_CKPT_F_TAGS)) && figs;
}

/* The checkpoint to seek from: the last good one with every figure, no
 * tags, a horizon at or before `before` and, for --oom, no failure before
 * it. 1 and *ck, 0 (why says why none), or an error. */
static int pick(mp_capture_t *cap, const mp_capture_round_end_t *re, size_t n, uint64_t before, int oom,
		mp_checkpoint_t *ck, const char **why, mp_diag_t *diag)
{
	int rc = 0, seen = 0;

	*why = "no checkpoints (a capture before format 2.4, or shorter than one checkpoint interval)";
	for (size_t i = n; i-- > 0;) {
		uint64_t failed = 0;
		int figs = 1;
		if (re[i].horizon_ns > before)
			continue;
		if ((rc = mp_capture_checkpoint_at(cap, &re[i], ck, diag)) < 0)
			break;
		if (rc == 0)
			continue;
		seen = 1;
		for (size_t k = 0; k < ck->nfigures; k++)
			failed += ck->figures[k].failed;
		for (size_t k = 0; k < ck->nfigures; k++)
			figs &= !ck->figures[k].in_summary || ck->figures[k].has_figures;
		if (cli_seek_usable(ck) && (!oom || !failed)) {
			*why = NULL;
			return 1;
		}
		*why = !(ck->flags & MP_CKPT_F_LAST_MARK) || !figs ? "its checkpoints lack what a seek needs (format 2.4)"
			: !(ck->flags & (MP_CKPT_F_UNTAGGED | MP_CKPT_F_TAGS)) ? "its checkpoints lost their blocks' tags"
							      : "no checkpoint before the first failed allocation";
		mp_checkpoint_free(ck);
		rc = 0;
	}
	if (!seen && n && rc >= 0)
		*why = "no checkpoint before the peak";
	return rc < 0 ? rc : 0;
}

/* The whole capture's counters from its final summary (a read stopped
 * after the peaks): the solver's rules, as seed_of's; one declaration
 * event per memory id. NULL when out of memory. */
static mp_solver_seed_memory_t *totals_of(const mp_capture_summary_t *sum, mp_solver_seed_t *t)
{
	mp_solver_seed_memory_t *mem = calloc(sum->nmemories ? sum->nmemories : 1, sizeof(*mem));

	if (!mem)
		return NULL;
	for (size_t i = 0; i < sum->nmemories; i++) {
		const mp_summary_memory_t *m = &sum->memories[i];
		uint64_t a = m->allocations + m->reallocs, d = m->frees + m->reallocs;
		mem[i].id = m->id;
		mem[i].events = 1 + a + d + m->failed + m->region_events;
		mem[i].allocations = a;
		mem[i].deallocations = d;
		mem[i].failed_allocations = m->failed;
		mem[i].unknown_frees = m->unknown_frees;
		mem[i].duplicate_allocations = a - (d - m->unknown_frees) - m->live_blocks;
		mem[i].rejected_regions = m->rejected_regions;
		mem[i].lifetime_peak_bytes = m->peak_bytes;
	}
	*t = (mp_solver_seed_t){.events = sum->events + sum->nmemories, .memories = mem, .nmemories = sum->nmemories};
	return mem;
}

/* When no checkpoint precedes every peak (a memory id that peaked early:
 * a program's first mappings, its startup's heap): the memory ids whose
 * peak comes before some later peak time t go to a second solver read
 * from the start up to their last peak (*early_ns), the rest seek from
 * the last good checkpoint before t -- the smallest such set of early
 * ids. 1 with *ck and early[id] set, 0 when no split helps, or an error. */
static int pick_split(mp_capture_t *cap, const mp_capture_summary_t *sum, const mp_capture_round_end_t *re, size_t n,
		      int oom, mp_checkpoint_t *ck, uint8_t *early, uint64_t *early_ns, mp_diag_t *diag)
{
	uint64_t t = 0;
	const char *why;
	int rc;

	for (;;) {
		uint64_t next = UINT64_MAX;
		int any = 0;
		for (size_t i = 0; i < sum->nmemories; i++) /* the next peak time after t */
			if (sum->memories[i].has_peak && sum->memories[i].peak_time_ns > t &&
			    sum->memories[i].peak_time_ns < next)
				next = sum->memories[i].peak_time_ns;
		if (next == UINT64_MAX)
			return 0;
		t = next;
		*early_ns = 0;
		for (size_t i = 0; i < sum->nmemories; i++) {
			const mp_summary_memory_t *m = &sum->memories[i];
			early[i] = m->has_peak && m->peak_time_ns < t;
			any |= early[i];
			if (early[i] && m->peak_time_ns > *early_ns)
				*early_ns = m->peak_time_ns;
			if (early[i] && m->has_reserved_peak && m->reserved_peak_ns > *early_ns)
				*early_ns = m->reserved_peak_ns;
		}
		if (!any)
			continue; /* nothing peaked before t */
		if ((rc = pick(cap, re, n, t, oom, ck, &why, diag)) != 0)
			return rc;
	}
}

/* The early memory ids' results: a solver read from the start up to
 * early_ns, whose results for those ids replace the seeded solver s's:
 * all of them when s stopped after the peaks (stop), else their peaks
 * alone (s read to the end: their leaks and OOM records are s's). */
static int solve_early(const char *path, const mp_solver_options_t *opt, const mp_capture_summary_t *sum,
		       const uint8_t *early, uint64_t early_ns, int stop, mp_solver_t *s, mp_diag_t *diag)
{
	mp_source_t *src = NULL;
	mp_solver_t *e = NULL;
	int rc;

	if ((rc = mp_capture_open_source(&src, path, diag)) < 0)
		return rc;
	rc = MP_ENOMEM;
	if (!(e = mp_solver_new(opt)))
		goto out;
	if ((rc = mp_capture_seek_stop(mp_capture_from_source(src), early_ns, MP_END_CLEAN)) < 0 ||
	    (rc = mp_solver_run(e, src, diag)) < 0)
		goto out;
	for (size_t i = 0; i < sum->nmemories && rc >= 0; i++)
		if (early[i])
			rc = stop ? mp_solver_swap_memory(s, e, sum->memories[i].id)
				  : mp_solver_swap_peak(s, e, sum->memories[i].id);
out:
	mp_solver_free(e);
	mp_source_close(src);
	return rc;
}

int cli_seek_solve(const char *path, const mp_solver_options_t *opt, int oom, mp_source_t **src_out,
		   mp_solver_t **solver_out, mp_diag_t *diag)
{
	mp_capture_summary_t sum;
	mp_source_t *src = NULL;
	mp_solver_t *s = NULL;
	mp_checkpoint_t ck;
	mp_checkpoint_seed_t b;
	const char *why = "the capture holds no final summary";
	uint64_t before = UINT64_MAX, stop_ns = 0;
	mp_capture_round_end_t *re = NULL;
	size_t nre = 0;
	struct stat st;
	uint8_t *early = NULL;
	uint64_t early_ns = 0;
	int rc, say, stop = 0, split = 0;

	if (oom & CLI_SEEK_STEPS)
		return cli_seek_steps_solve(path, opt, src_out, solver_out, diag);
	*src_out = NULL;
	*solver_out = NULL;
	memset(&ck, 0, sizeof(ck));
	memset(&b, 0, sizeof(b));
	if ((rc = mp_capture_summary_read(path, &sum, diag)) < 0) {
		mp_capture_summary_free(&sum);
		return 0; /* the full read says what is wrong */
	}
	if (sum.available && sum.horizon_ns == UINT64_MAX) {
		why = NULL;
		for (size_t i = 0; i < sum.nmemories; i++) {
			const mp_summary_memory_t *m = &sum.memories[i];
			if (m->dropped)
				why = "events were dropped";
			if (m->has_peak && m->peak_time_ns < before)
				before = m->peak_time_ns;
		}
		if (sum.stacks)
			why = "it has call stacks, which a seek does not read from checkpoints yet";
		/* --peak, --breakdown: the read stops after the last peak
		 * (and reserved peak), the counters from the summary */
		stop = !(oom & (CLI_SEEK_OOM | CLI_SEEK_LEAKS)) && sum.ended_cleanly && !sum.write_errno;
		for (size_t i = 0; i < sum.nmemories; i++) {
			const mp_summary_memory_t *m = &sum.memories[i];
			stop &= m->has_seek_figures;
			if (m->has_peak && m->peak_time_ns > stop_ns)
				stop_ns = m->peak_time_ns;
			if (m->has_reserved_peak && m->reserved_peak_ns > stop_ns)
				stop_ns = m->reserved_peak_ns;
		}
	}
	if (!why && (rc = mp_capture_open_source(&src, path, diag)) < 0)
		goto out;
	/* one walk over the blocks' frames: the rounds' ends */
	if (!why && (rc = mp_capture_round_ends(mp_capture_from_source(src), &re, &nre, diag)) < 0)
		goto out;
	if (!why && (rc = pick(mp_capture_from_source(src), re, nre, before, oom & CLI_SEEK_OOM, &ck, &why, diag)) < 0)
		goto out;
	/* the ids that peaked early read apart */
	if (why && src && re) {
		rc = MP_ENOMEM;
		if (!(early = calloc(sum.nmemories ? sum.nmemories : 1, 1)))
			goto out;
		if ((rc = pick_split(mp_capture_from_source(src), &sum, re, nre, oom & CLI_SEEK_OOM, &ck, early, &early_ns,
				     diag)) < 0)
			goto out;
		if ((split = rc == 1))
			why = NULL;
	}
	if (src) { /* a bad checkpoint met on the way: said, with its offset (the seek took an earlier one) */
		mp_diag_t bad;
		if (mp_capture_checkpoints_bad(mp_capture_from_source(src), &bad))
			fprintf(stderr, "memprof: %s: %s\n", path, bad.text);
	}
	if (!why) {
		/* a reserved peak before the checkpoint: its event's index,
		 * from the checkpoint before it (it may stay the peak) */
		uint64_t *rindex = malloc((ck.nfigures ? ck.nfigures : 1) * sizeof(*rindex));
		rc = MP_ENOMEM;
		if (!rindex)
			goto out;
		for (size_t k = 0; k < ck.nfigures; k++)
			rindex[k] = ck.figures[k].has_reserved_peak ? reserved_index(path, re, nre, (uint32_t)k, ck.figures[k].reserved_peak_ns,
										    ck.figures[k].reserved_peak_bytes)
								    : UINT64_MAX;
		rc = mp_checkpoint_seed(&ck, rindex, &b);
		free(rindex);
		if (rc < 0 || !(s = mp_solver_new(opt)))
			goto out;
		if ((rc = mp_capture_seek(mp_capture_from_source(src), &ck, diag)) < 0 ||
		    (stop && (rc = mp_capture_seek_stop(mp_capture_from_source(src), stop_ns, MP_END_CLEAN)) < 0) ||
		    (rc = mp_solver_seed(s, &b.seed, diag)) < 0 || (rc = mp_solver_run(s, src, diag)) < 0 ||
		    (split && (rc = solve_early(path, opt, &sum, early, early_ns, stop, s, diag)) < 0))
			goto out;
		if (!(why = cli_seek_disagrees(s, &sum, stop)) && stop) {
			mp_solver_seed_t t;
			mp_solver_seed_memory_t *tm = totals_of(&sum, &t);
			rc = !tm ? MP_ENOMEM : mp_solver_seed_totals(s, &t);
			free(tm);
			if (rc == MP_ENOMEM)
				goto out;
			why = rc < 0 ? "a memory id is missing" : NULL;
		}
	}
	rc = 0;
	say = getenv("MEMPROF_SEEK_SAY") && !strcmp(getenv("MEMPROF_SEEK_SAY"), "1");
	if (why) {
		/* one line, where a seek was to be expected: a capture of at
		 * least one checkpoint interval (docs/report.md, "Seek") */
		if (say || (stat(path, &st) == 0 && st.st_size >= (off_t)64 << 20))
			fprintf(stderr, "memprof: %s: full replay: %s\n", path, why);
	} else {
		/* MEMPROF_SEEK_SAY=1: say where from (tests, benchmarks) */
		if (say)
			fprintf(stderr, "memprof: %s: seek from the checkpoint at event %llu (block %llu)%s", path,
				(unsigned long long)ck.events, (unsigned long long)ck.block_index,
				stop ? ", read up to the last peak" : ", read to the end");
		if (say && split)
			fprintf(stderr, "; the memory ids that peaked before it read from the start up to %.6f ms",
				(double)early_ns / 1e6);
		if (say)
			fputc('\n', stderr);
		*src_out = src;
		*solver_out = s;
		src = NULL;
		s = NULL;
		rc = 1;
	}
out:
	free(early);
	free(re);
	mp_checkpoint_seed_free(&b);
	mp_checkpoint_free(&ck);
	mp_solver_free(s);
	if (src)
		mp_source_close(src);
	mp_capture_summary_free(&sum);
	return rc;
}
