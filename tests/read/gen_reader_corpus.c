/* gen_reader_corpus.c - writes the reader fuzzer's seed corpus with the real
 * writer: an empty capture, a small multi-thread one with every event kind,
 * a truncated copy, one long enough that its columns are Huffman-coded
 * rather than stored, one with call stacks and the module map of this
 * program, and one whose stacks hold Python frames (v22-frames: FRAME
 * sections, format 2.2), and v24-checkpoints (CHECKPOINT sections, 2.4).
 * usage: gen_reader_corpus DIR
 * The files are named v22-*.memprof (format 2.2); the corpus's v21-* files
 * were written by the 2.1 writer (SUMMARY sections, no FRAME section), its
 * v2-* files by the 2.0 writer and those without a prefix by the 1.x
 * writer, and stay as they are: they keep the reader's 2.1, 2.0 and 1.x
 * paths (mp__chunk_upgrade) fuzzed. */
#include <memprof/capture.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static mp_writer_t *w;
static uint64_t iterations = 20;

static void *work(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg << 20, i;

	mp_writer_set_context(w, mp_writer_intern(w, "op"), 3, mp_writer_intern(w, "float"),
			      mp_writer_intern(w, "[2,3]"));
	for (i = 0; i < iterations; i++) {
		mp_writer_alloc(w, 0, base + i * 64, 40 + i, 48 + i);
		if (i % 3 == 0)
			mp_writer_free(w, 0, base + i * 64);
		if (i % 5 == 0)
			mp_writer_realloc(w, 1, base + 0x8000 + i, base + 0x9000 + i * 16, 100, 112);
	}
	return NULL;
}

/* With call stacks and the module map (format 1.1). */
static int write_stacks(const char *dir)
{
	static const uint64_t s1[3] = {0x401000, 0x401234, 0x7f0000001000}, s2[2] = {0x401000, 0x402000};
	char path[4096];
	mp_diag_t diag;
	uint32_t a, b;
	int i;

	snprintf(path, sizeof(path), "%s/v22-stacks.memprof", dir);
	if (mp_writer_open(&w, path, 1, NULL, &diag)) {
		fprintf(stderr, "%s\n", diag.text);
		return 1;
	}
	mp_writer_memory(w, "host", 1, 0);
	mp_writer_modules(w);
	mp_writer_stack(w, s1, 3, &a);
	mp_writer_stack(w, s2, 2, &b);
	for (i = 0; i < 6; i++) {
		mp_writer_next_stack(w, i % 2 ? a : b);
		if (i == 3)
			mp_writer_flush(w); /* a STACK record ends a chunk */
		mp_writer_alloc(w, 0, 0x1000 + (uint64_t)i * 32, 24, 24);
	}
	mp_writer_next_stack(w, a);
	mp_writer_realloc(w, 0, 0x1000, 0x9000, 100, 104);
	mp_writer_next_stack(w, b);
	mp_writer_alloc_failed(w, 0, 1u << 30);
	mp_writer_free(w, 0, 0x1020);
	return mp_writer_close(w) != 0;
}

/* Stacks that mix return addresses and Python frames (format 2.2). */
static int write_frames(const char *dir)
{
	uint64_t s[4] = {0x401000, 0, 0, 0x7f0000001000};
	uint32_t fn, file, a = 0;
	char path[4096];
	mp_diag_t diag;
	int i;

	snprintf(path, sizeof(path), "%s/v22-frames.memprof", dir);
	if (mp_writer_open(&w, path, 1, NULL, &diag)) {
		fprintf(stderr, "%s\n", diag.text);
		return 1;
	}
	mp_writer_memory(w, "host", 1, 0);
	fn = mp_writer_intern(w, "main");
	file = mp_writer_intern(w, "/home/u/train.py");
	s[1] = mp_writer_frame(w, mp_writer_intern(w, "decode"),
			       mp_writer_intern(w, "/usr/lib/python3.11/json/decoder.py"), 337, MP_FRAME_PYTHON);
	s[2] = mp_writer_frame(w, fn, file, 12, MP_FRAME_PYTHON);
	mp_writer_stack(w, s, 4, &a);
	for (i = 0; i < 4; i++) {
		if (i == 2) {
			mp_writer_flush(w);
			s[2] = mp_writer_frame(w, fn, file, 14, MP_FRAME_PYTHON); /* defined in the second block */
			mp_writer_stack(w, s + 1, 2, &a);
		}
		mp_writer_next_stack(w, a);
		mp_writer_alloc(w, 0, 0x1000 + (uint64_t)i * 32, 24, 24);
	}
	return mp_writer_close(w) != 0;
}

/* A checkpoint every round (format 2.4: CHECKPOINT sections), over two
 * memory ids, with reallocs, a free of an address never allocated,
 * regions (one grown, one removed) and a step. */
static int write_checkpoints(const char *dir)
{
	char path[4096];
	mp_diag_t diag;
	int i, rc;

	snprintf(path, sizeof(path), "%s/v24-checkpoints.memprof", dir);
	setenv("MEMPROF_CHECKPOINT_ROUNDS", "1", 1);
	setenv("MEMPROF_CHECKPOINT_RATIO", "0", 1);
	rc = mp_writer_open(&w, path, 1, NULL, &diag);
	unsetenv("MEMPROF_CHECKPOINT_ROUNDS");
	unsetenv("MEMPROF_CHECKPOINT_RATIO");
	if (rc) {
		fprintf(stderr, "%s\n", diag.text);
		return 1;
	}
	mp_writer_memory(w, "host", 1, 0);
	mp_writer_memory(w, "GPU_0_bfc", 2, 1 << 30);
	mp_writer_region_add(w, 1, 0x100000, 1 << 16);
	mp_writer_region_add(w, 1, 0x400000, 1 << 12);
	for (i = 0; i < 24; i++) {
		if (i == 12) {
			mp_writer_step(w, 3);
			mp_writer_region_add(w, 1, 0x100000, 1 << 17); /* grows */
			mp_writer_region_remove(w, 1, 0x400000);
		}
		mp_writer_alloc(w, (uint32_t)(i & 1), 0x100000 + (uint64_t)(i * 7 % 24) * 48, 40 + (uint64_t)i, 48);
		if (i % 4 == 3)
			mp_writer_free(w, 0, 0x100000 + (uint64_t)(i * 5 % 24) * 48);
		if (i % 6 == 5)
			mp_writer_realloc(w, 1, 0x100000 + (uint64_t)(i * 7 % 24) * 48, 0x200000 + (uint64_t)i * 16, 100, 112);
		if (i == 9)
			mp_writer_free(w, 1, 0xdead0); /* not live: changes nothing */
		if (i % 8 == 7)
			mp_writer_flush(w);
	}
	return mp_writer_close(w) != 0;
}

static int write_file(const char *dir, const char *name, int threads, long truncate_to)
{
	char path[4096];
	mp_diag_t diag;
	pthread_t tid[4];
	int t;

	snprintf(path, sizeof(path), "%s/v22-%s", dir, name);
	if (mp_writer_open(&w, path, 1, NULL, &diag)) {
		fprintf(stderr, "%s\n", diag.text);
		return 1;
	}
	if (threads) {
		mp_writer_memory(w, "host", 1, 0);
		mp_writer_memory(w, "GPU_0_bfc", 2, 1 << 30);
		mp_writer_region_add(w, 1, 0x10000, 1 << 20);
		mp_writer_step(w, 1);
		mp_writer_alloc_failed(w, 1, 1 << 21);
		mp_writer_mark(w, mp_writer_intern(w, "mark"));
		for (t = 0; t < threads; t++)
			pthread_create(&tid[t], NULL, work, (void *)(uintptr_t)t);
		for (t = 0; t < threads; t++)
			pthread_join(tid[t], NULL);
		mp_writer_flush(w);
		mp_writer_region_remove(w, 1, 0x10000);
	}
	mp_writer_close(w);
	if (truncate_to > 0 && truncate(path, truncate_to) != 0)
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (write_file(argv[1], "empty.memprof", 0, 0) || write_file(argv[1], "small.memprof", 3, 0) ||
	    write_file(argv[1], "truncated.memprof", 2, 300) || write_stacks(argv[1]) ||
	    write_frames(argv[1]) || write_checkpoints(argv[1]))
		return 1;
	iterations = 1500;
	return write_file(argv[1], "coded.memprof", 1, 0);
}
