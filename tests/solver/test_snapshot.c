/* test_snapshot.c - mp_snapshot_run: a hand-made stream whose blocks and
 * regions at each target are written out below, and a random stream (regions
 * added, grown, removed and re-added under live blocks, duplicates, unknown
 * frees) where the free bytes and the largest free chunk computed from each
 * snapshot must equal what the solver reports at that event. */
#include "test_common.h"

#include "ev.h"
#include "test_rand.h"

#include <memprof/array_source.h>
#include <memprof/snapshot.h>
#include <memprof/solver.h>

typedef struct seen {
	size_t calls;
	size_t target[8];
	mp_snapshot_region_t reg[8][4];
	size_t nreg[8];
	mp_snapshot_block_t blk[8][8];
	size_t nblk[8];
} seen_t;

static int record(void *ctx, size_t target, const mp_snapshot_t *snap)
{
	seen_t *s = ctx;
	size_t c = s->calls++;

	s->target[c] = target;
	s->nreg[c] = snap->nregions;
	memcpy(s->reg[c], snap->regions, snap->nregions * sizeof(*snap->regions));
	s->nblk[c] = snap->nblocks;
	memcpy(s->blk[c], snap->blocks, snap->nblocks * sizeof(*snap->blocks));
	return 0;
}

static void test_hand_made(void **state)
{
	mp_event_t ev[] = {
		ev_region(0, 0, 1000, 500),          /* #0 [1000,1500) */
		ev_alloc(0, 1, 1200, 100, 128),       /* #1 */
		ev_alloc(0, 2, 1000, 50, 0),          /* #2 allocated 0: counts 50 */
		ev_alloc(1, 3, 1100, 10, 10),         /* #3 memory 1: not asked for */
		ev_region(0, 4, 1000, 800),          /* #4 grows to [1000,1800) */
		ev_region(0, 5, 1400, 100),          /* #5 overlaps: ignored */
		ev_alloc(0, 6, 1200, 300, 300),       /* #6 same address: replaces #1 */
		ev_free(0, 7, 4242),                  /* #7 unknown: ignored */
		ev_free(0, 8, 1000),                  /* #8 */
		ev_region_rm(0, 9, 1000),            /* #9 */
	};
	mp_snapshot_target_t t[] = {{0, 6}, {0, 2}, {0, 9}, {0, 6}};
	seen_t s;
	mp_source_t *src;
	mp_diag_t d;

	(void)state;
	memset(&s, 0, sizeof(s));
	ev[1].region = MP_REGION_TEMP;
	ev[1].op = 7;
	assert_int_equal(mp_array_source_new(&src, ev, sizeof(ev) / sizeof(ev[0]), NULL, 0, NULL, 0, "hand"), 0);
	assert_int_equal(mp_snapshot_run(src, t, 4, record, &s, &d), 0);
	assert_int_equal(s.calls, 4);
	/* stream order: #2 (target 1), #6 (targets 0 and 3, in that order), #9 */
	assert_int_equal(s.target[0], 1);
	assert_int_equal(s.target[1], 0);
	assert_int_equal(s.target[2], 3);
	assert_int_equal(s.target[3], 2);
	/* after #2: [1000,1500); blocks 1000+50, 1200+128 (temp, op 7) */
	assert_int_equal(s.nreg[0], 1);
	assert_int_equal(s.reg[0][0].end, 1500);
	assert_int_equal(s.nblk[0], 2);
	assert_int_equal(s.blk[0][0].addr, 1000);
	assert_int_equal(s.blk[0][0].size, 50);
	assert_int_equal(s.blk[0][1].size, 128);
	assert_int_equal(s.blk[0][1].region, MP_REGION_TEMP);
	assert_int_equal(s.blk[0][1].op, 7);
	/* after #6: grown to 1800, the overlap ignored, 1200 replaced by 300 B */
	assert_int_equal(s.nreg[1], 1);
	assert_int_equal(s.reg[1][0].base, 1000);
	assert_int_equal(s.reg[1][0].end, 1800);
	assert_int_equal(s.nblk[1], 2);
	assert_int_equal(s.blk[1][1].addr, 1200);
	assert_int_equal(s.blk[1][1].size, 300);
	assert_int_equal(s.blk[1][1].op, 0);
	assert_memory_equal(s.blk[2], s.blk[1], 2 * sizeof(mp_snapshot_block_t));
	/* after #9: no region, one block left */
	assert_int_equal(s.nreg[3], 0);
	assert_int_equal(s.nblk[3], 1);
	assert_int_equal(s.blk[3][0].addr, 1200);

	/* a target that is not in the stream */
	t[0].event_index = 99;
	assert_int_equal(mp_snapshot_run(src, t, 1, record, &s, &d), MP_ENOTFOUND);
	assert_non_null(strstr(d.text, "event 99"));
	mp_source_close(src);
}

/* Free bytes and the largest free chunk inside the regions, from a
 * snapshot: the gaps between the blocks wholly inside one region. */
static void gaps(const mp_snapshot_t *s, uint64_t *total, uint64_t *largest)
{
	size_t b = 0;

	*total = *largest = 0;
	for (size_t r = 0; r < s->nregions; r++) {
		uint64_t cover = s->regions[r].base, end = s->regions[r].end;
		for (; b < s->nblocks && s->blocks[b].addr < s->regions[r].base; b++)
			;
		for (; b < s->nblocks && s->blocks[b].addr < end; b++) {
			uint64_t a = s->blocks[b].addr, e = a + s->blocks[b].size;
			if (e > end)
				continue;
			if (a > cover) {
				*total += a - cover;
				if (a - cover > *largest)
					*largest = a - cover;
			}
			if (e > cover)
				cover = e;
		}
		if (end > cover) {
			*total += end - cover;
			if (end - cover > *largest)
				*largest = end - cover;
		}
	}
}

typedef struct check {
	const mp_solver_device_t *dev; /* timeline with one point per event */
	size_t checked;
} check_t;

static int compare(void *ctx, size_t target, const mp_snapshot_t *snap)
{
	check_t *c = ctx;
	uint64_t total, largest, heap = 0;
	const mp_solver_point_t *p = NULL;

	(void)target;
	for (size_t k = 0; k < c->dev->timeline_count; k++)
		if (c->dev->timeline[k].event_index == snap->event_index)
			p = &c->dev->timeline[k];
	assert_non_null(p);
	for (size_t i = 0; i < snap->nblocks; i++)
		heap += snap->blocks[i].size;
	assert_int_equal(heap, p->heap_bytes);
	gaps(snap, &total, &largest);
	if (p->has_largest) {
		assert_int_equal(total, p->region_free_bytes);
		assert_int_equal(largest, p->largest_free_bytes);
	} else {
		assert_int_equal(snap->nregions, 0);
	}
	c->checked++;
	return 0;
}

#define NEV 60000

static void test_random_vs_solver(void **state)
{
	const uint64_t rb[3] = {0x100000, 0x200000, 0x300000};
	uint64_t rs[3] = {65536, 65536, 32768}, rng = 12345;
	int rlive[3] = {0};
	uint64_t live[4096], lsize[4096];
	size_t nlive = 0, nt = 0;
	mp_event_t *ev = calloc(NEV, sizeof(*ev));
	mp_snapshot_target_t *t = calloc(NEV / 97 + 2, sizeof(*t));
	mp_solver_options_t o;
	mp_solver_t *s;
	mp_source_t *src;
	check_t c = {NULL, 0};
	mp_diag_t d;

	(void)state;
	assert_non_null(ev);
	assert_non_null(t);
	for (size_t n = 0; n < NEV; n++) {
		uint64_t roll = mp_test_xorshift(&rng) % 1000;
		if (n < 3) {
			ev[n] = ev_region(0, n, rb[n], rs[n]);
			rlive[n] = 1;
		} else if (roll < 3) { /* toggle a region, or grow one */
			int r = (int)(mp_test_xorshift(&rng) % 3);
			if (rlive[r] && roll == 0 && rs[r] < 0x100000 - 4096) {
				rs[r] += 4096;
				ev[n] = ev_region(0, n, rb[r], rs[r]);
			} else {
				ev[n] = rlive[r] ? ev_region_rm(0, n, rb[r]) : ev_region(0, n, rb[r], rs[r]);
				rlive[r] = !rlive[r];
			}
		} else if (roll < 8) {
			ev[n] = ev_free(0, n, 0x777);
		} else if (nlive && (roll < 490 || nlive == 4096)) {
			size_t i = mp_test_xorshift(&rng) % nlive;
			ev[n] = ev_free(0, n, live[i]);
			live[i] = live[--nlive];
			lsize[i] = lsize[nlive];
		} else {
			int r = (int)(mp_test_xorshift(&rng) % 3);
			uint64_t a = rb[r] + 16 * (mp_test_xorshift(&rng) % (rs[r] / 16 + 8));
			uint64_t size = 16 * (1 + mp_test_xorshift(&rng) % 64);
			int clash = 0, dup = 0;
			for (size_t i = 0; i < nlive; i++) {
				dup |= live[i] == a;
				clash |= live[i] != a && live[i] < a + size && a < live[i] + lsize[i];
			}
			if (clash) { /* allocators never hand out overlapping blocks */
				ev[n] = ev_make(MP_EV_MARK, 0, n, 0);
			} else if (dup) { /* a duplicate replaces the block */
				ev[n] = ev_alloc(0, n, a, size, size);
				for (size_t i = 0; i < nlive; i++)
					if (live[i] == a)
						lsize[i] = size;
			} else {
				ev[n] = ev_alloc(0, n, a, size, size);
				live[nlive] = a;
				lsize[nlive++] = size;
			}
		}
		if (n % 97 == 50 && ev[n].kind != MP_EV_MARK)
			t[nt++] = (mp_snapshot_target_t){0, n};
	}
	mp_solver_options_init(&o);
	o.timeline_points = NEV;
	assert_non_null(s = mp_solver_new(&o));
	assert_int_equal(mp_array_source_new(&src, ev, NEV, NULL, 0, NULL, 0, "random"), 0);
	assert_int_equal(mp_solver_run(s, src, &d), 0);
	c.dev = mp_solver_find(s, 0);
	assert_non_null(c.dev);
	assert_true(c.dev->timeline_count > NEV / 2);
	t[nt++] = (mp_snapshot_target_t){0, c.dev->peak.event_index};
	assert_int_equal(mp_snapshot_run(src, t, nt, compare, &c, &d), 0);
	assert_int_equal(c.checked, nt);
	mp_source_close(src);
	mp_solver_free(s);
	free(ev);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_made),
		cmocka_unit_test(test_random_vs_solver),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
