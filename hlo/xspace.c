/* xspace.c - find the HloProtos embedded in an XSpace profile (xplane.pb):
 * plane "/host:metadata", one XEventMetadata per module named
 * "<module>(<program id>)", whose XStat "Hlo Proto" holds the serialized
 * HloProto (bytes_value) and XStat "program_id" the id (libtpu profiles omit
 * it: the metadata id is the program id). Walked field by field with the
 * memory face of memprof/protowire.h: the other planes (the bulk of a
 * profile) are skipped, never decoded. */
#include "internal.h"

#include <string.h>

static int bytes_eq(const uint8_t *p, size_t n, const char *s)
{
	return strlen(s) == n && (n == 0 || memcmp(p, s, n) == 0);
}

/* stat_metadata entries: find the ids named "Hlo Proto" and "program_id". */
static int plane_stat_ids(const mp_pw_cursor_t *plane, int64_t *hlo_id, int64_t *pid_id)
{
	mp_pw_cursor_t w = *plane, e, v;
	mp_pw_field_t f, ef, vf;
	int rc;

	while ((rc = mp_pw_next(&w, &f)) > 0) {
		int64_t key = 0;
		const uint8_t *nm = NULL;
		size_t nl = 0;

		if (f.num != 5 || f.wt != MP_PW_LEN)
			continue;
		mp_pw_cursor_sub(&e, &w, &f, "XPlane.stat_metadata");
		while ((rc = mp_pw_next(&e, &ef)) > 0) {
			if (ef.num == 1 && ef.wt == MP_PW_VARINT)
				key = (int64_t)ef.val;
			if (ef.num == 2 && ef.wt == MP_PW_LEN) {
				mp_pw_cursor_sub(&v, &e, &ef, "XStatMetadata");
				while ((rc = mp_pw_next(&v, &vf)) > 0)
					if (vf.num == 2 && vf.wt == MP_PW_LEN) {
						nm = vf.data;
						nl = (size_t)vf.len;
					}
				if (rc < 0)
					return rc;
			}
		}
		if (rc < 0)
			return rc;
		if (nm && bytes_eq(nm, nl, "Hlo Proto"))
			*hlo_id = key;
		else if (nm && bytes_eq(nm, nl, "program_id"))
			*pid_id = key;
	}
	return rc;
}

/* One XEventMetadata (the field fl of cursor c): a module when one of its
 * stats is the "Hlo Proto". */
static int event_metadata(mp_hlo_file_t *f, const mp_pw_cursor_t *c, const mp_pw_field_t *fl, int64_t key,
			  int64_t hlo_id, int64_t pid_id)
{
	mp_pw_cursor_t w, s;
	mp_pw_field_t mf, sf;
	const uint8_t *name = NULL, *hlo = NULL;
	size_t name_len = 0, hlo_len = 0;
	uint64_t id = (uint64_t)key, pid = 0;
	int rc, have_pid = 0;

	mp_pw_cursor_sub(&w, c, fl, "XEventMetadata");
	while ((rc = mp_pw_next(&w, &mf)) > 0) {
		if (mf.num == 1 && mf.wt == MP_PW_VARINT) {
			id = mf.val;
		} else if (mf.num == 2 && mf.wt == MP_PW_LEN) {
			name = mf.data;
			name_len = (size_t)mf.len;
		} else if (mf.num == 5 && mf.wt == MP_PW_LEN) {
			int64_t mid = 0;
			const uint8_t *bv = NULL;
			size_t bl = 0;
			uint64_t iv = 0;
			int have_iv = 0;

			mp_pw_cursor_sub(&s, &w, &mf, "XStat");
			while ((rc = mp_pw_next(&s, &sf)) > 0) {
				if (sf.num == 1 && sf.wt == MP_PW_VARINT)
					mid = (int64_t)sf.val;
				else if ((sf.num == 3 || sf.num == 4) && sf.wt == MP_PW_VARINT) {
					iv = sf.val;
					have_iv = 1;
				} else if (sf.num == 6 && sf.wt == MP_PW_LEN) {
					bv = sf.data;
					bl = (size_t)sf.len;
				}
			}
			if (rc < 0)
				return rc;
			if (mid == hlo_id && bv) {
				hlo = bv;
				hlo_len = bl;
			} else if (mid == pid_id && have_iv) {
				pid = iv;
				have_pid = 1;
			}
		}
	}
	if (rc < 0)
		return rc;
	if (!hlo)
		return 0;
	if (!have_pid)
		pid = id; /* libtpu profiles: the metadata id is the program id */
	{
		/* The name is "<module>(<program id>)"; the module name is the part before. */
		size_t mlen = name_len;

		if (name && name_len > 2 && name[name_len - 1] == ')') {
			for (size_t i = name_len - 1; i > 0; i--)
				if (name[i - 1] == '(') {
					mlen = i - 1;
					break;
				}
		}
		return mp_hlo_file_add_module(f, name ? (const char *)name : "", mlen,
				  name ? (const char *)name : NULL, name_len, pid, hlo, hlo_len);
	}
}

/* The modules of a /host:metadata plane (the field fl of cursor c); errors
 * go to diag. */
static int metadata_plane(mp_hlo_file_t *f, const mp_pw_cursor_t *c, const mp_pw_field_t *fl, mp_diag_t *diag)
{
	int64_t hlo_id = INT64_MIN, pid_id = INT64_MIN;
	mp_pw_cursor_t pw, e;
	mp_pw_field_t pf, ef;
	int rc;

	mp_pw_cursor_sub(&pw, c, fl, "XPlane");
	pw.diag = diag;
	if ((rc = plane_stat_ids(&pw, &hlo_id, &pid_id)) < 0 || hlo_id == INT64_MIN)
		return rc;
	while ((rc = mp_pw_next(&pw, &pf)) > 0) {
		int64_t key = 0;
		mp_pw_field_t val = {0};

		if (pf.num != 4 || pf.wt != MP_PW_LEN)
			continue;
		mp_pw_cursor_sub(&e, &pw, &pf, "XPlane.event_metadata");
		while ((rc = mp_pw_next(&e, &ef)) > 0) {
			if (ef.num == 1 && ef.wt == MP_PW_VARINT)
				key = (int64_t)ef.val;
			else if (ef.num == 2 && ef.wt == MP_PW_LEN)
				val = ef;
		}
		if (rc < 0)
			return rc;
		if (val.data && (rc = event_metadata(f, &e, &val, key, hlo_id, pid_id)) < 0)
			return rc;
	}
	return rc;
}

/* Returns 1 if the input is an XSpace (a /host:metadata plane, or planes
 * named like "/host:CPU" / "/device:GPU:0"), 0 if not, <0 on error. */
int mp_hlo_scan_xspace(mp_hlo_file_t *f, int must, mp_diag_t *diag)
{
	/* Until the bytes prove to be an XSpace, a malformed field only says
	 * they are not one: no diag unless the name says they must be. */
	mp_diag_t *probe = must ? diag : NULL;
	mp_pw_cursor_t w, pw;
	mp_pw_field_t fl, pf;
	int rc, found = 0;

	mp_pw_cursor_init(&w, f->data, f->len, 0, "not an XSpace", probe);
	while ((rc = mp_pw_next(&w, &fl)) > 0) {
		int is_meta = 0;

		if (fl.num != 1 || fl.wt != MP_PW_LEN)
			continue;
		mp_pw_cursor_sub(&pw, &w, &fl, "XPlane");
		while ((rc = mp_pw_next(&pw, &pf)) > 0) {
			if (pf.num != 2 || pf.wt != MP_PW_LEN)
				continue;
			if (bytes_eq(pf.data, (size_t)pf.len, "/host:metadata"))
				is_meta = 1;
			else if (pf.len > 1 && pf.data[0] == '/')
				found = 1; /* an XSpace plane, but not the one with HloProtos */
		}
		if (rc < 0)
			return must ? rc : 0;
		if (!is_meta)
			continue;
		found = 1;
		/* an XSpace: errors in its metadata plane are errors */
		if ((rc = metadata_plane(f, &w, &fl, diag)) < 0)
			return rc;
	}
	if (rc < 0)
		return must ? rc : 0;
	return found;
}
