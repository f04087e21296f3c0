/* bench_encode.c - the flusher's encode path alone, on real records: ring
 * records -> column parts (mp__chunk_encode) -> Huffman-coded deflate
 * (mp__dh_segment), timed per stage on one core.
 *
 * The input is a capture (e.g. of `memprof record -- alloc_bench -t 2`):
 * its events are turned back into the ring records the writer's threads
 * made (per thread; realloc halves joined again, CONTEXT and STEP records
 * where the context or step changes), with times as TSC readings at one
 * tick per ns, so the encoder converts them as it does in a capture. Each
 * thread's records are then encoded in the flusher's pieces (512 KiB of
 * ring) and every part coded as flush.c does (a part under 2 KiB joins the
 * next one). Prints ns/event of each stage, the coded bytes/event (parts
 * only: no chunk headers or block framing) and a CRC of all output, which
 * changes only when the bytes written do (so an encoder change that must
 * not change the output can be checked with it).
 *
 * -v adds, per part, its raw and coded bytes per event (each part coded
 * alone, outside the timing); -p times the encoder's and the Huffman
 * coder's portable variants (those non-x86 builds run) where the BMI2 ones
 * would run (same output). -l LEVEL also codes every piece's parts, back to
 * back as the flusher puts them in a block, with libdeflate's compressor at
 * LEVEL (one compressor made before timing, as a flusher would keep one) and
 * prints its ns/event and bytes/event beside the Huffman coder's.
 *
 * usage: bench_encode [-n max_events] [-r repeats] [-v] [-p] [-l LEVEL] FILE.memprof
 */
#include "encoder.h"
#include <memprof/format/cpufeat.h>
#include "clock.h"
#include <memprof/format/deflate_huff.h>
#include <memprof/format.h>
#include <memprof/format/varint.h>

#include <memprof/capture.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_THREADS 64
#define PIECE_WORDS (512u << 10) / 8
#define MIN_SEGMENT 2048

typedef struct {
	uint64_t *w;
	size_t n, cap;
	int64_t step;
	uint32_t ctx[4];
	int have_ctx, pending_free; /* the FREE half of a realloc waits for its ALLOC half */
	uint64_t free_addr;
} thr_t;

static void push(thr_t *t, const uint64_t *v, unsigned k)
{
	if (t->n + k > t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1 << 16;
		if (!(t->w = realloc(t->w, t->cap * 8))) {
			perror("realloc");
			exit(1);
		}
	}
	memcpy(t->w + t->n, v, 8 * (size_t)k);
	t->n += k;
}

static uint64_t word0(unsigned kind, uint32_t mem, uint64_t req, uint64_t alloc, unsigned *k)
{
	int64_t d = (int64_t)(alloc - req);
	int wide = d != (int64_t)(int32_t)d;

	*k += (unsigned)wide;
	return kind | (wide ? MP_RING_WIDE : 0) | ((uint64_t)mem << 16) | ((uint64_t)(uint32_t)(int32_t)d << 32);
}

static void add_event(thr_t *t, const mp_event_t *ev)
{
	uint64_t v[6];
	unsigned k;

	if (ev->kind == MP_EV_ALLOC || ev->kind == MP_EV_FREE) {
		if (!t->have_ctx || t->ctx[0] != ev->op || t->ctx[1] != ev->region || t->ctx[2] != ev->dtype ||
		    t->ctx[3] != ev->shape) {
			uint64_t c[5] = {MP_REC_CONTEXT, ev->op, ev->region, ev->dtype, ev->shape};
			push(t, c, 5);
			t->ctx[0] = ev->op, t->ctx[1] = ev->region, t->ctx[2] = ev->dtype, t->ctx[3] = ev->shape;
			t->have_ctx = 1;
		}
	}
	switch (ev->kind) {
	case MP_EV_ALLOC:
		if (t->pending_free) {
			k = 5;
			v[0] = word0(MP_REC_REALLOC, ev->memory, ev->requested_bytes, ev->allocated_bytes, &k);
			v[1] = ev->time_ns, v[2] = t->free_addr, v[3] = ev->address, v[4] = ev->requested_bytes;
			v[5] = ev->allocated_bytes;
			t->pending_free = 0;
		} else {
			k = 4;
			v[0] = word0(MP_REC_ALLOC, ev->memory, ev->requested_bytes, ev->allocated_bytes, &k);
			v[1] = ev->time_ns, v[2] = ev->address, v[3] = ev->requested_bytes, v[4] = ev->allocated_bytes;
		}
		push(t, v, k);
		break;
	case MP_EV_FREE:
		if (ev->flags & MP_EVENT_F_REALLOC) {
			t->pending_free = 1;
			t->free_addr = ev->address;
			break;
		}
		v[0] = MP_REC_FREE | (uint64_t)ev->memory << 16, v[1] = ev->time_ns, v[2] = ev->address;
		push(t, v, 3);
		break;
	case MP_EV_ALLOC_FAILED:
		v[0] = MP_REC_ALLOC_FAILED | (uint64_t)ev->memory << 16, v[1] = ev->time_ns,
		v[2] = ev->requested_bytes;
		push(t, v, 3);
		break;
	case MP_EV_REGION_ADD:
		v[0] = MP_REC_REGION_ADD | (uint64_t)ev->memory << 16, v[1] = ev->time_ns, v[2] = ev->address,
		v[3] = ev->requested_bytes;
		push(t, v, 4);
		break;
	case MP_EV_REGION_REMOVE:
		v[0] = MP_REC_REGION_REMOVE | (uint64_t)ev->memory << 16, v[1] = ev->time_ns, v[2] = ev->address;
		push(t, v, 3);
		break;
	case MP_EV_STEP:
		v[0] = MP_REC_STEP, v[1] = ev->time_ns, v[2] = mp_zigzag(ev->step);
		push(t, v, 3);
		break;
	case MP_EV_MARK:
		v[0] = MP_REC_MARK, v[1] = ev->time_ns, v[2] = ev->label;
		push(t, v, 3);
		break;
	default:
		break;
	}
}

static double now_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	static thr_t thr[MAX_THREADS];
	size_t max_events = 10000000, nev = 0, i;
	int repeats = 3, opt, nthr = 0, rc, verbose = 0, ld_level = 0;
	struct libdeflate_compressor *ldc = NULL;
	uint8_t *ld_out = NULL;
	uint64_t part_raw[MP_PARTS], part_coded[MP_PARTS];
	mp_source_t *src;
	mp_diag_t diag = {0};
	mp_event_t ev;
	mp_capclock_t clock;
	mp_chunk_encoder_t enc;
	uint8_t *raw = NULL, *out = NULL;
	size_t raw_cap = 0;

	while ((opt = getopt(argc, argv, "n:r:vpl:")) != -1) {
		if (opt == 'l')
			ld_level = atoi(optarg);
		else if (opt == 'v')
			verbose = 1;
		else if (opt == 'p')
			mp__cpu_features_limit(0); /* the portable variants */
		else if (opt == 'n')
			max_events = strtoull(optarg, NULL, 10);
		else if (opt == 'r')
			repeats = atoi(optarg);
		else
			return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: bench_encode [-n max_events] [-r repeats] [-v] [-p] [-l LEVEL] FILE.memprof\n");
		return 2;
	}
	if ((rc = mp_capture_open_source(&src, argv[optind], &diag))) {
		fprintf(stderr, "bench_encode: %s\n", diag.text);
		return 1;
	}
	while (nev < max_events && (rc = mp_source_next(src, &ev, &diag)) > 0) {
		if (ev.thread >= MAX_THREADS)
			continue;
		if ((int)ev.thread >= nthr)
			nthr = (int)ev.thread + 1;
		if (ev.kind == MP_EV_STEP && thr[ev.thread].step == ev.step)
			continue;
		if (ev.step != thr[ev.thread].step && ev.kind != MP_EV_STEP && ev.kind <= MP_EV_MARK) {
			mp_event_t s = ev;
			s.kind = MP_EV_STEP;
			add_event(&thr[ev.thread], &s);
		}
		thr[ev.thread].step = ev.step;
		add_event(&thr[ev.thread], &ev);
		nev++;
	}
	mp_source_close(src);
	if (rc < 0) {
		fprintf(stderr, "bench_encode: %s\n", diag.text);
		return 1;
	}

	memset(&clock, 0, sizeof(clock));
	clock.use_tsc = 1;
	clock.count = 1;
	clock.line[0].mult = 1ull << 32; /* one tick per ns */
	if (ld_level && !(ldc = libdeflate_alloc_compressor(ld_level))) {
		fprintf(stderr, "bench_encode: no libdeflate compressor at level %d\n", ld_level);
		return 2;
	}

	for (int rep = 0; rep < repeats; rep++) {
		double t_enc = 0, t_huff = 0, t_ld = 0, t0;
		uint64_t events = 0, bytes = 0, ld_bytes = 0, crc = crc32(0, NULL, 0);

		memset(&enc, 0, sizeof(enc));
		memset(part_raw, 0, sizeof(part_raw));
		memset(part_coded, 0, sizeof(part_coded));
		for (int ti = 0; ti < nthr; ti++) {
			thr_t *t = &thr[ti];
			uint64_t st[MP_ST_COUNT] = {0};
			size_t pos = 0;
			while (pos < t->n) {
				size_t n = t->n - pos, limit = n, total = 0, start = 0, segs[MP_PARTS], ns = 0;
				uint64_t lens[MP_PARTS];
				mp_dh_writer_t dh;
				if (n > PIECE_WORDS + 6) {
					n = PIECE_WORDS + 6;
					limit = PIECE_WORDS;
				}
				t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
				if (mp__chunk_encode(&enc, t->w + pos, n, limit, st, &clock, lens) || !enc.consumed) {
					fprintf(stderr, "bench_encode: encode failed\n");
					return 1;
				}
				t_enc += now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
				pos += enc.consumed;
				events += enc.events;
				for (i = 0; i < MP_PARTS; i++)
					total += lens[i];
				if (total + 64 > raw_cap) {
					raw_cap = 2 * (total + 64);
					raw = realloc(raw, raw_cap);
					out = realloc(out, mp_dh_bound(raw_cap) + 21 * (MP_PARTS + 1));
					if (ldc)
						ld_out = realloc(ld_out, libdeflate_deflate_compress_bound(ldc, raw_cap));
				}
				t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
				/* as flush.c: the parts copied into the block, then coded */
				for (i = 0, total = 0; i < MP_PARTS; i++) {
					segs[ns++] = total;
					memcpy(raw + total, enc.cols[i].data, lens[i]);
					total += lens[i];
				}
				mp__dh_begin(&dh, out);
				for (i = 1; i <= ns; i++) {
					size_t end = i < ns ? segs[i] : total;
					if (i < ns && end - start < MIN_SEGMENT)
						continue;
					if (end > start)
						mp__dh_segment(&dh, raw + start, end - start, end == total, 0);
					start = end;
				}
				{
					uint8_t *e = mp__dh_end(&dh);
					t_huff += now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
					bytes += (size_t)(e - out);
					crc = crc32(crc, out, (uInt)(e - out));
				}
				if (ldc) {
					size_t n_ld;
					t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
					n_ld = libdeflate_deflate_compress(ldc, raw, total, ld_out,
									   libdeflate_deflate_compress_bound(ldc, raw_cap));
					t_ld += now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
					if (!n_ld) {
						fprintf(stderr, "bench_encode: libdeflate failed\n");
						return 1;
					}
					ld_bytes += n_ld;
				}
				if (verbose)
					for (i = 0; i < MP_PARTS; i++) {
						if (!lens[i])
							continue;
						mp__dh_begin(&dh, out);
						mp__dh_segment(&dh, enc.cols[i].data, lens[i], 1, 0);
						part_raw[i] += lens[i];
						part_coded[i] += (size_t)(mp__dh_end(&dh) - out);
					}
			}
		}
		mp__chunk_encoder_release(&enc);
		if (verbose) {
			static const char *name[MP_PARTS] = {"tag",       "time.h", "time.t", "addr.h",
							     "addr.t",    "idx.h",  "idx.t",  "size.h",
							     "size.t",    "misc.h", "misc.t"};
			for (i = 0; i < MP_PARTS; i++)
				printf("  %-7s raw=%.3f coded=%.3f bytes/event\n", name[i],
				       (double)part_raw[i] / (double)events, (double)part_coded[i] / (double)events);
		}
		printf("threads=%d events=%llu encode_ns_per_event=%.2f huff_ns_per_event=%.2f total_ns_per_event=%.2f "
		       "bytes_per_event=%.4f crc=%08llx",
		       nthr, (unsigned long long)events, 1e9 * t_enc / (double)events, 1e9 * t_huff / (double)events,
		       1e9 * (t_enc + t_huff) / (double)events, (double)bytes / (double)events,
		       (unsigned long long)crc);
		if (ldc)
			printf(" libdeflate%d_ns_per_event=%.2f libdeflate%d_bytes_per_event=%.4f", ld_level,
			       1e9 * t_ld / (double)events, ld_level, (double)ld_bytes / (double)events);
		putchar('\n');
	}
	for (int ti = 0; ti < nthr; ti++)
		free(thr[ti].w);
	free(raw);
	free(out);
	free(ld_out);
	libdeflate_free_compressor(ldc);
	return 0;
}
