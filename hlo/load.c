/* load.c - from a path to a list of modules: read the bytes, gunzip, tell an
 * HloProto from an XSpace profile (xspace.c finds the HloProtos a profile
 * embeds), and decode one module on demand with protobuf-c. */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Decompressed inputs larger than this are refused (a gzip bomb guard);
 * fuzz builds lower it to stay inside libFuzzer's memory limit. */
#ifndef MP_HLO_MAX_INFLATED
#define MP_HLO_MAX_INFLATED ((size_t)4 << 30)
#endif

static int gunzip(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len, mp_diag_t *diag)
{
	z_stream zs;
	size_t cap = in_len * 4 + 4096, len = 0;
	uint8_t *buf = malloc(cap);
	int zr;

	if (!buf)
		return MP_ENOMEM;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		free(buf);
		return mp_diag_set(diag, MP_ECOMPRESS, 0, -1, "zlib: cannot start decompression");
	}
	zs.next_in = (Bytef *)(uintptr_t)in;
	do {
		size_t chunk_in = in_len - (size_t)((const uint8_t *)zs.next_in - in);

		zs.avail_in = chunk_in > UINT32_MAX ? UINT32_MAX : (uInt)chunk_in;
		if (len == cap) {
			uint8_t *nb;

			if (cap >= MP_HLO_MAX_INFLATED) {
				inflateEnd(&zs);
				free(buf);
				return mp_diag_set(diag, MP_ELIMIT, -1, -1,
						   "gzip data inflates beyond %zu bytes", MP_HLO_MAX_INFLATED);
			}
			cap = cap * 2 > MP_HLO_MAX_INFLATED ? MP_HLO_MAX_INFLATED : cap * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				inflateEnd(&zs);
				free(buf);
				return MP_ENOMEM;
			}
			buf = nb;
		}
		zs.next_out = buf + len;
		zs.avail_out = (cap - len) > UINT32_MAX ? UINT32_MAX : (uInt)(cap - len);
		zr = inflate(&zs, Z_NO_FLUSH);
		len = (size_t)(zs.next_out - buf);
		if (zr == Z_STREAM_END)
			break;
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			int64_t off = (int64_t)((const uint8_t *)zs.next_in - in);

			inflateEnd(&zs);
			free(buf);
			return mp_diag_set(diag, MP_ECOMPRESS, off, -1, "gzip data is corrupted (zlib: %s)",
					   zs.msg ? zs.msg : "error");
		}
		if (zr == Z_BUF_ERROR && zs.avail_in == 0 && len < cap) {
			inflateEnd(&zs);
			free(buf);
			return mp_diag_set(diag, MP_ETRUNCATED, (int64_t)in_len, -1,
					   "gzip data ends before the end of the stream");
		}
	} while (1);
	inflateEnd(&zs);
	*out = buf;
	*out_len = len;
	return 0;
}

/* ---- plain HloProto ---------------------------------------------------------- */

static int scan_hloproto(mp_hlo_file_t *f, mp_diag_t *diag)
{
	mp_pw_cursor_t w, mw;
	mp_pw_field_t fl, mf;
	const uint8_t *name = NULL;
	size_t name_len = 0;
	uint64_t id = 0;
	int rc, have_module = 0;

	mp_pw_cursor_init(&w, f->data, f->len, 0, "not an HloProto", diag);
	while ((rc = mp_pw_next(&w, &fl)) > 0) {
		if (fl.num != 1 || fl.wt != MP_PW_LEN)
			continue;
		have_module = 1;
		mp_pw_cursor_sub(&mw, &w, &fl, "HloModuleProto");
		while ((rc = mp_pw_next(&mw, &mf)) > 0) {
			if (mf.num == 1 && mf.wt == MP_PW_LEN) {
				name = mf.data;
				name_len = (size_t)mf.len;
			} else if (mf.num == 5 && mf.wt == MP_PW_VARINT) {
				id = mf.val;
			}
		}
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	if (!have_module)
		return mp_diag_set(diag, MP_EFORMAT, 0, -1,
				   "not an HloProto (no hlo_module field) nor an xplane.pb with HloProtos");
	return mp_hlo_file_add_module(f, name ? (const char *)name : "", name_len, NULL, 0, id, f->data, f->len);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static int open_owned(uint8_t *data, size_t len, const char *name, mp_hlo_file_t **out, mp_diag_t *diag)
{
	mp_hlo_file_t *f = calloc(1, sizeof(*f));
	int rc, is_x = name && (ends_with(name, ".xplane.pb") || ends_with(name, ".xplane.pb.gz"));

	if (!f) {
		free(data);
		return MP_ENOMEM;
	}
	f->data = data;
	f->len = len;
	if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		uint8_t *raw = NULL;
		size_t raw_len = 0;

		if ((rc = gunzip(data, len, &raw, &raw_len, diag)) < 0)
			goto fail;
		free(f->data);
		f->data = raw;
		f->len = raw_len;
	}
	rc = mp_hlo_scan_xspace(f, is_x, diag);
	if (rc < 0)
		goto fail;
	if (rc > 0 || is_x) {
		f->xspace = 1;
		if (f->n_mods == 0) {
			rc = mp_diag_set(diag, MP_ENODATA, -1, -1,
					 "the profile holds no HloProto (no \"Hlo Proto\" stats in a /host:metadata "
					 "plane; captured without HLO protos, or only CPU modules?)");
			goto fail;
		}
	} else {
		for (size_t i = 0; i < f->n_mods; i++) {
			free(f->mods[i].name);
			free(f->mods[i].display);
		}
		f->n_mods = 0;
		if ((rc = scan_hloproto(f, diag)) < 0)
			goto fail;
	}
	*out = f;
	return 0;
fail:
	mp_hlo_file_close(f);
	return rc;
}

int mp_hlo_file_open_mem(const void *data, size_t len, const char *name, mp_hlo_file_t **out,
			 mp_diag_t *diag)
{
	uint8_t *copy = malloc(len ? len : 1);

	*out = NULL;
	if (!copy)
		return MP_ENOMEM;
	if (len)
		memcpy(copy, data, len);
	return open_owned(copy, len, name, out, diag);
}

int mp_hlo_file_open(const char *path, mp_hlo_file_t **out, mp_diag_t *diag)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int rc;

	*out = NULL;
	mp_diag_set_file(diag, path);
	if (!fp)
		return mp_diag_set(diag, -errno, -1, -1, "cannot open: %s", strerror(errno));
	for (;;) {
		size_t n;

		if (len == cap && MP_VEC_RESERVE(buf, cap, len + ((size_t)1 << 20)) < 0) {
			free(buf);
			fclose(fp);
			return MP_ENOMEM;
		}
		n = fread(buf + len, 1, cap - len, fp);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(fp)) {
		rc = -EIO;
		free(buf);
		fclose(fp);
		return mp_diag_set(diag, rc, (int64_t)len, -1, "read error");
	}
	fclose(fp);
	rc = open_owned(buf, len, path, out, diag);
	if (rc < 0)
		mp_diag_set_file(diag, path);
	return rc;
}

void mp_hlo_file_close(mp_hlo_file_t *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_mods; i++) {
		free(f->mods[i].name);
		free(f->mods[i].display);
	}
	free(f->mods);
	free(f->data);
	free(f);
}

size_t mp_hlo_file_module_count(const mp_hlo_file_t *f)
{
	return f ? f->n_mods : 0;
}

const mp_hlo_module_info_t *mp_hlo_file_module(const mp_hlo_file_t *f, size_t i)
{
	return f && i < f->n_mods ? &f->mods[i].info : NULL;
}

int mp_hlo_file_is_xspace(const mp_hlo_file_t *f)
{
	return f ? f->xspace : 0;
}

int mp_hlo_file_find(const mp_hlo_file_t *f, const char *sel, size_t *index, mp_diag_t *diag)
{
	size_t hit = SIZE_MAX, hits = 0;
	char *end;
	unsigned long long id;

	errno = 0;
	id = strtoull(sel, &end, 10);
	for (size_t i = 0; i < f->n_mods; i++) {
		const mp_hlo_module_info_t *m = &f->mods[i].info;

		if (!strcmp(m->display, sel) || (*sel && !*end && !errno && m->program_id == id)) {
			*index = i; /* exact display name or id: unambiguous */
			return 0;
		}
		if (!strcmp(m->name, sel)) {
			if (hits++ == 0)
				hit = i;
		}
	}
	if (hits == 1) {
		*index = hit;
		return 0;
	}
	if (hits > 1)
		return mp_diag_set(diag, MP_EUSAGE, -1, -1,
				   "module name '%s' is ambiguous (%zu modules); select by program id", sel, hits);
	return mp_diag_set(diag, MP_ENOTFOUND, -1, -1, "no module '%s' in the file", sel);
}

/* ---- nesting guard ------------------------------------------------------------ */

/* protobuf-c decodes sub-messages recursively, and ShapeProto nests itself
 * (tuple_shapes): a hostile file of nested tuples would exhaust the stack.
 * XLA shapes nest a few levels; refuse more than MAX_TUPLE_DEPTH before
 * decoding. Walks HloProto.hlo_module.computations.instructions.shape. */
#define MAX_TUPLE_DEPTH 64

static int shape_depth_ok(const uint8_t *p, size_t n, int depth)
{
	mp_pw_cursor_t w;
	mp_pw_field_t fl;

	if (depth > MAX_TUPLE_DEPTH)
		return 0;
	/* malformed bytes are protobuf-c's to report: no diag */
	mp_pw_cursor_init(&w, p, n, 0, "ShapeProto", NULL);
	while (mp_pw_next(&w, &fl) > 0)
		if (fl.num == 4 && fl.wt == MP_PW_LEN && !shape_depth_ok(fl.data, (size_t)fl.len, depth + 1))
			return 0;
	return 1;
}

/* Walk nested messages along path[] (field numbers); call shape_depth_ok on the leaves. */
static int path_ok(const uint8_t *p, size_t n, const uint32_t *path, size_t k)
{
	mp_pw_cursor_t w;
	mp_pw_field_t fl;

	if (k == 0)
		return shape_depth_ok(p, n, 0);
	mp_pw_cursor_init(&w, p, n, 0, "HloProto", NULL);
	while (mp_pw_next(&w, &fl) > 0)
		if (fl.num == path[0] && fl.wt == MP_PW_LEN && !path_ok(fl.data, (size_t)fl.len, path + 1, k - 1))
			return 0;
	return 1;
}

int mp_hlo_module_load(const mp_hlo_file_t *f, size_t i, mp_hlo_module_t **out, mp_diag_t *diag)
{
	static const uint32_t shape_path[] = {1, 3, 2, 3}; /* module, computations, instructions, shape */
	const module_entry_t *m;
	Xla__HloProto *proto;
	mp_hlo_arena_t *arena;
	int rc;

	*out = NULL;
	if (!f || i >= f->n_mods)
		return mp_diag_set(diag, MP_EUSAGE, -1, -1, "module index out of range");
	m = &f->mods[i];
	if (!path_ok(m->bytes, m->len, shape_path, 4))
		return mp_diag_set(diag, MP_ELIMIT, -1, -1,
				   "module '%s': a shape nests tuples more than %d levels deep", m->info.display,
				   MAX_TUPLE_DEPTH);
	if (!(arena = mp_hlo_arena_new()))
		return MP_ENOMEM;
	proto = xla__hlo_proto__unpack(mp_hlo_arena_allocator(arena), m->len, m->bytes);
	if (!proto) {
		mp_hlo_arena_free(arena);
		return mp_diag_set(diag, MP_EFORMAT, f->xspace ? (int64_t)(m->bytes - f->data) : 0, -1,
				   "module '%s': cannot decode the HloProto (truncated or malformed protobuf)",
				   m->info.display);
	}
	if (!proto->hlo_module) {
		mp_hlo_arena_free(arena);
		return mp_diag_set(diag, MP_EHLO, -1, -1, "module '%s': the HloProto has no hlo_module",
				   m->info.display);
	}
	if (!proto->buffer_assignment) {
		mp_hlo_arena_free(arena);
		return mp_diag_set(diag, MP_EHLO, -1, -1,
				   "module '%s' has no buffer assignment (a before_optimizations or per-pass "
				   "dump); use the *after_optimizations.hlo.pb dump of the same module "
				   "(XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_proto)",
				   m->info.display);
	}
	rc = mp_hlo_model_build(arena, proto, out, diag);
	if (rc == 0)
		(*out)->program_id = m->info.program_id;
	return rc;
}
