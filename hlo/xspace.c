/* xspace.c - find the HloProtos embedded in an XSpace profile (xplane.pb):
 * plane "/host:metadata", one XEventMetadata per module named
 * "<module>(<program id>)", whose XStat "Hlo Proto" holds the serialized
 * HloProto (bytes_value) and XStat "program_id" the id (libtpu profiles omit
 * it: the metadata id is the program id). Walked with the wire reader: the
 * other planes (the bulk of a profile) are skipped, never decoded. */
#include "internal.h"

#include <string.h>

static int bytes_eq(const uint8_t *p, size_t n, const char *s)
{
	return strlen(s) == n && (n == 0 || memcmp(p, s, n) == 0);
}

/* stat_metadata entries: find the ids named "Hlo Proto" and "program_id". */
static int plane_stat_ids(const uint8_t *p, size_t n, const uint8_t *base, int64_t *hlo_id,
			  int64_t *pid_id, mp_diag_t *diag)
{
	mp_wire_t w, e, v;
	mp_wire_field_t f, ef, vf;
	int rc;

	mp_wire_init(&w, p, n, base);
	while ((rc = mp_wire_next(&w, &f)) > 0) {
		int64_t key = 0;
		const uint8_t *nm = NULL;
		size_t nl = 0;

		if (f.number != 5 || f.type != 2)
			continue;
		mp_wire_init(&e, f.data, f.len, base);
		while ((rc = mp_wire_next(&e, &ef)) > 0) {
			if (ef.number == 1 && ef.type == 0)
				key = (int64_t)ef.varint;
			if (ef.number == 2 && ef.type == 2) {
				mp_wire_init(&v, ef.data, ef.len, base);
				while ((rc = mp_wire_next(&v, &vf)) > 0)
					if (vf.number == 2 && vf.type == 2) {
						nm = vf.data;
						nl = vf.len;
					}
				if (rc < 0)
					return mp_hlo_wire_error(diag, rc, &v, "XStatMetadata");
			}
		}
		if (rc < 0)
			return mp_hlo_wire_error(diag, rc, &e, "XPlane.stat_metadata");
		if (nm && bytes_eq(nm, nl, "Hlo Proto"))
			*hlo_id = key;
		else if (nm && bytes_eq(nm, nl, "program_id"))
			*pid_id = key;
	}
	return rc < 0 ? mp_hlo_wire_error(diag, rc, &w, "XPlane") : 0;
}

static int event_metadata(mp_hlo_file_t *f, const uint8_t *p, size_t n, int64_t key,
			  int64_t hlo_id, int64_t pid_id, mp_diag_t *diag)
{
	mp_wire_t w, s;
	mp_wire_field_t fl, sf;
	const uint8_t *name = NULL, *hlo = NULL;
	size_t name_len = 0, hlo_len = 0;
	uint64_t id = (uint64_t)key, pid = 0;
	int rc, have_pid = 0;

	mp_wire_init(&w, p, n, f->data);
	while ((rc = mp_wire_next(&w, &fl)) > 0) {
		if (fl.number == 1 && fl.type == 0) {
			id = fl.varint;
		} else if (fl.number == 2 && fl.type == 2) {
			name = fl.data;
			name_len = fl.len;
		} else if (fl.number == 5 && fl.type == 2) {
			int64_t mid = 0;
			const uint8_t *bv = NULL;
			size_t bl = 0;
			uint64_t iv = 0;
			int have_iv = 0;

			mp_wire_init(&s, fl.data, fl.len, f->data);
			while ((rc = mp_wire_next(&s, &sf)) > 0) {
				if (sf.number == 1 && sf.type == 0)
					mid = (int64_t)sf.varint;
				else if ((sf.number == 3 || sf.number == 4) && sf.type == 0) {
					iv = sf.varint;
					have_iv = 1;
				} else if (sf.number == 6 && sf.type == 2) {
					bv = sf.data;
					bl = sf.len;
				}
			}
			if (rc < 0)
				return mp_hlo_wire_error(diag, rc, &s, "XStat");
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
		return mp_hlo_wire_error(diag, rc, &w, "XEventMetadata");
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

/* Returns 1 if the input is an XSpace (a /host:metadata plane, or planes
 * named like "/host:CPU" / "/device:GPU:0"), 0 if not, <0 on error. */
int mp_hlo_scan_xspace(mp_hlo_file_t *f, int must, mp_diag_t *diag)
{
	mp_wire_t w, pw, e;
	mp_wire_field_t fl, pf, ef;
	int rc, found = 0;

	mp_wire_init(&w, f->data, f->len, f->data);
	while ((rc = mp_wire_next(&w, &fl)) > 0) {
		int64_t hlo_id = INT64_MIN, pid_id = INT64_MIN;
		int is_meta = 0;

		if (fl.number != 1 || fl.type != 2)
			continue;
		mp_wire_init(&pw, fl.data, fl.len, f->data);
		while ((rc = mp_wire_next(&pw, &pf)) > 0) {
			if (pf.number != 2 || pf.type != 2)
				continue;
			if (bytes_eq(pf.data, pf.len, "/host:metadata"))
				is_meta = 1;
			else if (pf.len > 1 && pf.data[0] == '/')
				found = 1; /* an XSpace plane, but not the one with HloProtos */
		}
		if (rc < 0) {
			if (!must)
				return 0; /* not an XSpace after all */
			return mp_hlo_wire_error(diag, rc, &pw, "XPlane");
		}
		if (!is_meta)
			continue;
		found = 1;
		if ((rc = plane_stat_ids(fl.data, fl.len, f->data, &hlo_id, &pid_id, diag)) < 0)
			return rc;
		if (hlo_id == INT64_MIN)
			continue;
		mp_wire_init(&pw, fl.data, fl.len, f->data);
		while ((rc = mp_wire_next(&pw, &pf)) > 0) {
			int64_t key = 0;
			const uint8_t *val = NULL;
			size_t vlen = 0;

			if (pf.number != 4 || pf.type != 2)
				continue;
			mp_wire_init(&e, pf.data, pf.len, f->data);
			while ((rc = mp_wire_next(&e, &ef)) > 0) {
				if (ef.number == 1 && ef.type == 0)
					key = (int64_t)ef.varint;
				else if (ef.number == 2 && ef.type == 2) {
					val = ef.data;
					vlen = ef.len;
				}
			}
			if (rc < 0)
				return mp_hlo_wire_error(diag, rc, &e, "XPlane.event_metadata");
			if (val && (rc = event_metadata(f, val, vlen, key, hlo_id, pid_id, diag)) < 0)
				return rc;
		}
		if (rc < 0)
			return mp_hlo_wire_error(diag, rc, &pw, "XPlane");
	}
	if (rc < 0) {
		if (!must)
			return 0;
		return mp_hlo_wire_error(diag, rc, &w, "not an XSpace");
	}
	return found;
}

