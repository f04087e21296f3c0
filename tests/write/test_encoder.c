/* test_encoder.c - the flusher's encoder (src/core/write/chunkenc*.c) on
 * hand-made ring records, its output read back by the reader from a capture
 * built around it (tests/read/handmade.h): 200 blocks freed and allocated
 * again (REUSED, REFREED and FREE_AGED records), varints of 1..10 bytes,
 * WIDE, REALLOC and CONTEXT records; its BMI2 and portable variants
 * (mp__cpu_features_limit(0) forces the portable one) and its batched
 * ALLOC/FREE/REALLOC loop (chunkenc_run.c) writing byte for byte what the
 * general loop writes, on random records and on 400 REALLOCs in a row
 * (more than a batch holds: under UBSan, an address array one batch long
 * fails), with and without the age table; TSC readings converted through
 * the clock's lines. */
#include "test_common.h"

#include "cpufeat_helpers.h"
#include "handmade.h"

#include <memprof/format.h>
#include <memprof/format/columns.h>
#include <memprof/reader.h>

#include "clock.h"
#include "encoder.h"

#include <string.h>

#define W0(kind, mem, diff) ((uint64_t)(kind) | (uint64_t)(mem) << 16 | (uint64_t)(uint32_t)(int32_t)(diff) << 32)


/* A capture of what enc encoded: put_defs' sections, memories 1..extra
 * (named "host" too), the parts as one CHUNK2 section of thread 0, a
 * final horizon. Releases enc. */
static void write_encoded(const char *path, mp_chunk_encoder_t *enc, const uint64_t lens[MP_PARTS], unsigned extra)
{
	static buf_t raw;
	const uint8_t *parts[MP_PARTS];
	unsigned i;
	int c;

	for (c = 0; c < MP_PARTS; c++)
		parts[c] = enc->cols[c].data;
	raw.n = 0;
	put_defs(&raw);
	for (i = 1; i <= extra; i++) {
		put_byte(&raw, MP_SEC_MEMORY);
		put_v(&raw, i);
		put_v(&raw, 1);
		put_v(&raw, 1);
		put_v(&raw, 0);
	}
	put_chunk(&raw, MP_SEC_CHUNK2, 0, parts, lens, MP_PARTS);
	put_byte(&raw, MP_SEC_HORIZON);
	put_v(&raw, UINT64_MAX);
	write_capture(path, 2, &raw, enc->events);
	mp__chunk_encoder_release(enc);
}

/* Two encoders wrote the same bytes: events, every part's length and
 * contents. */
static void assert_same_encoding(const mp_chunk_encoder_t enc[2], uint64_t lens[2][MP_PARTS])
{
	int c;

	assert_int_equal(enc[0].events, enc[1].events);
	for (c = 0; c < MP_PARTS; c++) {
		assert_int_equal(lens[0][c], lens[1][c]);
		assert_memory_equal(enc[0].cols[c].data, enc[1].cols[c].data, lens[0][c]);
	}
}

/* Ring records that exercise every part: 200 blocks allocated and freed
 * (more than the 64-slot cache holds), then allocated again in another
 * order (ALLOC_REUSED for those the cache still holds, ALLOC_REFREED for
 * the others), time deltas and sizes of every varint length 1..10, a WIDE
 * record, a realloc, and a context change. */
static size_t ring_records(uint64_t *r, uint64_t *t_out)
{
	size_t n = 0;
	uint64_t t = 1;
	int i;

	for (i = 0; i < 200; i++) {
		r[n++] = W0(MP_REC_ALLOC, 0, 8), r[n++] = t++, r[n++] = 0x100000 + (uint64_t)i * 0x40, r[n++] = 40;
	}
	for (i = 0; i < 200; i++) {
		r[n++] = W0(MP_REC_FREE, 0, 0), r[n++] = t++, r[n++] = 0x100000 + (uint64_t)((i * 7) % 200) * 0x40;
	}
	for (i = 0; i < 200; i++) {
		r[n++] = W0(MP_REC_ALLOC, 0, 0), r[n++] = t++, r[n++] = 0x100000 + (uint64_t)((i * 13) % 200) * 0x40;
		r[n++] = 24;
	}
	r[n++] = W0(MP_REC_CONTEXT, 0, 0), r[n++] = 2, r[n++] = 1, r[n++] = 0, r[n++] = 0;
	for (i = 0; i < 10; i++) { /* varints of 1 .. 10 bytes: dt and requested 2^(7i) */
		uint64_t v = i == 9 ? UINT64_MAX : 1ull << (7 * i);
		t += i == 9 ? (1ull << 63) : v; /* a 10-byte dt last */
		r[n++] = W0(MP_REC_ALLOC, 0, 0), r[n++] = t, r[n++] = 0x900000 + (uint64_t)i * 16, r[n++] = v;
	}
	r[n++] = W0(MP_REC_ALLOC, 0, 0) | MP_RING_WIDE, r[n++] = ++t, r[n++] = 0xa00000, r[n++] = 5,
	r[n++] = 5 + (1ull << 40);
	r[n++] = W0(MP_REC_REALLOC, 0, 4), r[n++] = ++t, r[n++] = 0xa00000, r[n++] = 0xb00008, r[n++] = 100;
	r[n++] = W0(MP_REC_FREE, 0, 0), r[n++] = ++t, r[n++] = 0xb00008;
	*t_out = t;
	return n;
}

static void test_encoder_roundtrip(void **state)
{
	static uint64_t ring[4096];
	uint64_t st[MP_ST_COUNT] = {0}, lens[MP_PARTS], t_end, kinds[16] = {0}, total = 0;
	mp_chunk_encoder_t enc;
	mp_capclock_t clock;
	char *path = mp_test_tmpfile("enc.memprof");
	const uint8_t *parts[MP_PARTS];
	static mp_event_t ev[1024];
	mp_diag_t diag;
	size_t nw, n, i, j;
	int rc, c;

	(void)state;
	memset(&enc, 0, sizeof(enc));
	memset(&clock, 0, sizeof(clock)); /* no TSC: times are taken as they are */
	nw = ring_records(ring, &t_end);
	assert_int_equal(mp__chunk_encode(&enc, ring, nw, nw, st, &clock, lens), 0);
	assert_int_equal(enc.consumed, nw);
	assert_int_equal(enc.events, 200 + 200 + 200 + 10 + 1 + 2 + 1);
	for (i = 0; i < lens[0]; i++)
		kinds[enc.cols[0].data[i] & MP_REC_KIND_MASK]++;
	/* frees of blocks of the chunk are aged where the age is not longer
	 * than the delta; of the 200 re-allocations, those whose cache slot
	 * still holds their address are REUSED, others REFREED where the
	 * number of frees since is not longer than the delta (both take
	 * place: 200 frees, 64 slots, ages of 1 and 2 bytes) */
	assert_true(kinds[MP_REC_FREE_AGED] > 0);
	assert_int_equal(kinds[MP_REC_FREE_AGED] + kinds[MP_REC_FREE], 201);
	assert_true(kinds[MP_REC_ALLOC_REUSED] > 0 && kinds[MP_REC_ALLOC_REFREED] > 0);
	assert_int_equal(kinds[MP_REC_ALLOC_REUSED] + kinds[MP_REC_ALLOC_REFREED] + kinds[MP_REC_ALLOC], 200 + 200 + 11);
	/* heads: one per varint; the 1..10-byte varints' tail bytes are there */
	assert_int_equal(lens[MP_HEAD(MP_COL_IDX)],
			 kinds[MP_REC_FREE_AGED] + kinds[MP_REC_ALLOC_REUSED] + kinds[MP_REC_ALLOC_REFREED]);
	assert_true(lens[MP_TAIL(MP_COL_SIZE)] >= 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9);
	assert_true(lens[MP_TAIL(MP_COL_TIME)] >= 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9);
	for (c = 0; c < MP_PARTS; c++) {
		parts[c] = enc.cols[c].data;
		total += lens[c];
	}
	{ /* the parts, back to back, pass the reader's check */
		static uint8_t flat[1 << 16];
		size_t at = 0;
		assert_true(total <= sizeof(flat));
		for (c = 0; c < MP_PARTS; c++) {
			memcpy(flat + at, parts[c], lens[c]);
			at += lens[c];
		}
		assert_int_equal(mp__chunk_check(flat, lens, total), 0);
		assert_int_equal(mp__chunk_check(flat, lens, total + 1), -1);
	}

	write_encoded(path, &enc, lens, 0);
	n = read_heap(path, ev, 1024, &rc, &diag);
	assert_int_equal(rc, 0);
	assert_int_equal(n, enc.events);

	/* every event as the ring records say */
	for (i = 0, j = 0; i < nw; j++) {
		unsigned kind = (unsigned)ring[i] & 0xff;
		uint64_t diff = (uint64_t)(int64_t)(int32_t)(ring[i] >> 32);
		if (kind == MP_REC_CONTEXT) {
			i += 5;
			j--;
			continue;
		}
		assert_true(ev[j].time_ns == ring[i + 1]);
		if (kind == MP_REC_ALLOC) {
			assert_int_equal(ev[j].kind, MP_EV_ALLOC);
			assert_true(ev[j].address == ring[i + 2]);
			assert_true(ev[j].requested_bytes == ring[i + 3]);
			if (ring[i] & MP_RING_WIDE) {
				assert_true(ev[j].allocated_bytes == ring[i + 4]);
				i += 5;
			} else {
				assert_true(ev[j].allocated_bytes == ring[i + 3] + diff);
				i += 4;
			}
		} else if (kind == MP_REC_FREE) {
			assert_int_equal(ev[j].kind, MP_EV_FREE);
			assert_true(ev[j].address == ring[i + 2]);
			i += 3;
		} else {
			assert_int_equal(kind, MP_REC_REALLOC);
			assert_int_equal(ev[j].kind, MP_EV_FREE);
			assert_true(ev[j].address == ring[i + 2]);
			j++;
			assert_int_equal(ev[j].kind, MP_EV_ALLOC);
			assert_true(ev[j].flags & MP_EVENT_F_REALLOC);
			assert_true(ev[j].address == ring[i + 3]);
			assert_true(ev[j].requested_bytes == 100 && ev[j].allocated_bytes == 104);
			i += 5;
		}
	}
	assert_int_equal(j, n);
	/* the context change holds for the allocations after it */
	assert_int_equal(ev[599].op, 0);
	assert_int_equal(ev[600].op, 2);
	assert_int_equal(ev[600].region, 1);
	assert_true(ev[n - 1].time_ns == t_end);
	unlink(path);
	free(path);
}

/* The encoder's two variants (chunkenc.c: BMI2 where the CPU has it, and
 * the portable one) write the same bytes, with and without ages; the
 * portable one's output is what the round trip above checks when the
 * machine lacks BMI2, the BMI2 one's otherwise. */
static void test_encoder_variants(void **state)
{
	static uint64_t ring[4096];
	mp_chunk_encoder_t enc[2];
	mp_capclock_t clock;
	uint64_t t_end, lens[2][MP_PARTS];
	size_t nw;
	int v, ages;

	(void)state;
	memset(&clock, 0, sizeof(clock));
	nw = ring_records(ring, &t_end);
	for (ages = 0; ages < 2; ages++) {
		for (v = 0; v < 2; v++) {
			uint64_t st[MP_ST_COUNT] = {0};
			memset(&enc[v], 0, sizeof(enc[v]));
			enc[v].no_ages = !ages;
			mp__cpu_features_limit(v ? 0 : ~0u); /* v = 1: the portable variant */
			assert_int_equal(mp__chunk_encode(&enc[v], ring, nw, nw, st, &clock, lens[v]), 0);
			assert_int_equal(enc[v].consumed, nw);
		}
		mp__cpu_features_limit(~0u);
		assert_same_encoding(enc, lens);
		/* the time deltas of 1..10 bytes and sizes of every length are
		 * there: every length of the put() short path and the long one */
		assert_true(lens[0][MP_TAIL(MP_COL_TIME)] >= 45 && lens[0][MP_TAIL(MP_COL_SIZE)] >= 45);
		for (v = 0; v < 2; v++)
			mp__chunk_encoder_release(&enc[v]);
	}
}

/* The batched loop for ALLOC, FREE and REALLOC records (chunkenc.c,
 * run_x) writes what the general loop writes for them, record by record:
 * random records of a small address pool (so that cache hits, aged frees
 * and refreed allocations happen), sizes exact, glibc-usable and other,
 * values of 2^28 and more now and then (which the batch leaves to the
 * general loop), WIDE records, memory ids and contexts that change; in
 * chunks that end at a limit and carry their state into the next; each
 * variant, with and without ages. */
static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void test_encoder_run_matches_general(void **state)
{
	static uint64_t ring[1 << 16];
	static const int64_t diffs[4] = {0, 8, -3, 1 << 20};
	mp_chunk_encoder_t enc[2];
	mp_capclock_t clock;
	uint64_t t = 1000, pool[300];
	size_t nw = 0, i;
	unsigned mem = 0;
	int v, ages, k;

	(void)state;
	memset(&clock, 0, sizeof(clock));
	for (i = 0; i < 300; i++)
		pool[i] = 0x7f0000100000ull + (rnd() % 4096) * (i % 7 ? 16 : 8);
	while (nw < sizeof(ring) / 8 - 16 - 11 * 400) {
		uint64_t x = rnd(), a = pool[x % 300], req = 16 + (x >> 20) % 5000, w0;
		unsigned kind;
		int64_t d = diffs[(x >> 40) & 3];

		if (d == 8) /* glibc's usable size */
			d = (int64_t)mp_usable16(req) - (int64_t)req;
		t += (x >> 50) & 0xff;
		if ((x >> 33) % 97 == 0)
			t += 1ull << 30; /* a time delta of 2^28 or more */
		if ((x >> 34) % 89 == 0)
			a ^= 1ull << 44; /* an address delta of 2^28 or more */
		if ((x >> 35) % 83 == 0)
			req += 1ull << 29; /* a size of 2^28 or more */
		if ((x >> 36) % 251 == 0)
			mem = (mem + 1) % 3; /* another memory id */
		if ((x >> 37) % 211 == 0) {
			ring[nw++] = W0(MP_REC_CONTEXT, 0, 0), ring[nw++] = x & 7, ring[nw++] = 1, ring[nw++] = 0,
			ring[nw++] = 0;
			continue;
		}
		kind = (x >> 8) % 16 < 7 ? MP_REC_ALLOC : (x >> 8) % 16 < 14 ? MP_REC_FREE : MP_REC_REALLOC;
		/* --stacks: a STACK record before most allocations (an id of
		 * 2^28 or more now and then) */
		if (kind != MP_REC_FREE && (x >> 39) % 4 != 0) {
			ring[nw++] = W0(MP_REC_STACK, 0, 0);
			ring[nw++] = (x >> 42) % 61 == 0 ? (1ull << 28) + 5 : 1 + (x >> 12) % 40;
		}
		w0 = W0(kind, mem, d);
		if ((x >> 38) % 101 == 0 && kind != MP_REC_FREE)
			w0 = W0(kind, mem, 0) | MP_RING_WIDE;
		ring[nw++] = w0, ring[nw++] = t;
		if (kind == MP_REC_REALLOC)
			ring[nw++] = pool[(x >> 24) % 300];
		ring[nw++] = a;
		if (kind != MP_REC_FREE) {
			ring[nw++] = req;
			if (w0 & MP_RING_WIDE)
				ring[nw++] = req + 40;
		}
	}
	/* STACK and ALLOC records in pairs, more STACK records than a batch
	 * of the batched loop has timed records */
	for (i = 0; i < 400; i++) {
		t += 5;
		ring[nw++] = W0(MP_REC_STACK, 0, 0), ring[nw++] = 1 + i % 3;
		ring[nw++] = W0(MP_REC_ALLOC, 0, 0), ring[nw++] = t, ring[nw++] = pool[i % 300], ring[nw++] = 48;
	}
	/* REALLOCs in a row, more than a batch of the batched loop holds */
	for (i = 0; i < 400; i++) {
		t += 3;
		ring[nw++] = W0(MP_REC_REALLOC, 0, 8), ring[nw++] = t, ring[nw++] = pool[i % 300];
		ring[nw++] = pool[(i + 1) % 300], ring[nw++] = 100;
	}
	for (ages = 0; ages < 2; ages++)
		for (k = 0; k < 2; k++) {
			uint64_t st[2][MP_ST_COUNT] = {{0}};
			size_t pos[2] = {0, 0};
			for (v = 0; v < 2; v++) {
				memset(&enc[v], 0, sizeof(enc[v]));
				enc[v].no_run = v;
				enc[v].no_ages = !ages;
			}
			mp__cpu_features_limit(k ? 0 : ~0u); /* k = 1: the portable variant */
			while (pos[0] < nw) {
				uint64_t lens[2][MP_PARTS];
				size_t n = nw - pos[0], limit = n > 3000 ? 2000 + rnd() % 1000 : n;
				for (v = 0; v < 2; v++)
					assert_int_equal(
						mp__chunk_encode(&enc[v], ring + pos[v], n, limit, st[v], &clock, lens[v]),
						0);
				assert_int_equal(enc[0].consumed, enc[1].consumed);
				assert_same_encoding(enc, lens);
				assert_memory_equal(st[0], st[1], sizeof(st[0]));
				for (v = 0; v < 2; v++)
					pos[v] += enc[v].consumed;
			}
			for (v = 0; v < 2; v++)
				mp__chunk_encoder_release(&enc[v]);
			mp__cpu_features_limit(~0u);
		}
}

/* The encoder converts TSC readings through the clock's lines, keeping the
 * line it found between records (chunkenc.c, clock_cache_t): readings
 * that move between lines, before the oldest one, back in time (clamped),
 * on a ring of lines whose newest is not at index 0, with a stale line past
 * count; and ALLOC and FREE records that change the memory id. Times worked
 * out by hand from the lines: ns = ns0 + (tsc - tsc0) * mult / 2^32. */
static void test_encoder_clock_lines(void **state)
{
	static const struct {
		unsigned kind, mem;
		uint64_t raw, addr, ns;
	} rec[] = {
		{MP_REC_FREE, 0, 900, 0x1000, 300},    /* before A: A, extended back */
		{MP_REC_FREE, 0, 1000, 0x2000, 500},   /* A */
		{MP_REC_ALLOC, 1, 1500, 0x3000, 1500}, /* A */
		{MP_REC_FREE, 1, 1999, 0x4000, 2498},  /* A */
		{MP_REC_FREE, 2, 2000, 0x5000, 2600},  /* B */
		{MP_REC_ALLOC, 2, 2100, 0x6000, 2650}, /* B: half a ns a tick */
		{MP_REC_FREE, 0, 3000, 0x7000, 3200},  /* C */
		{MP_REC_FREE, 0, 3100, 0x8000, 3300},  /* C */
		{MP_REC_ALLOC, 1, 2500, 0x9000, 3300}, /* B (2725), time never goes back */
		{MP_REC_FREE, 1, 5000, 0xa000, 5200},  /* C */
		{MP_REC_FREE, 0, 1200, 0xb000, 5200},  /* A (900), clamped */
		{MP_REC_ALLOC, 0, 5001, 0xc000, 5201}, /* C again */
	};
	const size_t nrec = sizeof(rec) / sizeof(rec[0]);
	uint64_t ring[64], st[MP_ST_COUNT] = {0}, lens[MP_PARTS];
	mp_chunk_encoder_t enc;
	mp_capclock_t clock;
	char *path = mp_test_tmpfile("clk.memprof");
	mp_event_t ev[32];
	mp_diag_t diag;
	size_t nw = 0, n, i;
	int rc;

	(void)state;
	for (i = 0; i < nrec; i++) {
		ring[nw++] = W0(rec[i].kind, rec[i].mem, 0);
		ring[nw++] = rec[i].raw;
		ring[nw++] = rec[i].addr;
		if (rec[i].kind == MP_REC_ALLOC)
			ring[nw++] = 32;
	}
	memset(&clock, 0, sizeof(clock));
	clock.use_tsc = 1;
	clock.count = 3;
	clock.newest = 1;
	clock.line[7] = (mp_tsc_line_t){.tsc0 = 1000, .ns0 = 500, .mult = 2ull << 32}; /* A, the oldest */
	clock.line[0] = (mp_tsc_line_t){.tsc0 = 2000, .ns0 = 2600, .mult = 1ull << 31}; /* B */
	clock.line[1] = (mp_tsc_line_t){.tsc0 = 3000, .ns0 = 3200, .mult = 1ull << 32}; /* C, the newest */
	clock.line[6] = (mp_tsc_line_t){.tsc0 = 0, .ns0 = 77777, .mult = 0};           /* past count: unused */
	memset(&enc, 0, sizeof(enc));
	assert_int_equal(mp__chunk_encode(&enc, ring, nw, nw, st, &clock, lens), 0);
	assert_int_equal(enc.consumed, nw);
	assert_int_equal(enc.events, nrec);
	assert_true(st[MP_ST_TIME] == 5201);
	assert_int_equal(st[MP_ST_MEMORY], 0);

	write_encoded(path, &enc, lens, 2); /* memories 1 and 2 */
	n = read_heap(path, ev, 32, &rc, &diag);
	assert_int_equal(rc, 0);
	assert_int_equal(n, nrec);
	for (i = 0; i < nrec; i++) {
		assert_int_equal(ev[i].kind, rec[i].kind == MP_REC_ALLOC ? MP_EV_ALLOC : MP_EV_FREE);
		assert_int_equal(ev[i].memory, rec[i].mem);
		assert_true(ev[i].time_ns == rec[i].ns);
		assert_true(ev[i].address == rec[i].addr);
	}
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encoder_roundtrip),
		cmocka_unit_test(test_encoder_clock_lines),
		cmocka_unit_test_teardown(test_encoder_variants, mp_test_all_features),
		cmocka_unit_test_teardown(test_encoder_run_matches_general, mp_test_all_features),
	};
	return cmocka_run_group_tests_name("encoder", tests, NULL, NULL);
}
