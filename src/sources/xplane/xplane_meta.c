/* xplane_meta.c - opening an xplane.pb (gzip: decompressed to a temporary
 * file) and reading the /host:CPU plane's metadata maps, which are stored
 * after its lines (first pass; see xplane_internal.h). */
#include "xplane_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>


/* gzip input: decompress into an unlinked temporary file, so both passes
 * and the random re-reads work on plain bytes with bounded memory. */
static int gunzip_to_tmp(xp_file *f, int in_fd, mp_diag_t *diag)
{
	const char *dir = getenv("TMPDIR");
	char tmpl[4096];
	unsigned char *buf;
	gzFile gz;
	int out, dupfd, rc = 0;
	uint64_t total = 0;

	snprintf(tmpl, sizeof(tmpl), "%s/memprof-xplane-XXXXXX", dir && *dir ? dir : "/tmp");
	out = mkstemp(tmpl);
	if (out < 0)
		return mp_diag_set(diag, -errno, -1, -1, "cannot create a temporary file to decompress into: %s",
				   strerror(errno));
	unlink(tmpl);
	dupfd = dup(in_fd);
	gz = dupfd >= 0 ? gzdopen(dupfd, "rb") : NULL;
	buf = malloc(XP_SCAN_BUF);
	if (!gz || !buf) {
		if (gz)
			gzclose(gz);
		else if (dupfd >= 0)
			close(dupfd);
		free(buf);
		close(out);
		return MP_ENOMEM;
	}
	for (;;) {
		int n = gzread(gz, buf, XP_SCAN_BUF);
		int zerr = Z_OK;
		const char *msg = gzerror(gz, &zerr);

		/* a stream cut short reads as EOF with Z_BUF_ERROR set */
		if (n < 0 || (n == 0 && (!gzeof(gz) || (zerr != Z_OK && zerr != Z_STREAM_END)))) {

			rc = mp_diag_set(diag, MP_ECOMPRESS, (int64_t)total, -1,
					 "gzip data is corrupt after %" PRIu64 " decompressed bytes: %s", total,
					 msg ? msg : "?");
			break;
		}
		if (n == 0)
			break;
		if (write(out, buf, (size_t)n) != n) {
			rc = mp_diag_set(diag, -(errno ? errno : EIO), -1, -1,
					 "cannot write the decompressed capture to a temporary file: %s",
					 strerror(errno ? errno : EIO));
			break;
		}
		total += (uint64_t)n;
	}
	free(buf);
	gzclose(gz);
	if (rc < 0) {
		close(out);
		return rc;
	}
	f->fd = out;
	f->gz = 1;
	f->size = total;
	return 0;
}

int xp_file_open(xp_file *f, const char *path, mp_diag_t *diag)
{
	unsigned char magic[2] = {0, 0};
	struct stat st;
	int fd, rc;

	f->fd = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return mp_diag_set(diag, -errno, -1, -1, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "not a regular file");
	}
	if (pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
		rc = gunzip_to_tmp(f, fd, diag);
		close(fd);
		if (rc < 0)
			return rc;
	} else {
		f->fd = fd;
		f->size = (uint64_t)st.st_size;
	}
	if (f->size >= (1ULL << XP_OFF_BITS))
		return mp_diag_set(diag, MP_ELIMIT, -1, -1, "files over 1 TiB are not supported");
	return 0;
}

void xp_file_close(xp_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	mp_i64map_free(&f->evmeta);
	mp_i64map_free(&f->statmeta);
	mp_strtab_free(&f->names);
	free(f->ref_global);
	f->ref_global = NULL;
	free(f->stat_small);
	free(f->ev_small);
	f->stat_small = NULL;
	f->ev_small = NULL;
	free(f->path);
	free(f->host);
}

static const char *const stat_names[XS_COUNT] = {
	[XS_ALLOCATOR_NAME] = "allocator_name",
	[XS_INDEX_ON_HOST] = "index_on_host",
	[XS_DEVICE_ORDINAL] = "device_ordinal",
	[XS_BYTES_RESERVED] = "bytes_reserved",
	[XS_BYTES_ALLOCATED] = "bytes_allocated",
	[XS_BYTES_AVAILABLE] = "bytes_available",
	[XS_FRAGMENTATION] = "fragmentation",
	[XS_PEAK_BYTES_IN_USE] = "peak_bytes_in_use",
	[XS_REQUESTED_BYTES] = "requested_bytes",
	[XS_ALLOCATION_BYTES] = "allocation_bytes",
	[XS_ADDR] = "addr",
	[XS_TF_OP] = "tf_op",
	[XS_GROUP_ID] = "group_id",
	[XS_REGION_TYPE] = "region_type",
	[XS_DATA_TYPE] = "data_type",
	[XS_SHAPE] = "shape",
};

static int stat_kind(const char *name)
{
	int k;

	for (k = 1; k < XS_COUNT; k++)
		if (!strcmp(name, stat_names[k]))
			return k;
	return XS_OTHER;
}

/* Read a short string field into buf (NUL-terminated); longer ones are
 * reported as "" so they never match a name we look for. */
static int read_short(mp_pw_window_t *rd, const mp_pw_field_t *fl, char *buf, size_t size)
{
	const uint8_t *p;
	int rc;

	buf[0] = '\0';
	if (fl->len >= size)
		return 0;
	rc = mp_pw_window_get(rd, fl->start, (size_t)fl->len, &p);
	if (rc < 0)
		return rc;
	memcpy(buf, p, (size_t)fl->len);
	buf[fl->len] = '\0';
	return 0;
}

/* event_metadata map entry: {1: key, 2: XEventMetadata {1: id, 2: name}}. */
static int read_event_meta(xp_file *f, const mp_pw_fcursor_t *pc, const mp_pw_field_t *entry)
{
	mp_pw_fcursor_t c, v;
	mp_pw_field_t fl, vf;
	int64_t key = 0;
	char name[32] = "";
	int rc;

	mp_pw_fcursor_sub(&c, pc, entry, "XPlane.event_metadata entry");
	while ((rc = mp_pw_fnext(&c, &fl)) > 0) {
		if (fl.num == 1 && fl.wt == MP_PW_VARINT) {
			key = (int64_t)fl.val;
		} else if (fl.num == 2 && fl.wt == MP_PW_LEN) {
			name[0] = '\0';
			mp_pw_fcursor_sub(&v, &c, &fl, "XEventMetadata");
			while ((rc = mp_pw_fnext(&v, &vf)) > 0)
				if (vf.num == 2 && vf.wt == MP_PW_LEN &&
				    (rc = read_short(c.w, &vf, name, sizeof(name))) < 0)
					return rc;
			if (rc < 0)
				return rc;
		}
	}
	if (rc < 0)
		return rc;
	if (!strcmp(name, "MemoryAllocation"))
		return mp_i64map_put(&f->evmeta, key, 1);
	if (!strcmp(name, "MemoryDeallocation"))
		return mp_i64map_put(&f->evmeta, key, 2);
	return 0;
}

/* stat_metadata map entry: {1: key, 2: XStatMetadata {1: id, 2: name}}. */
static int read_stat_meta(xp_file *f, const mp_pw_fcursor_t *pc, const mp_pw_field_t *entry)
{
	mp_pw_fcursor_t c, v;
	mp_pw_field_t fl, vf;
	int64_t key = 0;
	uint32_t nid = 0;
	int rc;

	mp_pw_fcursor_sub(&c, pc, entry, "XPlane.stat_metadata entry");
	while ((rc = mp_pw_fnext(&c, &fl)) > 0) {
		if (fl.num == 1 && fl.wt == MP_PW_VARINT) {
			key = (int64_t)fl.val;
		} else if (fl.num == 2 && fl.wt == MP_PW_LEN) {
			nid = 0;
			mp_pw_fcursor_sub(&v, &c, &fl, "XStatMetadata");
			while ((rc = mp_pw_fnext(&v, &vf)) > 0) {
				const uint8_t *p;

				if (vf.num != 2 || vf.wt != MP_PW_LEN)
					continue;
				rc = mp_pw_window_get(c.w, vf.start, (size_t)vf.len, &p);
				if (rc < 0)
					return rc;
				nid = mp_strtab_intern(&f->names, (const char *)p, (size_t)vf.len);
				if (nid == UINT32_MAX || nid >= (1u << 27))
					return mp_diag_set(c.w->diag, MP_ELIMIT, (int64_t)vf.off, -1,
							   "too many distinct stat names");
			}
			if (rc < 0)
				return rc;
		}
	}
	if (rc < 0)
		return rc;
	return mp_i64map_put(&f->statmeta, key, (nid << 5) | (uint32_t)stat_kind(mp_strtab_get(&f->names, nid)));
}

int xp_scan_metadata(xp_file *f, mp_diag_t *diag)
{
	mp_pw_window_t rd;
	mp_pw_fcursor_t top, pc;
	mp_pw_field_t fl, pf;
	int rc;

	rc = mp_pw_window_init(&rd, f->fd, f->size, XP_SCAN_BUF, XP_MAX_FIELD);
	if (rc < 0)
		return rc;
	rd.diag = diag;
	mp_pw_fcursor_init(&top, &rd, 0, f->size, "XSpace");
	while ((rc = mp_pw_fnext(&top, &fl)) > 0) {
		if (fl.num == 4 && fl.wt == MP_PW_LEN && !f->hostname[0]) {
			rc = read_short(&rd, &fl, f->hostname, sizeof(f->hostname));
		} else if (fl.num == 1 && fl.wt == MP_PW_LEN && !f->has_plane) {
			char name[64] = "";

			mp_pw_fcursor_sub(&pc, &top, &fl, "XPlane");
			while ((rc = mp_pw_fnext(&pc, &pf)) > 0)
				if (pf.num == 2 && pf.wt == MP_PW_LEN && (rc = read_short(&rd, &pf, name, sizeof(name))) < 0)
					break;
			if (rc >= 0 && !strcmp(name, "/host:CPU")) {
				f->has_plane = 1;
				f->plane_start = fl.start;
				f->plane_end = fl.start + fl.len;
			}
		}
		if (rc < 0)
			break;
	}
	if (rc >= 0 && f->has_plane) {
		mp_pw_fcursor_init(&pc, &rd, f->plane_start, f->plane_end, "XPlane");
		while ((rc = mp_pw_fnext(&pc, &pf)) > 0) {
			if (pf.wt != MP_PW_LEN)
				continue;
			if (pf.num == 4)
				rc = read_event_meta(f, &pc, &pf);
			else if (pf.num == 5)
				rc = read_stat_meta(f, &pc, &pf);
			if (rc < 0)
				break;
		}
		if (rc >= 0 && f->names.count) {
			f->ref_global = calloc(f->names.count, sizeof(*f->ref_global));
			if (!f->ref_global)
				rc = MP_ENOMEM;
		}
		if (rc >= 0)
			rc = xp_build_small_maps(f);
	}
	mp_pw_window_free(&rd);
	return rc < 0 ? rc : 0;
}

int xp_build_small_maps(xp_file *f)
{
	size_t pos;
	uint64_t key;
	uint32_t val;

	f->stat_small = calloc(XP_SMALL_IDS, sizeof(*f->stat_small));
	f->ev_small = calloc(XP_SMALL_IDS, 1);
	if (!f->stat_small || !f->ev_small)
		return MP_ENOMEM;
	for (pos = 0; mp_i64map_next(&f->statmeta, &pos, &key, &val);)
		if (key < XP_SMALL_IDS) /* ids below 0 are above it as unsigned */
			f->stat_small[key] = val + 1;
	for (pos = 0; mp_i64map_next(&f->evmeta, &pos, &key, &val);)
		if (key < XP_SMALL_IDS)
			f->ev_small[key] = (uint8_t)val;
	return 0;
}
