/* wfile.c - the capture file's descriptor, kept out of the traced
 * program's way (internal; writer_internal.h).
 *
 * The writer lives inside somebody else's process, and that process owns
 * its descriptor table: a daemon closes every descriptor above stderr, a
 * forked child closes them before exec (Python's subprocess does by
 * default), a shell dup2()s onto numbers it picks. Then the number the
 * writer holds is either closed or -- worse -- the program's own file,
 * opened or dup'ed into the freed slot. Writing a block into it would put
 * capture bytes into the program's data: the hooks must never change what
 * the program sees.
 *
 * So:
 *  1. the descriptor is moved high at open (F_DUPFD_CLOEXEC to half the
 *     descriptor limit, at most 4096), out of the low numbers that open()
 *     hands out and the 10-255 that shells use;
 *  2. before every write the descriptor is checked to still be the
 *     capture (fstat: same device and inode as at open). When it is not,
 *     the number is left alone -- it is the program's now -- and the
 *     capture is opened again by its absolute path, checked the same way
 *     (a file replaced under that name is not ours either);
 *  3. writes go to explicit offsets (pwritev at the end of what was
 *     written), so a reopened descriptor, or a program that moved the
 *     shared file offset, changes nothing (a pipe has no offsets: it is
 *     written in order).
 * A program that closes the descriptor and opens a file into its number
 * between the check and the write (a few microseconds, once a flush
 * round) is not caught; every other case is.
 *
 * A full disk (ENOSPC, EDQUOT) or the file size limit (EFBIG) must not
 * leave a capture that reads as "killed or crashed": the writer says why
 * it stopped, in a trailer (writer.c), and that needs room. So every write
 * first makes sure RESERVE bytes past its end stay writable: below
 * RLIMIT_FSIZE (checked, so the writer never meets EFBIG -- nor raises
 * SIGXFSZ, which would kill the program), and allocated on disk
 * (fallocate FALLOC_FL_KEEP_SIZE: the file's size does not change, so
 * readers see nothing of it). When that fails for lack of room, the write
 * is not made and the trailer goes into the reserve. Where fallocate does
 * not work (some file systems) the trailer is tried all the same.
 */
#include "writer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define FD_FLOOR_MAX 4096
/* Kept writable past the end: the trailer (at most MP_TRAILER_MAX). */
#define RESERVE 4096

int mp__wfile_no_room(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EFBIG;
}

/* Room for len more bytes at w->file_offset and the reserve after them;
 * 0 or -ENOSPC, -EDQUOT, -EFBIG (nothing written). */
static int make_room(mp_writer_t *w, int fd, size_t len)
{
	uint64_t end = w->file_offset + len + RESERVE;
	struct rlimit rl;
	int e;

	if (w->file_stream)
		return 0;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && end > (uint64_t)rl.rlim_cur)
		return -EFBIG;
	if (w->no_reserve || fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)w->file_offset, (off_t)(len + RESERVE)) == 0)
		return 0;
	e = errno;
	if (e == ENOSPC || e == EDQUOT || e == EFBIG)
		return -e;
	if (e != EINTR)
		w->no_reserve = 1; /* EOPNOTSUPP, a pipe (ESPIPE), ...: no reserve */
	return 0;
}

/* Move fd to a high number (closing the low one); fd itself when that
 * fails (a low limit: nothing lost but the distance). */
static int move_high(int fd)
{
	struct rlimit rl;
	long floor = FD_FLOOR_MAX;
	int hi;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)(rl.rlim_cur / 2) < floor)
		floor = (long)(rl.rlim_cur / 2);
	if (floor <= fd)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)floor);
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

static int same_file(int fd, const mp_writer_t *w)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 && (uint64_t)sb.st_dev == w->file_dev && (uint64_t)sb.st_ino == w->file_ino;
}

int mp__wfile_open(mp_writer_t *w, const char *path, int flags, mp_diag_t *diag)
{
	struct stat sb;
	int fd = open(path, flags, 0644), e, n;
	size_t len;

	if (fd < 0) {
		e = errno;
		return mp_diag_set(diag, -e, -1, -1, "cannot create the capture: %s", strerror(e));
	}
	if (fstat(fd, &sb)) {
		e = errno;
		close(fd);
		unlink(path);
		return mp_diag_set(diag, -e, -1, -1, "cannot stat the capture: %s", strerror(e));
	}
	w->file_dev = (uint64_t)sb.st_dev;
	w->file_ino = (uint64_t)sb.st_ino;
	/* Absolute, to reopen it after the program changed directory (too
	 * long: none, and a taken descriptor then ends the capture). */
	/* (built in place: a PATH_MAX buffer on the stack is too much for a
	 * program thread with a small stack, where this may run) */
	if (path[0] == '/' || !getcwd(w->path, sizeof(w->path))) {
		n = snprintf(w->path, sizeof(w->path), "%s", path);
	} else {
		len = strlen(w->path);
		n = snprintf(w->path + len, sizeof(w->path) - len, "/%s", path);
		n = n < 0 ? n : n + (int)len;
	}
	if (n < 0 || (size_t)n >= sizeof(w->path))
		w->path[0] = '\0';
	w->fd = move_high(fd);
	return 0;
}

/* The capture's descriptor, reopened when the program took the number.
 * Returns it, or a negative error code (the file is gone or replaced: the
 * capture stops rather than write anywhere else). */
static int capture_fd(mp_writer_t *w)
{
	int fd;

	if (w->fd >= 0 && same_file(w->fd, w))
		return w->fd;
	w->fd = -1; /* not closed: the number is the program's now */
	/* O_NONBLOCK: a pipe whose reader has gone fails (ENXIO) instead of
	 * blocking the flusher; it is cleared again for the writes. */
	fd = open(w->path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (!same_file(fd, w)) {
		close(fd);
		return -ESTALE;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		int e = errno;
		close(fd);
		return -e;
	}
	w->fd = move_high(fd);
	return w->fd;
}

int mp__wfile_write(mp_writer_t *w, const struct iovec *iov, int n)
{
	struct iovec v[4];
	int fd, i;
	size_t len = 0;
	uint64_t start = w->file_offset;
	int rc;

	if (n > 4)
		return -EINVAL;
	if ((fd = capture_fd(w)) < 0)
		return fd;
	for (i = 0; i < n; i++) {
		v[i] = iov[i];
		len += iov[i].iov_len;
	}
	if (w->keep) /* --keep: the run's bound holds after this write too (wkeep.c) */
		mp__keep_room(w, len);
	if ((rc = make_room(w, fd, len)))
		return rc;
	i = 0;
	while (i < n) {
		ssize_t k = w->file_stream ? writev(fd, v + i, n - i) : pwritev(fd, v + i, n - i, (off_t)w->file_offset);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ESPIPE && !w->file_stream) { /* a pipe: in order is all there is */
				w->file_stream = 1;
				continue;
			}
			/* what part of it went is no block: the next write, or
			 * the trailer that says why, goes where it began */
			if (!w->file_stream)
				w->file_offset = start;
			return -errno;
		}
		if (k == 0 && v[i].iov_len)
			return -EIO;
		w->file_offset += (uint64_t)k;
		while (i < n && (size_t)k >= v[i].iov_len) {
			k -= (ssize_t)v[i].iov_len;
			i++;
		}
		if (i < n) {
			v[i].iov_base = (char *)v[i].iov_base + k;
			v[i].iov_len -= (size_t)k;
		}
	}
	if (w->keep)
		mp__keep_wrote(w);
	return 0;
}

int mp__wfile_put_last(mp_writer_t *w, const void *buf, size_t len)
{
	ssize_t k;
	int fd, e;

	if (w->file_stream)
		return -ESPIPE;
	if ((fd = capture_fd(w)) < 0)
		return fd;
	do
		k = pwrite(fd, buf, len, (off_t)w->file_offset);
	while (k < 0 && errno == EINTR);
	e = k < 0 ? -errno : -ENOSPC;
	if (k == (ssize_t)len)
		w->file_offset += len;
	/* the file ends here: no part of a failed block after it (or of
	 * this record, when it did not fit: then the capture ends abruptly) */
	if (ftruncate(fd, (off_t)w->file_offset) && k == (ssize_t)len)
		return -errno;
	return k == (ssize_t)len ? 0 : e;
}

int mp__wfile_close(mp_writer_t *w)
{
	int rc = 0;

	/* the reserve past the end goes back to the file system (ext4 frees
	 * blocks past the size on a truncate to the same size) */
	if (w->fd >= 0 && !w->file_stream && !w->no_reserve && same_file(w->fd, w) &&
	    ftruncate(w->fd, (off_t)w->file_offset))
		rc = -errno;
	if (w->fd >= 0 && same_file(w->fd, w) && close(w->fd))
		rc = -errno;
	w->fd = -1;
	return rc;
}
