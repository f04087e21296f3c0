/* window.c - the file face of the wire decoder (see memprof/protowire.h):
 * a window of a file refilled with pread(), and a cursor that reads each
 * field's head through it, so a message of any size is walked in the
 * window's memory and a length-delimited field is skipped unread. */
#include <memprof/protowire.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mp_pw_window_init(mp_pw_window_t *w, int fd, uint64_t size, size_t cap, size_t max_cap)
{
	memset(w, 0, sizeof(*w));
	if (cap < MP_PW_HEAD_MAX)
		cap = MP_PW_HEAD_MAX; /* a field's head always fits */
	w->fd = fd;
	w->size = size;
	w->cap = cap;
	w->max_cap = max_cap < cap ? cap : max_cap;
	w->buf = malloc(cap);
	return w->buf ? 0 : MP_ENOMEM;
}

void mp_pw_window_free(mp_pw_window_t *w)
{
	free(w->buf);
	w->buf = NULL;
}

void mp_pw_window_retarget(mp_pw_window_t *w, int fd, uint64_t size)
{
	w->fd = fd;
	w->size = size;
	w->boff = 0;
	w->blen = 0;
}

/* Make buf hold at least n bytes (n <= max_cap checked by the caller). */
static int grow(mp_pw_window_t *w, size_t n)
{
	size_t nc = w->cap;
	uint8_t *nb;

	while (nc < n)
		nc *= 2;
	if (nc > w->max_cap)
		nc = w->max_cap;
	nb = realloc(w->buf, nc);
	if (!nb)
		return MP_ENOMEM;
	w->buf = nb;
	w->cap = nc;
	return 0;
}

int mp_pw_window_get(mp_pw_window_t *w, uint64_t off, size_t n, const uint8_t **out)
{
	size_t want, got = 0;
	int rc;

	if (off > w->size || n > w->size - off)
		return mp_diag_set(w->diag, MP_ETRUNCATED, (int64_t)off, -1,
				   "%zu bytes announced at offset %llu run past the end of the file (%llu bytes)", n,
				   (unsigned long long)off, (unsigned long long)w->size);
	if (off >= w->boff && off - w->boff <= w->blen && n <= w->blen - (off - w->boff)) {
		*out = w->buf + (off - w->boff);
		return 0;
	}
	if (n > w->max_cap)
		return mp_diag_set(w->diag, MP_ELIMIT, (int64_t)off, -1,
				   "a field of %zu bytes at offset %llu exceeds the %zu-byte limit", n,
				   (unsigned long long)off, w->max_cap);
	if (n > w->cap && (rc = grow(w, n)) < 0)
		return rc;
	/* Fill the whole window from off: the next reads are most likely
	 * just after this one. */
	want = w->cap;
	if (want > w->size - off)
		want = (size_t)(w->size - off);
	while (got < want) {
		ssize_t k = pread(w->fd, w->buf + got, want - got, (off_t)(off + got));

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return mp_diag_set(w->diag, -errno, (int64_t)(off + got), -1, "read failed: %s",
					   strerror(errno));
		}
		if (k == 0)
			return mp_diag_set(w->diag, MP_ETRUNCATED, (int64_t)(off + got), -1,
					   "the file shrank while being read");
		got += (size_t)k;
	}
	w->boff = off;
	w->blen = got;
	*out = w->buf;
	return 0;
}

int mp_pw_fnext(mp_pw_fcursor_t *c, mp_pw_field_t *f)
{
	static const mp_pw_field_t none;
	mp_pw_window_t *w = c->w;
	uint64_t room, rel;
	size_t avail;
	const uint8_t *p;
	int n;

	if (c->pos >= c->end) {
		*f = none;
		return 0;
	}
	room = c->end - c->pos;
	/* The head's bytes, or the message's last ones: the outcome is the
	 * memory face's on the whole message (see mp_pw_head). */
	avail = room < MP_PW_HEAD_MAX ? (size_t)room : MP_PW_HEAD_MAX;
	rel = c->pos - w->boff;
	if (c->pos >= w->boff && rel <= w->blen && avail <= w->blen - rel) {
		p = w->buf + rel;
	} else if ((n = mp_pw_window_get(w, c->pos, avail, &p)) < 0) {
		*f = none;
		return n;
	}
	n = mp_pw_head(p, avail, room, f);
	if (n < 0) {
		mp_pw_fail(w->diag, c->what, p, avail, room, c->pos);
		*f = none;
		return mp_pw_bad_code(n);
	}
	f->off = c->pos;
	c->pos += (uint64_t)n;
	f->data = NULL;
	f->start = 0;
	if (f->wt == MP_PW_LEN) {
		f->start = c->pos;
		c->pos += f->len;
	}
	return 1;
}
