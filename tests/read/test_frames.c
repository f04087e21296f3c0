/* test_frames.c - interpreter frames in call stacks (format 2.2): FRAME
 * sections written by mp_writer_frame (deduplicated, tables grown, bad
 * arguments refused), read back by mp_capture_frame beside return
 * addresses, the writer's summary read past them, threads interning at
 * once, and damaged FRAME
 * sections (a diagnostic naming the field, never a crash). */
#include "test_common.h"

#include "capture_damage.h"
#include "capture_helpers.h"

#include <memprof/capsummary.h>
#include <memprof/capture.h>

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define NLINES 3000 /* distinct frames of train.py: the writer's table grows from 1024 slots to 8192 */

/* A capture whose stacks mix return addresses and Python frames: stack 1
 * is json.decoder's decode (line 337) called from train.py's main (line
 * 12), under a native frame; stack 2 holds train.py lines 1000, 1001, ...;
 * stack 3, train.py line 7, is defined in the last block. */
static void write_frames(const char *path, uint64_t *fr)
{
	uint32_t fn_main, fn_dec, f_train, f_json, id = 0, i;
	uint64_t st[3], many[MP_WRITER_STACK_MAX];
	mp_writer_t *w;
	mp_diag_t diag;
	int host;

	assert_int_equal(mp_writer_open(&w, path, 1, NULL, &diag), 0);
	host = mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	fn_main = mp_writer_intern(w, "main");
	fn_dec = mp_writer_intern(w, "decode");
	f_train = mp_writer_intern(w, "/home/u/train.py");
	f_json = mp_writer_intern(w, "/usr/lib/python3.11/json/decoder.py");
	fr[0] = mp_writer_frame(w, fn_dec, f_json, 337, MP_FRAME_PYTHON);
	fr[1] = mp_writer_frame(w, fn_main, f_train, 12, MP_FRAME_PYTHON);
	assert_int_equal(fr[0], MP_STACK_FRAME_TAG | 1);
	assert_int_equal(fr[1], MP_STACK_FRAME_TAG | 2);
	assert_int_equal(mp_writer_frame(w, fn_dec, f_json, 337, MP_FRAME_PYTHON), fr[0]); /* deduplicated */
	assert_int_equal(mp_writer_frame(w, fn_dec, f_json, 338, MP_FRAME_PYTHON), MP_STACK_FRAME_TAG | 3);
	assert_int_equal(mp_writer_frame(w, fn_dec, f_json, 337, MP_FRAME_NATIVE), MP_STACK_FRAME_TAG | 4);
	assert_int_equal(mp_writer_frame(w, fn_dec, 9999, 1, MP_FRAME_PYTHON), 0); /* not a string */
	assert_int_equal(mp_writer_frame(w, fn_dec, f_json, 1, 17), 0);            /* not a kind */
	assert_int_equal(mp_writer_frame(w, 0, 0, 0, MP_FRAME_PYTHON), MP_STACK_FRAME_TAG | 5); /* all unknown */
	st[0] = 0x1111;
	st[1] = fr[0];
	st[2] = fr[1];
	assert_int_equal(mp_writer_stack(w, st, 3, &id), 0);
	assert_int_equal(id, 1);
	mp_writer_next_stack(w, id);
	mp_writer_alloc(w, (uint32_t)host, 0x10000, 100, 100);
	for (i = 0; i < NLINES; i++) {
		uint64_t v = mp_writer_frame(w, fn_main, f_train, 1000 + i, MP_FRAME_PYTHON);
		assert_int_equal(v, MP_STACK_FRAME_TAG | (6 + i));
		if (i < MP_WRITER_STACK_MAX)
			many[i] = v;
	}
	for (i = 0; i < NLINES; i += 7) /* looked up again after the tables grew */
		assert_int_equal(mp_writer_frame(w, fn_main, f_train, 1000 + i, MP_FRAME_PYTHON), MP_STACK_FRAME_TAG | (6 + i));
	assert_int_equal(mp_writer_stack(w, many, MP_WRITER_STACK_MAX, &id), 0);
	assert_int_equal(id, 2);
	mp_writer_next_stack(w, id);
	mp_writer_alloc(w, (uint32_t)host, 0x20000, 200, 200);
	mp_writer_flush(w);
	st[0] = mp_writer_frame(w, fn_main, f_train, 7, MP_FRAME_PYTHON); /* in the last block */
	assert_int_equal(st[0], MP_STACK_FRAME_TAG | (6 + NLINES));
	assert_int_equal(mp_writer_stack(w, st, 1, &id), 0);
	mp_writer_next_stack(w, id);
	mp_writer_alloc(w, (uint32_t)host, 0x30000, 50, 50);
	assert_int_equal(mp_writer_close(w), 0);
}

static void test_frames_roundtrip(void **state)
{
	char *path = mp_test_tmpfile("frames.memprof");
	const char *fn, *file;
	const uint64_t *pcs;
	uint64_t fr[2];
	mp_capture_t *cap;
	mp_source_t *src;
	mp_diag_t diag;
	mp_event_t ev;
	uint32_t line, n, i;
	int kind, allocs = 0;

	(void)state;
	write_frames(path, fr);
	{
		/* the writer's summary is read past the FRAME sections: the
		 * capture cut before its last block (the final round's figures),
		 * the block before it, which defines a frame, is looked in on
		 * the way back to the round before's figures */
		mp_capture_summary_t sum;
		char *cut = mp_test_tmpfile("frames_cut.memprof");
		size_t off, last = 0;
		uint32_t plen;
		file_t f;
		FILE *fp;
		load(path, &f);
		for (off = f.body; off + 24 <= f.size && !memcmp(f.data + off, "MPBK", 4); off += 24 + plen) {
			memcpy(&plen, f.data + off + 8, 4);
			last = off;
		}
		fp = fopen(cut, "wb");
		fwrite(f.data, 1, last, fp);
		fclose(fp);
		free(f.raw);
		free(f.data);
		assert_int_equal(mp_capture_summary_read(cut, &sum, &diag), 0);
		assert_true(sum.available);
		assert_false(sum.ended_cleanly);
		assert_int_equal(sum.events, 2); /* the round before the last: the last allocation not in it */
		assert_int_equal(sum.memories[0].peak_bytes, 300);
		mp_capture_summary_free(&sum);
		unlink(cut);
		free(cut);
		assert_int_equal(mp_capture_summary_read(path, &sum, &diag), 0);
		assert_true(sum.available);
		assert_int_equal(sum.events, 3);
		assert_int_equal(sum.stacks, 3);
		assert_int_equal(sum.nmemories, 1);
		assert_int_equal(sum.memories[0].peak_bytes, 350);
		mp_capture_summary_free(&sum);
	}
	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	assert_int_equal(mp_capture_header(cap)->version_minor, MP_FORMAT_VERSION_MINOR);
	src = mp_capture_source(cap);
	while (mp_source_next(src, &ev, &diag) == 1)
		if (ev.kind == MP_EV_ALLOC)
			assert_int_equal(ev.stack, ++allocs);
	assert_int_equal(allocs, 3);
	assert_int_equal(mp_capture_stack(cap, 1, &pcs, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(pcs[0], 0x1111);
	assert_int_equal(mp_capture_frame(cap, pcs[0], &fn, &file, &line, &kind), MP_ENOTFOUND);
	assert_string_equal(fn, "");
	assert_int_equal(mp_capture_frame(cap, pcs[1], &fn, &file, &line, &kind), 0);
	assert_string_equal(fn, "decode");
	assert_string_equal(file, "/usr/lib/python3.11/json/decoder.py");
	assert_int_equal(line, 337);
	assert_int_equal(kind, MP_FRAME_PYTHON);
	assert_int_equal(mp_capture_frame(cap, pcs[2], &fn, &file, &line, &kind), 0);
	assert_string_equal(fn, "main");
	assert_string_equal(file, "/home/u/train.py");
	assert_int_equal(line, 12);
	assert_int_equal(mp_capture_frame(cap, MP_STACK_FRAME_TAG | 4, &fn, &file, &line, &kind), 0);
	assert_int_equal(kind, MP_FRAME_NATIVE);
	assert_int_equal(line, 337);
	assert_int_equal(mp_capture_frame(cap, MP_STACK_FRAME_TAG | 5, &fn, &file, &line, &kind), 0);
	assert_string_equal(fn, "");
	assert_string_equal(file, "");
	assert_int_equal(line, 0);
	/* an id never defined: not a frame the reader knows */
	assert_int_equal(mp_capture_frame(cap, MP_STACK_FRAME_TAG | (7 + NLINES), &fn, &file, &line, &kind),
			 MP_ENOTFOUND);
	assert_int_equal(mp_capture_frame(cap, MP_STACK_FRAME_TAG, NULL, NULL, NULL, NULL), MP_ENOTFOUND);
	assert_int_equal(mp_capture_stack(cap, 2, &pcs, &n), 0);
	assert_int_equal(n, MP_WRITER_STACK_MAX);
	for (i = 0; i < n; i++) {
		assert_int_equal(mp_capture_frame(cap, pcs[i], &fn, &file, &line, &kind), 0);
		assert_string_equal(fn, "main");
		assert_int_equal(line, 1000 + i);
	}
	mp_capture_close(cap);
	unlink(path);
	free(path);
}

static void test_frames_damaged(void **state)
{
	char *path = mp_test_tmpfile("frames_ok.memprof"), *bad = mp_test_tmpfile("frames_bad.memprof");
	/* FRAME 1: decode (string 3: "host" is 1), decoder.py (5), line 337, python */
	static const uint8_t frame1[] = {11, 1, 3, 5, 0xd1, 0x02, 2};
	uint64_t fr[2];
	file_t f;
	uint8_t *p;

	(void)state;
	write_frames(path, fr);
	load(path, &f);
	p = find(&f, frame1, sizeof(frame1));
	assert_non_null(p);
	p[6] = 9;
	store(&f, bad);
	expect_error(bad, "bad interpreter frame definition: its kind is unknown");
	p[6] = 2;
	p[1] = 3;
	store(&f, bad);
	expect_error(bad, "interpreter frame id out of sequence");
	p[1] = 1;
	p[2] = 120;
	store(&f, bad);
	expect_error(bad, "interpreter frame's function is not a defined string");
	p[2] = 3;
	p[3] = 121;
	store(&f, bad);
	expect_error(bad, "interpreter frame's file is not a defined string");
	p[3] = 5;
	p[1] = 0;
	store(&f, bad);
	expect_error(bad, "its frame id is 0");
	p[1] = 1;
	/* a FRAME tag that ends the block: the section cut short */
	f.raw = realloc(f.raw, f.raw_len + 1);
	f.raw[f.raw_len++] = 11;
	store(&f, bad);
	expect_error(bad, "its frame id does not parse");
	free(f.raw);
	free(f.data);
	unlink(path);
	unlink(bad);
	free(path);
	free(bad);
}

/* A new stack of interpreter frames only is not code the module map
 * misses: no refresh (MODULE sections) for it; one with a return address
 * outside every described object gets one. */
static void test_frames_no_module_refresh(void **state)
{
	char *path = mp_test_tmpfile("frames_modules.memprof");
	uint64_t st[2];
	mp_capture_t *cap;
	mp_source_t *src;
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t ev;
	uint32_t id;
	size_t before;

	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 1, NULL, &diag), 0);
	st[0] = mp_writer_frame(w, mp_writer_intern(w, "f"), mp_writer_intern(w, "/home/u/a.py"), 3, MP_FRAME_PYTHON);
	st[1] = mp_writer_frame(w, mp_writer_intern(w, "g"), mp_writer_intern(w, "/home/u/a.py"), 9, MP_FRAME_PYTHON);
	assert_int_equal(mp_writer_stack(w, st, 2, &id), 0);
	mp_writer_flush(w);
	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	src = mp_capture_source(cap);
	while (mp_source_next(src, &ev, &diag) == 1)
		;
	before = mp_capture_module_count(cap);
	mp_capture_close(cap);
	assert_int_equal(before, 0);
	st[0] = (uint64_t)(uintptr_t)&test_frames_no_module_refresh; /* this program's code */
	assert_int_equal(mp_writer_stack(w, st, 2, &id), 0);
	assert_int_equal(mp_writer_close(w), 0);
	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	src = mp_capture_source(cap);
	while (mp_source_next(src, &ev, &diag) == 1)
		;
	assert_true(mp_capture_module_count(cap) > 0);
	assert_non_null(mp_capture_module_at(cap, st[0]));
	mp_capture_close(cap);
	unlink(path);
	free(path);
}

/* Threads interning the same frames at once (the preload's hooks do, on
 * every allocation): each frame gets one id, whoever saw it first, and
 * every thread gets that id for it. */
#define RACE_THREADS 4
#define RACE_FRAMES 3000

typedef struct {
	mp_writer_t *w;
	uint32_t fn, file;
	uint64_t v[RACE_FRAMES];
	int start; /* each thread walks the lines from its own point */
} race_t;

static void *race(void *arg)
{
	race_t *r = arg;

	for (int k = 0; k < RACE_FRAMES; k++) {
		int i = (r->start + k) % RACE_FRAMES;
		r->v[i] = mp_writer_frame(r->w, r->fn, r->file, (uint32_t)i + 1, MP_FRAME_PYTHON);
	}
	return NULL;
}

static void test_frames_threads(void **state)
{
	char *path = mp_test_tmpfile("frames_race.memprof");
	static race_t r[RACE_THREADS];
	static unsigned char seen[RACE_FRAMES + 1];
	pthread_t t[RACE_THREADS];
	const char *fn, *file;
	mp_capture_t *cap;
	mp_source_t *src;
	mp_writer_t *w;
	mp_diag_t diag;
	mp_event_t ev;
	uint32_t line, id;
	int i, k, kind;

	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 1, NULL, &diag), 0);
	for (i = 0; i < RACE_THREADS; i++) {
		r[i].w = w;
		r[i].fn = mp_writer_intern(w, "f");
		r[i].file = mp_writer_intern(w, "/home/u/race.py");
		r[i].start = i * (RACE_FRAMES / RACE_THREADS);
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(t[i], NULL);
	memset(seen, 0, sizeof(seen));
	for (k = 0; k < RACE_FRAMES; k++) {
		for (i = 1; i < RACE_THREADS; i++)
			assert_int_equal(r[i].v[k], r[0].v[k]);
		assert_true(r[0].v[k] & MP_STACK_FRAME_TAG);
		id = (uint32_t)(r[0].v[k] & ~MP_STACK_FRAME_TAG);
		assert_true(id >= 1 && id <= RACE_FRAMES);
		assert_false(seen[id]); /* ids 1 .. RACE_FRAMES, each once */
		seen[id] = 1;
	}
	assert_int_equal(mp_writer_stack(w, r[0].v, MP_WRITER_STACK_MAX, &id), 0);
	mp_writer_next_stack(w, id);
	mp_writer_alloc(w, 0, 0x1000, 8, 8);
	assert_int_equal(mp_writer_close(w), 0);
	/* every one defined in the file, as its thread saw it */
	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	src = mp_capture_source(cap);
	while (mp_source_next(src, &ev, &diag) == 1)
		;
	for (k = 0; k < RACE_FRAMES; k++) {
		assert_int_equal(mp_capture_frame(cap, r[0].v[k], &fn, &file, &line, &kind), 0);
		assert_int_equal(line, k + 1);
		assert_string_equal(file, "/home/u/race.py");
	}
	mp_capture_close(cap);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_roundtrip),
		cmocka_unit_test(test_frames_damaged),
		cmocka_unit_test(test_frames_no_module_refresh),
		cmocka_unit_test(test_frames_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
