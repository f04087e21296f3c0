/* fuzz_keep.c - libFuzzer target for a kept run (`record --keep`; keep.c)
 * and for round figures (ROUND sections; rounds.c): any files must give a
 * window, round figures or a clean error, never a crash, a leak or
 * undefined behaviour.
 *
 * The input is a whole run packed in one buffer: the whole-run file P,
 * then each segment, separated by the 8 bytes "#MPSEG#\n". The k-th
 * segment is written as P.d/seg-<k>.memprof; an empty one is left out (a
 * gap in the numbers, as a kill or a hand's rm leaves). Then, as `memprof
 * report` and `plot` do: the rounds of P, the run's segments and window,
 * the window's checkpoint, and every event of the window, with the
 * strings and stacks an event names. Invariants that hold for any input
 * are checked: a round's memory ids lie in the table and increase, the
 * window's segments are numbered in a row, oldest first, and lie among
 * those present, an event's stack is defined. Files go to one directory
 * under /tmp per process, emptied for each input. */
#include <memprof/capture.h>
#include <memprof/checkpoint.h>
#include <memprof/keep.h>
#include <memprof/rounds.h>

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SEP "#MPSEG#\n"
#define SEP_LEN 8
#define MAX_SEGMENTS 64

static char dir[64], whole[128], segdir[160];

static int put_file(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(p, 1, n, f) == n;

	if (f)
		ok &= fclose(f) == 0;
	return ok ? 0 : -1;
}

/* The last input's files gone: an empty segment directory and no
 * whole-run file. */
static int empty_dir(void)
{
	DIR *d;
	struct dirent *de;
	char p[512];

	unlink(whole);
	if (!(d = opendir(segdir)))
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", segdir, de->d_name);
			unlink(p);
		}
	closedir(d);
	return 0;
}

/* At exit, nothing left under /tmp. */
static void remove_dir(void)
{
	if (empty_dir() == 0) {
		rmdir(segdir);
		rmdir(dir);
	}
}

static int fresh_dir(void)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/memprof-fuzz-keep-XXXXXX");
		if (!mkdtemp(dir))
			return -1;
		snprintf(whole, sizeof(whole), "%s/1.memprof", dir);
		snprintf(segdir, sizeof(segdir), "%s.d", whole);
		if (mkdir(segdir, 0700) != 0)
			return -1;
		atexit(remove_dir);
	}
	return empty_dir();
}

static const uint8_t *find_sep(const uint8_t *p, const uint8_t *end)
{
	for (; end - p >= SEP_LEN; p++)
		if (memcmp(p, SEP, SEP_LEN) == 0)
			return p;
	return end;
}

static void check_rounds(size_t *sink)
{
	mp_capture_rounds_t r;
	mp_diag_t diag;

	if (mp_capture_rounds_read(whole, &r, &diag) == 0)
		for (size_t i = 0; i < r.nrounds; i++) {
			const mp_round_t *rd = &r.rounds[i];
			if (rd->first > r.nmemories || rd->n > r.nmemories - rd->first)
				__builtin_trap();
			for (size_t k = 0; k < rd->n; k++) {
				const mp_round_memory_t *m = &r.memories[rd->first + k];
				if (k && m->id <= r.memories[rd->first + k - 1].id)
					__builtin_trap();
				if (mp_round_memory(&r, rd, m->id) != m)
					__builtin_trap();
				*sink += m->live + m->max;
			}
		}
	mp_capture_rounds_free(&r);
}

static void check_window(const mp_keep_run_t *k, size_t *sink)
{
	mp_checkpoint_t ck;
	mp_capture_t *cap;
	mp_source_t *src;
	mp_event_t ev;
	mp_diag_t diag;

	for (size_t i = 0; i < k->nsegments; i++) {
		if (i && k->segments[i].number != k->segments[i - 1].number + 1)
			__builtin_trap();
		if (k->segments[i].blocks && k->segments[i].data_end > k->segments[i].bytes)
			__builtin_trap();
	}
	if (k->nsegments > k->present || k->skipped > k->present)
		__builtin_trap();
	if (mp_keep_window_checkpoint(k, &ck, &diag) == 0) {
		*sink += ck.nblocks + ck.events;
		mp_checkpoint_free(&ck);
	}
	if (mp_keep_window_open(k, &cap, &diag))
		return;
	src = mp_capture_source(cap);
	while (mp_source_next(src, &ev, &diag) == 1) {
		const mp_memory_info_t *m = mp_source_memory(src, ev.memory);
		const uint64_t *pcs;
		uint32_t n;
		*sink += strlen(mp_source_string(src, ev.op)) + (m ? strlen(m->name) : 0);
		if (ev.stack && mp_capture_stack(cap, ev.stack, &pcs, &n))
			__builtin_trap();
	}
	mp_capture_close(cap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size, *next;
	mp_keep_run_t *k;
	mp_diag_t diag;
	size_t sink = 0;
	char path[256];

	if (fresh_dir())
		return 0;
	next = find_sep(p, end);
	if (put_file(whole, p, (size_t)(next - p)))
		return 0;
	for (unsigned n = 0; next < end && n < MAX_SEGMENTS; n++) {
		p = next + SEP_LEN;
		next = find_sep(p, end);
		snprintf(path, sizeof(path), "%s/seg-%06u.memprof", segdir, n);
		if (next > p && put_file(path, p, (size_t)(next - p)))
			return 0;
	}
	check_rounds(&sink);
	if (mp_keep_is_run(whole) != 1)
		__builtin_trap(); /* P beside P.d */
	if (mp_keep_open(&k, whole, &diag) == 0) {
		check_window(k, &sink);
		mp_keep_close(k);
	}
	return (int)(sink & 0);
}
