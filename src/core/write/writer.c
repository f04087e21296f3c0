/* writer.c - opening and closing a capture, the file header and trailer,
 * memory ids. The event path is in wthread.c, flush rounds in flush.c. */
#include <memprof/format.h>
#include <memprof/format/varint.h>

#include "clock.h"
#include "procfs.h"
#include "writer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic uint64_t next_writer_id = 1;

/* zlib gets its memory from the arena: no malloc once the writer is open. */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
	return mp_arena_alloc(opaque, (size_t)items * size);
}

static void z_free(voidpf opaque, voidpf address)
{
	(void)opaque;
	(void)address; /* released with the arena */
}

static uint8_t *put_string(uint8_t *p, const uint8_t *end, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(end - p) < n + MP_VARINT_MAX)
		n = (size_t)(end - p) > MP_VARINT_MAX ? (size_t)(end - p) - MP_VARINT_MAX : 0;
	p = mp_varint_put(p, n);
	memcpy(p, s, n);
	return p + n;
}

/* The command line from /proc/self/cmdline, arguments joined by spaces. */
static void read_cmdline(char *buf, size_t size)
{
	ssize_t n = mp__read_head("/proc/self/cmdline", buf, size), i;

	if (n <= 0) {
		buf[0] = '\0';
		return;
	}
	if (buf[n - 1] == '\0')
		n--;
	for (i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
}

/* What opening needs for a moment: 12 KiB, mapped for it rather than on the
 * stack of the thread that opens (the preload opens on whichever thread
 * allocates first, whose stack may be PTHREAD_STACK_MIN, 16 KiB). */
typedef struct {
	char cmdline[4096];
	char exe[4096];
	uint8_t header[MP_FILE_PREFIX_LEN + 12288 + 4];
} open_scratch_t;

static int write_header(mp_writer_t *w, open_scratch_t *sc, mp_diag_t *diag)
{
	uint8_t *buf = sc->header, *p, *end = buf + sizeof(sc->header) - 4;
	const char *cmdline = sc->cmdline;
	char host[256] = "";
	uint32_t hlen;
	struct iovec iov;
	int rc;

	gethostname(host, sizeof(host) - 1);
	memcpy(buf, MP_FILE_MAGIC, MP_FILE_MAGIC_LEN);
	mp_put_u16le(buf + 8, MP_FORMAT_VERSION_MAJOR);
	mp_put_u16le(buf + 10, MP_FORMAT_VERSION_MINOR);
	p = buf + MP_FILE_PREFIX_LEN;
	p = put_string(p, end, "CLOCK_MONOTONIC");
	p = mp_varint_put(p, w->clock.origin_ns);
	p = mp_varint_put(p, mp_wall_ns());
	p = mp_varint_put(p, (uint64_t)getpid());
	p = put_string(p, end, host);
	p = put_string(p, end, cmdline);
	/* 2.1: where the process sits in a run's process tree (docs/format.md) */
	p = mp_varint_put(p, (uint64_t)getppid());
	p = put_string(p, end, sc->exe);
	hlen = (uint32_t)(p - (buf + MP_FILE_PREFIX_LEN));
	mp_put_u32le(buf + 12, hlen);
	mp_put_u32le(p, (uint32_t)crc32(0, buf, (uInt)(p - buf)));
	p += 4;
	iov.iov_base = buf;
	iov.iov_len = (size_t)(p - buf);
	w->file_offset = 0;
	if ((rc = mp__wfile_write(w, &iov, 1)))
		return mp_diag_set(diag, rc, 0, -1, "cannot write the capture header: %s", strerror(-rc));
	return 0;
}

/* The options, defaults filled in: MP_EUSAGE for a ring size out of range. */
static int writer_options(mp_writer_options_t *o, const mp_writer_options_t *opts, mp_diag_t *diag)
{
	if (opts)
		*o = *opts;
	if (!o->flush_interval_ms)
		o->flush_interval_ms = 90; /* a kill loses < 100 ms, the round's own time included */
	/* 16 MiB: half of it is what the flusher takes per round, and what a
	 * thread can write while the round runs before it waits for room. On
	 * two CPUs busy with two allocating threads, 4 MiB left the flusher
	 * too little of it: both threads waited at once, a CPU idled
	 * (alloc_bench: 1.73 CPUs busy against 1.93; docs/hooks.md "Cost").
	 * Address space: pages become resident as the thread writes them. */
	if (!o->ring_bytes)
		o->ring_bytes = 16u << 20;
	if (o->ring_bytes < 4096 || o->ring_bytes > (64u << 20) || (o->ring_bytes & (o->ring_bytes - 1)))
		return mp_diag_set(diag, MP_EUSAGE, -1, -1,
				   "ring size %u is not a power of two between 4 KiB and 64 MiB", o->ring_bytes);
	if (o->compression_level <= 0 || o->compression_level > 9)
		o->compression_level = 1;
	return 0;
}

uint64_t mp__env_u64(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return dflt;
	v = strtoull(s, &end, 10);
	return *end ? dflt : (uint64_t)v;
}

/* The writer, set up from o, with no file yet; NULL when out of memory. */
static mp_writer_t *writer_new(const mp_writer_options_t *o)
{
	mp_writer_t *w = mp_map_pages(sizeof(*w)); /* no malloc: this may run inside the hooks */

	if (!w)
		return NULL;
	mp_arena_init(&w->arena);
	w->unbound = mp_arena_alloc(&w->arena, sizeof(*w->unbound)); /* zeroed; NULL: not counted */
	pthread_mutex_init(&w->reg_mu, NULL);
	pthread_mutex_init(&w->defs_mu, NULL);
	pthread_mutex_init(&w->flush_mu, NULL);
	w->id = atomic_fetch_add(&next_writer_id, 1);
	w->flush_interval_ms = o->flush_interval_ms;
	w->on_orphaned = o->on_orphaned;
	w->orphaned_arg = o->orphaned_arg;
	if (o->stop_after_ms && o->on_stop) {
		w->stop_at_ns = mp_clock_ns() + (uint64_t)o->stop_after_ms * 1000000u;
		w->on_stop = o->on_stop;
		w->stop_arg = o->stop_arg;
	}
	w->ring_bytes = o->ring_bytes;
	w->full_policy = o->full_policy;
	w->shed = o->shed;
	w->level = o->compression_level;
	{
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		mp__help_start(&w->help, o->help, ncpu > 0 ? (unsigned)ncpu : 1);
	}
	/* Cheap per-event fences need the asymmetric barrier (Linux >= 4.14);
	 * so does the TSC clock. The header names the clock's origin. */
	w->use_membarrier = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
	mp__capclock_init(&w->clock, w->use_membarrier);
	mp__tally_ckpt_config(&w->tally);
	{
		uint64_t reuse = mp__env_u64("MEMPROF_SERIAL_REUSE", MP_SERIAL_REUSE);
		w->serial_reuse = reuse > 1024 ? MP_SERIAL_REUSE : (uint32_t)reuse;
	}
	w->fd = -1;
	return w;
}

/* The header, with the command line and the program it names. */
static int write_process_header(mp_writer_t *w, const char *command_line, mp_diag_t *diag)
{
	open_scratch_t *sc = mp_map_pages(sizeof(*sc));
	int rc;

	if (!sc)
		return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
	if (command_line)
		snprintf(sc->cmdline, sizeof(sc->cmdline), "%s", command_line);
	else
		read_cmdline(sc->cmdline, sizeof(sc->cmdline));
	{
		ssize_t n = readlink("/proc/self/exe", sc->exe, sizeof(sc->exe) - 1);
		sc->exe[n > 0 ? n : 0] = '\0';
	}
	rc = write_header(w, sc, diag);
	mp_unmap_pages(sc, sizeof(*sc));
	return rc;
}

/* The flusher thread, with every signal blocked: a handler running on it
 * could record events and wait on itself. */
static int start_flusher(mp_writer_t *w, mp_diag_t *diag)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->flusher, NULL, mp__flusher_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return mp_diag_set(diag, -rc, -1, -1, "cannot start the flusher thread");
	w->flusher_started = 1;
	{
		/* Named here, not only by itself (flusher.c): a thread the
		 * scheduler has not run yet would still have the program's name
		 * when the program, or top -H, looks right after the open. */
		int e = errno;
		(void)pthread_setname_np(w->flusher, MP_FLUSHER_NAME);
		errno = e;
	}
	return 0;
}

int mp_writer_open(mp_writer_t **out, const char *path, int overwrite,
		   const mp_writer_options_t *opts, mp_diag_t *diag)
{
	mp_writer_options_t o = {0};
	mp_writer_t *w;
	int rc, flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);

	*out = NULL;
	mp_diag_clear(diag);
	mp_diag_set_file(diag, path);
	if ((rc = writer_options(&o, opts, diag)))
		return rc;
	if (!(w = writer_new(&o)))
		return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
	if ((rc = mp__wfile_open(w, path, flags, diag)) || (rc = write_process_header(w, o.command_line, diag)) ||
	    (rc = mp__keep_open(w, path, overwrite, diag)))
		goto fail;
	if (w->level >= 2) {
		w->z.zalloc = z_alloc;
		w->z.zfree = z_free;
		w->z.opaque = &w->arena;
		if (deflateInit2(&w->z, w->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			rc = mp_diag_set(diag, MP_ECOMPRESS, -1, -1, "cannot initialise zlib");
			goto fail;
		}
		w->z_ok = 1;
	}
	w->key_ok = pthread_key_create(&w->key, mp__wthread_exit) == 0;
	if ((rc = start_flusher(w, diag)))
		goto fail;
	*out = w;
	return 0;
fail:
	if (w->fd >= 0)
		mp__wfile_close(w);
	if (w->keep) /* (P, kept aside: closed, and unlinked below) */
		(void)mp__keep_close(w, rc);
	if (w->file_ino) /* created here (an existing one is not ours) */
		unlink(path);
	if (w->z_ok)
		deflateEnd(&w->z);
	if (w->key_ok)
		pthread_key_delete(w->key);
	mp_arena_release(&w->arena);
	mp_unmap_pages(w, sizeof(*w));
	return rc;
}

/* The trailer. err 0: the capture closed; else (negative) the error that
 * stopped the writer, recorded after the end time (format 2.3) with where
 * the file was cut and the last horizon in it, and the record put into
 * the reserved tail (wfile.c). */
static int write_trailer(mp_writer_t *w, int err)
{
	uint8_t buf[12 + 8 * MP_VARINT_MAX + 4], *p = buf + 12;
	uint64_t events = 0, dropped = 0;
	mp_wthread_t *t;
	int i;

	/* What the blocks hold, not what threads counted: a thread still
	 * recording while the capture closes (exit() with threads running) may
	 * have committed events after the final round took its snapshot. */
	events = err ? w->events_written : w->events_flushed;
	for (t = atomic_load_explicit(&w->threads, memory_order_acquire); t; t = t->next)
		for (i = 0; i < MP_DROP_SLOTS; i++)
			dropped += t->dropped_reported[i];
	p = mp_varint_put(p, events);
	p = mp_varint_put(p, dropped);
	p = mp_varint_put(p, w->block_index);
	p = mp_varint_put(p, w->string_count);
	p = mp_varint_put(p, mp__capclock_read(&w->clock));
	if (err) {
		p = mp_varint_put(p, (uint64_t)-err);
		p = mp_varint_put(p, w->file_offset);
		p = mp_varint_put(p, w->complete_ns);
	}
	mp_put_u32le(buf, MP_TRAILER_MAGIC);
	mp_put_u32le(buf + 4, (uint32_t)(p - (buf + 12)));
	mp_put_u32le(buf + 8, (uint32_t)crc32(0, buf, 8));
	mp_put_u32le(p, (uint32_t)crc32(0, buf + 12, (uInt)(p - (buf + 12))));
	p += 4;
	if (err)
		return mp__wfile_put_last(w, buf, (size_t)(p - buf));
	{
		struct iovec iov = {buf, (size_t)(p - buf)};
		return mp__wfile_write(w, &iov, 1);
	}
}

int mp__writer_put_trailer(mp_writer_t *w)
{
	return write_trailer(w, 0);
}

void mp__writer_stopped(mp_writer_t *w, int err)
{
	if (mp__wfile_no_room(err))
		(void)write_trailer(w, err); /* when even that fails: an abrupt end */
}

int mp_writer_close(mp_writer_t *w)
{
	mp_wthread_t *t;
	int rc;

	if (!w)
		return 0;
	atomic_store_explicit(&w->closing, 1, memory_order_release);
	if (w->flusher_started) {
		mp__flusher_wake(w);
		/* closed from the flusher's own thread: it ended the process
		 * (orphan.c), and its loop is over */
		if (!pthread_equal(w->flusher, pthread_self()))
			pthread_join(w->flusher, NULL);
	}
	if (!w->final_done) /* no flusher, or it ended orphaned: on this thread */
		mp__writer_round(w, 1);
	rc = atomic_load_explicit(&w->error, memory_order_relaxed);
	if (!rc)
		rc = write_trailer(w, 0);
	{
		int crc = mp__wfile_close(w);
		if (crc && !rc)
			rc = crc;
	}
	rc = mp__keep_close(w, rc); /* --keep: the whole-run file's trailer */
	for (t = atomic_load_explicit(&w->threads, memory_order_acquire); t; t = t->next)
		mp_unmap_pages(t->ring, w->ring_bytes);
	if (w->key_ok)
		pthread_key_delete(w->key);
	if (w->z_ok)
		deflateEnd(&w->z);
	mp_mbuf_release(&w->raw);
	mp_mbuf_release(&w->segs);
	mp_mbuf_release(&w->out);
	mp_mbuf_release(&w->defs);
	mp_mbuf_release(&w->snaps);
	mp_mbuf_release(&w->sections);
	mp_mbuf_release(&w->rows);
	mp__chunk_encoder_release(&w->enc);
	mp__tally_release(&w->tally);
	mp__help_release(&w->help);
	mp_mbuf_release(&w->tally_src);
	mp_arena_release(&w->arena);
	pthread_mutex_destroy(&w->reg_mu);
	pthread_mutex_destroy(&w->defs_mu);
	pthread_mutex_destroy(&w->flush_mu);
	mp_unmap_pages(w, sizeof(*w));
	return rc;
}

int mp_writer_memory(mp_writer_t *w, const char *name, int kind, uint64_t capacity_bytes)
{
	uint8_t sec[1 + 4 * MP_VARINT_MAX], *p = sec;
	uint32_t name_id, i;
	size_t len;
	int rc, id;

	if (!w || !name || kind < 0 || kind > MP_MEMORY_KIND_MAX)
		return -EINVAL;
	len = strlen(name);
	pthread_mutex_lock(&w->defs_mu);
	rc = mp__intern_insert_locked(w, name, len, mp__hash(name, len), &name_id);
	if (rc)
		goto out;
	for (i = 0; i < w->memory_count; i++) {
		if (w->memory_names[i] == name_id) {
			rc = (int)i;
			goto out;
		}
	}
	if (w->memory_count >= sizeof(w->memory_names) / sizeof(w->memory_names[0])) {
		rc = MP_ELIMIT;
		goto out;
	}
	id = (int)w->memory_count;
	*p++ = MP_SEC_MEMORY;
	p = mp_varint_put(p, (uint64_t)id);
	p = mp_varint_put(p, name_id);
	p = mp_varint_put(p, (uint64_t)kind);
	p = mp_varint_put(p, capacity_bytes);
	rc = mp_mbuf_append(&w->defs, sec, (size_t)(p - sec));
	if (rc)
		goto out;
	w->memory_names[w->memory_count++] = name_id;
	{
		/* the name and kind for the SUMMARY sections (tally.h) */
		char *copy = mp_arena_alloc(&w->arena, len + 1);
		if (copy) {
			memcpy(copy, name, len);
			mp__tally_declare(&w->tally, (uint32_t)id, copy, (uint32_t)len, kind);
		} else {
			w->tally.failed = 1;
		}
	}
	rc = id;
out:
	pthread_mutex_unlock(&w->defs_mu);
	return rc;
}

int mp_writer_flush(mp_writer_t *w)
{
	if (!w)
		return -EINVAL;
	/* On the flusher's stack when it runs (the caller's may be small) */
	if (w->flusher_started && !pthread_equal(w->flusher, pthread_self()) &&
	    mp__writer_flush_on_flusher(w) != -EAGAIN)
		return atomic_load_explicit(&w->error, memory_order_relaxed);
	return mp__writer_round(w, 0);
}

uint64_t mp_writer_event_count(const mp_writer_t *w)
{
	uint64_t n = 0;
	mp_wthread_t *t;

	for (t = atomic_load_explicit(&w->threads, memory_order_acquire); t; t = t->next)
		n += atomic_load_explicit(&t->events, memory_order_relaxed);
	return n;
}

uint64_t mp_writer_dropped_count(const mp_writer_t *w)
{
	uint64_t n = 0;
	mp_wthread_t *t;
	int i;

	for (t = atomic_load_explicit(&w->threads, memory_order_acquire); t; t = t->next)
		for (i = 0; i < MP_DROP_SLOTS; i++)
			n += atomic_load_explicit(&t->dropped[i], memory_order_relaxed);
	return n;
}
