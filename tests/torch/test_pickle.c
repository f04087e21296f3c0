/* test_pickle.c - memprof's pickle reader on hand-built opcode streams:
 * each value kind, memo sharing, framing, the refused opcodes and every
 * error with its offset, deep nesting and a list that contains itself
 * (the sanitizer build checks that both are freed). The bytes come
 * through a reader that hands out 3 bytes at a time, so that every
 * opcode straddles a refill somewhere. */
#include "test_common.h"

#include <memprof/strtab.h>

#include <memprof/pickle.h>

typedef struct mem_io {
	const uint8_t *p;
	size_t n, pos, chunk;
} mem_io_t;

static long mem_read(void *io, uint8_t *buf, size_t size, mp_diag_t *diag)
{
	mem_io_t *m = io;
	size_t k = m->n - m->pos;

	(void)diag;
	if (k > m->chunk)
		k = m->chunk;
	if (k > size)
		k = size;
	memcpy(buf, m->p + m->pos, k);
	m->pos += k;
	return (long)k;
}

/* The handler: streams the top-level container, keeps what it is given. */
typedef struct rec {
	mp_pk_value_t items[16];
	const mp_pk_obj_t *objs[16];
	size_t n;
	int top_kind;
	int opens;
} rec_t;

static int r_open(void *ctx, const mp_pk_obj_t *parent, const mp_pk_value_t *key, const mp_pk_obj_t *alt,
		  mp_pk_obj_t *obj, mp_diag_t *diag)
{
	rec_t *r = ctx;

	(void)key, (void)alt, (void)diag;
	if (!parent && !r->opens++)
		obj->stream = 1;
	return 0;
}

static int r_item(void *ctx, mp_pk_obj_t *parent, const mp_pk_value_t *key, const mp_pk_value_t *value,
		  mp_diag_t *diag)
{
	rec_t *r = ctx;

	(void)key, (void)diag;
	if (!parent) {
		r->top_kind = value->kind;
		return 0;
	}
	if (r->n < 16) {
		r->objs[r->n] = value->kind == MP_PK_DICT ? value->u.obj : NULL;
		/* a dict's 'f' value: the object, to compare across items */
		if (value->kind == MP_PK_DICT && value->u.obj->n == 2)
			r->objs[r->n] = value->u.obj->items[1].u.obj;
		r->items[r->n++] = *value;
	}
	return 0;
}

static int run(const void *bytes, size_t n, rec_t *r, mp_strtab_t *t, mp_diag_t *diag)
{
	mem_io_t io = {bytes, n, 0, 3};
	mp_pk_handler_t h = {r, r_open, r_item};

	memset(r, 0, sizeof(*r));
	mp_diag_clear(diag);
	return mp_pickle_read(mem_read, &io, t, &h, diag);
}

#define RUN(lit, r, t, d) run(lit, sizeof(lit) - 1, r, t, d)

static void test_values(void **state)
{
	/* [1, -2, 4464, 2**40, -2**40, 1.5, True, None, 'x', b'yz'] streamed */
	static const char p[] = "\x80\x02]q\x00(K\x01J\xfe\xff\xff\xffMp\x11\x8a\x06\x00\x00\x00\x00\x00\x01"
				"\x8a\x06\x00\x00\x00\x00\x00\xffG\x3f\xf8\x00\x00\x00\x00\x00\x00\x88N"
				"\x8c\x01xC\x02yze.";
	mp_strtab_t t;
	mp_diag_t d;
	rec_t r;

	(void)state;
	mp_strtab_init(&t);
	assert_int_equal(RUN(p, &r, &t, &d), 0);
	assert_int_equal(r.n, 10);
	assert_int_equal(r.items[0].u.i, 1);
	assert_int_equal(r.items[1].u.i, -2);
	assert_int_equal(r.items[2].u.i, 4464);
	assert_int_equal(r.items[3].u.i, 1099511627776LL);
	assert_int_equal(r.items[4].u.i, -1099511627776LL);
	assert_int_equal(r.items[5].kind, MP_PK_FLOAT);
	assert_true(r.items[5].u.f == 1.5);
	assert_int_equal(r.items[6].kind, MP_PK_BOOL);
	assert_int_equal(r.items[6].u.i, 1);
	assert_int_equal(r.items[7].kind, MP_PK_NONE);
	assert_string_equal(mp_strtab_get(&t, r.items[8].u.str), "x");
	assert_int_equal(r.items[9].kind, MP_PK_BYTES);
	assert_string_equal(mp_strtab_get(&t, r.items[9].u.str), "yz");
	assert_int_equal(r.top_kind, MP_PK_LIST);
	mp_strtab_free(&t);
}

static void test_memo_and_frames(void **state)
{
	/* protocol 4 with a FRAME: [{'f': L}, {'f': L}] where L = [7] is one
	 * object, the second time through BINGET */
	static const char p[] = "\x80\x04\x95\x1c\x00\x00\x00\x00\x00\x00\x00]\x94(}\x94\x8c\x01""f\x94]\x94K\x07"
				"as}\x94h\x02h\x03se.";
	/* a list handed over (streamed), then referred to again */
	static const char gone[] = "\x80\x04]\x94]\x94K\x07" "aah\x01" "a.";
	mp_strtab_t t;
	mp_diag_t d;
	rec_t r;

	(void)state;
	mp_strtab_init(&t);
	assert_int_equal(RUN(p, &r, &t, &d), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.items[0].kind, MP_PK_DICT);
	assert_int_equal(r.items[1].kind, MP_PK_DICT);
	assert_non_null(r.objs[0]);
	assert_ptr_equal(r.objs[0], r.objs[1]); /* one list, shared through the memo */
	assert_int_equal(RUN(gone, &r, &t, &d), MP_EFORMAT);
	assert_non_null(strstr(d.text, "already read"));
	assert_int_equal(d.offset, 10);
	mp_strtab_free(&t);
}

static void expect(const char *bytes, size_t n, int code, int64_t offset, const char *says)
{
	mp_strtab_t t;
	mp_diag_t d;
	rec_t r;

	mp_strtab_init(&t);
	assert_int_equal(run(bytes, n, &r, &t, &d), code);
	assert_int_equal(d.offset, offset);
	if (!strstr(d.text, says))
		fail_msg("'%s' does not say '%s'", d.text, says);
	mp_strtab_free(&t);
}

#define EXPECT(lit, code, off, says) expect(lit, sizeof(lit) - 1, code, off, says)

static void test_errors(void **state)
{
	(void)state;
	EXPECT("\x80\x02" "cos\nsystem\n", MP_EFORMAT, 2, "GLOBAL (0x63) 'os system'");
	EXPECT("\x80\x02)R", MP_EFORMAT, 3, "REDUCE");
	EXPECT("\x80\x04\x93", MP_EFORMAT, 2, "STACK_GLOBAL");
	EXPECT("\x80\x02}b", MP_EFORMAT, 3, "BUILD");
	EXPECT("\x80\x02)\x81", MP_EFORMAT, 3, "NEWOBJ");
	EXPECT("I01\n.", MP_EFORMAT, 0, "protocol 0/1");
	EXPECT("\x80\x06N.", MP_EVERSION, 0, "protocol 6");
	EXPECT("\x80\x02h\x05", MP_EFORMAT, 2, "never stored");
	EXPECT("\x80\x02J\x01\x02", MP_ETRUNCATED, 2, "truncated");
	EXPECT("\x80\x02N", MP_ETRUNCATED, 3, "STOP");
	EXPECT("\x80\x02NNa", MP_EFORMAT, 4, "list");
	EXPECT("\x80\x02]N(Na", MP_EFORMAT, 6, "list");
	EXPECT("\x80\x02(N(Ne", MP_EFORMAT, 6, "list");
	EXPECT("\x80\x02.", MP_EFORMAT, 2, "STOP with nothing");
	EXPECT("\x80\x02\x8f", MP_EFORMAT, 2, "set");
}

/* Integers of every length LONG1 and LONG4 allow: those that fit int64
 * are INTs (however many bytes encode them), the others BIGINTs with
 * their sign, their uint64 value when they have one, their shortest
 * length. Python writes 2**64-1 (a frame line of Python 3.13 PyTorch) as
 * LONG1 9: ff ff ff ff ff ff ff ff 00. */
static void test_long_ints(void **state)
{
	static const char head[] = "\x80\x02](";
	static const char ints[] =
		"\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00"     /* 2**64-1 */
		"\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00"     /* 2**63 */
		"\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f"         /* 2**63-1: 8 bytes that fit */
		"\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80"         /* -2**63: fits */
		"\x8a\x09\xff\xff\xff\xff\xff\xff\xff\x7f\xff"     /* -2**63-1: does not */
		"\x8a\x00"                                         /* 0, no bytes */
		"\x8b\x03\x00\x00\x00\x01\x02\x83"                 /* LONG4 of 3 bytes: -8191487 */
		"\x8b\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00" /* LONG4 10: 2**64 */
		"\x8a\x0b\xfe\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"   /* -2 padded to 11 bytes */
		"\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01";    /* 2**64 */
	uint8_t p[sizeof(head) + sizeof(ints) + 2 * 257 + 16];
	size_t n = 0;
	mp_strtab_t t;
	mp_diag_t d;
	rec_t r;

	(void)state;
	memcpy(p, head, sizeof(head) - 1);
	n += sizeof(head) - 1;
	memcpy(p + n, ints, sizeof(ints) - 1);
	n += sizeof(ints) - 1;
	/* LONG1 of 255 bytes: 2**2032 (a BIGINT of 255 bytes), then -1 */
	p[n++] = 0x8a;
	p[n++] = 255;
	memset(p + n, 0, 254);
	p[n + 254] = 0x01;
	n += 255;
	p[n++] = 0x8a;
	p[n++] = 255;
	memset(p + n, 0xff, 255);
	n += 255;
	p[n++] = 'e';
	p[n++] = '.';
	assert_true(n <= sizeof(p));
	mp_strtab_init(&t);
	assert_int_equal(run(p, n, &r, &t, &d), 0);
	assert_int_equal(r.n, 12);
	assert_int_equal(r.items[0].kind, MP_PK_BIGINT);
	assert_false(r.items[0].big_neg);
	assert_true(r.items[0].big_u64);
	assert_true(r.items[0].u.u == UINT64_MAX);
	assert_int_equal(r.items[0].big_len, 9);
	assert_int_equal(r.items[1].kind, MP_PK_BIGINT);
	assert_true(r.items[1].big_u64);
	assert_true(r.items[1].u.u == (uint64_t)1 << 63);
	assert_int_equal(r.items[2].kind, MP_PK_INT);
	assert_true(r.items[2].u.i == INT64_MAX);
	assert_int_equal(r.items[3].kind, MP_PK_INT);
	assert_true(r.items[3].u.i == INT64_MIN);
	assert_int_equal(r.items[4].kind, MP_PK_BIGINT);
	assert_true(r.items[4].big_neg);
	assert_false(r.items[4].big_u64);
	assert_int_equal(r.items[4].big_len, 9);
	assert_int_equal(r.items[5].kind, MP_PK_INT);
	assert_int_equal(r.items[5].u.i, 0);
	assert_int_equal(r.items[6].kind, MP_PK_INT);
	assert_int_equal(r.items[6].u.i, -8191487);
	assert_int_equal(r.items[7].kind, MP_PK_BIGINT); /* 2**64 in 10 bytes: its shortest is 9 */
	assert_false(r.items[7].big_neg);
	assert_false(r.items[7].big_u64);
	assert_int_equal(r.items[7].big_len, 9);
	assert_int_equal(r.items[8].kind, MP_PK_INT);
	assert_int_equal(r.items[8].u.i, -2);
	assert_int_equal(r.items[9].kind, MP_PK_BIGINT);
	assert_false(r.items[9].big_u64);
	assert_int_equal(r.items[9].big_len, 9);
	assert_int_equal(r.items[10].kind, MP_PK_BIGINT);
	assert_false(r.items[10].big_neg);
	assert_false(r.items[10].big_u64);
	assert_int_equal(r.items[10].big_len, 255);
	assert_int_equal(r.items[11].kind, MP_PK_INT);
	assert_int_equal(r.items[11].u.i, -1);
	mp_strtab_free(&t);
}

/* A BIGINT through the memo (BINPUT/BINGET, MEMOIZE) and as a dict key
 * and value of a streamed dict: kept whole in its 16 bytes. */
static void test_long_memo(void **state)
{
	static const char put[] = "\x80\x02](\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00q\x01h\x01h\x01" "e.";
	static const char memoize[] = "\x80\x04](\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00\x94h\x00" "e.";
	static const char dict[] = "\x80\x04}(\x8a\x09\xff\xff\xff\xff\xff\xff\xff\x7f\xff\x94h\x00u.";
	mp_strtab_t t;
	mp_diag_t d;
	rec_t r;

	(void)state;
	mp_strtab_init(&t);
	assert_int_equal(RUN(put, &r, &t, &d), 0);
	assert_int_equal(r.n, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(r.items[i].kind, MP_PK_BIGINT);
		assert_true(r.items[i].big_u64);
		assert_true(r.items[i].u.u == UINT64_MAX);
		assert_int_equal(r.items[i].big_len, 9);
	}
	assert_int_equal(RUN(memoize, &r, &t, &d), 0);
	assert_int_equal(r.n, 2);
	assert_true(r.items[1].kind == MP_PK_BIGINT && r.items[1].u.u == (uint64_t)1 << 63);
	assert_int_equal(RUN(dict, &r, &t, &d), 0); /* {-2**63-1: -2**63-1} */
	assert_int_equal(r.n, 1);
	assert_int_equal(r.items[0].kind, MP_PK_BIGINT);
	assert_true(r.items[0].big_neg);
	assert_int_equal(r.top_kind, MP_PK_DICT);
	mp_strtab_free(&t);
}

/* LONG4's bounds: a length past the end of the file, over memprof's
 * 1 MiB, negative; and exactly 1 MiB, which reads. */
static void test_long_bounds(void **state)
{
	size_t big = 1u << 20, n = 0;
	uint8_t *p = malloc(big + 16);
	mp_strtab_t t;
	mp_diag_t d;
	rec_t r;

	(void)state;
	EXPECT("\x80\x02\x8b\x64\x00\x00\x00\x01\x02\x03", MP_ETRUNCATED, 2, "truncated");
	EXPECT("\x80\x02N\x8a\x09\xff\xff\xff", MP_ETRUNCATED, 3, "truncated");
	EXPECT("\x80\x02\x8b\x01\x00\x10\x00", MP_ELIMIT, 2, "an integer of 1048577 bytes");
	EXPECT("\x80\x02\x8b\xff\xff\xff\xff", MP_EFORMAT, 2, "negative length (-1)");
	assert_non_null(p);
	p[n++] = 0x80;
	p[n++] = 2;
	p[n++] = 0x8b;
	p[n++] = 0;
	p[n++] = 0;
	p[n++] = 0x10;
	p[n++] = 0;
	memset(p + n, 0x55, big);
	n += big;
	p[n++] = '.';
	mp_strtab_init(&t);
	assert_int_equal(run(p, n, &r, &t, &d), 0);
	assert_int_equal(r.top_kind, MP_PK_BIGINT);
	mp_strtab_free(&t);
	free(p);
}

static void test_deep_and_cycle(void **state)
{
	enum { DEPTH = 100000 };
	char *p = malloc(2 + DEPTH + (DEPTH - 1) + 1);
	/* a list appended to itself, then to the streamed top list */
	static const char cycle[] = "\x80\x04]\x94]\x94h\x01" "aa.";
	mp_strtab_t t;
	mp_diag_t d;
	size_t n = 0;
	rec_t r;

	(void)state;
	assert_non_null(p);
	p[n++] = '\x80';
	p[n++] = 2;
	for (int i = 0; i < DEPTH; i++)
		p[n++] = ']';
	for (int i = 0; i < DEPTH - 1; i++)
		p[n++] = 'a';
	p[n++] = '.';
	mp_strtab_init(&t);
	assert_int_equal(run(p, n, &r, &t, &d), 0);
	assert_int_equal(r.top_kind, MP_PK_LIST);
	assert_int_equal(RUN(cycle, &r, &t, &d), 0);
	mp_strtab_free(&t);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_memo_and_frames),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_long_ints),
		cmocka_unit_test(test_long_memo),
		cmocka_unit_test(test_long_bounds),
		cmocka_unit_test(test_deep_and_cycle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
