/* reader.c - reading a .memprof capture: header, block frames, checksums,
 * sections; events come out of merge.c in global timestamp order.
 *
 * Failure policy (docs/format.md): a capture that simply stops (SIGKILL in
 * the middle of a block, no trailer) ends "abruptly" after its last complete
 * block; that is not an error. Anything that is present but wrong (magic,
 * header or payload checksum, index out of sequence, a section that does not
 * parse) is corruption: reading stops with an error naming the block and its
 * offset, after every event of the blocks before it has been returned.
 * A block's sections are parsed by reader_sections.c.
 */
#include <memprof/format.h>
#include <memprof/format/columns.h>
#include <memprof/format/varint.h>

#include <memprof/keep.h>

#include "blockio.h"

#include "reader_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* ---------------------------------------------------------------- header */

static int get_string(const uint8_t **p, const uint8_t *end, char **dst, char **store)
{
	uint64_t n;

	if (mp_varint_get(p, end, &n) || n > (uint64_t)(end - *p))
		return -1;
	memcpy(*store, *p, n);
	(*store)[n] = '\0';
	*dst = *store;
	*store += n + 1;
	*p += n;
	return 0;
}

static int read_header(mp_capture_t *cap, mp_diag_t *diag)
{
	uint8_t prefix[MP_FILE_PREFIX_LEN], *body = NULL;
	const uint8_t *p, *end;
	uint32_t hlen, crc;
	char *store, *clock, *host, *cmd, *exe = NULL;
	uint64_t v[4] = {0, 0, 0, 0};
	size_t n;

	n = fread(prefix, 1, sizeof(prefix), cap->f);
	if (n < MP_FILE_MAGIC_LEN || memcmp(prefix, MP_FILE_MAGIC, MP_FILE_MAGIC_LEN) != 0)
		return mp_diag_set(diag, MP_EFORMAT, 0, -1,
				   "not a memprof capture (expected the magic \"MEMPROF\" at offset 0)");
	if (n < sizeof(prefix))
		return mp_diag_set(diag, MP_ETRUNCATED, (int64_t)n, -1,
				   "truncated header: the file ends at byte %zu, inside the %d-byte header prefix", n,
				   MP_FILE_PREFIX_LEN);
	cap->hdr.version_major = mp_get_u16le(prefix + 8);
	cap->hdr.version_minor = mp_get_u16le(prefix + 10);
	if (cap->hdr.version_major < 1 || cap->hdr.version_major > MP_FORMAT_VERSION_MAJOR)
		return mp_diag_set(diag, MP_EVERSION, 8, -1,
				   "format version %u.%u is not supported (this memprof reads 1.0 to %u.%u: "
				   "the capture was written by a newer memprof)",
				   cap->hdr.version_major, cap->hdr.version_minor, MP_FORMAT_VERSION_MAJOR,
				   MP_FORMAT_VERSION_MINOR);
	hlen = mp_get_u32le(prefix + 12);
	if (hlen > MP_HEADER_MAX)
		return mp_diag_set(diag, MP_ECORRUPT, 12, -1, "header length %u is larger than %u bytes", hlen,
				   MP_HEADER_MAX);
	body = malloc((size_t)hlen + 4);
	cap->hdr_strings = malloc((size_t)hlen + 8);
	if (!body || !cap->hdr_strings) {
		free(body);
		return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
	}
	n = fread(body, 1, (size_t)hlen + 4, cap->f);
	if (n < (size_t)hlen + 4) {
		free(body);
		return mp_diag_set(diag, MP_ETRUNCATED, (int64_t)(MP_FILE_PREFIX_LEN + n), -1,
				   "truncated header: %u bytes announced, the file ends after %zu", hlen + 4, n);
	}
	crc = (uint32_t)crc32(0, prefix, sizeof(prefix));
	crc = (uint32_t)crc32(crc, body, hlen);
	if (CRC_BAD(crc, mp_get_u32le(body + hlen))) {
		free(body);
		return mp_diag_set(diag, MP_ECHECKSUM, MP_FILE_PREFIX_LEN, -1, "header checksum mismatch");
	}
	p = body;
	end = body + hlen;
	store = cap->hdr_strings;
	if (get_string(&p, end, &clock, &store) || mp_varint_get(&p, end, &v[0]) ||
	    mp_varint_get(&p, end, &v[1]) || mp_varint_get(&p, end, &v[2]) ||
	    get_string(&p, end, &host, &store) || get_string(&p, end, &cmd, &store)) {
		free(body);
		return mp_diag_set(diag, MP_ECORRUPT, MP_FILE_PREFIX_LEN, -1, "header fields do not parse");
	}
	/* 2.1 appends the parent pid and the executable; later minor versions
	 * may append more fields: they are skipped. */
	if (p < end && (mp_varint_get(&p, end, &v[3]) || get_string(&p, end, &exe, &store))) {
		free(body);
		return mp_diag_set(diag, MP_ECORRUPT, MP_FILE_PREFIX_LEN, -1, "header fields do not parse");
	}
	cap->hdr.ppid = v[3];
	cap->hdr.exe = exe ? exe : "";
	cap->hdr.clock = clock;
	cap->hdr.clock_origin_ns = v[0];
	cap->hdr.start_wall_ns = v[1];
	cap->hdr.pid = v[2];
	cap->hdr.hostname = host;
	cap->hdr.command_line = cmd;
	cap->data_offset = MP_FILE_PREFIX_LEN + (uint64_t)hlen + 4;
	cap->offset = cap->data_offset;
	free(body);
	return 0;
}

/* --------------------------------------------------------------- blocks */

/* Drop chunks joined by a checking pass that were not applied. */
static void pend_clear(mp_capture_t *cap)
{
	size_t i;

	for (i = cap->pend_pos; i < cap->npend; i++)
		mp__chunk_release(&cap->merge, cap->pend[i]);
	cap->npend = cap->pend_pos = 0;
}

/* The trailer: "MPTR", body length, CRC of those 8 bytes, body, CRC of the
 * body. `first` holds the 8 bytes already read. */
static int read_trailer(mp_capture_t *cap, const uint8_t *first, mp_diag_t *diag)
{
	uint8_t buf[MP_TRAILER_MAX];
	const uint8_t *p, *end;
	uint32_t blen;
	size_t n;

	memcpy(buf, first, 8);
	n = fread(buf + 8, 1, 4, cap->f);
	if (n < 4) {
		cap->end = MP_END_ABRUPT; /* cut off while writing the trailer */
		return 0;
	}
	if (CRC_BAD((uint32_t)crc32(0, buf, 8), mp_get_u32le(buf + 8)))
		return mp_diag_set(diag, MP_ECHECKSUM, (int64_t)cap->offset, (int64_t)cap->block_index,
				   "trailer at offset %llu: header checksum mismatch", (unsigned long long)cap->offset);
	blen = mp_get_u32le(buf + 4);
	if (blen > MP_TRAILER_MAX - 16)
		return mp_diag_set(diag, MP_ECORRUPT, (int64_t)cap->offset, (int64_t)cap->block_index,
				   "trailer at offset %llu: length %u is out of range",
				   (unsigned long long)cap->offset, blen);
	n = fread(buf + 12, 1, (size_t)blen + 4, cap->f);
	if (n < (size_t)blen + 4) {
		cap->end = MP_END_ABRUPT;
		return 0;
	}
	if (CRC_BAD((uint32_t)crc32(0, buf + 12, blen), mp_get_u32le(buf + 12 + blen)))
		return mp_diag_set(diag, MP_ECHECKSUM, (int64_t)cap->offset, (int64_t)cap->block_index,
				   "trailer at offset %llu: checksum mismatch", (unsigned long long)cap->offset);
	p = buf + 12;
	end = p + blen;
	if (mp_varint_get(&p, end, &cap->trailer.events) || mp_varint_get(&p, end, &cap->trailer.dropped) ||
	    mp_varint_get(&p, end, &cap->trailer.blocks) || mp_varint_get(&p, end, &cap->trailer.strings) ||
	    mp_varint_get(&p, end, &cap->trailer.end_time_ns))
		return mp_diag_set(diag, MP_ECORRUPT, (int64_t)cap->offset, (int64_t)cap->block_index,
				   "trailer at offset %llu: fields do not parse", (unsigned long long)cap->offset);
	/* (2.3) why the writer stopped, when it did not close the capture */
	cap->trailer.write_errno = cap->trailer.write_offset = cap->trailer.complete_ns = 0;
	if (p < end && (mp_varint_get(&p, end, &cap->trailer.write_errno) ||
			mp_varint_get(&p, end, &cap->trailer.write_offset) ||
			mp_varint_get(&p, end, &cap->trailer.complete_ns)))
		return mp_diag_set(diag, MP_ECORRUPT, (int64_t)cap->offset, (int64_t)cap->block_index,
				   "trailer at offset %llu: fields do not parse", (unsigned long long)cap->offset);
	if (cap->trailer.blocks != cap->block_index)
		return mp_diag_set(diag, MP_ECORRUPT, (int64_t)cap->offset, (int64_t)cap->block_index,
				   "trailer at offset %llu: it counts %llu blocks, the file has %llu",
				   (unsigned long long)cap->offset, (unsigned long long)cap->trailer.blocks,
				   (unsigned long long)cap->block_index);
	if (fgetc(cap->f) != EOF)
		return mp_diag_set(diag, MP_ECORRUPT, (int64_t)(cap->offset + 16 + blen), -1,
				   "unexpected data after the trailer at offset %llu",
				   (unsigned long long)(cap->offset + 16 + blen));
	cap->has_trailer = 1;
	cap->end = cap->trailer.write_errno ? MP_END_WRITE_FAILED : MP_END_CLEAN;
	return 0;
}

/* A good block: check its sections, then apply them. */
int mp__capture_apply_block(mp_capture_t *cap, const mp_fetch_t *fe, mp_diag_t *diag)
{
	int rc;

	pend_clear(cap);
	rc = mp__capture_sections(cap, fe->raw.data, fe->rlen, fe->offset, 0, diag);
	if (!rc)
		rc = mp__capture_sections(cap, fe->raw.data, fe->rlen, fe->offset, 1, diag);
	pend_clear(cap);
	if (rc)
		return rc;
	cap->offset = fe->next;
	/* a seek: the events stamped so far are all its checkpoint can cover
	 * (a round's events are in blocks before the block that ends it) */
	if (cap->seeked && cap->block_index > cap->seek_ck_block && cap->seek_cover_end == UINT64_MAX)
		cap->seek_cover_end = cap->next_index;
	cap->block_index++;
	cap->blocks_read++;
	return 0;
}

/* What ends the blocks: the data stops, the trailer, or an error. */
static int end_of_blocks(mp_capture_t *cap, const mp_fetch_t *fe, mp_diag_t *diag)
{
	switch (fe->kind) {
	case MP_FETCH_TRAILER:
		cap->eof = 1;
		if (fseeko(cap->f, (off_t)(fe->offset + 8), SEEK_SET))
			return mp_diag_set(diag, -errno, (int64_t)fe->offset, -1, "cannot seek");
		return read_trailer(cap, fe->first, diag);
	case MP_FETCH_ERROR:
		*diag = fe->diag;
		return fe->code;
	default:
		cap->eof = 1;
		cap->end = MP_END_ABRUPT;
		return 0;
	}
}

/* Cores this process may run on (its affinity mask, e.g. under taskset). */
static int cores_available(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return CPU_COUNT(&set);
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* Read and apply the next block, fetched ahead when the read-ahead is on
 * (blockio.h). Sets cap->eof at the end of the data. */
static int read_block(mp_capture_t *cap, mp_diag_t *diag)
{
	mp_fetch_t *fe;
	int rc;

	if (cap->readahead != MP_READAHEAD_OFF && !cap->ra_active) {
		int thread = cap->readahead == MP_READAHEAD_THREAD ||
			     (cap->readahead == MP_READAHEAD_AUTO && cores_available() >= 3);
		mp__readahead_begin(cap->ra, cap->f, cap->offset, cap->block_index, thread);
		cap->ra_active = 1;
	}
	if (!cap->ra_active) {
		mp__fetch_block(cap->f, cap->offset, cap->block_index, &cap->fetch);
		if (cap->fetch.kind == MP_FETCH_BLOCK)
			return mp__capture_apply_block(cap, &cap->fetch, diag);
		return end_of_blocks(cap, &cap->fetch, diag);
	}
	fe = mp__readahead_next(cap->ra);
	if (fe->kind == MP_FETCH_BLOCK) {
		rc = mp__capture_apply_block(cap, fe, diag);
		mp__readahead_done(cap->ra);
		return rc;
	}
	/* Nothing is read past this frame: the reader handles what ends the
	 * blocks, then stops the read-ahead, whose helpers may still be
	 * inflating blocks that followed a damaged one. */
	rc = end_of_blocks(cap, fe, diag);
	mp__readahead_end(cap->ra);
	cap->ra_active = 0; /* and no block is read again: eof or an error */
	return rc;
}

int mp__capture_help(mp_capture_t *cap)
{
	/* cap->ra is set before any event is read and kept until close */
	return cap->ra ? mp__readahead_help(cap->ra) : 0;
}

/* ----------------------------------------------------------------- events */

static void stamp(mp_capture_t *cap, mp_event_t *ev)
{
	ev->index = cap->next_index++;
	if (__builtin_expect(cap->frame_ops, 0) && ev->stack && !ev->op)
		ev->op = mp__stack_op(cap, ev->stack);
	if (ev->kind == MP_EV_STEP)
		cap->step = ev->step;
	else
		ev->step = cap->step;
	if (ev->time_ns < cap->last_time)
		ev->time_ns = cap->last_time; /* cannot happen with a well-formed file */
	cap->last_time = ev->time_ns;
}

static int fail(mp_capture_t *cap, int rc, mp_diag_t *diag)
{
	cap->sticky_err = rc;
	if (diag)
		cap->sticky_diag = *diag;
	cap->sticky_diag.code = rc;
	mp_diag_set_file(&cap->sticky_diag, cap->path);
	if (diag)
		*diag = cap->sticky_diag;
	return rc;
}

int mp__capture_next(mp_capture_t *cap, mp_event_t *ev, mp_diag_t *diag)
{
	mp_diag_t local;
	int rc;

	if (!diag)
		diag = &local;
	if (cap->sticky_err) {
		*diag = cap->sticky_diag;
		return cap->sticky_err;
	}
	for (;;) {
		if (cap->synth_pos < cap->nsynth) {
			*ev = cap->synth[cap->synth_pos++];
			ev->time_ns = cap->last_time;
			if (cap->synth_pos == cap->nsynth)
				cap->nsynth = cap->synth_pos = 0;
			stamp(cap, ev);
			return 1;
		}
		rc = mp__merge_next(cap, cap->eof || cap->deferred_err ? UINT64_MAX : cap->horizon, ev, diag);
		if (rc < 0)
			return fail(cap, rc, diag);
		if (rc > 0) {
			stamp(cap, ev);
			return 1;
		}
		if (cap->deferred_err) {
			*diag = cap->deferred_diag;
			return fail(cap, cap->deferred_err, diag);
		}
		if (cap->eof) {
			if (cap->has_trailer && !cap->seeked && cap->trailer.events != cap->records) {
				rc = mp_diag_set(diag, MP_ECORRUPT, (int64_t)cap->offset, -1,
						 "the trailer counts %llu events but the blocks hold %llu",
						 (unsigned long long)cap->trailer.events,
						 (unsigned long long)cap->records);
				return fail(cap, rc, diag);
			}
			return 0;
		}
		mp_diag_clear(&cap->deferred_diag);
		rc = read_block(cap, &cap->deferred_diag);
		if (rc < 0) {
			/* Return every event of the good blocks first. */
			cap->deferred_err = rc;
			cap->deferred_diag.code = rc;
		}
	}
}

int mp__capture_next_batch(mp_capture_t *cap, mp_event_t *ev, size_t max, size_t *n, mp_diag_t *diag)
{
	size_t k = 0;
	int rc = 1;

	while (k < max) {
		/* The common case inline: no synthetic event waits and one is
		 * ready before the horizon. Everything else: the full path. */
		if (cap->synth_pos >= cap->nsynth && !cap->sticky_err) {
			uint64_t limit = cap->eof || cap->deferred_err ? UINT64_MAX : cap->horizon;
			int r;
			size_t got = mp__merge_run(cap, limit, ev + k, max - k, &r, diag);
			for (size_t i = k; i < k + got; i++)
				stamp(cap, &ev[i]);
			k += got;
			if (r < 0) {
				rc = fail(cap, r, diag);
				break;
			}
			if (k == max)
				break;
			r = mp__merge_next(cap, limit, &ev[k], diag);
			if (r > 0) {
				stamp(cap, &ev[k++]);
				continue;
			}
			if (r < 0) {
				rc = fail(cap, r, diag);
				break;
			}
		}
		rc = mp__capture_next(cap, &ev[k], diag);
		if (rc <= 0)
			break;
		k++;
	}
	*n = k;
	return rc;
}

/* ------------------------------------------------------------ lifecycle */

/* Take ownership of f (closed on failure too). */
static int open_stream(mp_capture_t **out, FILE *f, const char *name, mp_diag_t *diag)
{
	mp_capture_t *cap;
	int rc;

	cap = calloc(1, sizeof(*cap));
	if (!cap || !(cap->path = strdup(name))) {
		free(cap);
		fclose(f);
		return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
	}
	cap->f = f;
	cap->step = -1;
	cap->end = MP_END_ABRUPT;
	mp__merge_init(&cap->merge);
	if ((rc = read_header(cap, diag))) {
		mp_capture_close(cap);
		return rc;
	}
	cap->src.path = cap->path;
	*out = cap;
	return 0;
}

int mp__capture_open_stream(mp_capture_t **out, FILE *f, const char *name, mp_diag_t *diag)
{
	return open_stream(out, f, name, diag);
}

int mp_capture_open(mp_capture_t **out, const char *path, mp_diag_t *diag)
{
	const char *env;
	FILE *f;
	int rc;

	*out = NULL;
	mp_diag_clear(diag);
	mp_diag_set_file(diag, path);
	if (mp_keep_is_run(path)) { /* `record --keep`: its window (keep.c) */
		mp_keep_run_t *k;
		if ((rc = mp_keep_open(&k, path, diag)))
			return rc;
		rc = mp_keep_window_open(k, out, diag);
		mp_keep_close(k);
		if (rc)
			return rc;
	} else {
		f = fopen(path, "rb");
		if (!f)
			return mp_diag_set(diag, -errno, -1, -1, "cannot open: %s", strerror(errno));
		if ((rc = open_stream(out, f, path, diag)))
			return rc;
	}
	env = getenv("MEMPROF_READAHEAD");
	return mp_capture_set_readahead(*out, !env ? MP_READAHEAD_AUTO
					      : strcmp(env, "0") == 0 ? MP_READAHEAD_OFF
					      : strcmp(env, "thread") == 0 ? MP_READAHEAD_THREAD
									 : MP_READAHEAD_AUTO);
}

int mp_capture_set_readahead(mp_capture_t *cap, int mode)
{
	if (mode != MP_READAHEAD_OFF && mode != MP_READAHEAD_AUTO && mode != MP_READAHEAD_THREAD)
		return MP_EUSAGE;
	if (cap->ra_active) {
		/* blocks fetched ahead are dropped and read again */
		mp__readahead_end(cap->ra);
		cap->ra_active = 0;
		if (fseeko(cap->f, (off_t)cap->offset, SEEK_SET))
			return -errno;
	}
	if (mode != MP_READAHEAD_OFF && !cap->ra && !(cap->ra = mp__readahead_new()))
		mode = MP_READAHEAD_OFF; /* the reader fetches itself: same events */
	cap->readahead = mode;
	return 0;
}

int mp_capture_open_memory(mp_capture_t **out, const void *data, size_t size, const char *name,
			   mp_diag_t *diag)
{
	FILE *f;

	*out = NULL;
	mp_diag_clear(diag);
	mp_diag_set_file(diag, name);
	if (size == 0)
		return mp_diag_set(diag, MP_EFORMAT, 0, -1,
				   "not a memprof capture (empty; expected the magic \"MEMPROF\" at offset 0)");
	f = fmemopen((void *)(uintptr_t)data, size, "rb");
	if (!f)
		return mp_diag_set(diag, -errno, -1, -1, "cannot read from memory: %s", strerror(errno));
	return open_stream(out, f, name, diag);
}

int mp__capture_rewind(mp_capture_t *cap, mp_diag_t *diag)
{
	mp__readahead_end(cap->ra);
	cap->ra_active = 0;
	pend_clear(cap);
	mp__merge_release(&cap->merge);
	mp__merge_init(&cap->merge);
	cap->offset = cap->data_offset;
	cap->block_index = 0;
	cap->blocks_read = 0;
	cap->nsynth = cap->synth_pos = 0;
	cap->horizon = 0;
	cap->last_time = 0;
	cap->step = cap->seeked ? cap->seek_step : -1;
	cap->seek_index = cap->seek_events; /* a seek holds: the read starts at its checkpoint again */
	cap->seeking = cap->seeked;
	cap->seek_cover_end = UINT64_MAX;
	cap->next_index = 0;
	cap->records = 0;
	cap->eof = 0;
	cap->deferred_err = 0;
	cap->sticky_err = 0;
	cap->has_trailer = 0;
	cap->end = MP_END_ABRUPT;
	/* Memory ids are re-declared as the file is read again; strings,
	 * stacks and modules are kept (ids are stable) so borrowed pointers
	 * stay valid. */
	cap->nmemories = 0;
	cap->module_defs = 0;
	if (fseeko(cap->f, (off_t)cap->data_offset, SEEK_SET))
		return mp_diag_set(diag, -errno, -1, -1, "cannot seek: %s", strerror(errno));
	return 0;
}

const mp_capture_header_t *mp_capture_header(const mp_capture_t *cap)
{
	return &cap->hdr;
}

const mp_capture_trailer_t *mp_capture_trailer(const mp_capture_t *cap)
{
	return cap->has_trailer ? &cap->trailer : NULL;
}

uint64_t mp_capture_blocks_read(const mp_capture_t *cap)
{
	return cap->blocks_read;
}

uint64_t mp_capture_peak_buffered_bytes(const mp_capture_t *cap)
{
	return cap->merge.peak_buffered;
}

void mp_capture_close(mp_capture_t *cap)
{
	uint32_t i;

	if (!cap)
		return;
	mp__readahead_free(cap->ra);
	if (cap->f)
		fclose(cap->f);
	pend_clear(cap); /* into the merge's spares: released next */
	mp__merge_release(&cap->merge);
	for (i = 0; i < cap->nstrings; i++)
		free(cap->strings[i]);
	free(cap->strings);
	free(cap->memories);
	mp__stacks_release(cap);
	free(cap->synth);
	free(cap->walk);
	free(cap->pend);
	mp__fetch_release(&cap->fetch);
	free(cap->hdr_strings);
	free(cap->path);
	free(cap);
}
