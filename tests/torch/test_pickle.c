/* test_pickle.c - memprof's pickle reader on hand-built opcode streams:
 * each value kind, memo sharing, framing, the refused opcodes and every
 * error with its offset, deep nesting and a list that contains itself
 * (the sanitizer build checks that both are freed). The bytes come
 * through a reader that hands out 3 bytes at a time, so that every
 * opcode straddles a refill somewhere. */
#include "test_common.h"

#include "../../src/importers/strtab.h"

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
	EXPECT("\x80\x02\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09.", MP_ELIMIT, 2, "64 bits");
	EXPECT("\x80\x02h\x05", MP_EFORMAT, 2, "never stored");
	EXPECT("\x80\x02J\x01\x02", MP_ETRUNCATED, 2, "truncated");
	EXPECT("\x80\x02N", MP_ETRUNCATED, 3, "STOP");
	EXPECT("\x80\x02NNa", MP_EFORMAT, 4, "list");
	EXPECT("\x80\x02]N(Na", MP_EFORMAT, 6, "list");
	EXPECT("\x80\x02(N(Ne", MP_EFORMAT, 6, "list");
	EXPECT("\x80\x02.", MP_EFORMAT, 2, "STOP with nothing");
	EXPECT("\x80\x02\x8f", MP_EFORMAT, 2, "set");
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
		cmocka_unit_test(test_deep_and_cycle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
