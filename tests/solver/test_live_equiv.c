/* test_live_equiv.c - the live-set rules are one: the same event streams
 * go to the live-set engine (memprof/live.h) driven directly (the
 * reference) and through each of its callers (the solver, the memory map's
 * replay, the summary replay, the report's later passes) and through the
 * writer's tally, its
 * specialised copy; at every checkpoint (every CHECK_EVERY events and at
 * the end) each memory id's live set must be equal: live bytes, live
 * requested bytes, live blocks, the blocks themselves (the map: a sum of a
 * mix of address and size), the regions, and the peak with its time.
 *
 * The solver runs twice, with its timeline and without (as `memprof report
 * --peak`: its fast path then looks for the peak only when one is due).
 *
 * Streams: the fuzz corpus's (tests/fuzz/corpus/solver and charts: the
 * fuzz_events.h streams, with duplicates, unknown frees, regions grown and
 * removed under live blocks, addresses near 2^64; reader: captures, which
 * also go to the summary replay), the shared TF/JAX xplane captures
 * (../shared/data/xplane, skipped when absent), and random streams made
 * for the edge cases (zero-size blocks, blocks outside every region,
 * several memory ids, addresses past 2^53 which the tally keys apart).
 * Allocator statistics are taken off (the solver's stats model is not a
 * live-set rule: its peak is the allocator's own figure).
 *
 * Where the callers look for the peak differs (and is kept, docs/
 * architecture.md): the solver and the tally at every event of a memory
 * id but steps, marks and declarations (allocations, frees, failed
 * allocations, region changes); the summary replay after allocations only.
 * The reference keeps both peaks. */
#include "test_common.h"

#include "../fuzz/fuzz_events.h"
#include "test_rand.h"

#include <memprof/array_source.h>
#include <memprof/live.h>
#include <memprof/capsummary.h>
#include <memprof/functions.h>
#include <memprof/reader.h>
#include <memprof/snapshot.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>

#include "solver_impl.h"
#include "tally.h"

#include <dirent.h>

#define CHECK_EVERY 16
#define MAX_MEM 16

static size_t total_streams, total_checkpoints, total_events, total_snapshots, total_replays, total_passes;

/* One memory id's reference state: the engine, driven directly. */
typedef struct ref_mem {
	mp_live_t live, req;            /* by footprint, by requested size */
	mp_live_regions_t reg;
	mp_live_peak_t peak, peak_req;   /* looked for at every event of the id */
	mp_live_peak_t apeak, apeak_req; /* after allocations only (the summary replay) */
	uint64_t failed;
	int seen;
} ref_mem_t;

/* A live set in a few words: bytes and blocks of size > 0 (the map shows
 * no empty block) and an order-free mix of their addresses and sizes. */
typedef struct digest {
	uint64_t bytes, blocks, mix, regions, region_mix;
} digest_t;

typedef struct stream_check {
	const mp_event_t *ev;
	size_t n, ncp;
	size_t *cp;                /* checkpoint positions (the event after which) */
	digest_t (*want)[MAX_MEM]; /* the reference's digests at each */
	uint32_t nmem;
	size_t snaps;
} stream_check_t;

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t x = (a ^ (b * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
	return x ^ (x >> 31);
}

static digest_t ref_digest(const ref_mem_t *r)
{
	digest_t d = {0};

	for (size_t i = 0; i < r->live.map.cap; i++) {
		const lm_entry_t *e = &r->live.map.slots[i];
		if (e->group == LM_EMPTY || !e->size)
			continue;
		d.bytes += e->size;
		d.blocks++;
		d.mix += mix(e->addr, e->size);
	}
	d.regions = r->reg.n;
	for (size_t i = 0; i < r->reg.n; i++)
		d.region_mix += mix(r->reg.r[i].base, r->reg.r[i].end);
	return d;
}

static void ref_apply(ref_mem_t *r, const mp_event_t *ev)
{
	uint64_t end;
	size_t pos;

	switch (ev->kind) {
	case MP_EV_ALLOC:
		assert_int_equal(mp_live_alloc(&r->live, ev->address,
					       mp_live_footprint(ev->requested_bytes, ev->allocated_bytes), 0, 0), 0);
		assert_int_equal(mp_live_alloc(&r->req, ev->address, ev->requested_bytes, 0, 0), 0);
		mp_live_peak_at(&r->apeak, r->live.bytes, ev->time_ns, ev->index, 0);
		mp_live_peak_at(&r->apeak_req, r->req.bytes, ev->time_ns, ev->index, 0);
		break;
	case MP_EV_FREE:
		mp_live_free(&r->live, ev->address);
		mp_live_free(&r->req, ev->address);
		break;
	case MP_EV_ALLOC_FAILED:
		r->failed++;
		break;
	case MP_EV_REGION_ADD:
		assert_true(mp_live_region_add(&r->reg, ev->address, ev->requested_bytes, &pos, &end) >= 0);
		break;
	case MP_EV_REGION_REMOVE:
		mp_live_region_remove(&r->reg, ev->address, &end);
		break;
	default:
		return;
	}
	mp_live_peak_at(&r->peak, r->live.bytes, ev->time_ns, ev->index, 0);
	mp_live_peak_at(&r->peak_req, r->req.bytes, ev->time_ns, ev->index, 0);
}

/* The tally's event of ev, or 0 when the tally has none (tally_decode.c). */
static int tally_event(const mp_event_t *ev, mp_tally_ev_t *x)
{
	uint64_t fp = mp_live_footprint(ev->requested_bytes, ev->allocated_bytes);

	switch (ev->kind) {
	case MP_EV_ALLOC:
		*x = mp__tally_event(ev->time_ns, ev->address, fp, ev->requested_bytes, ev->memory, MP_TALLY_ALLOC);
		return 1;
	case MP_EV_FREE:
		*x = mp__tally_event(ev->time_ns, ev->address, 0, 0, ev->memory, MP_TALLY_FREE);
		return 1;
	case MP_EV_ALLOC_FAILED:
		*x = mp__tally_event(ev->time_ns, 0, 0, 0, ev->memory, MP_TALLY_FAILED);
		return 1;
	case MP_EV_REGION_ADD:
	case MP_EV_REGION_REMOVE:
		*x = mp__tally_event(ev->time_ns, 0, 0, 0, ev->memory, MP_TALLY_MOMENT);
		return 1;
	default:
		return 0;
	}
}

static void check_solver(const mp_solver_t *s, const ref_mem_t *r, uint32_t m)
{
	const sv_dev_t *d = m < s->ndev ? s->dev[m] : NULL;

	assert_non_null(d);
	assert_int_equal(d->live.bytes, r->live.bytes);
	assert_int_equal(d->live.map.count, r->live.map.count);
	assert_int_equal(d->live.duplicates, r->live.duplicates);
	assert_int_equal(d->live.unknown_frees, r->live.unknown_frees);
	assert_int_equal(d->reg.n, r->reg.n);
	assert_int_equal(d->reg.bytes, r->reg.bytes);
	assert_int_equal(d->pub.has_peak, r->peak.has);
	if (r->peak.has) {
		assert_int_equal(d->pub.peak_bytes, r->peak.bytes);
		assert_int_equal(d->pub.peak.time_ns, r->peak.time_ns);
		assert_int_equal(d->pub.peak.event_index, r->peak.index);
	}
}

static void check_tally(const mp_tally_t *t, const ref_mem_t *r, uint32_t m)
{
	const mp_tally_mem_t *x = &t->mem[m];

	assert_false(t->failed);
	assert_int_equal(x->v[MP_SUMF_LIVE], r->live.bytes);
	assert_int_equal(x->v[MP_SUMF_LIVE_REQ], r->req.bytes);
	assert_int_equal(x->v[MP_SUMF_LIVE_BLOCKS], r->live.map.count);
	assert_int_equal(x->v[MP_SUMF_FAILED], r->failed);
	assert_int_equal(x->has_peak, r->peak.has);
	assert_int_equal(x->v[MP_SUMF_PEAK], r->peak.bytes);
	assert_int_equal(x->v[MP_SUMF_PEAK_NS], r->peak.time_ns);
	assert_int_equal(x->v[MP_SUMF_PEAK_REQ], r->peak_req.bytes);
	assert_int_equal(x->v[MP_SUMF_PEAK_REQ_NS], r->peak_req.time_ns);
}

static int on_snapshot(void *ctx, size_t target, const mp_snapshot_t *snap)
{
	stream_check_t *c = ctx;
	const digest_t *w = &c->want[target / c->nmem][target % c->nmem];
	digest_t got = {0};

	assert_int_equal(snap->memory, target % c->nmem);
	for (size_t i = 0; i < snap->nblocks; i++) {
		got.bytes += snap->blocks[i].size;
		got.blocks++;
		got.mix += mix(snap->blocks[i].addr, snap->blocks[i].size);
	}
	got.regions = snap->nregions;
	for (size_t i = 0; i < snap->nregions; i++)
		got.region_mix += mix(snap->regions[i].base, snap->regions[i].end);
	assert_memory_equal(&got, w, sizeof(got));
	c->snaps++;
	return 0;
}

/* The memory map's replay: one target per checkpoint and memory id. */
static void check_map(stream_check_t *c)
{
	mp_snapshot_target_t *t = calloc(c->ncp * c->nmem, sizeof(*t));
	mp_source_t *src;
	mp_diag_t diag;

	assert_non_null(t);
	for (size_t k = 0; k < c->ncp; k++)
		for (uint32_t m = 0; m < c->nmem; m++)
			t[k * c->nmem + m] = (mp_snapshot_target_t){m, c->ev[c->cp[k]].index};
	assert_int_equal(mp_array_source_new(&src, c->ev, c->n, NULL, 0, NULL, 0, "stream"), 0);
	assert_int_equal(mp_snapshot_run(src, t, c->ncp * c->nmem, on_snapshot, c, &diag), 0);
	assert_int_equal(c->snaps, c->ncp * c->nmem);
	total_snapshots += c->snaps;
	mp_source_close(src);
	free(t);
}

/* The summary replay of the capture at path, against the reference at the
 * end of its stream. */
static void check_replay(const char *path, const ref_mem_t *ref, uint32_t nmem)
{
	mp_capture_summary_t sum;
	mp_diag_t diag;

	if (mp_capture_summary_replay(path, &sum, &diag) < 0)
		return; /* a damaged capture: the replay refuses it whole */
	for (size_t i = 0; i < sum.nmemories && i < nmem; i++) {
		const mp_summary_memory_t *m = &sum.memories[i];
		const ref_mem_t *r = &ref[i];
		assert_int_equal(m->live_bytes, r->live.bytes);
		assert_int_equal(m->live_requested, r->req.bytes);
		assert_int_equal(m->live_blocks, r->live.map.count);
		assert_int_equal(m->failed, r->failed);
		assert_int_equal(m->has_peak, r->apeak.has);
		assert_int_equal(m->peak_bytes, r->apeak.bytes);
		assert_int_equal(m->peak_time_ns, r->apeak.time_ns);
		assert_int_equal(m->peak_requested, r->apeak_req.bytes);
		assert_int_equal(m->peak_requested_time_ns, r->apeak_req.time_ns);
	}
	total_replays++;
	mp_capture_summary_free(&sum);
}

/* The report's later passes (functions.c; calltree.c replays the same way,
 * through livesets.h) by allocating op, so that every stream qualifies
 * (ops and stacks cleared: all blocks of a memory id go to one row, whose
 * figures are then the id's): at the end, and at the solver's peak event,
 * against the reference. The solver s has been fed the whole stream. */
static void check_passes(mp_event_t *ev, size_t n, mp_solver_t *s, const ref_mem_t *ref)
{
	uint64_t sum[MAX_MEM][5] = {{0}};
	mp_functions_t *f;
	mp_source_t *src;
	mp_diag_t diag;

	for (size_t i = 0; i < n; i++)
		ev[i].op = ev[i].stack = 0;
	assert_int_equal(mp_solver_finish(s), 0);
	assert_int_equal(mp_array_source_new(&src, ev, n, NULL, 0, NULL, 0, "stream"), 0);
	assert_int_equal(mp_functions_compute_ops(&f, src, s, &diag), 0);
	for (size_t i = 0; i < mp_functions_count(f); i++) {
		const mp_func_row_t *row = mp_functions_row(f, i);
		assert_true(row->memory < MAX_MEM);
		sum[row->memory][0] += row->leak_bytes;
		sum[row->memory][1] += row->leak_count;
		sum[row->memory][2] += row->leak_requested_bytes;
		sum[row->memory][3] += row->failed;
		sum[row->memory][4] += row->peak_bytes;
	}
	for (uint32_t m = 0; m < MAX_MEM; m++) {
		assert_int_equal(sum[m][0], ref[m].live.bytes);
		assert_int_equal(sum[m][1], ref[m].live.map.count);
		assert_int_equal(sum[m][2], ref[m].req.bytes);
		assert_int_equal(sum[m][3], ref[m].failed);
		assert_int_equal(sum[m][4], ref[m].peak.has ? ref[m].peak.bytes : 0);
	}
	total_passes++;
	mp_functions_free(f);
	mp_source_close(src);
}

/* Stream ev[0..n) (indexes set to positions, statistics taken off) through
 * every caller; capture: its path for the summary replay, or NULL. */
static void check_stream(mp_event_t *ev, size_t n, const char *capture)
{
	ref_mem_t ref[MAX_MEM];
	stream_check_t c = {0};
	mp_solver_options_t o;
	mp_solver_t *s = mp_solver_new(NULL), *sp; /* sp: as report --peak, no timeline */
	mp_tally_t tally;
	mp_diag_t diag;
	size_t fed = 0, k = 0;

	memset(ref, 0, sizeof(ref));
	memset(&tally, 0, sizeof(tally));
	mp_solver_options_init(&o);
	o.timeline = 0;
	sp = mp_solver_new(&o);
	assert_non_null(s);
	assert_non_null(sp);
	assert_int_equal(mp__tally_ready(&tally), 0);
	for (size_t i = 0; i < n; i++) {
		ev[i].index = i;
		ev[i].flags &= (uint16_t)~MP_EVENT_F_STATS;
		assert_true(ev[i].memory < MAX_MEM);
		if (ev[i].memory >= c.nmem)
			c.nmem = ev[i].memory + 1;
	}
	c.ev = ev;
	c.n = n;
	c.cp = calloc(n / CHECK_EVERY + 2, sizeof(*c.cp));
	c.want = calloc(n / CHECK_EVERY + 2, sizeof(*c.want));
	assert_true(c.cp && c.want);
	for (size_t i = 0; i < n; i++) {
		mp_tally_ev_t x;
		ref_mem_t *r = &ref[ev[i].memory];
		r->seen |= ev[i].kind != MP_EV_MARK && ev[i].kind != MP_EV_STEP && ev[i].kind != MP_EV_DROPPED;
		ref_apply(r, &ev[i]);
		if (tally_event(&ev[i], &x)) {
			assert_int_equal(mp__tally_reserve(&tally, 1), 0);
			assert_int_equal(mp__tally_apply(&tally, &x), 0);
		}
		if ((i + 1) % CHECK_EVERY && i + 1 != n)
			continue;
		/* a checkpoint: the solver fed up to here, in batches as mp_solver_run does */
		assert_int_equal(mp_solver_feed_many(s, ev + fed, i + 1 - fed, &diag), 0);
		assert_int_equal(mp_solver_feed_many(sp, ev + fed, i + 1 - fed, &diag), 0);
		fed = i + 1;
		c.cp[k] = i;
		for (uint32_t m = 0; m < c.nmem; m++) {
			c.want[k][m] = ref_digest(&ref[m]);
			if (ref[m].seen) {
				check_solver(s, &ref[m], m);
				check_solver(sp, &ref[m], m);
			}
			check_tally(&tally, &ref[m], m);
		}
		k++;
	}
	c.ncp = k;
	if (n)
		check_map(&c);
	if (capture)
		check_replay(capture, ref, MAX_MEM);
	check_passes(ev, n, s, ref);
	total_streams++;
	total_checkpoints += k;
	total_events += n;
	for (int m = 0; m < MAX_MEM; m++) {
		mp_live_destroy(&ref[m].live);
		mp_live_destroy(&ref[m].req);
		mp_live_regions_destroy(&ref[m].reg);
	}
	mp__tally_release(&tally);
	mp_solver_free(s);
	mp_solver_free(sp);
	free(c.cp);
	free(c.want);
}

/* Every event of src, in an array the caller frees (a damaged input: those
 * read before the damage). */
static mp_event_t *read_all(mp_source_t *src, size_t *n)
{
	size_t cap = 1024;
	mp_event_t *ev = malloc(cap * sizeof(*ev));
	mp_diag_t diag;

	*n = 0;
	assert_non_null(ev);
	while (mp_source_next(src, &ev[*n], &diag) == 1) {
		if (++*n == cap) {
			ev = realloc(ev, (cap *= 2) * sizeof(*ev));
			assert_non_null(ev);
		}
	}
	return ev;
}

static unsigned char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (b = malloc((size_t)len + 1)) && fread(b, 1, (size_t)len, f) == (size_t)len)
		*size = (size_t)len;
	fclose(f);
	return b;
}

/* Each file of a corpus folder, to fn. */
static size_t each_file(const char *dir, void (*fn)(const char *path))
{
	char path[4096];
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fn(path);
		n++;
	}
	closedir(d);
	return n;
}

static void fuzz_stream(const char *path)
{
	size_t size = 0, n;
	unsigned char *b = slurp(path, &size);
	mp_event_t *ev;

	assert_non_null(b);
	ev = fuzz_events(b, size, 1, &n);
	assert_non_null(ev);
	check_stream(ev, n, NULL);
	free(ev);
	free(b);
}

static void capture_stream(const char *path)
{
	mp_capture_t *cap;
	mp_diag_t diag;
	mp_event_t *ev;
	size_t n;

	if (mp_capture_open(&cap, path, &diag) < 0)
		return; /* not a capture at all: nothing to compare */
	ev = read_all(mp_capture_source(cap), &n);
	mp_capture_close(cap);
	check_stream(ev, n, path);
	free(ev);
}

static void test_fuzz_corpus(void **state)
{
	(void)state;
	assert_true(each_file(MEMPROF_SOURCE_DIR "/tests/fuzz/corpus/solver", fuzz_stream) >= 3);
	assert_true(each_file(MEMPROF_SOURCE_DIR "/tests/fuzz/corpus/charts", fuzz_stream) >= 8);
	assert_true(each_file(MEMPROF_SOURCE_DIR "/tests/fuzz/corpus/reader", capture_stream) >= 10);
}

static void test_shared_xplane(void **state)
{
	static const char *const files[] = {
		"xplane/tf24-gpu-e4040-2022/logs/fit/20221104-215722/train/plugins/profile/2022_11_04_21_57_24/"
		"instance-ecbm.xplane.pb",
		"xplane/tf24-gpu-e4040-2022/logs/fit/20221104-213654/train/plugins/profile/2022_11_04_21_36_56/"
		"instance-ecbm.xplane.pb",
		"xplane/jax-mi300x-tracelens/tests/traces/mi300/jax08_gemm/tw003.xplane.pb",
		"xplane/jax-mi300x-tracelens/tests/traces/mi300/jax08_attention/tw003.xplane.pb",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *path = mp_test_shared(files[i]);
		mp_source_t *src;
		mp_diag_t diag;
		mp_event_t *ev;
		size_t n;
		if (!path)
			continue;
		assert_int_equal(mp_xplane_open_source(&src, &path, 1, NULL, &diag), 0);
		ev = read_all(src, &n);
		mp_source_close(src);
		check_stream(ev, n, NULL);
		free(ev);
	}
}

/* Random streams: 3 memory ids, regions, zero-size blocks, duplicates,
 * unknown frees, reallocs, addresses past 2^53 (the tally's far path),
 * requested sizes around 2^32. */
static void test_random(void **state)
{
	uint64_t rng = 0x5eed1234abcdull;

	(void)state;
	for (int round = 0; round < 40; round++) {
		size_t n = 2000;
		mp_event_t *ev = calloc(n, sizeof(*ev));
		assert_non_null(ev);
		for (size_t i = 0; i < n; i++) {
			uint64_t r = mp_test_xorshift(&rng), k = r % 100;
			mp_event_t *e = &ev[i];
			e->memory = (uint32_t)(r >> 8) % 3;
			e->time_ns = i / 2; /* ties of time too */
			e->address = 0x1000 + 64 * ((r >> 16) % (round % 4 == 0 ? 40 : 400));
			if (round % 5 == 1 && (r >> 40) % 4 == 0)
				e->address |= 1ull << 60;
			if (k < 50) {
				e->kind = MP_EV_ALLOC;
				e->requested_bytes = (r >> 24) % 7 == 0 ? 0 : (r >> 24) % 300;
				if (round % 5 == 3 && (r >> 44) % 8 == 0) /* past 32 bits: functions.c's big table */
					e->requested_bytes += (1ull << 32) - 100;
				e->allocated_bytes = (r >> 32) % 3 ? e->requested_bytes + (r >> 34) % 16 : 0;
				e->flags = (r >> 50) % 8 == 0 ? MP_EVENT_F_REALLOC : 0;
			} else if (k < 92) {
				e->kind = MP_EV_FREE;
			} else if (k < 94) {
				e->kind = MP_EV_ALLOC_FAILED;
			} else if (k < 97) {
				e->kind = MP_EV_REGION_ADD;
				e->address = 0x1000 + 4096 * ((r >> 16) % 8);
				e->requested_bytes = 1024 * (1 + (r >> 24) % 8);
			} else if (k < 99) {
				e->kind = MP_EV_REGION_REMOVE;
				e->address = 0x1000 + 4096 * ((r >> 16) % 8);
			} else {
				e->kind = MP_EV_MARK;
			}
		}
		check_stream(ev, n, NULL);
		free(ev);
	}
}

static void test_totals(void **state)
{
	(void)state;
	fprintf(stderr, "live_equiv: %zu streams, %zu events, %zu checkpoints, %zu map snapshots, %zu summary replays, %zu report passes\n",
		total_streams, total_events, total_checkpoints, total_snapshots, total_replays, total_passes);
	assert_true(total_streams >= 50);
	assert_true(total_passes == total_streams);
	assert_true(total_replays >= 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuzz_corpus),
		cmocka_unit_test(test_shared_xplane),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_totals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
