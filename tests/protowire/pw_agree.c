/* pw_agree.c - see pw_agree.h. */
#include "pw_agree.h"

#include <memprof/protowire.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_DEPTH 8

typedef struct walk {
	const uint8_t *data; /* the input, as the memory face sees it */
	mp_pw_window_t win;  /* the same bytes in a file */
	mp_diag_t dm, df;    /* each face's diag */
	pw_agree_stats_t *st;
	char *why;
	size_t why_size;
} walk_t;

static int differ(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int differ(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -1;
}

static int same_field(const mp_pw_field_t *a, const mp_pw_field_t *b)
{
	return a->num == b->num && a->wt == b->wt && a->val == b->val && a->off == b->off && a->start == b->start &&
	       a->len == b->len;
}

/* A payload: in place for the memory face, through the window for the file
 * face (which refuses what exceeds its largest window, and only that). */
static int same_payload(walk_t *k, const mp_pw_field_t *a, const mp_pw_field_t *b)
{
	const uint8_t *p;
	int rc;

	if (a->data != k->data + a->start || b->data)
		return differ(k->why, k->why_size, "field at %llu: payload pointers", (unsigned long long)a->off);
	rc = mp_pw_window_get(&k->win, b->start, (size_t)b->len, &p);
	if (rc == MP_ELIMIT && b->len > k->win.max_cap)
		return 0;
	if (rc < 0 || (b->len && memcmp(p, a->data, (size_t)a->len)))
		return differ(k->why, k->why_size, "field at %llu: payload read back %d", (unsigned long long)a->off,
			      rc);
	return 0;
}

static int walk(walk_t *k, mp_pw_cursor_t *mc, mp_pw_fcursor_t *fc, int depth)
{
	mp_pw_field_t a, b;

	for (;;) {
		uint64_t pos = fc->pos;
		int ra = mp_pw_next(mc, &a), rb = mp_pw_fnext(fc, &b);

		if (ra != rb)
			return differ(k->why, k->why_size, "at %llu: memory face %d, file face %d",
				      (unsigned long long)pos, ra, rb);
		if (ra < 0) {
			/* the same error, at the field that failed */
			if (k->dm.code != ra || k->df.code != rb || k->dm.offset != k->df.offset ||
			    k->dm.offset != (int64_t)pos || strcmp(k->dm.text, k->df.text))
				return differ(k->why, k->why_size, "at %llu: '%s' (%lld) vs '%s' (%lld)",
					      (unsigned long long)pos, k->dm.text, (long long)k->dm.offset,
					      k->df.text, (long long)k->df.offset);
			k->st->errors++;
			return 0;
		}
		if (ra == 0)
			return pos == fc->end ? 0 : differ(k->why, k->why_size, "ended at %llu", (unsigned long long)pos);
		if (!same_field(&a, &b) || a.off != pos)
			return differ(k->why, k->why_size, "field at %llu: %u/%u/%llu vs %u/%u/%llu",
				      (unsigned long long)pos, a.num, a.wt, (unsigned long long)a.val, b.num, b.wt,
				      (unsigned long long)b.val);
		if ((uint64_t)(mc->p - k->data) != fc->pos)
			return differ(k->why, k->why_size, "after the field at %llu: positions",
				      (unsigned long long)pos);
		k->st->fields++;
		if (a.wt != MP_PW_LEN)
			continue;
		if (same_payload(k, &a, &b) < 0)
			return -1;
		if (depth < MAX_DEPTH) {
			/* a string is not a message: its error only has to agree */
			mp_pw_cursor_t ms;
			mp_pw_fcursor_t fs;

			mp_pw_cursor_sub(&ms, mc, &a, "payload");
			mp_pw_fcursor_sub(&fs, fc, &b, "payload");
			if (walk(k, &ms, &fs, depth + 1) < 0)
				return -1;
		}
	}
}

int pw_agree(const uint8_t *data, size_t size, size_t cap, size_t max_cap, pw_agree_stats_t *st, char *why,
	     size_t why_size)
{
	walk_t k = {.data = data, .st = st, .why = why, .why_size = why_size};
	mp_pw_cursor_t mc;
	mp_pw_fcursor_t fc;
	int fd = memfd_create("pw-agree", 0), rc = -1;

	if (fd < 0)
		return differ(why, why_size, "memfd_create failed");
	if ((size && write(fd, data, size) != (ssize_t)size) || mp_pw_window_init(&k.win, fd, size, cap, max_cap) < 0) {
		close(fd);
		return differ(why, why_size, "cannot set the file face up");
	}
	k.win.diag = &k.df;
	mp_pw_cursor_init(&mc, data, size, 0, "message", &k.dm);
	mp_pw_fcursor_init(&fc, &k.win, 0, size, "message");
	rc = walk(&k, &mc, &fc, 0);
	mp_pw_window_free(&k.win);
	close(fd);
	return rc;
}

/* Append f to b as the encoder writes such a field. */
static void put_field(mp_pw_buf_t *b, const mp_pw_field_t *f)
{
	uint8_t le[8];

	switch (f->wt) {
	case MP_PW_VARINT:
		mp_pw_put_uint(b, f->num, f->val);
		break;
	case MP_PW_LEN:
		mp_pw_put_bytes(b, f->num, f->data, (size_t)f->len);
		break;
	default: /* I64, I32: the raw bits, little-endian */
		for (int i = 0; i < 8; i++)
			le[i] = (uint8_t)(f->val >> (8 * i));
		mp_pw_put_tag(b, f->num, (int)f->wt);
		mp_pw_put_raw(b, le, f->wt == MP_PW_I64 ? 8 : 4);
		break;
	}
}

/* Bytes put_field writes for f. */
static size_t field_size(const mp_pw_field_t *f)
{
	size_t n = mp_pw_varint_size((uint64_t)f->num << 3);

	if (f->wt == MP_PW_VARINT)
		return n + mp_pw_varint_size(f->val);
	if (f->wt == MP_PW_LEN)
		return n + mp_pw_varint_size(f->len) + (size_t)f->len;
	return n + (f->wt == MP_PW_I64 ? 8 : 4);
}

int pw_roundtrip(const uint8_t *data, size_t size, char *why, size_t why_size)
{
	mp_pw_cursor_t in, out;
	mp_pw_field_t a, b;
	mp_pw_buf_t buf = {0};
	int rc = 0;

	mp_pw_cursor_init(&in, data, size, 0, "input", NULL);
	while (mp_pw_next(&in, &a) > 0) {
		size_t before = buf.len;

		put_field(&buf, &a);
		if (!buf.oom && buf.len - before != field_size(&a)) {
			rc = differ(why, why_size, "field at %llu written in %zu bytes, %zu expected",
				    (unsigned long long)a.off, buf.len - before, field_size(&a));
			break;
		}
	}
	if (buf.oom)
		rc = differ(why, why_size, "out of memory");
	mp_pw_cursor_init(&in, data, size, 0, "input", NULL);
	mp_pw_cursor_init(&out, buf.data, buf.len, 0, "re-encoded", NULL);
	while (rc == 0 && mp_pw_next(&in, &a) > 0) {
		if (mp_pw_next(&out, &b) <= 0 || a.num != b.num || a.wt != b.wt || a.val != b.val || a.len != b.len ||
		    (a.len && memcmp(a.data, b.data, (size_t)a.len)))
			rc = differ(why, why_size, "field at %llu does not come back", (unsigned long long)a.off);
	}
	if (rc == 0 && mp_pw_next(&out, &b) != 0)
		rc = differ(why, why_size, "a field too many comes back");
	mp_pw_buf_free(&buf);
	return rc;
}
