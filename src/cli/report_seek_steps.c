/* report_seek_steps.c - `memprof report --steps A:B` of a capture from a
 * checkpoint (issue 43; report_seek.h, CLI_SEEK_STEPS). In a steps window
 * the solver counts, samples and records only the events of steps A to B;
 * the events before it only change the live set and regions (and the
 * stream-wide counters: events, unknown frees, duplicates, rejected
 * regions, the lifetime peak). So a checkpoint whose step is below A holds
 * all that the window needs: the solver is seeded with its blocks,
 * regions, last mark and stream-wide counters, its window counters and
 * peaks zero, and fed from there. Where B is bounded, the read ends one
 * round after the first round whose step is past B (the window has ended
 * by then: its leaks are taken at the first event of a later step), and
 * the stream-wide counters come from the capture's final summary. Steps
 * are taken never to go back (the rounds' steps are checked, and each
 * round's flag that a step inside it went back); phases,
 * call stacks, dropped events and a capture without a final summary make
 * it replay in full. */
#include "report_seek.h"

#include "cli.h"

#include <memprof/capsummary.h>
#include <memprof/checkpoint.h>
#include <memprof/keep.h>
#include <memprof/reader.h>
#include <memprof/rounds.h>
#include <memprof/seed_checkpoint.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The step at round end re's horizon (rounds in time order), or
 * INT64_MAX when no round has that horizon. */
static int64_t step_at(const mp_capture_rounds_t *r, uint64_t horizon_ns)
{
	size_t lo = 0, hi = r->nrounds;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->rounds[mid].horizon_ns < horizon_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nrounds && r->rounds[lo].horizon_ns == horizon_ns ? r->rounds[lo].step : INT64_MAX;
}

/* The last good checkpoint whose step is below `first` (the state before
 * the window), found from the rounds' steps, checked on its own: 1 and
 * *ck, 0 when none (the window starts before the first), or an error. */
static int pick_before(mp_capture_t *cap, const mp_capture_rounds_t *r, const mp_capture_round_end_t *re, size_t n,
		       int64_t first, mp_checkpoint_t *ck, mp_diag_t *diag)
{
	for (size_t i = n; i-- > 0;) {
		int rc;
		if (step_at(r, re[i].horizon_ns) >= first)
			continue;
		if ((rc = mp_capture_checkpoint_at(cap, &re[i], ck, diag)) < 0)
			return rc;
		if (rc == 1 && ck->step < first && cli_seek_usable(ck))
			return 1;
		if (rc == 1)
			mp_checkpoint_free(ck);
	}
	return 0;
}

/* The window's seed from checkpoint ck: its state and stream-wide
 * counters; nothing of the window's own (counters, peak, reserved peak)
 * is before it. */
static int window_seed(const mp_checkpoint_t *ck, mp_checkpoint_seed_t *b)
{
	int rc = mp_checkpoint_seed(ck, NULL, b);

	for (size_t i = 0; rc == 0 && i < b->seed.nmemories; i++) {
		mp_solver_seed_memory_t *m = &b->mem[i];
		m->allocations = m->deallocations = m->failed_allocations = 0;
		m->has_peak = 0;
		m->peak_bytes = 0;
		m->has_reserved_peak = 0;
		m->reserved_peak_bytes = m->reserved_peak_time_ns = 0;
		m->reserved_peak_event = UINT64_MAX;
	}
	return rc;
}

/* After a read stopped after the window: the stream-wide counters from
 * the final summary (as report_seek.c's totals), the window's the
 * solver's own. NULL, or why it cannot. */
static const char *set_totals(mp_solver_t *s, const mp_capture_summary_t *sum, int *rc)
{
	mp_solver_seed_memory_t *mem = calloc(sum->nmemories ? sum->nmemories : 1, sizeof(*mem));
	mp_solver_seed_t t;

	*rc = MP_ENOMEM;
	if (!mem)
		return "out of memory";
	for (size_t i = 0; i < sum->nmemories; i++) {
		const mp_summary_memory_t *m = &sum->memories[i];
		const mp_solver_device_t *d = mp_solver_find(s, m->id);
		uint64_t a = m->allocations + m->reallocs, f = m->frees + m->reallocs;
		if (!d || d->stats_model) {
			free(mem);
			*rc = 0;
			return !d ? "a memory id is missing" : "its allocator's stats (the address model only)";
		}
		mem[i] = (mp_solver_seed_memory_t){.id = m->id,
						   .events = 1 + a + f + m->failed + m->region_events,
						   .allocations = d->allocations,
						   .deallocations = d->deallocations,
						   .failed_allocations = d->failed_allocations,
						   .unknown_frees = m->unknown_frees,
						   .duplicate_allocations = a - (f - m->unknown_frees) - m->live_blocks,
						   .rejected_regions = m->rejected_regions,
						   .lifetime_peak_bytes = m->peak_bytes};
	}
	t = (mp_solver_seed_t){.events = sum->events + sum->nmemories, .memories = mem, .nmemories = sum->nmemories};
	*rc = mp_solver_seed_totals(s, &t);
	free(mem);
	if (*rc == MP_ENOMEM)
		return "out of memory";
	if (*rc < 0) {
		*rc = 0;
		return "a memory id is missing";
	}
	return NULL;
}

/* A read to the end: its stream-wide counters against the summary's.
 * NULL, or why they disagree. */
static const char *check_totals(const mp_solver_t *s, const mp_capture_summary_t *sum)
{
	for (size_t i = 0; i < sum->nmemories; i++) {
		const mp_summary_memory_t *m = &sum->memories[i];
		const mp_solver_device_t *d = mp_solver_find(s, m->id);
		if (!d)
			return "a memory id is missing";
		if (d->stats_model)
			return "its allocator's stats (the address model only)";
		if (d->events != 1 + m->allocations + m->frees + 2 * m->reallocs + m->failed + m->region_events ||
		    d->unknown_frees != m->unknown_frees || d->lifetime_peak_bytes != m->peak_bytes ||
		    d->rejected_regions != m->rejected_regions)
			return "its figures disagree with the summary";
	}
	return NULL;
}

/* Why the capture's summary and rounds allow no seek (NULL: they do). */
static const char *unusable(const mp_capture_rounds_t *r)
{
	const mp_capture_summary_t *sum = &r->summary;

	if (!sum->available || sum->horizon_ns != UINT64_MAX)
		return "the capture holds no final summary";
	if (sum->stacks)
		return "it has call stacks, which a seek does not read from checkpoints yet";
	for (size_t i = 0; i < sum->nmemories; i++) {
		if (sum->memories[i].dropped)
			return "events were dropped";
		if (!sum->memories[i].has_seek_figures)
			return "its checkpoints lack what a seek needs (format 2.4)";
	}
	if (!r->nrounds)
		return "no rounds (a capture before format 2.5)";
	for (size_t i = 0; i < r->nrounds; i++) /* (from round to round, or inside one) */
		if ((i && r->rounds[i].step < r->rounds[i - 1].step) || r->rounds[i].step_back)
			return "its steps go back";
	return NULL;
}

int cli_seek_steps_solve(const char *path, const mp_solver_options_t *opt, mp_source_t **src_out,
			 mp_solver_t **solver_out, mp_diag_t *diag)
{
	mp_capture_rounds_t r;
	mp_source_t *src = NULL;
	mp_solver_t *s = NULL;
	mp_checkpoint_t ck;
	mp_checkpoint_seed_t b;
	mp_capture_round_end_t *re = NULL;
	size_t nre = 0;
	const char *why;
	uint64_t stop_ns = UINT64_MAX;
	int rc, seek = 0, say;
	struct stat st;

	*src_out = NULL;
	*solver_out = NULL;
	memset(&ck, 0, sizeof(ck));
	memset(&b, 0, sizeof(b));
	memset(&r, 0, sizeof(r));
	if (mp_keep_is_run(path)) {
		why = "a kept run (its events start at its window's checkpoint)";
		goto said;
	}
	if (mp_capture_rounds_read(path, &r, diag) < 0) {
		mp_capture_rounds_free(&r);
		mp_diag_clear(diag);
		return 0; /* the full read says what is wrong */
	}
	if ((why = unusable(&r)) != NULL)
		goto said;
	/* the end: one round past the first whose step is past the window's
	 * (its STEP is before that round's horizon); a clean capture only */
	for (size_t i = 0; i + 1 < r.nrounds && r.summary.ended_cleanly && !r.summary.write_errno; i++)
		if (r.rounds[i].step > opt->step_last) {
			stop_ns = r.rounds[i + 1].horizon_ns;
			break;
		}
	if ((rc = mp_capture_open_source(&src, path, diag)) < 0 ||
	    (rc = mp_capture_round_ends(mp_capture_from_source(src), &re, &nre, diag)) < 0 ||
	    (rc = pick_before(mp_capture_from_source(src), &r, re, nre, opt->step_first, &ck, diag)) < 0)
		goto out;
	seek = rc == 1;
	if (!seek && stop_ns == UINT64_MAX) {
		why = "no checkpoint before the window's first step, and the window runs to the end";
		goto said;
	}
	rc = MP_ENOMEM;
	if (!(s = mp_solver_new(opt)))
		goto out;
	if ((seek && ((rc = window_seed(&ck, &b)) < 0 || (rc = mp_capture_seek(mp_capture_from_source(src), &ck, diag)) < 0 ||
		      (rc = mp_solver_seed(s, &b.seed, diag)) < 0)) ||
	    (stop_ns != UINT64_MAX && (rc = mp_capture_seek_stop(mp_capture_from_source(src), stop_ns, MP_END_CLEAN)) < 0) ||
	    (rc = mp_solver_run(s, src, diag)) < 0)
		goto out;
	rc = 0;
	if (mp_solver_phase_marks(s))
		why = "the capture has phases, which checkpoints do not hold";
	else
		why = stop_ns != UINT64_MAX ? set_totals(s, &r.summary, &rc) : check_totals(s, &r.summary);
	if (rc < 0)
		goto out;
said:
	rc = 0;
	say = getenv("MEMPROF_SEEK_SAY") && !strcmp(getenv("MEMPROF_SEEK_SAY"), "1");
	if (why) {
		if (say || (stat(path, &st) == 0 && st.st_size >= (off_t)64 << 20))
			fprintf(stderr, "memprof: %s: full replay: %s\n", path, why);
		goto out;
	}
	if (say && seek)
		fprintf(stderr, "memprof: %s: seek from the checkpoint at event %llu (block %llu), step %lld", path,
			(unsigned long long)ck.events, (unsigned long long)ck.block_index, (long long)ck.step);
	else if (say)
		fprintf(stderr, "memprof: %s: the window from the start", path);
	if (say)
		fprintf(stderr, "%s\n", stop_ns != UINT64_MAX ? ", read up to the window's end" : ", read to the end");
	*src_out = src;
	*solver_out = s;
	src = NULL;
	s = NULL;
	rc = 1;
out:
	free(re);
	mp_checkpoint_seed_free(&b);
	mp_checkpoint_free(&ck);
	mp_solver_free(s);
	if (src)
		mp_source_close(src);
	mp_capture_rounds_free(&r);
	return rc;
}
