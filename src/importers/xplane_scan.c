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
	return mp_imap_get(&f->statmeta, id, meta);
}

static inline int event_kind(const xp_file *f, int64_t id, uint32_t *kind)
{
	if (id >= 0 && id < XP_SMALL_IDS) {
		*kind = f->ev_small[id];
		return *kind != 0;
	}
	return mp_imap_get(&f->evmeta, id, kind);
}

/* Inline varint read for the hot path: 1 on success, 0 if cut off, -1 if
 * longer than 10 bytes. */
static inline int vread(const uint8_t **pp, const uint8_t *e, uint64_t *v)
{
	const uint8_t *p = *pp;
	int n;

	if (p < e && *p < 0x80) {
		*v = *p;
		*pp = p + 1;
		return 1;
	}
	n = pb_varint_mem(p, e, v);
	if (n <= 0)
		return n;
	*pp = p + n;
	return 1;
}

/* Skip or read one field whose tag was just read; fills *v (varint/fixed)
 * or q and len (length-delimited). 1 ok, else a negative code. */
static inline int field_value(const uint8_t **pp, const uint8_t *e, int wt, uint64_t *v, const uint8_t **q,
			      uint64_t *len)
{
	const uint8_t *p = *pp;
	int k, i, n;

	switch (wt) {
	case PB_VARINT:
		n = vread(&p, e, v);
		if (n <= 0)
			return n == 0 ? MP_ETRUNCATED : MP_ECORRUPT;
		break;
	case PB_LEN:
		n = vread(&p, e, len);
		if (n <= 0)
			return n == 0 ? MP_ETRUNCATED : MP_ECORRUPT;
		if (*len > (uint64_t)(e - p))
			return MP_ETRUNCATED;
		*q = p;
		p += *len;
		break;
	case PB_I64:
	case PB_I32:
		k = wt == PB_I64 ? 8 : 4;
		if (e - p < k)
			return MP_ETRUNCATED;
		*v = 0;
		for (i = k - 1; i >= 0; i--)
			*v = (*v << 8) | p[i];
		p += k;
		break;
	default:
		return MP_ECORRUPT;
	}
	*pp = p;
	return 1;
}

static int wire_error(mp_diag_t *diag, int code, uint64_t off, const char *what)
{
	return mp_diag_set(diag, code, (int64_t)off, -1,
			   code == MP_ETRUNCATED ? "%s: a field runs past the end of its message"
						 : "%s: invalid field (bad varint, field number or wire type)",
			   what);
}

static int decode_stat(xp_file *f, const uint8_t *base, uint64_t base_off, const uint8_t *p, const uint8_t *e,
		       xp_mev *ev, mp_diag_t *diag)
{
	xp_stat v = {0, 0, 0};
	int64_t mid = 0;
	uint32_t meta;
	int kind;

	while (p < e) {
		const uint8_t *at = p, *q = NULL;
		uint64_t tag, val = 0, len = 0;
		int rc = vread(&p, e, &tag);

		if (rc <= 0 || (tag >> 3) == 0)
			return wire_error(diag, rc == 0 ? MP_ETRUNCATED : MP_ECORRUPT, base_off + (uint64_t)(at - base),
					  "XStat");
		rc = field_value(&p, e, (int)(tag & 7), &val, &q, &len);
		if (rc < 0)
			return wire_error(diag, rc, base_off + (uint64_t)(at - base), "XStat");
		switch (tag) {
		case (1 << 3) | PB_VARINT:
			mid = (int64_t)val;
			break;
		case (2 << 3) | PB_I64:
			v = (xp_stat){XV_DOUBLE, val, 0};
			break;
		case (3 << 3) | PB_VARINT:
		case (4 << 3) | PB_VARINT:
		case (7 << 3) | PB_VARINT:
			v = (xp_stat){(uint8_t)(tag >> 3), val, 0};
			break;
		case (5 << 3) | PB_LEN:
		case (6 << 3) | PB_LEN:
		case (8 << 3) | PB_LEN:
			v = (xp_stat){(uint8_t)(tag >> 3), base_off + (uint64_t)(q - base), len};
			break;
		default:
			break;
		}
	}
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
 * pread at most, then plain pointer walking: this is the hot loop). Returns
 * 1 for a memory event (ev filled), 0 for any other event, negative on
 * error. String stats keep their file offsets (xp_stat_string reads them
 * through the same window). */
int xp_decode_event(xp_file *f, pb_rd *rd, uint64_t start, uint64_t end, xp_mev *ev)
{
	const uint8_t *base, *p, *e;
	uint32_t kind = 0;
	int rc, have_meta = 0;

	rc = pb_rd_ptr(rd, start, (size_t)(end - start), &base);
	if (rc < 0)
		return rc;
	p = base;
	e = base + (end - start);
	ev->memkey = 0;
	ev->offset_ps = 0;
	memset(ev->st, 0, sizeof(ev->st));
	while (p < e) {
		const uint8_t *at = p, *q = NULL;
		uint64_t tag, val = 0, len = 0;

		rc = vread(&p, e, &tag);
		if (rc <= 0 || (tag >> 3) == 0)
			return wire_error(rd->diag, rc == 0 ? MP_ETRUNCATED : MP_ECORRUPT, start + (uint64_t)(at - base),
					  "XEvent");
		rc = field_value(&p, e, (int)(tag & 7), &val, &q, &len);
		if (rc < 0)
			return wire_error(rd->diag, rc, start + (uint64_t)(at - base), "XEvent");
		if (tag == ((1 << 3) | PB_VARINT)) {
			/* metadata_id comes first in serialized events: stop early
			 * for the (many) events that are not memory events. */
			if (!event_kind(f, (int64_t)val, &kind))
				return 0;
			have_meta = 1;
		} else if (tag == ((2 << 3) | PB_VARINT)) {
			ev->offset_ps = (int64_t)val;
		} else if (tag == ((4 << 3) | PB_LEN)) {
			rc = decode_stat(f, base, start, q, q + len, ev, rd->diag);
			if (rc < 0)
				return rc;
		}
	}
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

static int64_t gz_string(xp_source *s, pb_rd *rd, const xp_stat *st)
{
	const uint8_t *p;
	unsigned char *out;
	z_stream z;
	int rc, zr;
	size_t cap = 1u << 20;

	rc = pb_rd_ptr(rd, st->val, (size_t)st->len, &p);
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

int64_t xp_stat_string(xp_source *s, xp_file *f, pb_rd *rd, const xp_stat *st)
{
	const uint8_t *p;
	uint32_t meta, nid, id;
	int rc;

	switch (st->slot) {
	case XV_STR:
	case XV_BYTES:
		rc = pb_rd_ptr(rd, st->val, (size_t)st->len, &p);
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

int64_t xp_memkey(xp_source *s, xp_file *f, pb_rd *rd, const xp_mev *ev)
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

	if (mp_imap_get(&s->mem_of, k, &m))
		return m;
	if (s->nmems >= 65535)
		return MP_ELIMIT;
	if ((s->nmems & (s->nmems - 1)) == 0) { /* grow at powers of two */
		nm = realloc(s->mems, (s->nmems ? 2 * s->nmems : 1) * sizeof(*nm));
		if (!nm)
			return MP_ENOMEM;
		s->mems = nm;
	}
	nm = s->mems;
	memset(&nm[s->nmems], 0, sizeof(*nm));
	nm[s->nmems].name_id = key;
	nm[s->nmems].host = fi;
	if (mp_imap_put(&s->mem_of, k, s->nmems) < 0)
		return MP_ENOMEM;
	return s->nmems++;
}

static int index_event(xp_source *s, uint32_t fi, pb_rd *rd, const pb_field *ef, uint32_t line, int64_t ts)
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
		return mp_diag_set(rd->diag, (int)mi, (int64_t)ef->at, -1, "too many allocators");
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
	s->idx[s->nidx].loc = ((uint64_t)fi << 56) | ((uint64_t)(line & 0xffff) << XP_OFF_BITS) | ef->at;
	s->nidx++;
	return 0;
}

int xp_index_file(xp_source *s, uint32_t fi, mp_diag_t *diag)
{
	xp_file *f = &s->files[fi];
	pb_rd rd;
	pb_cur pc;
	pb_field lf, fl;
	uint32_t line = 0;
	int rc;

	if (!f->has_plane || f->evmeta.n == 0)
		return 0;
	rc = pb_rd_init(&rd, f->fd, f->size, XP_SCAN_BUF, XP_MAX_FIELD);
	if (rc < 0)
		return rc;
	rd.diag = diag;
	pc = (pb_cur){&rd, f->plane_start, f->plane_end};
	while ((rc = pb_next(&pc, &lf, "XPlane")) > 0) {
		pb_cur lc;
		int64_t ts = 0;
		uint64_t before;

		if (lf.num != 3 || lf.wt != PB_LEN)
			continue;
		/* timestamp_ns first (it precedes the events when serialized,
		 * but a reader must not depend on field order) */
		lc = (pb_cur){&rd, lf.start, lf.start + lf.len};
		while ((rc = pb_next(&lc, &fl, "XLine")) > 0)
			if (fl.num == 3 && fl.wt == PB_VARINT)
				ts = (int64_t)fl.val;
		if (rc < 0)
			break;
		if (s->xprof_clock)
			ts = 0; /* xprof: XEvent.offset_ps alone */
		before = s->nidx;
		lc = (pb_cur){&rd, lf.start, lf.start + lf.len};
		while ((rc = pb_next(&lc, &fl, "XLine")) > 0) {
			if (fl.num != 4 || fl.wt != PB_LEN)
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
	pb_rd_free(&rd);
	return rc < 0 ? rc : 0;
}
