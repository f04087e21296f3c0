/* test_checkpoint.c - CHECKPOINT sections (format 2.4) against the full
 * replay (issue 43): for every checkpoint of a capture, the live blocks of
 * every memory id (address, footprint, requested size) equal those of the
 * live-set engine (memprof/live.h) after the capture's first `events`
 * events. Captures are recorded here with the writer API (several threads,
 * memory ids, regions, reallocs, frees of unknown addresses, failed
 * allocations, addresses above 2^53 in one thread, a checkpoint every
 * round), and every .memprof capture of
 * 2.4 under the shared data and the reader's fuzz corpus is checked too. A checkpoint
 * damaged by hand (a size changed, the block's framing made right) is
 * skipped and said with its block index and offset, and every event still
 * reads. */
#include "test_common.h"

#include "capture_helpers.h"
#include "replay_tags.h"

#include <memprof/capture_edit.h>
#include <memprof/checkpoint.h>
#include <memprof/format.h>
#include <memprof/live.h>
#include <memprof/reader.h>
#include <memprof/writer.h>

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NMEM MP_CKPT_MEMORIES_MAX

typedef struct {
	mp_live_t live[NMEM], req[NMEM]; /* by footprint, by requested size */
	mp_live_regions_t reg[NMEM];
	int64_t step;
} replay_t;

static int by_addr(const void *a, const void *b)
{
	uint64_t x = ((const lm_entry_t *)a)->addr, y = ((const lm_entry_t *)b)->addr;
	return x < y ? -1 : x > y;
}

/* Checkpoint ck against the replay r: the same blocks, id by id. */
static size_t blocks_compared, regions_compared, tags_compared;

static void compare(replay_t *r, const mp_checkpoint_t *ck, const char *path)
{
	size_t m = 0;

	blocks_compared += ck->nblocks;
	size_t nreg = 0;

	assert_true(ck->flags & (MP_CKPT_F_NO_TAGS | MP_CKPT_F_TAGS));
	if (ck->step != r->step)
		fail_msg("%s: checkpoint at event %llu: step %lld, the replay %lld", path, (unsigned long long)ck->events,
			 (long long)ck->step, (long long)r->step);
	regions_compared += ck->nregions;
	for (uint32_t id = 0; id < NMEM; id++)
		for (size_t i = 0; i < r->reg[id].n; i++, nreg++)
			if (nreg >= ck->nregions || ck->regions[nreg].memory != id ||
			    ck->regions[nreg].base != r->reg[id].r[i].base || ck->regions[nreg].end != r->reg[id].r[i].end)
				fail_msg("%s: checkpoint at event %llu: region %zu differs from the replay's [%llx, %llx) of "
					 "memory %u",
					 path, (unsigned long long)ck->events, nreg, (unsigned long long)r->reg[id].r[i].base,
					 (unsigned long long)r->reg[id].r[i].end, id);
	assert_int_equal(nreg, ck->nregions);
	for (uint32_t id = 0; id < NMEM; id++) {
		const lm_map_t *map = &r->live[id].map;
		const mp_checkpoint_memory_t *cm = m < ck->nmemories && ck->memories[m].id == id ? &ck->memories[m++] : NULL;
		lm_entry_t *e;
		size_t n = 0;

		if (!map->count) {
			if (cm)
				fail_msg("%s: checkpoint at event %llu: memory %u has %zu blocks, the replay none", path,
					 (unsigned long long)ck->events, id, cm->nblocks);
			continue;
		}
		e = malloc(map->count * sizeof(*e));
		assert_non_null(e);
		for (size_t i = 0; i < map->cap; i++)
			if (map->slots[i].group != LM_EMPTY)
				e[n++] = map->slots[i];
		qsort(e, n, sizeof(*e), by_addr);
		if (!cm || cm->nblocks != n)
			fail_msg("%s: checkpoint at event %llu (block %llu at offset %llu): memory %u has %zu blocks, the "
				 "replay %zu",
				 path, (unsigned long long)ck->events, (unsigned long long)ck->block_index,
				 (unsigned long long)ck->block_offset, id, cm ? cm->nblocks : 0, n);
		for (size_t i = 0; i < n; i++) {
			const lm_entry_t *q = lm_find(&r->req[id].map, e[i].addr);
			assert_non_null(q);
			const rtag_t *t = &rtag[e[i].group];
			const mp_checkpoint_block_t *b = &cm->blocks[i];
			if ((ck->flags & MP_CKPT_F_UNTAGGED) && (b->op | b->dtype | b->shape | b->stack | b->region))
				fail_msg("%s: checkpoint at event %llu: untagged, but block %zu has a tag", path,
					 (unsigned long long)ck->events, i);
			if ((ck->flags & MP_CKPT_F_TAGS) && !rtag_full) {
				if (b->op != t->op || b->dtype != t->dtype || b->shape != t->shape || b->stack != t->stack ||
				    b->region != t->region)
					fail_msg("%s: checkpoint at event %llu: memory %u block %zu at %llx: tag (op %u dtype %u "
						 "shape %u region %u stack %u), the replay (%u %u %u %u %u)",
						 path, (unsigned long long)ck->events, id, i, (unsigned long long)b->address,
						 b->op, b->dtype, b->shape, b->region, b->stack, t->op, t->dtype, t->shape,
						 t->region, t->stack);
				tags_compared += t->op || t->dtype || t->shape || t->stack || t->region;
			}
			if (cm->blocks[i].address != e[i].addr || cm->blocks[i].bytes != e[i].size ||
			    cm->blocks[i].requested != q->size)
				fail_msg("%s: checkpoint at event %llu: memory %u block %zu: %llx %llu %llu, the replay %llx "
					 "%llu %llu",
					 path, (unsigned long long)ck->events, id, i,
					 (unsigned long long)cm->blocks[i].address, (unsigned long long)cm->blocks[i].bytes,
					 (unsigned long long)cm->blocks[i].requested, (unsigned long long)e[i].addr,
					 (unsigned long long)e[i].size, (unsigned long long)q->size);
		}
		free(e);
	}
	assert_int_equal(m, ck->nmemories);
}

static void apply(replay_t *r, const mp_event_t *ev)
{
	if (ev->kind == MP_EV_STEP)
		r->step = ev->step;
	if (ev->memory >= NMEM)
		return;
	if (ev->kind == MP_EV_ALLOC) {
		assert_int_equal(mp_live_alloc(&r->live[ev->memory], ev->address,
					       mp_live_footprint(ev->requested_bytes, ev->allocated_bytes), rtag_of(ev), 0),
				 0);
		assert_int_equal(mp_live_alloc(&r->req[ev->memory], ev->address, ev->requested_bytes, 0, 0), 0);
	} else if (ev->kind == MP_EV_FREE) {
		mp_live_free(&r->live[ev->memory], ev->address);
		mp_live_free(&r->req[ev->memory], ev->address);
	} else if (ev->kind == MP_EV_REGION_ADD) {
		size_t pos;
		uint64_t end;
		assert_true(mp_live_region_add(&r->reg[ev->memory], ev->address, ev->requested_bytes, &pos, &end) >= 0);
	} else if (ev->kind == MP_EV_REGION_REMOVE) {
		uint64_t end;
		mp_live_region_remove(&r->reg[ev->memory], ev->address, &end);
	}
}

/* The checkpoints of a read: compared as they come when the replay is at
 * their event (the reader hands one over when it reads its block, which
 * may be just before it returns the event after it), kept for later
 * otherwise. */
typedef struct {
	replay_t *r;
	const char *path;
	uint64_t events; /* applied to r */
	mp_checkpoint_t *v;
	size_t n, cap, next, checked; /* v[next..n): not compared yet */
} ckl_t;

static int keep(void *ctx, const mp_checkpoint_t *ck)
{
	ckl_t *l = ctx;

	if (ck->events < l->events)
		fail_msg("%s: checkpoint at event %llu came after event %llu", l->path, (unsigned long long)ck->events,
			 (unsigned long long)l->events);
	if (ck->events == l->events && l->next == l->n) {
		compare(l->r, ck, l->path);
		l->checked++;
		return 0;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		assert_non_null(l->v);
	}
	return mp_checkpoint_copy(&l->v[l->n++], ck);
}

/* Every checkpoint of path against the full replay; returns how many
 * were checked (the read must end cleanly). */
static size_t check_capture(const char *path)
{
	static replay_t r;
	mp_capture_t *cap = NULL;
	mp_source_t *src;
	mp_diag_t diag;
	mp_event_t ev;
	ckl_t l = {0};
	int rc;

	for (int i = 0; i < NMEM; i++) {
		mp_live_init(&r.live[i]);
		mp_live_init(&r.req[i]);
		mp_live_regions_init(&r.reg[i]);
	}
	r.step = -1;
	if ((rc = mp_capture_open(&cap, path, &diag)))
		fail_msg("%s: %s", path, diag.text);
	l.r = &r;
	l.path = path;
	mp_capture_on_checkpoint(cap, keep, &l);
	src = mp_capture_source(cap);
	for (;;) {
		/* the checkpoints due before the next event: the first `events` events applied */
		while (l.next < l.n && l.v[l.next].events <= l.events) {
			assert_int_equal(l.v[l.next].events, l.events);
			compare(&r, &l.v[l.next], path);
			l.next++;
			l.checked++;
		}
		if ((rc = mp_source_next(src, &ev, &diag)) != 1)
			break;
		if (ev.kind == MP_EV_MEMORY || ev.kind == MP_EV_DROPPED)
			continue; /* not events of the count (the trailer's) */
		apply(&r, &ev);
		l.events++;
	}
	if (rc)
		fail_msg("%s: %s", path, diag.text);
	assert_int_equal(l.next, l.n);
	assert_int_equal(mp_capture_checkpoints_seen(cap), l.checked);
	mp_capture_close(cap);
	for (size_t i = 0; i < l.n; i++)
		mp_checkpoint_free(&l.v[i]);
	free(l.v);
	for (int i = 0; i < NMEM; i++) {
		mp_live_destroy(&r.live[i]);
		mp_live_destroy(&r.req[i]);
		mp_live_regions_destroy(&r.reg[i]);
	}
	return l.checked;
}

/* ------------------------------------------------------ recorded captures */

typedef struct {
	mp_writer_t *w;
	uint32_t mem[3];
	uint64_t seed;
	int thread;
} job_t;

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* Allocations, frees (some of addresses never allocated), reallocs,
 * failed allocations, regions and steps, over three memory ids; a flush
 * round (a checkpoint each) every 700 events. */
static void *work(void *arg)
{
	job_t *j = arg;
	enum { SLOTS = 512 };
	uint64_t addr[SLOTS] = {0}, base = (uint64_t)(j->thread + 1) << 36;
	uint32_t memof[SLOTS] = {0};
	/* (2.5) tags: contexts now and then, a call stack on some allocations */
	uint32_t str[3] = {mp_writer_intern(j->w, "op_a"), mp_writer_intern(j->w, "f16"), mp_writer_intern(j->w, "[2,2]")};
	uint64_t pcs[2] = {0x401000 + 16 * (uint64_t)j->thread, 0x402000};
	uint32_t sid = 0;

	assert_int_equal(mp_writer_stack(j->w, pcs, 2, &sid), 0);
	for (int i = 0; i < 20000; i++) {
		uint64_t x = rnd(&j->seed), s = x % SLOTS, size = 16 + (x >> 12) % 4096;
		if ((x >> 24) % 97 == 0)
			mp_writer_set_context(j->w, (x >> 31) % 3 ? str[0] : 0, (int)((x >> 33) % 6), (x >> 36) % 2 ? str[1] : 0,
					      (x >> 37) % 2 ? str[2] : 0);
		if ((x >> 38) % 13 == 0)
			mp_writer_next_stack(j->w, sid);
		uint32_t m = j->mem[(x >> 9) % 3];
		if (i % 700 == 699)
			assert_int_equal(mp_writer_flush(j->w), 0);
		switch ((x >> 20) % 16) {
		case 0:
			assert_int_equal(mp_writer_free(j->w, m, base + 0x100000000ull + (x & 0xfff0)), 0);
			break;
		case 1:
			if (addr[s]) {
				uint64_t to = (x & 1) ? addr[s] : base + (rnd(&j->seed) % (1u << 24)) * 16;
				assert_int_equal(mp_writer_realloc(j->w, memof[s], addr[s], to, size, size + 8), 0);
				addr[s] = to;
			}
			break;
		case 2:
			assert_int_equal(mp_writer_alloc_failed(j->w, m, size << 20), 0);
			break;
		case 3:
			assert_int_equal(mp_writer_region_add(j->w, m, base + 0x200000000ull + (s << 20), 1u << 20), 0);
			break;
		case 4:
			assert_int_equal(mp_writer_region_remove(j->w, m, base + 0x200000000ull + (s << 20)), 0);
			break;
		case 5:
			assert_int_equal(mp_writer_step(j->w, i / 1000), 0);
			break;
		default:
			if (addr[s]) {
				assert_int_equal(mp_writer_free(j->w, memof[s], addr[s]), 0);
				addr[s] = 0;
			} else {
				/* sometimes at a live address (another slot's): the engine drops the block there */
				addr[s] = (x & 7) == 0 ? base + ((x >> 3) % 64) * 16 : base + (rnd(&j->seed) % (1u << 24)) * 16;
				if (j->thread == 1 && (x & 255) == 9) /* above 2^53: the tally's far path, the sort's heap */
					addr[s] += 1ull << 60;
				memof[s] = m;
				assert_int_equal(mp_writer_alloc(j->w, m, addr[s], size, (x & 2) ? 0 : size + 16), 0);
			}
		}
	}
	return NULL;
}

static void record(const char *path, int threads, uint64_t seed)
{
	mp_writer_t *w = NULL;
	mp_diag_t diag;
	job_t j[4];
	pthread_t t[4];
	uint32_t mem[3];

	assert_int_equal(setenv("MEMPROF_CHECKPOINT_ROUNDS", "1", 1) + setenv("MEMPROF_CHECKPOINT_RATIO", "0", 1), 0);
	if (mp_writer_open(&w, path, 1, NULL, &diag))
		fail_msg("%s", diag.text);
	assert_int_equal(unsetenv("MEMPROF_CHECKPOINT_ROUNDS") + unsetenv("MEMPROF_CHECKPOINT_RATIO"), 0);
	for (int i = 0; i < 3; i++) {
		static const char *names[] = {"host", "device", "pool"};
		int id = mp_writer_memory(w, names[i], i ? MP_MEMORY_DEVICE : MP_MEMORY_HOST, 0);
		assert_true(id >= 0);
		mem[i] = (uint32_t)id;
	}
	for (int i = 0; i < threads; i++) {
		j[i] = (job_t){w, {mem[0], mem[1], mem[2]}, seed + (uint64_t)i * 7919, i};
		assert_int_equal(pthread_create(&t[i], NULL, work, &j[i]), 0);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(mp_writer_close(w), 0);
}

static void test_recorded(void **state)
{
	char path[] = "/tmp/memprof-ckpt-XXXXXX";
	size_t total = 0;

	(void)state;
	assert_non_null(mkdtemp(path));
	for (int threads = 1; threads <= 3; threads++) {
		char file[256];
		size_t n;
		snprintf(file, sizeof(file), "%s/t%d.memprof", path, threads);
		record(file, threads, 42 + (uint64_t)threads);
		n = check_capture(file);
		/* a round every 700 events of each thread: at least 28 of them */
		if (n < 20)
			fail_msg("%s: only %zu checkpoints", file, n);
		total += n;
		unlink(file);
	}
	rmdir(path);
	printf("recorded captures: %zu checkpoints equal to the full replay (%zu live blocks, %zu regions in them)\n",
	       total, blocks_compared, regions_compared);
	printf("%zu tagged blocks compared\n", tags_compared);
	assert_true(tags_compared > 1000);
}

/* ---------------------------------------------------- the shared captures */

static size_t scan(const char *dir, int depth, size_t *files)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char p[4096];
		struct stat st;
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (stat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode) && depth < 4)
			n += scan(p, depth + 1, files);
		else if (S_ISREG(st.st_mode) && len > 8 && !strcmp(de->d_name + len - 8, ".memprof")) {
			/* only those of 2.4 or later can hold checkpoints */
			FILE *f = fopen(p, "rb");
			uint8_t h[12];
			if (f && fread(h, 1, 12, f) == 12 && !memcmp(h, MP_FILE_MAGIC, 8) && h[8] == 2 && h[10] >= 4) {
				(*files)++;
				n += check_capture(p);
			}
			if (f)
				fclose(f);
		}
	}
	closedir(d);
	return n;
}

static void test_shared(void **state)
{
	size_t files = 0, n;

	(void)state;
	n = scan(MEMPROF_SHARED_DATA, 0, &files);
	printf("shared captures of 2.4: %zu, %zu checkpoints equal to the full replay\n", files, n);
	/* the reader fuzzer's seed of 2.4 (gen_reader_corpus: a checkpoint every round) */
	files = 0;
	n = scan(MEMPROF_SOURCE_DIR "/tests/fuzz/corpus/reader", 0, &files);
	printf("corpus captures of 2.4: %zu, %zu checkpoints equal to the full replay\n", files, n);
	assert_true(files >= 1);
	assert_true(n >= 3);
}

/* ------------------------------------------------------------- damage */

static void test_damaged(void **state)
{
	char dir[] = "/tmp/memprof-ckpt-XXXXXX", file[256], bad[256], want[128];
	uint64_t index = 0, offset = 0;
	mp_event_t *ev;
	mp_diag_t diag;
	int rc;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/ok.memprof", dir);
	snprintf(bad, sizeof(bad), "%s/bad.memprof", dir);
	record(file, 2, 7);
	mp_test_damage_checkpoint(file, bad, UINT64_MAX, &index, &offset);
	/* the damaged checkpoint is skipped and said; every event still reads */
	n = read_all(file, &ev, &rc, &diag, NULL);
	free(ev);
	assert_int_equal(rc, 0);
	{
		mp_source_t *src = NULL;
		mp_event_t e;
		size_t m = 0;
		assert_int_equal(mp_capture_open_source(&src, bad, &diag), 0);
		while ((rc = mp_source_next(src, &e, &diag)) == 1)
			m++;
		assert_int_equal(rc, 0);
		assert_int_equal(m, n);
		assert_int_equal(mp_capture_checkpoints_bad(mp_capture_from_source(src), &diag), 1);
		mp_source_close(src);
	}
	assert_int_equal(diag.code, MP_ECORRUPT);
	snprintf(want, sizeof(want), "block %llu at offset %llu: bad checkpoint: live bytes of a memory id disagree",
		 (unsigned long long)index, (unsigned long long)offset);
	if (!strstr(diag.text, want))
		fail_msg("expected '%s' in: %s", want, diag.text);
	printf("damaged: %s\n", diag.text);
	unlink(file);
	unlink(bad);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_damaged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
