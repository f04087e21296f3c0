/* xspace_build.c - see memprof/xspace_build.h. Each level is encoded into
 * its own buffer and appended to its parent as a length-delimited field
 * when it closes (lengths must precede contents in the wire format). */
#include <memprof/xspace_build.h>

#include <memprof/protowire.h>
#include <memprof/xplane_export.h>

#include <memprof/strtab.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct mp_xsb {
	mp_pw_buf_t space, hosts, plane, lines, line, event;
	int in_plane, in_line, in_event;
	mp_strtab_t evnames, statnames;
	int err;
};

mp_xsb_t *mp_xsb_new(void)
{
	mp_xsb_t *b = calloc(1, sizeof(*b));

	if (b) {
		mp_strtab_init(&b->evnames);
		mp_strtab_init(&b->statnames);
	}
	return b;
}

void mp_xsb_free(mp_xsb_t *b)
{
	if (!b)
		return;
	mp_pw_buf_free(&b->space);
	mp_pw_buf_free(&b->hosts);
	mp_pw_buf_free(&b->plane);
	mp_pw_buf_free(&b->lines);
	mp_pw_buf_free(&b->line);
	mp_pw_buf_free(&b->event);
	mp_strtab_free(&b->evnames);
	mp_strtab_free(&b->statnames);
	free(b);
}

static void close_event(mp_xsb_t *b)
{
	if (!b->in_event)
		return;
	mp_pw_put_msg(&b->line, 4, &b->event);
	b->event.len = 0;
	b->in_event = 0;
}

static void close_line(mp_xsb_t *b)
{
	close_event(b);
	if (!b->in_line)
		return;
	mp_pw_put_msg(&b->lines, 3, &b->line);
	b->line.len = 0;
	b->in_line = 0;
}

static void put_metadata(mp_pw_buf_t *plane, uint32_t field, const mp_strtab_t *names)
{
	for (uint32_t id = 1; id < names->count; id++)
		mp_xplane_put_meta(plane, field, id, mp_strtab_get(names, id));
}

static void close_plane(mp_xsb_t *b)
{
	close_line(b);
	if (!b->in_plane)
		return;
	mp_pw_put_raw(&b->plane, b->lines.data, b->lines.len);
	if (b->lines.oom)
		b->plane.oom = 1;
	put_metadata(&b->plane, 4, &b->evnames);
	put_metadata(&b->plane, 5, &b->statnames);
	mp_pw_put_msg(&b->space, 1, &b->plane);
	b->plane.len = b->lines.len = 0;
	mp_strtab_free(&b->evnames);
	mp_strtab_free(&b->statnames);
	b->in_plane = 0;
}

void mp_xsb_hostname(mp_xsb_t *b, const char *host)
{
	mp_pw_put_str(&b->hosts, 4, host);
}

void mp_xsb_plane(mp_xsb_t *b, int64_t id, const char *name)
{
	close_plane(b);
	mp_pw_put_uint(&b->plane, 1, (uint64_t)id);
	mp_pw_put_str(&b->plane, 2, name);
	b->in_plane = 1;
}

void mp_xsb_line(mp_xsb_t *b, int64_t id, const char *name, int64_t timestamp_ns)
{
	if (!b->in_plane) {
		b->err = MP_EUSAGE;
		return;
	}
	close_line(b);
	mp_pw_put_uint(&b->line, 1, (uint64_t)id);
	mp_pw_put_str(&b->line, 2, name);
	mp_pw_put_uint(&b->line, 3, (uint64_t)timestamp_ns);
	b->in_line = 1;
}

static uint32_t intern(mp_xsb_t *b, mp_strtab_t *t, const char *s)
{
	uint32_t id = mp_strtab_intern(t, s, strlen(s));

	if (id == UINT32_MAX) {
		b->err = MP_ENOMEM;
		return 0;
	}
	return id;
}

void mp_xsb_event(mp_xsb_t *b, const char *name, int64_t offset_ps, int64_t duration_ps)
{
	if (!b->in_line) {
		b->err = MP_EUSAGE;
		return;
	}
	close_event(b);
	mp_pw_put_uint(&b->event, 1, intern(b, &b->evnames, name));
	mp_pw_put_uint(&b->event, 2, (uint64_t)offset_ps);
	if (duration_ps)
		mp_pw_put_uint(&b->event, 3, (uint64_t)duration_ps);
	b->in_event = 1;
}

/* XStat: {1: metadata_id, <field>: value} appended as XEvent.stats (4). */
static int stat_begin(mp_xsb_t *b, mp_pw_buf_t *st, const char *stat)
{
	if (!b->in_event) {
		b->err = MP_EUSAGE;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	mp_pw_put_uint(st, 1, intern(b, &b->statnames, stat));
	return 0;
}

static void stat_end(mp_xsb_t *b, mp_pw_buf_t *st)
{
	mp_pw_put_msg(&b->event, 4, st);
	mp_pw_buf_free(st);
}

void mp_xsb_stat_int(mp_xsb_t *b, const char *stat, int64_t v)
{
	mp_pw_buf_t st;

	if (stat_begin(b, &st, stat) == 0) {
		mp_pw_put_uint(&st, 4, (uint64_t)v);
		stat_end(b, &st);
	}
}

void mp_xsb_stat_uint(mp_xsb_t *b, const char *stat, uint64_t v)
{
	mp_pw_buf_t st;

	if (stat_begin(b, &st, stat) == 0) {
		mp_pw_put_uint(&st, 3, v);
		stat_end(b, &st);
	}
}

void mp_xsb_stat_double(mp_xsb_t *b, const char *stat, double v)
{
	mp_pw_buf_t st;

	if (stat_begin(b, &st, stat) == 0) {
		mp_pw_put_double(&st, 2, v);
		stat_end(b, &st);
	}
}

void mp_xsb_stat_str(mp_xsb_t *b, const char *stat, const char *v)
{
	mp_pw_buf_t st;

	if (stat_begin(b, &st, stat) == 0) {
		mp_pw_put_str(&st, 5, v);
		stat_end(b, &st);
	}
}

void mp_xsb_stat_ref(mp_xsb_t *b, const char *stat, const char *v)
{
	mp_pw_buf_t st;

	if (stat_begin(b, &st, stat) == 0) {
		mp_pw_put_uint(&st, 7, intern(b, &b->statnames, v));
		stat_end(b, &st);
	}
}

void mp_xsb_stat_bytes(mp_xsb_t *b, const char *stat, const char *v)
{
	mp_pw_buf_t st;

	if (stat_begin(b, &st, stat) == 0) {
		mp_pw_put_str(&st, 6, v);
		stat_end(b, &st);
	}
}

void mp_xsb_stat_gzstr(mp_xsb_t *b, const char *stat, const char *v)
{
	unsigned char out[4096];
	z_stream z;
	mp_pw_buf_t st;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		b->err = MP_ECOMPRESS;
		return;
	}
	z.next_in = (unsigned char *)(uintptr_t)v;
	z.avail_in = (uInt)strlen(v);
	z.next_out = out;
	z.avail_out = sizeof(out);
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		b->err = MP_ELIMIT; /* fixtures only: short strings */
		return;
	}
	deflateEnd(&z);
	if (stat_begin(b, &st, stat) == 0) {
		mp_pw_put_bytes(&st, 8, out, sizeof(out) - z.avail_out);
		stat_end(b, &st);
	}
}

int mp_xsb_finish(mp_xsb_t *b, const uint8_t **data, size_t *len)
{
	close_plane(b);
	if (b->hosts.len) {
		mp_pw_put_raw(&b->space, b->hosts.data, b->hosts.len);
		b->hosts.len = 0;
	}
	if (b->space.oom || b->hosts.oom || b->plane.oom || b->lines.oom || b->line.oom || b->event.oom)
		b->err = MP_ENOMEM;
	if (b->err)
		return b->err;
	*data = b->space.data ? b->space.data : (const uint8_t *)"";
	*len = b->space.len;
	return 0;
}

int mp_xsb_write(mp_xsb_t *b, const char *path, int gzip, mp_diag_t *diag)
{
	const uint8_t *data;
	size_t len, done = 0;
	int rc = mp_xsb_finish(b, &data, &len);

	if (rc < 0)
		return mp_diag_set(diag, rc, -1, -1, "cannot build the XSpace: %s", mp_strerror(rc));
	mp_diag_set_file(diag, path);
	if (gzip) {
		gzFile gz = gzopen(path, "wb");

		if (!gz)
			return mp_diag_set(diag, -(errno ? errno : EIO), -1, -1, "cannot create: %s",
					   strerror(errno ? errno : EIO));
		while (done < len) {
			unsigned chunk = len - done > (1u << 30) ? (1u << 30) : (unsigned)(len - done);

			if (gzwrite(gz, data + done, chunk) != (int)chunk) {
				gzclose(gz);
				return mp_diag_set(diag, MP_ECOMPRESS, (int64_t)done, -1, "gzip write failed");
			}
			done += chunk;
		}
		if (gzclose(gz) != Z_OK)
			return mp_diag_set(diag, MP_ECOMPRESS, -1, -1, "gzip write failed");
		return 0;
	} else {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0)
			return mp_diag_set(diag, -errno, -1, -1, "cannot create: %s", strerror(errno));
		while (done < len) {
			ssize_t k = write(fd, data + done, len - done);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				rc = -(errno ? errno : EIO);
				close(fd);
				return mp_diag_set(diag, rc, (int64_t)done, -1, "write failed: %s", strerror(-rc));
			}
			done += (size_t)k;
		}
		if (close(fd) < 0)
			return mp_diag_set(diag, -errno, -1, -1, "write failed: %s", strerror(errno));
	}
	return 0;
}
