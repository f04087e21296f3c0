/* test_layout.c - the chunk layouts as docs/format.md ("Columns") gives
 * them, read from captures built here byte by byte (handmade.h): a 1.x
 * capture's five columns of whole varints, read with the same figures as
 * ever (and 1.x's kind 13 and each layout in the other version being
 * corruption), and a 2.0 capture's heads and tails, IDX column and
 * ALLOC_REFREED ages (an age past the frees gives "freed-address age" at
 * record 5). */
#include "test_common.h"

#include "handmade.h"

#include <memprof/format.h>
#include <memprof/format/columns.h>
#include <memprof/reader.h>

#include <string.h>

typedef struct {
	int kind;
	uint64_t time, addr, req, alloc;
	int realloc;
} want_t;

static void check_events(const mp_event_t *ev, size_t n, const want_t *want, size_t nwant)
{
	size_t i;

	assert_int_equal(n, nwant);
	for (i = 0; i < n; i++) {
		assert_int_equal(ev[i].kind, want[i].kind);
		assert_true(ev[i].time_ns == want[i].time);
		assert_true(ev[i].address == want[i].addr);
		assert_true(ev[i].requested_bytes == want[i].req);
		assert_true(ev[i].allocated_bytes == want[i].alloc);
		assert_int_equal((ev[i].flags & MP_EVENT_F_REALLOC) != 0, want[i].realloc);
	}
}

/* The cache slot of an address: docs/format.md's formula, written again. */
static unsigned slot_of(uint64_t a)
{
	return (unsigned)(((a >> 4) * 0x9E3779B97F4A7C15ull) >> 58);
}

/* --- 1.x: five columns of whole varints ----------------------------------- */

/* The records (time starts at 1000, address 0):
 *   ALLOC   EXACT ALIGN16  dt 10   zz(0x100) = 512 (2 bytes)   24
 *   CONTEXT op 2, region 2, dtype 0, shape 0
 *   ALLOC   USABLE16       dt 5    zz(0x40) = 128 (2 bytes)    20 -> 24
 *   FREE_AGED              dt 1    age 2 (0x1000)
 *   ALLOC_REUSED EXACT     dt 300 (2 bytes)  slot of 0x1000    48
 *   REALLOC                dt 2    zz(0x40), zz(1), 100, zz(4)
 *   FREE                   dt 0    zz(0)
 */
static void v1_columns(buf_t *raw, uint8_t bad_tag)
{
	uint8_t tags[] = {0xC1, 0x09, 0x21, 0x0C, 0x8A, 0x08, bad_tag ? bad_tag : 0x02};
	uint8_t time[] = {10, 5, 1, 0xAC, 0x02, 2, 0};
	uint8_t addr[] = {0x80, 0x04, 0x80, 0x01, 2, (uint8_t)slot_of(0x1000), 0x80, 0x01, 2, 0};
	uint8_t size[] = {24, 20, 48, 100, 8};
	uint8_t misc[] = {2, 2, 0, 0};
	const uint8_t *parts[5] = {tags, time, addr, size, misc};
	uint64_t lens[5] = {sizeof(tags), sizeof(time), sizeof(addr), sizeof(size), sizeof(misc)};

	put_defs(raw);
	put_chunk(raw, MP_SEC_CHUNK, 1000, parts, lens, 5);
	put_byte(raw, MP_SEC_HORIZON);
	put_v(raw, UINT64_MAX);
}

static void test_v1_capture_reads(void **state)
{
	static const want_t want[] = {
		{MP_EV_ALLOC, 1010, 0x1000, 24, 24, 0}, {MP_EV_ALLOC, 1015, 0x1040, 20, 24, 0},
		{MP_EV_FREE, 1016, 0x1000, 0, 0, 0},    {MP_EV_ALLOC, 1316, 0x1000, 48, 48, 0},
		{MP_EV_FREE, 1318, 0x1040, 0, 0, 1},    {MP_EV_ALLOC, 1318, 0x1041, 100, 104, 1},
		{MP_EV_FREE, 1318, 0x1041, 0, 0, 0},
	};
	char *path = mp_test_tmpfile("v1.memprof");
	static buf_t raw;
	mp_event_t ev[16];
	mp_capture_t *cap;
	mp_diag_t diag;
	size_t n;
	int rc;

	(void)state;
	raw.n = 0;
	v1_columns(&raw, 0);
	write_capture(path, 1, &raw, 7);
	n = read_heap(path, ev, 16, &rc, &diag);
	assert_int_equal(rc, 0);
	check_events(ev, n, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(ev[1].op, 2);
	assert_int_equal(ev[1].region, 2);
	assert_int_equal(ev[0].op, 0);
	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	assert_int_equal(mp_capture_header(cap)->version_major, 1);
	mp_capture_close(cap);

	/* kind 13 did not exist in 1.x: corruption, not an ALLOC_REFREED */
	raw.n = 0;
	v1_columns(&raw, 0x0D);
	write_capture(path, 1, &raw, 7);
	n = read_heap(path, ev, 16, &rc, &diag);
	assert_int_equal(rc, MP_ECORRUPT);
	assert_int_equal(n, 0);
	assert_non_null(strstr(diag.text, "chunk columns are inconsistent"));

	/* a 1.x chunk in a 2.0 file */
	raw.n = 0;
	v1_columns(&raw, 0);
	write_capture(path, 2, &raw, 7);
	n = read_heap(path, ev, 16, &rc, &diag);
	assert_int_equal(rc, MP_ECORRUPT);
	assert_non_null(strstr(diag.text, "a 1.x chunk section in a 2.x capture"));
	unlink(path);
	free(path);
}

/* --- 2.0 by hand: heads, tails, IDX, ALLOC_REFREED ------------------------ */

/* From time 0, address 0:
 *   ALLOC  EXACT ALIGN16 dt 200 (head 0xC8, tail 0x01)  zz(0x200) = 1024 (0x80, 0x08)  24
 *   ALLOC  EXACT ALIGN16 dt 1   zz(0x100) = 512 (0x80, 0x04)  1000 (0xE8, 0x07)
 *   FREE   ALIGN16       dt 1   zz(-0x100) = 511 (0xFF, 0x03)  -> 0x2000
 *   FREE_AGED            dt 1   age 1 (0x3000)
 *   ALLOC_REFREED EXACT  dt 1   age 2: the free before the last (0x2000)  16
 *   ALLOC_REFREED EXACT  dt 1   age `age`                                  16
 */
static int v2_capture(const char *path, uint8_t age, mp_event_t *ev, mp_diag_t *diag, int *rc)
{
	uint8_t tags[] = {0xC1, 0xC1, 0x42, 0x0C, 0x8D, 0x8D};
	uint8_t th[] = {0xC8, 1, 1, 1, 1, 1}, tt[] = {0x01};
	uint8_t ah[] = {0x80, 0x80, 0xFF}, at[] = {0x08, 0x04, 0x03};
	uint8_t ih[] = {1, 2, age}, it[] = {0};
	uint8_t sh[] = {24, 0xE8, 16, 16}, st[] = {0x07};
	const uint8_t *parts[MP_PARTS] = {tags, th, tt, ah, at, ih, it, sh, st, tt, tt};
	uint64_t lens[MP_PARTS] = {sizeof(tags), sizeof(th), sizeof(tt), sizeof(ah), sizeof(at), sizeof(ih), 0,
				   sizeof(sh), sizeof(st), 0, 0};
	static buf_t raw;

	raw.n = 0;
	put_defs(&raw);
	put_chunk(&raw, MP_SEC_CHUNK2, 0, parts, lens, MP_PARTS);
	put_byte(&raw, MP_SEC_HORIZON);
	put_v(&raw, UINT64_MAX);
	write_capture(path, 2, &raw, 6);
	return (int)read_heap(path, ev, 16, rc, diag);
}

static void test_v2_by_hand(void **state)
{
	static const want_t want[] = {
		{MP_EV_ALLOC, 200, 0x2000, 24, 24, 0},  {MP_EV_ALLOC, 201, 0x3000, 1000, 1000, 0},
		{MP_EV_FREE, 202, 0x2000, 0, 0, 0},     {MP_EV_FREE, 203, 0x3000, 0, 0, 0},
		{MP_EV_ALLOC, 204, 0x2000, 16, 16, 0},  {MP_EV_ALLOC, 205, 0x3000, 16, 16, 0},
	};
	char *path = mp_test_tmpfile("v2.memprof");
	mp_event_t ev[16];
	mp_diag_t diag;
	int rc, n;

	(void)state;
	n = v2_capture(path, 1, ev, &diag, &rc); /* age 1: the latest free, 0x3000 */
	assert_int_equal(rc, 0);
	check_events(ev, (size_t)n, want, sizeof(want) / sizeof(want[0]));
	/* age 3: only two frees so far */
	n = v2_capture(path, 3, ev, &diag, &rc);
	assert_int_equal(rc, MP_ECORRUPT);
	assert_true(n >= 4 && n <= 5); /* the records before it (the one-event path drops the last) */
	assert_non_null(strstr(diag.text, "freed-address age"));
	assert_non_null(strstr(diag.text, "record 5"));
	/* age 0 */
	n = v2_capture(path, 0, ev, &diag, &rc);
	assert_int_equal(rc, MP_ECORRUPT);
	assert_non_null(strstr(diag.text, "freed-address age"));
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1_capture_reads),
		cmocka_unit_test(test_v2_by_hand),
	};
	return cmocka_run_group_tests_name("layout", tests, NULL, NULL);
}
