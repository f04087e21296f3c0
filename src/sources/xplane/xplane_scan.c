/* xplane_scan.c - decoding memory events (the hot loop) and building the
 * time index (second pass; see xplane_internal.h). */
#include "xplane_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static inline int stat_meta(const xp_file *f, int64_t id, uint32_t *meta)
{
	if (id >= 0 && id < XP_SMALL_IDS) {
		*meta = f->stat_small[id];
		if (*meta)
			(*meta)--;
		return f->stat_small[id] != 0;
	}
	return mp_i64map_get(&f->statmeta, id, meta);
}

static inline int event_kind(const xp_file *f, int64_t id, uint32_t *kind)
{
	if (id >= 0 && id < XP_SMALL_IDS) {
		*kind = f->ev_small[id];
		return *kind != 0;
	}
	return mp_i64map_get(&f->evmeta, id, kind);
}

/* One XStat of an event (the field sf that c gave): its value is kept when
 * its metadata names a stat xprof reads. */
static int decode_stat(xp_file *f, const mp_pw_cursor_t *c, const mp_pw_field_t *sf, xp_mev *ev)
{
	mp_pw_cursor_t sc;
	mp_pw_field_t fl;
	xp_stat v = {0, 0, 0};
	int64_t mid = 0;
	uint32_t meta;
	int kind, rc;

	mp_pw_cursor_sub(&sc, c, sf, "XStat");
	while ((rc = mp_pw_next(&sc, &fl)) > 0) {
		switch (fl.num << 3 | fl.wt) {
		case (1 << 3) | MP_PW_VARINT:
			mid = (int64_t)fl.val;
			break;
		case (2 << 3) | MP_PW_I64:
			v = (xp_stat){XV_DOUBLE, fl.val, 0};
			break;
		case (3 << 3) | MP_PW_VARINT:
		case (4 << 3) | MP_PW_VARINT:
		case (7 << 3) | MP_PW_VARINT:
			v = (xp_stat){(uint8_t)fl.num, fl.val, 0};
			break;
		case (5 << 3) | MP_PW_LEN:
		case (6 << 3) | MP_PW_LEN:
		case (8 << 3) | MP_PW_LEN:
			v = (xp_stat){(uint8_t)fl.num, fl.start, fl.len};
			break;
		default:
			break;
		}
	}
	if (rc < 0)
		return rc;
	if (!stat_meta(f, mid, &meta))
		return 0;
	kind = (int)(meta & 31);
	if (kind == XS_OTHER)
		return 0;
	ev->st[kind] = v;
	if (kind == XS_ALLOCATOR_NAME || kind == XS_INDEX_ON_HOST || kind == XS_DEVICE_ORDINAL)
		ev->memkey = kind;
	return 0;
}

/* Decode the XEvent in [start, end) (it is read into the window whole: one
 * pread at most, then the memory face of the wire decoder: this is the hot
 * loop). Returns 1 for a memory event (ev filled), 0 for any other event,
 * negative on error. String stats keep their file offsets (xp_stat_string
 * reads them through the same window). */
int xp_decode_event(xp_file *f, mp_pw_window_t *rd, uint64_t start, uint64_t end, xp_mev *ev)
{
	const uint8_t *base;
	mp_pw_cursor_t c;
	mp_pw_field_t fl;
	uint32_t kind = 0;
	int rc, have_meta = 0;

	rc = mp_pw_window_get(rd, start, (size_t)(end - start), &base);
	if (rc < 0)
		return rc;
	mp_pw_cursor_init(&c, base, (size_t)(end - start), start, "XEvent", rd->diag);
	ev->memkey = 0;
	ev->offset_ps = 0;
	memset(ev->st, 0, sizeof(ev->st));
	while ((rc = mp_pw_next(&c, &fl)) > 0) {
		switch (fl.num << 3 | fl.wt) {
		case (1 << 3) | MP_PW_VARINT:
			/* metadata_id comes first in serialized events: stop early
			 * for the (many) events that are not memory events. */
			if (!event_kind(f, (int64_t)fl.val, &kind))
				return 0;
			have_meta = 1;
			break;
		case (2 << 3) | MP_PW_VARINT:
			ev->offset_ps = (int64_t)fl.val;
			break;
		case (4 << 3) | MP_PW_LEN:
			if ((rc = decode_stat(f, &c, &fl, ev)) < 0)
				return rc;
			break;
		default:
			break;
		}
	}
	if (rc < 0)
		return rc;
	if (!have_meta)
		return 0; /* metadata_id 0 is never a memory event's */
	ev->kind = (int)kind;
	return 1;
}

int64_t xp_stat_int(const xp_stat *st)
{
	double d;

	switch (st->slot) {
	case XV_INT:
	case XV_UINT:
		return (int64_t)st->val;
	case XV_DOUBLE:
		memcpy(&d, &st->val, 8);
		if (!(d == d) || d < -9.2e18 || d > 9.2e18)
			return 0;
		return (int64_t)d;
	default:
		return 0;
	}
}

double xp_stat_double(const xp_stat *st)
{
	double d;

	switch (st->slot) {
	case XV_DOUBLE:
		memcpy(&d, &st->val, 8);
		return d;
	case XV_INT:
		return (double)(int64_t)st->val;
	case XV_UINT:
		return (double)st->val;
	default:
		return 0.0;
	}
}

static int64_t gz_string(xp_source *s, mp_pw_window_t *rd, const xp_stat *st)
{
	const uint8_t *p;
	unsigned char *out;
	z_stream z;
	int rc, zr;
	size_t cap = 1u << 20;

	rc = mp_pw_window_get(rd, st->val, (size_t)st->len, &p);
	if (rc < 0)
		return rc;
	out = malloc(cap);
	if (!out)
		return MP_ENOMEM;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 32) != Z_OK) {
		free(out);
		return MP_ECOMPRESS;
	}
	z.next_in = (unsigned char *)(uintptr_t)p;
	z.avail_in = (uInt)st->len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	zr = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	if (zr != Z_STREAM_END) {
		free(out);
		return mp_diag_set(rd->diag, MP_ECOMPRESS, (int64_t)st->val, -1,
				   "compressed string stat is corrupt or longer than 1 MiB");
	}
	rc = (int)mp_strtab_intern(&s->strs, (const char *)out, cap - z.avail_out);
	free(out);
	return (uint32_t)rc == UINT32_MAX ? MP_ENOMEM : (int64_t)(uint32_t)rc;
}

int64_t xp_stat_string(xp_source *s, xp_file *f, mp_pw_window_t *rd, const xp_stat *st)
{
	const uint8_t *p;
	uint32_t meta, nid, id;
	int rc;

	switch (st->slot) {
	case XV_STR:
	case XV_BYTES:
		rc = mp_pw_window_get(rd, st->val, (size_t)st->len, &p);
		if (rc < 0)
			return rc;
		id = mp_strtab_intern(&s->strs, (const char *)p, (size_t)st->len);
		return id == UINT32_MAX ? MP_ENOMEM : (int64_t)id;
	case XV_REF:
		if (!stat_meta(f, (int64_t)st->val, &meta))
			return 0;
		nid = meta >> 5;
		if (nid >= f->names.count)
			return 0;
		if (!f->ref_global[nid]) {
			const char *str = mp_strtab_get(&f->names, nid);

			id = mp_strtab_intern(&s->strs, str, strlen(str));
			if (id == UINT32_MAX)
				return MP_ENOMEM;
			f->ref_global[nid] = id + 1;
		}
		return (int64_t)(f->ref_global[nid] - 1);
	case XV_GZSTR:
		return gz_string(s, rd, st);
	default:
		return 0;
	}
}

int64_t xp_memkey(xp_source *s, xp_file *f, mp_pw_window_t *rd, const xp_mev *ev)
{
	char num[32];
	uint32_t id;

	if (ev->memkey == XS_ALLOCATOR_NAME)
		return xp_stat_string(s, f, rd, &ev->st[XS_ALLOCATOR_NAME]);
	if (ev->memkey == 0)
		return 0;
	snprintf(num, sizeof(num), "%" PRId64, xp_stat_int(&ev->st[ev->memkey]));
	id = mp_strtab_intern(&s->strs, num, strlen(num));
	return id == UINT32_MAX ? MP_ENOMEM : (int64_t)id;
}

static int sat_add(int64_t a, int64_t b, int64_t *out)
{
	if (__builtin_add_overflow(a, b, out))
		*out = a > 0 ? INT64_MAX : INT64_MIN;
	return 0;
}

/* Find or create the memory of (file, key); returns its index. */
static int64_t mem_index(xp_source *s, uint32_t fi, uint32_t key)
{
	int64_t k = ((int64_t)fi << 32) | key;
	uint32_t m;
	xp_mem *nm;

	if (mp_i64map_get(&s->mem_of, k, &m))
		return m;
	if (s->nmems >= 65535)
		return MP_ELIMIT;
	if (MP_VEC_RESERVE(s->mems, s->capmems, (size_t)s->nmems + 1) < 0)
		return MP_ENOMEM;
	nm = s->mems;
	memset(&nm[s->nmems], 0, sizeof(*nm));
	nm[s->nmems].name_id = key;
	nm[s->nmems].host = fi;
	if (mp_i64map_put(&s->mem_of, k, s->nmems) < 0)
		return MP_ENOMEM;
	return s->nmems++;
}

static int index_event(xp_source *s, uint32_t fi, mp_pw_window_t *rd, const mp_pw_field_t *ef, uint32_t line,
		       int64_t ts)
{
	xp_file *f = &s->files[fi];
	xp_mev ev;
	int64_t key, mi, t;
	uint64_t used;
	xp_mem *m;
	int rc;

	rc = xp_decode_event(f, rd, ef->start, ef->start + ef->len, &ev);
	if (rc <= 0)
		return rc;
	key = xp_memkey(s, f, rd, &ev);
	if (key < 0)
		return (int)key;
	mi = mem_index(s, fi, (uint32_t)key);
	if (mi < 0)
		return mp_diag_set(rd->diag, (int)mi, (int64_t)ef->off, -1, "too many allocators");
	m = &s->mems[mi];
	/* xprof's peak: stack + heap, the last event (in stored order) that
	 * reaches the maximum wins; capacity is read at that event. */
	used = (uint64_t)xp_stat_int(&ev.st[XS_BYTES_RESERVED]) + (uint64_t)xp_stat_int(&ev.st[XS_BYTES_ALLOCATED]);
	if (!m->have_peak || used >= m->peak_used) {
		m->have_peak = 1;
		m->peak_used = used;
		m->capacity = used + (uint64_t)xp_stat_int(&ev.st[XS_BYTES_AVAILABLE]);
	}
	if (s->nidx == s->capidx) {
		/* grow by half: the index is the reader's one big allocation */
		uint64_t nc = s->capidx ? s->capidx + s->capidx / 2 : 4096;
		xp_entry *ni = realloc(s->idx, nc * sizeof(*ni));

		if (!ni)
			return MP_ENOMEM;
		s->idx = ni;
		s->capidx = nc;
	}
	/* ps -> ns, rounding toward minus infinity */
	t = ev.offset_ps >= 0 ? ev.offset_ps / 1000 : -((-(ev.offset_ps + 1)) / 1000) - 1;
	sat_add(ts, t, &t);
	s->idx[s->nidx].t = t;
	s->idx[s->nidx].loc = ((uint64_t)fi << 56) | ((uint64_t)(line & 0xffff) << XP_OFF_BITS) | ef->off;
	s->nidx++;
	return 0;
}

int xp_index_file(xp_source *s, uint32_t fi, mp_diag_t *diag)
{
	xp_file *f = &s->files[fi];
	mp_pw_window_t rd;
	mp_pw_fcursor_t pc;
	mp_pw_field_t lf, fl;
	uint32_t line = 0;
	int rc;

	if (!f->has_plane || f->evmeta.n == 0)
		return 0;
	rc = mp_pw_window_init(&rd, f->fd, f->size, XP_SCAN_BUF, XP_MAX_FIELD);
	if (rc < 0)
		return rc;
	rd.diag = diag;
	mp_pw_fcursor_init(&pc, &rd, f->plane_start, f->plane_end, "XPlane");
	while ((rc = mp_pw_fnext(&pc, &lf)) > 0) {
		mp_pw_fcursor_t lc;
		int64_t ts = 0;
		uint64_t before;

		if (lf.num != 3 || lf.wt != MP_PW_LEN)
			continue;
		/* timestamp_ns first (it precedes the events when serialized,
		 * but a reader must not depend on field order) */
		mp_pw_fcursor_sub(&lc, &pc, &lf, "XLine");
		while ((rc = mp_pw_fnext(&lc, &fl)) > 0)
			if (fl.num == 3 && fl.wt == MP_PW_VARINT)
				ts = (int64_t)fl.val;
		if (rc < 0)
			break;
		if (s->xprof_clock)
			ts = 0; /* xprof: XEvent.offset_ps alone */
		before = s->nidx;
		mp_pw_fcursor_sub(&lc, &pc, &lf, "XLine");
		while ((rc = mp_pw_fnext(&lc, &fl)) > 0) {
			if (fl.num != 4 || fl.wt != MP_PW_LEN)
				continue;
			rc = index_event(s, fi, &rd, &fl, line, ts);
			if (rc < 0)
				break;
		}
		if (rc < 0)
			break;
		/* time origin: the earliest start of a line with memory events */
		if (s->nidx > before && (!f->has_base || ts < f->base_ns)) {
			f->base_ns = ts;
			f->has_base = 1;
		}
		line++;
	}
	mp_pw_window_free(&rd);
	return rc < 0 ? rc : 0;
}
