/* test_protowire.c - memprof/protowire.h: fields and varint boundaries read
 * by both faces, every error with its code, offset and sentence, the file
 * window (refills, growth, limits, retargeting), the encoder; and the
 * property the fuzz target checks (pw_agree) on every truncation and many
 * single-byte changes of a nested message. */
#include "test_common.h"

#include <memprof/protowire.h>

#include "pw_agree.h"

#include <sys/mman.h>

/* A memfd holding data[0, n). */
static int file_of(const uint8_t *data, size_t n)
{
	int fd = memfd_create("test-protowire", 0);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	return fd;
}

/* Both faces agree on data, with three window sizes. */
static void agree(const uint8_t *data, size_t n)
{
	static const size_t caps[] = {MP_PW_HEAD_MAX, 21, 64};
	pw_agree_stats_t st = {0, 0};
	char why[512] = "";

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if (pw_agree(data, n, caps[i], 2 * caps[i], &st, why, sizeof(why)) < 0)
			fail_msg("faces disagree (window %zu): %s", caps[i], why);
	}
	if (pw_roundtrip(data, n, why, sizeof(why)) < 0)
		fail_msg("round trip: %s", why);
}

/* 1: 150; 2: "hi"; 3: fixed32 1; 4: fixed64; 5: 2^64 - 1. */
static const uint8_t msg[] = {
	0x08, 0x96, 0x01, 0x12, 0x02, 'h',  'i',  0x1d, 1,    0,    0,    0,    0x21, 8,    7,    6,    5,    4,
	3,    2,    1,    0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
};

static void check_msg_fields(const mp_pw_field_t *f, uint64_t base)
{
	assert_int_equal(f[0].num, 1);
	assert_int_equal(f[0].wt, MP_PW_VARINT);
	assert_int_equal(f[0].val, 150);
	assert_int_equal(f[0].off, base);
	assert_int_equal(f[1].num, 2);
	assert_int_equal(f[1].wt, MP_PW_LEN);
	assert_int_equal(f[1].start, base + 5);
	assert_int_equal(f[1].len, 2);
	assert_int_equal(f[2].wt, MP_PW_I32);
	assert_int_equal(f[2].val, 1);
	assert_int_equal(f[3].wt, MP_PW_I64);
	assert_int_equal(f[3].val, 0x0102030405060708ull);
	assert_int_equal(f[3].off, base + 12);
	assert_int_equal(f[4].val, UINT64_MAX);
}

static void test_fields(void **state)
{
	mp_pw_field_t f[5], end;
	mp_pw_cursor_t c;
	mp_pw_fcursor_t fc;
	mp_pw_window_t w;
	int fd = file_of(msg, sizeof(msg));

	(void)state;
	/* memory: offsets from where the caller says the span starts */
	mp_pw_cursor_init(&c, msg, sizeof(msg), 100, "msg", NULL);
	for (int i = 0; i < 5; i++)
		assert_int_equal(mp_pw_next(&c, &f[i]), 1);
	end = f[1];
	assert_int_equal(mp_pw_next(&c, &end), 0);
	assert_null(end.data); /* nothing left over from a field */
	assert_int_equal(end.num + end.len + end.off, 0);
	check_msg_fields(f, 100);
	assert_memory_equal(f[1].data, "hi", 2);
	assert_null(f[0].data);
	/* file: the smallest window, refilled at every field */
	assert_int_equal(mp_pw_window_init(&w, fd, sizeof(msg), 1, 1), 0);
	assert_int_equal(w.cap, MP_PW_HEAD_MAX);
	mp_pw_fcursor_init(&fc, &w, 0, sizeof(msg), "msg");
	for (int i = 0; i < 5; i++)
		assert_int_equal(mp_pw_fnext(&fc, &f[i]), 1);
	end = f[1];
	assert_int_equal(mp_pw_fnext(&fc, &end), 0);
	assert_int_equal(end.num + end.len + end.off + end.start, 0);
	check_msg_fields(f, 0);
	assert_null(f[1].data);
	mp_pw_window_free(&w);
	close(fd);
	agree(msg, sizeof(msg));
}

static void test_varints(void **state)
{
	static const struct {
		uint8_t b[11];
		size_t n;
		int used;
		uint64_t v;
	} cases[] = {
		{{0x00}, 1, 1, 0},
		{{0x7f}, 1, 1, 127},
		{{0x80, 0x01}, 2, 2, 128},
		{{0xff, 0x7f}, 2, 2, 16383},
		{{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 10, 10, 1ull << 63},
		{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10, 10, UINT64_MAX},
		{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, 10, -1, 0},   /* above 2^64 */
		{{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 11, -1, 0}, /* 11 bytes */
		{{0x80}, 1, 0, 0},                                                            /* cut */
		{{0x80, 0x80, 0x80}, 3, 0, 0},
		{{0}, 0, 0, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int n = mp_pw_varint(cases[i].b, cases[i].n, &v);

		assert_int_equal(n, cases[i].used);
		if (n > 0) {
			mp_pw_buf_t b = {0};

			assert_int_equal(v, cases[i].v);
			/* the encoder writes the same bytes back, and says how many */
			mp_pw_put_varint(&b, v);
			assert_int_equal(b.len, (size_t)n);
			assert_int_equal(mp_pw_varint_size(v), (size_t)n);
			assert_memory_equal(b.data, cases[i].b, (size_t)n);
			mp_pw_buf_free(&b);
		}
	}
}

/* data must fail at offset off with code, its sentence containing text, in
 * both faces. */
static void fails(const uint8_t *data, size_t n, int code, int64_t off, const char *text)
{
	mp_pw_cursor_t c;
	mp_pw_field_t f;
	mp_diag_t d;
	int rc;

	mp_diag_clear(&d);
	mp_pw_cursor_init(&c, data, n, 0, "Msg", &d);
	while ((rc = mp_pw_next(&c, &f)) > 0)
		;
	assert_int_equal(rc, code);
	assert_int_equal(d.code, code);
	assert_int_equal(d.offset, off);
	if (!strstr(d.text, text) || strncmp(d.text, "Msg: ", 5))
		fail_msg("'%s' lacks '%s'", d.text, text);
	/* a failed cursor stays on the bad field */
	assert_int_equal(mp_pw_next(&c, &f), code);
	agree(data, n);
}

static void test_errors(void **state)
{
	static const uint8_t len_past[] = {0x12, 0x05, 'h'};
	static const uint8_t long_value[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
	static const uint8_t long_tag[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
	static const uint8_t group[] = {0x08, 0x01, 0x0b};
	static const uint8_t type7[] = {0x0f};
	static const uint8_t number0[] = {0x00, 0x01};
	static const uint8_t number_big[] = {0x80, 0x80, 0x80, 0x80, 0x10, 0x00};
	static const uint8_t tag_cut[] = {0x08, 0x01, 0x80};
	static const uint8_t value_cut[] = {0x08, 0x80};
	static const uint8_t fixed32_cut[] = {0x1d, 1, 2};
	static const uint8_t fixed64_cut[] = {0x08, 0x00, 0x21, 1, 2, 3, 4, 5, 6, 7};
	static const uint8_t len_cut[] = {0x12, 0x80};
	static const uint8_t number_max[] = {0xf8, 0xff, 0xff, 0xff, 0x0f, 0x2a};
	mp_pw_cursor_t c;
	mp_pw_field_t f;

	(void)state;
	fails(len_past, sizeof(len_past), MP_ETRUNCATED, 0, "field 2 announces 5 bytes but only 1 remain");
	fails(long_value, sizeof(long_value), MP_ECORRUPT, 0, "longer than 10 bytes");
	fails(long_tag, sizeof(long_tag), MP_ECORRUPT, 0, "longer than 10 bytes");
	fails(group, sizeof(group), MP_ECORRUPT, 2, "field 1 has wire type 3");
	fails(type7, sizeof(type7), MP_ECORRUPT, 0, "field 1 has wire type 7");
	fails(number0, sizeof(number0), MP_ECORRUPT, 0, "invalid field number 0");
	fails(number_big, sizeof(number_big), MP_ECORRUPT, 0, "invalid field number 536870912");
	fails(tag_cut, sizeof(tag_cut), MP_ETRUNCATED, 2, "ends inside a field's tag");
	fails(value_cut, sizeof(value_cut), MP_ETRUNCATED, 0, "field 1: the message ends inside its varint");
	fails(fixed32_cut, sizeof(fixed32_cut), MP_ETRUNCATED, 0, "field 3: the message ends inside its 4-byte value");
	fails(fixed64_cut, sizeof(fixed64_cut), MP_ETRUNCATED, 2, "field 4: the message ends inside its 8-byte value");
	fails(len_cut, sizeof(len_cut), MP_ETRUNCATED, 0, "field 2: the message ends inside its varint");
	/* the largest field number is a field */
	mp_pw_cursor_init(&c, number_max, sizeof(number_max), 0, "Msg", NULL);
	assert_int_equal(mp_pw_next(&c, &f), 1);
	assert_int_equal(f.num, MP_PW_MAX_NUMBER);
	assert_int_equal(f.val, 42);
	agree(number_max, sizeof(number_max));
}

/* An error inside a payload is reported by the payload's cursor, at the
 * offset in the whole input, under the payload's name. */
static void test_nested_error(void **state)
{
	static const uint8_t outer[] = {0x08, 0x01, 0x0a, 0x04, 0x08, 0x01, 0x12, 0x09};
	mp_pw_cursor_t c, sub;
	mp_pw_field_t f, g;
	mp_diag_t d;

	(void)state;
	mp_pw_cursor_init(&c, outer, sizeof(outer), 1000, "Outer", &d);
	assert_int_equal(mp_pw_next(&c, &f), 1);
	assert_int_equal(mp_pw_next(&c, &f), 1);
	assert_int_equal(mp_pw_next(&c, &g), 0);
	mp_pw_cursor_sub(&sub, &c, &f, "Inner");
	assert_int_equal(mp_pw_next(&sub, &g), 1);
	assert_int_equal(g.off, 1004);
	assert_int_equal(mp_pw_next(&sub, &g), MP_ETRUNCATED);
	assert_int_equal(d.offset, 1006);
	assert_string_equal(d.text, "Inner: field 2 announces 9 bytes but only 0 remain in the message");
	agree(outer, sizeof(outer));
}

static void test_window(void **state)
{
	mp_pw_buf_t b = {0}, b2 = {0};
	mp_pw_window_t w;
	mp_pw_fcursor_t c;
	mp_pw_field_t f;
	mp_diag_t d;
	const uint8_t *p;
	char *big = malloc(50000);
	int fd, fd2;

	(void)state;
	memset(big, 'x', 50000);
	big[49999] = 'y';
	mp_pw_put_uint(&b, 1, 7);
	mp_pw_put_bytes(&b, 2, big, 50000);
	for (uint32_t i = 0; i < 1000; i++)
		mp_pw_put_uint(&b, 3, i * 1000003ull);
	mp_pw_put_uint(&b, 4, 1); /* two bytes */
	fd = file_of(b.data, b.len);
	assert_int_equal(mp_pw_window_init(&w, fd, b.len, 64, 51000), 0);
	w.diag = &d;
	mp_pw_fcursor_init(&c, &w, 0, b.len, "Big");
	assert_int_equal(mp_pw_fnext(&c, &f), 1);
	assert_int_equal(mp_pw_fnext(&c, &f), 1);
	assert_int_equal(f.len, 50000);
	/* the string is skipped unread: the window holds only the head */
	assert_true(w.boff + w.blen < f.start + 1000);
	/* reading it grows the window, up to its largest size */
	assert_int_equal(mp_pw_window_get(&w, f.start, 50000, &p), 0);
	assert_int_equal(p[49999], 'y');
	assert_int_equal(w.cap, 51000);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(mp_pw_fnext(&c, &f), 1);
		assert_int_equal(f.val, i * 1000003ull);
	}
	assert_int_equal(mp_pw_fnext(&c, &f), 1);
	assert_int_equal(mp_pw_fnext(&c, &f), 0);
	/* limits: beyond the largest window, past the end of the file */
	assert_int_equal(mp_pw_window_get(&w, 0, 51001, &p), MP_ELIMIT);
	assert_int_equal(d.offset, 0);
	assert_int_equal(mp_pw_window_get(&w, b.len - 1, 2, &p), MP_ETRUNCATED);
	assert_non_null(strstr(d.text, "past the end of the file"));
	/* a message said to run past the end of the file: the window refuses
	 * to read a head there (callers nest cursors inside the file) */
	mp_pw_fcursor_init(&c, &w, b.len - 2, b.len + 10, "Big");
	assert_int_equal(mp_pw_fnext(&c, &f), MP_ETRUNCATED);
	assert_non_null(strstr(d.text, "past the end of the file"));
	mp_pw_fcursor_init(&c, &w, b.len - 2, b.len, "Big");
	assert_int_equal(mp_pw_fnext(&c, &f), 1);
	assert_int_equal(f.num, 4);
	/* another file through the same window: nothing of the first is used */
	mp_pw_put_uint(&b2, 9, 99);
	fd2 = file_of(b2.data, b2.len);
	assert_int_equal(mp_pw_window_get(&w, 0, 2, &p), 0);
	mp_pw_window_retarget(&w, fd2, b2.len);
	mp_pw_fcursor_init(&c, &w, 0, b2.len, "Small");
	assert_int_equal(mp_pw_fnext(&c, &f), 1);
	assert_int_equal(f.num, 9);
	assert_int_equal(f.val, 99);
	mp_pw_window_free(&w);
	close(fd);
	close(fd2);
	mp_pw_buf_free(&b);
	mp_pw_buf_free(&b2);
	free(big);
}

static void test_encoder(void **state)
{
	mp_pw_buf_t inner = {0}, outer = {0}, bad = {.oom = 1};
	mp_pw_cursor_t c, sub;
	mp_pw_field_t f;
	double d;

	(void)state;
	mp_pw_put_str(&inner, 2, "name");
	mp_pw_put_uint(&inner, 1, (uint64_t)-5); /* int64 -5: ten bytes */
	mp_pw_put_double(&outer, 2, 0.25);
	mp_pw_put_msg(&outer, 3, &inner);
	mp_pw_put_uint(&outer, MP_PW_MAX_NUMBER, 1);
	assert_false(outer.oom);
	mp_pw_cursor_init(&c, outer.data, outer.len, 0, "Outer", NULL);
	assert_int_equal(mp_pw_next(&c, &f), 1);
	assert_int_equal(f.wt, MP_PW_I64);
	memcpy(&d, &f.val, 8);
	assert_true(d == 0.25);
	assert_int_equal(mp_pw_next(&c, &f), 1);
	assert_int_equal(f.len, inner.len);
	mp_pw_cursor_sub(&sub, &c, &f, "Inner");
	assert_int_equal(mp_pw_next(&sub, &f), 1);
	assert_int_equal(f.len, 4);
	assert_memory_equal(f.data, "name", 4);
	assert_int_equal(mp_pw_next(&sub, &f), 1);
	assert_int_equal((int64_t)f.val, -5);
	assert_int_equal(mp_pw_next(&sub, &f), 0);
	assert_int_equal(mp_pw_next(&c, &f), 1);
	assert_int_equal(f.num, MP_PW_MAX_NUMBER);
	assert_int_equal(mp_pw_next(&c, &f), 0);
	agree(outer.data, outer.len);
	/* a failed part fails the whole, and nothing more is written */
	mp_pw_put_msg(&outer, 4, &bad);
	assert_true(outer.oom);
	mp_pw_buf_free(&inner);
	mp_pw_buf_free(&outer);
	assert_null(outer.data);
	assert_int_equal(outer.len, 0);
}

/* What the fuzz target checks, on every truncation and on every byte
 * replaced by a few telling values (high bit, wire types, lengths). */
static void test_agree_mutations(void **state)
{
	static const uint8_t values[] = {0x00, 0x01, 0x02, 0x07, 0x0a, 0x7f, 0x80, 0xff};
	mp_pw_buf_t a = {0}, b = {0}, top = {0};
	uint8_t *m;

	(void)state;
	mp_pw_put_str(&a, 2, "/host:CPU");
	mp_pw_put_uint(&a, 1, 300);
	mp_pw_put_double(&a, 3, -1.5);
	mp_pw_put_msg(&b, 4, &a);
	mp_pw_put_msg(&b, 4, &a);
	mp_pw_put_uint(&b, 5, UINT64_MAX);
	mp_pw_put_msg(&top, 1, &b);
	mp_pw_put_str(&top, 4, "hostname");
	m = malloc(top.len);
	for (size_t n = 0; n <= top.len; n++)
		agree(top.data, n);
	for (size_t i = 0; i < top.len; i++) {
		for (size_t k = 0; k < sizeof(values); k++) {
			memcpy(m, top.data, top.len);
			m[i] = values[k];
			agree(m, top.len);
		}
	}
	free(m);
	mp_pw_buf_free(&a);
	mp_pw_buf_free(&b);
	mp_pw_buf_free(&top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),        cmocka_unit_test(test_varints),
		cmocka_unit_test(test_errors),        cmocka_unit_test(test_nested_error),
		cmocka_unit_test(test_window),        cmocka_unit_test(test_encoder),
		cmocka_unit_test(test_agree_mutations),
	};
	return cmocka_run_group_tests_name("protowire", tests, NULL, NULL);
}
