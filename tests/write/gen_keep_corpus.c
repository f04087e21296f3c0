/* gen_keep_corpus.c - writes the seed corpus of the kept-run fuzz target
 * (tests/fuzz/fuzz_keep.c) with the real writer: a run kept in 4 KiB
 * segments within 48 KiB (MEMPROF_KEEP_BYTES, MEMPROF_KEEP_SEGMENT_BYTES),
 * 60 rounds of a host heap and a device pool with regions, steps, a mark,
 * a failed allocation and an op on some allocations, packed as fuzz_keep
 * reads it (the whole-run file, then each segment after "#MPSEG#\n",
 * empty for those deleted). Three seeds: the run as closed; its newest
 * segment cut inside its last block (a kill); a middle segment gone.
 *
 *   gen_keep_corpus OUT_DIR   (tests/fuzz/corpus/keep)
 */
#include <memprof/writer.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXSEG 256

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *buf;

	*n = 0;
	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) != 0 || !(buf = malloc((size_t)st.st_size + 1))) {
		fclose(f);
		return NULL;
	}
	*n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	return buf;
}

/* The run at dir/1.memprof packed into out; segment `drop` (-1: none) left
 * out, the newest cut by `cut` bytes. */
static int pack(const char *dir, const char *out, int drop, size_t cut)
{
	char path[512];
	size_t n, newest = 0;
	char *b;
	FILE *f = fopen(out, "wb");

	if (!f)
		return -1;
	snprintf(path, sizeof(path), "%s/1.memprof", dir);
	if (!(b = slurp(path, &n)))
		return -1;
	fwrite(b, 1, n, f);
	free(b);
	for (int k = 0; k < MAXSEG; k++) {
		snprintf(path, sizeof(path), "%s/1.memprof.d/seg-%06d.memprof", dir, k);
		if (access(path, F_OK) == 0)
			newest = (size_t)k;
	}
	for (size_t k = 0; k <= newest; k++) {
		fwrite("#MPSEG#\n", 1, 8, f);
		snprintf(path, sizeof(path), "%s/1.memprof.d/seg-%06zu.memprof", dir, k);
		if ((int)k == drop || !(b = slurp(path, &n)))
			continue;
		fwrite(b, 1, k == newest && n > cut ? n - cut : n, f);
		free(b);
	}
	return fclose(f);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/memprof-keep-corpus-XXXXXX", path[512], out[512];
	mp_writer_t *w;
	mp_diag_t diag;
	uint32_t op;

	if (argc != 2 || !mkdtemp(dir))
		return 2;
	snprintf(path, sizeof(path), "%s/1.memprof", dir);
	setenv("MEMPROF_KEEP_BYTES", "49152", 1);
	setenv("MEMPROF_KEEP_SEGMENT_BYTES", "4096", 1);
	if (mp_writer_open(&w, path, 0, NULL, &diag)) {
		fprintf(stderr, "gen_keep_corpus: %s\n", diag.text);
		return 1;
	}
	mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	mp_writer_memory(w, "gpu0", MP_MEMORY_DEVICE, 1ull << 30);
	op = mp_writer_intern(w, "matmul");
	mp_writer_region_add(w, 1, 1ull << 32, 64ull << 20);
	for (uint64_t r = 0; r < 60; r++) {
		mp_writer_step(w, (int64_t)r / 4);
		if (r == 30)
			mp_writer_mark(w, mp_writer_intern(w, "half"));
		mp_writer_set_context(w, r % 3 ? op : 0, 0, 0, 0);
		for (uint64_t i = 0; i < 40; i++) {
			mp_writer_alloc(w, 0, (r + 1) << 20 | i << 6, 48 + i, 64 + i);
			mp_writer_alloc(w, 1, (1ull << 32) + ((r % 8) << 20) + (i << 12), 4000, 4096);
		}
		if (r == 17)
			mp_writer_alloc_failed(w, 1, 1ull << 31);
		if (r >= 2)
			for (uint64_t i = 0; i < 40; i++)
				mp_writer_free(w, 0, (r - 1) << 20 | i << 6);
		for (uint64_t i = 0; i < 40; i++)
			mp_writer_free(w, 1, (1ull << 32) + ((r % 8) << 20) + (i << 12));
		mp_writer_flush(w);
	}
	if (mp_writer_close(w))
		return 1;
	snprintf(out, sizeof(out), "%s/closed", argv[1]);
	if (pack(dir, out, -1, 0))
		return 1;
	snprintf(out, sizeof(out), "%s/killed", argv[1]);
	if (pack(dir, out, -1, 300))
		return 1;
	snprintf(out, sizeof(out), "%s/gap", argv[1]);
	if (pack(dir, out, 9, 0))
		return 1;
	printf("gen_keep_corpus: %s/{closed,killed,gap} (the run: %s)\n", argv[1], dir);
	return 0;
}
