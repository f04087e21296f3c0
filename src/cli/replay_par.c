/* replay_par.c - a full replay split at checkpoints (issue 43;
 * replay_par.h). The one-pass replay (src/solver/pipeline.c) has one
 * thread reading and one solving; on two cores that is 1.5x one core,
 * since the solver's own pass is serial. Here the capture is cut at W-1
 * of its checkpoints into W segments of about equal bytes (W: the cores
 * this process may use): worker 0 reads from the start up to the first
 * cut, worker i from checkpoint i (its solver seeded with the live set
 * and the figures before it, as a seek's: report_seek.c) up to the next,
 * the last to the end; each reads its own blocks on its own thread
 * (mp_solver_run_inline), then mp_solver_merge_segments gathers the peak,
 * the reserved peak and the OOM records into the last one's solver.
 *
 * It lives in the CLI beside the seek, not in the solver library: it
 * opens the file, picks checkpoints and checks the result against the
 * capture's summary, as the seek does; the solver keeps to computing
 * (the merge is there). Two checks keep the output that of one pass:
 * every segment but the last ends where the next one's checkpoint says
 * (counts and live bytes per memory id), and the merged result agrees with
 * the final SUMMARY; else, or on any failure, the caller replays serially. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include "replay_par.h"

#include "cli.h"
#include "report_seek.h"

#include <memprof/capsummary.h>
#include <memprof/checkpoint.h>
#include <memprof/reader.h>
#include <memprof/seed_checkpoint.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define PAR_MAX 64

int cli_replay_threads(void)
{
	const char *e = getenv("MEMPROF_REPLAY_THREADS");
	cpu_set_t set;
	int n = 1;

	if (e && *e) {
		n = atoi(e);
		return n < 1 ? 1 : n > PAR_MAX ? PAR_MAX : n;
	}
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > PAR_MAX ? PAR_MAX : n;
}

/* One segment: from checkpoint `from` (NULL: the start) to the first
 * event at or after until_ns (0: the end). */
typedef struct seg {
	const char *path;
	const mp_solver_options_t *opt;
	const mp_checkpoint_t *from;
	uint64_t until_ns;
	mp_source_t *src;
	mp_solver_t *s;
	mp_diag_t diag;
	int rc;
	double cpu_s; /* the thread's CPU time on the segment (MEMPROF_SEEK_SAY=1 says it) */
} seg_t;

static double thread_cpu(void)
{
	struct timespec ts;

	return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) ? 0 : (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *work(void *arg)
{
	seg_t *g = arg;
	mp_checkpoint_seed_t b;
	mp_capture_t *cap;
	double t0 = thread_cpu();

	memset(&b, 0, sizeof(b));
	mp_diag_clear(&g->diag);
	if ((g->rc = mp_capture_open_source(&g->src, g->path, &g->diag)) < 0)
		return NULL;
	g->rc = MP_ENOMEM;
	if (!(g->s = mp_solver_new(g->opt)) || !(cap = mp_capture_from_source(g->src)))
		goto out;
	/* the seed's reserved peak event unknown (NULL): a segment that
	 * makes a new one says so by its index (the merge's rule) */
	if (g->from && ((g->rc = mp_checkpoint_seed(g->from, NULL, &b)) < 0 ||
			(g->rc = mp_capture_seek(cap, g->from, &g->diag)) < 0))
		goto out;
	if (g->until_ns && (g->rc = mp_capture_seek_stop(cap, g->until_ns - 1, MP_END_CLEAN)) < 0)
		goto out;
	if (g->from && (g->rc = mp_solver_seed(g->s, &b.seed, &g->diag)) < 0)
		goto out;
	g->rc = mp_solver_run_inline(g->s, g->src, &g->diag);
out:
	mp_checkpoint_seed_free(&b);
	g->cpu_s = thread_cpu() - t0;
	return NULL;
}

/* Whether segment s ended in the state checkpoint ck holds: per memory
 * id, its allocations, frees, failures and live bytes. NULL or why not. */
static const char *meets(const mp_solver_t *s, const mp_checkpoint_t *ck)
{
	size_t mi = 0;

	for (uint32_t id = 0; id < ck->nfigures; id++) {
		const mp_checkpoint_figures_t *f = &ck->figures[id];
		const mp_solver_device_t *d = mp_solver_find(s, id);
		uint64_t live = 0;
		for (; mi < ck->nmemories && ck->memories[mi].id < id; mi++)
			;
		for (size_t k = 0; mi < ck->nmemories && ck->memories[mi].id == id && k < ck->memories[mi].nblocks; k++)
			live += ck->memories[mi].blocks[k].bytes;
		if (!f->in_summary && !live)
			continue;
		if (!d)
			return "a memory id is missing at a cut";
		if (d->allocations != f->allocations + f->reallocs || d->deallocations != f->frees + f->reallocs ||
		    d->failed_allocations != f->failed || d->leak_bytes != live)
			return "a segment does not end where the next one's checkpoint starts";
	}
	return NULL;
}

/* The usable checkpoint of round end t into *ck: 1, 0 (none, or not one a
 * seeded solver can start from), or an error. */
static int usable_at(mp_capture_t *cap, const mp_capture_round_end_t *re, mp_checkpoint_t *ck, mp_diag_t *diag)
{
	int rc = re->horizon_ns ? mp_capture_checkpoint_at(cap, re, ck, diag) : 0;

	if (rc == 1 && !cli_seek_usable(ck)) {
		mp_checkpoint_free(ck);
		memset(ck, 0, sizeof(*ck));
		rc = 0;
	}
	return rc;
}

/* The next usable checkpoint from round end t on, by steps of dir (+1 or
 * -1), within [lo, n): 1 with *ck and *t at it, 0 when none, or an error. */
static int next_usable(mp_capture_t *cap, const mp_capture_round_end_t *re, size_t lo, size_t n, size_t *t, int dir,
		       mp_checkpoint_t *ck, mp_diag_t *diag)
{
	for (size_t u = *t; dir > 0 ? u + 1 < n : u > lo;) {
		int rc;
		u = dir > 0 ? u + 1 : u - 1;
		if ((rc = usable_at(cap, &re[u], ck, diag)) != 0) {
			*t = u;
			return rc;
		}
	}
	return 0;
}

/* The segment before cut c and those after it, the rest's events shared
 * by `left` segments: the larger cost, the events after a cut counted
 * 1/16 more (the segments after the first seed their solver and decode a
 * few blocks before their checkpoint, later events tend to cost more in a
 * live set that grew, and the last one's thread also writes the report). */
static uint64_t cost(uint64_t c, uint64_t prev, uint64_t events, int left)
{
	uint64_t before = c - prev, after = events > c ? (events - c) / (uint64_t)left : 0;

	after += after / 16;
	return before > after ? before : after;
}

/* Cut *ck (at round end *t) or the usable checkpoint before it, whichever
 * costs less (cost()): 0, *ck and *t changed or not, or an error. */
static int closer_before(mp_capture_t *cap, const mp_capture_round_end_t *re, size_t lo, size_t n, size_t *t,
			 uint64_t events, int left, uint64_t prev, mp_checkpoint_t *ck, mp_diag_t *diag)
{
	mp_checkpoint_t a;
	size_t u = *t;
	int rc = next_usable(cap, re, lo, n, &u, -1, &a, diag);

	if (rc <= 0)
		return rc;
	if (a.events > prev && cost(a.events, prev, events, left) < cost(ck->events, prev, events, left)) {
		mp_checkpoint_free(ck);
		*ck = a;
		*t = u;
	} else {
		mp_checkpoint_free(&a);
	}
	return 0;
}

/* The cuts: up to w-1 usable checkpoints, in file order, each the first
 * whose event count reaches k/w of the capture's `events` or the one
 * before it, whichever balances better (cost()): found from the one
 * nearest to k/w of the file's bytes (no checkpoint read), then
 * checkpoint by checkpoint (the bytes of an event grow with the live set:
 * a quarter more at the end of scripts/bench_replay.sh's captures). None
 * at horizon 0. Returns how many, or an error. */
static int pick_cuts(mp_capture_t *cap, const mp_capture_round_end_t *re, size_t n, uint64_t size, uint64_t events,
		     int w, mp_checkpoint_t *ck, mp_diag_t *diag)
{
	size_t after = 0; /* round ends before it are taken or passed */
	int got = 0;

	for (int k = 1; k < w && after < n; k++) {
		uint64_t target = size / (uint64_t)w * (uint64_t)k, want = events / (uint64_t)w * (uint64_t)k;
		size_t j = after, t;
		int rc, dir;
		mp_checkpoint_t next;
		while (j + 1 < n && re[j + 1].offset <= target)
			j++;
		t = j + 1; /* at j or the last before it, else the first after it */
		if ((rc = next_usable(cap, re, after, n, &t, -1, &ck[got], diag)) == 0) {
			t = j;
			rc = next_usable(cap, re, after, n, &t, +1, &ck[got], diag);
		}
		if (rc <= 0)
			return rc < 0 ? rc : got;
		/* then the first at or past k/w of the events */
		dir = ck[got].events >= want ? -1 : +1;
		while (dir > 0 ? ck[got].events < want : 1) {
			size_t u = t;
			if ((rc = next_usable(cap, re, after, n, &u, dir, &next, diag)) <= 0)
				break;
			if (dir < 0 && next.events < want) {
				mp_checkpoint_free(&next);
				break;
			}
			mp_checkpoint_free(&ck[got]);
			ck[got] = next;
			t = u;
		}
		if (rc < 0 || (rc = closer_before(cap, re, after, n, &t, events, w - k, got ? ck[got - 1].events : 0,
						  &ck[got], diag)) < 0)
			return rc;
		if (got && ck[got].horizon_ns <= ck[got - 1].horizon_ns) {
			mp_checkpoint_free(&ck[got]);
			memset(&ck[got], 0, sizeof(ck[got]));
			break;
		}
		after = t + 1;
		got++;
	}
	return got;
}

/* Run the segments, merge and check: NULL (segs[w-1] holds the result) or
 * why not; *rc an error. */
static const char *run_segments(seg_t *seg, int w, const mp_checkpoint_t *ck, const mp_capture_summary_t *sum, int *rc)
{
	pthread_t th[PAR_MAX];
	int started[PAR_MAX] = {0};
	mp_solver_t *ws[PAR_MAX];
	const char *why = NULL;

	*rc = 0;
	for (int i = 0; i < w - 1; i++) /* the last on this thread */
		started[i] = pthread_create(&th[i], NULL, work, &seg[i]) == 0;
	for (int i = 0; i < w - 1; i++)
		if (!started[i])
			work(&seg[i]);
	work(&seg[w - 1]);
	for (int i = 0; i < w - 1; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	for (int i = 0; i < w; i++) {
		if (seg[i].rc < 0) {
			*rc = seg[i].rc;
			return "a segment failed";
		}
		ws[i] = seg[i].s;
		if (mp_solver_phase_marks(seg[i].s))
			why = "the capture has phases, which checkpoints do not hold";
		if (!why && i < w - 1)
			why = meets(seg[i].s, &ck[i]);
	}
	if (why)
		return why;
	if ((*rc = mp_solver_merge_segments(ws, (size_t)w)) < 0) {
		if (*rc == MP_ENOMEM)
			return "out of memory";
		*rc = 0;
		return "the segments' peaks do not merge";
	}
	return cli_seek_disagrees(seg[w - 1].s, sum, 0);
}

int cli_par_solve(const char *path, const mp_solver_options_t *opt, mp_source_t **src_out, mp_solver_t **solver_out,
		  mp_diag_t *diag)
{
	mp_capture_summary_t sum;
	mp_checkpoint_t ck[PAR_MAX];
	seg_t seg[PAR_MAX];
	mp_source_t *probe = NULL;
	mp_capture_round_end_t *re = NULL;
	size_t nre = 0;
	struct stat st;
	const char *why = NULL, *say = getenv("MEMPROF_SEEK_SAY");
	int w = cli_replay_threads(), ncut = 0, rc = 0;

	*src_out = NULL;
	*solver_out = NULL;
	memset(ck, 0, sizeof(ck));
	memset(seg, 0, sizeof(seg));
	if (w < 2 || opt->steps_set)
		return 0;
	if (mp_capture_summary_read(path, &sum, diag) < 0 || !sum.available || sum.horizon_ns != UINT64_MAX) {
		mp_capture_summary_free(&sum);
		return 0; /* the serial read says what is wrong */
	}
	if (sum.stacks)
		why = "it has call stacks, which a seek does not read from checkpoints yet";
	for (size_t i = 0; i < sum.nmemories; i++)
		if (sum.memories[i].dropped)
			why = "events were dropped";
	if (!why && stat(path, &st) < 0)
		why = "cannot stat it";
	if (!why && ((rc = mp_capture_open_source(&probe, path, diag)) < 0 ||
		     (rc = mp_capture_round_ends(mp_capture_from_source(probe), &re, &nre, diag)) < 0 ||
		     (rc = pick_cuts(mp_capture_from_source(probe), re, nre, (uint64_t)st.st_size, sum.events, w, ck, diag)) < 0))
		goto out;
	ncut = rc;
	rc = 0;
	if (!why && !ncut)
		why = "no usable checkpoint";
	if (!why) {
		w = ncut + 1;
		for (int i = 0; i < w; i++)
			seg[i] = (seg_t){.path = path, .opt = opt, .from = i ? &ck[i - 1] : NULL,
					 .until_ns = i < ncut ? ck[i].horizon_ns : 0};
		why = run_segments(seg, w, ck, &sum, &rc);
		if (rc < 0) {
			for (int i = 0; i < w; i++)
				if (seg[i].rc < 0) {
					*diag = seg[i].diag;
					break;
				}
			goto out;
		}
	}
	if (why) {
		if (say && !strcmp(say, "1"))
			fprintf(stderr, "memprof: %s: serial replay: %s\n", path, why);
	} else {
		if (say && !strcmp(say, "1")) {
			fprintf(stderr, "memprof: %s: parallel replay in %d segments, cut at events", path, w);
			for (int i = 0; i < ncut; i++)
				fprintf(stderr, " %llu", (unsigned long long)ck[i].events);
			fprintf(stderr, "; CPU time of each segment's thread:");
			for (int i = 0; i < w; i++)
				fprintf(stderr, " %.3f s", seg[i].cpu_s);
			fputc('\n', stderr);
		}
		*src_out = seg[w - 1].src;
		*solver_out = seg[w - 1].s;
		seg[w - 1].src = NULL;
		seg[w - 1].s = NULL;
		rc = 1;
	}
out:
	for (int i = 0; i < PAR_MAX; i++) {
		mp_solver_free(seg[i].s);
		if (seg[i].src)
			mp_source_close(seg[i].src);
	}
	for (int i = 0; i < PAR_MAX; i++)
		mp_checkpoint_free(&ck[i]);
	free(re);
	if (probe)
		mp_source_close(probe);
	mp_capture_summary_free(&sum);
	return rc;
}
