/* xplane_export.c - any event source -> an XSpace that TensorBoard's Memory
 * Profile tool reads (see memprof/xplane_export.h).
 *
 * Streaming, in two passes over the source (lengths precede contents in the
 * wire format): pass 1 encodes every event only to count its bytes and to
 * collect the strings the events refer to (they become XStatMetadata,
 * referenced by ref_value); pass 2 writes the same bytes to the file. Memory
 * is the live allocations and the distinct strings, never the events.
 *
 * Sources without allocator stats (memprof captures) get the stats memprof's
 * own solver computes at each event (free bytes from the capacity or the
 * regions, exact fragmentation from addresses): a pre-pass runs the solver
 * with one timeline point per event (up to a budget), so that a report of
 * the exported file shows the same figures as a report of the original. */
#include <memprof/protowire.h>
#include <memprof/solver.h>
#include <memprof/xplane_dtype.h>
#include <memprof/xplane_export.h>
#include <memprof/vec.h>

#include <memprof/strtab.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct ex_live {
	uint64_t requested, allocated;
} ex_live;

/* per memory id: derived stats and the live allocations by address */
typedef struct ex_mem {
	uint64_t heap, peak;
	mp_i64map_t live; /* address -> index into lives; UINT32_MAX once freed */
} ex_mem;

/* The solver's state after each event of one memory id (its timeline with
 * one point per event), walked with a cursor in stream order. */
typedef struct ex_points {
	const mp_solver_point_t *p;
	size_t n, pos;
} ex_points;

typedef struct ex_state {
	ex_mem *mems;
	uint32_t nmems;
	ex_live *lives;
	uint32_t nlives;
	size_t caplives, capfree;
	uint32_t *free_slots;
	uint32_t nfree;
} ex_state;

/* Where bytes go: counted only (pass 1), a FILE or a gzFile (pass 2). */
typedef struct ex_sink {
	FILE *f;
	gzFile gz;
	uint64_t bytes;
	int err;
} ex_sink;

enum { SN_ALLOC_NAME = 1, SN_RESERVED, SN_ALLOCATED, SN_AVAILABLE, SN_FRAG, SN_PEAK, SN_REQ, SN_ALLOCB, SN_ADDR,
       SN_OP, SN_ID, SN_REGION, SN_DTYPE, SN_SHAPE, SN_GROUP, SN_COUNT };
static const char *const stat_names[SN_COUNT] = {
	"", "allocator_name", "bytes_reserved", "bytes_allocated", "bytes_available", "fragmentation",
	"peak_bytes_in_use", "requested_bytes", "allocation_bytes", "addr", "tf_op", "id", "region_type",
	"data_type", "shape", "group_id",
};

static void sink_write(ex_sink *s, const void *p, size_t n)
{
	s->bytes += n;
	if (s->err || n == 0)
		return;
	if (s->gz) {
		if (gzwrite(s->gz, p, (unsigned)n) != (int)n)
			s->err = MP_ECOMPRESS;
	} else if (s->f && fwrite(p, 1, n, s->f) != n) {
		s->err = -(errno ? errno : EIO);
	}
}

static void state_free(ex_state *st)
{
	uint32_t i;

	for (i = 0; i < st->nmems; i++)
		mp_i64map_free(&st->mems[i].live);
	free(st->mems);
	free(st->lives);
	free(st->free_slots);
	memset(st, 0, sizeof(*st));
}

static ex_mem *mem_of(ex_state *st, uint32_t id)
{
	if (id >= st->nmems) {
		uint32_t n = id + 1;
		ex_mem *nm;

		if (id >= 65536u)
			return NULL;
		nm = realloc(st->mems, n * sizeof(*nm));
		if (!nm)
			return NULL;
		memset(nm + st->nmems, 0, (n - st->nmems) * sizeof(*nm));
		st->mems = nm;
		st->nmems = n;
	}
	return &st->mems[id];
}

static int live_add(ex_state *st, ex_mem *m, uint64_t addr, uint64_t req, uint64_t alloc)
{
	uint32_t i;

	if (mp_i64map_get(&m->live, (int64_t)addr, &i) && i != UINT32_MAX) {
		/* an allocation at a live address replaces the old one */
		m->heap -= st->lives[i].allocated;
	} else if (st->nfree) {
		i = st->free_slots[--st->nfree];
	} else {
		/* a freed slot's index goes to free_slots: room for every one */
		if (MP_VEC_RESERVE(st->lives, st->caplives, (size_t)st->nlives + 1) < 0 ||
		    MP_VEC_RESERVE(st->free_slots, st->capfree, (size_t)st->nlives + 1) < 0)
			return MP_ENOMEM;
		i = st->nlives++;
	}
	st->lives[i] = (ex_live){req, alloc};
	m->heap += alloc;
	if (m->heap > m->peak)
		m->peak = m->heap;
	return mp_i64map_put(&m->live, (int64_t)addr, i);
}

/* Returns 1 and the sizes if addr was live (and removes it). */
static int live_remove(ex_state *st, ex_mem *m, uint64_t addr, ex_live *out)
{
	uint32_t i;

	if (!mp_i64map_get(&m->live, (int64_t)addr, &i) || i == UINT32_MAX)
		return 0;
	*out = st->lives[i];
	m->heap -= out->allocated;
	st->free_slots[st->nfree++] = i;
	mp_i64map_put(&m->live, (int64_t)addr, UINT32_MAX);
	return 1;
}

/* TF DataType enum of a dtype name, -1 if it has none. */
static int64_t dtype_enum(const char *name)
{
	char buf[48];
	int64_t v;

	for (v = 0; v < 31; v++)
		if (!strcmp(mp_tf_dtype_name(v, buf, sizeof(buf)), name))
			return v;
	return -1;
}

static void stat_int(mp_pw_buf_t *ev, mp_pw_buf_t *tmp, uint32_t id, int64_t v)
{
	tmp->len = 0;
	mp_pw_put_uint(tmp, 1, id);
	mp_pw_put_uint(tmp, 4, (uint64_t)v);
	mp_pw_put_msg(ev, 4, tmp);
}

/* ref_value: the string is an XStatMetadata name; ids are stable across
 * the two passes because interning is deterministic. */
static int stat_ref(mp_pw_buf_t *ev, mp_pw_buf_t *tmp, mp_strtab_t *names, uint32_t id, const char *s)
{
	uint32_t ref = mp_strtab_intern(names, s, strlen(s));

	if (ref == UINT32_MAX)
		return MP_ENOMEM;
	tmp->len = 0;
	mp_pw_put_uint(tmp, 1, id);
	mp_pw_put_uint(tmp, 7, ref);
	mp_pw_put_msg(ev, 4, tmp);
	return 0;
}

/* One XLine.events field (tag included) for ev, in the stat order of
 * BFCAllocator::AddTraceMe. */
static int encode_event(mp_pw_buf_t *out, mp_pw_buf_t *ev, mp_pw_buf_t *tmp, mp_strtab_t *names, const mp_source_t *src,
			const mp_event_t *e, const char *memname, const mp_allocator_stats_t *s, uint64_t req,
			uint64_t alloc)
{
	const char *op = mp_source_string(src, e->op);
	const char *dtype = mp_source_string(src, e->dtype);
	const char *shape = mp_source_string(src, e->shape);
	int rc = 0;

	ev->len = 0;
	mp_pw_put_uint(ev, 1, e->kind == MP_EV_ALLOC ? 1 : 2);
	mp_pw_put_uint(ev, 2, e->time_ns * 1000);
	rc |= stat_ref(ev, tmp, names, SN_ALLOC_NAME, memname);
	stat_int(ev, tmp, SN_RESERVED, (int64_t)s->stack_bytes);
	stat_int(ev, tmp, SN_ALLOCATED, (int64_t)s->heap_bytes);
	stat_int(ev, tmp, SN_AVAILABLE, (int64_t)s->free_bytes);
	tmp->len = 0;
	mp_pw_put_uint(tmp, 1, SN_FRAG);
	mp_pw_put_double(tmp, 2, s->fragmentation);
	mp_pw_put_msg(ev, 4, tmp);
	stat_int(ev, tmp, SN_PEAK, (int64_t)s->peak_bytes);
	stat_int(ev, tmp, SN_REQ, (int64_t)req);
	stat_int(ev, tmp, SN_ALLOCB, (int64_t)alloc);
	tmp->len = 0;
	mp_pw_put_uint(tmp, 1, SN_ADDR);
	mp_pw_put_uint(tmp, 3, e->address);
	mp_pw_put_msg(ev, 4, tmp);
	if (*op)
		rc |= stat_ref(ev, tmp, names, SN_OP, op);
	if (e->step >= 0)
		stat_int(ev, tmp, SN_ID, e->step);
	if (e->region != MP_REGION_UNKNOWN)
		rc |= stat_ref(ev, tmp, names, SN_REGION, mp_region_type_name(e->region));
	if (*dtype) {
		int64_t v = dtype_enum(dtype);

		if (v >= 0)
			stat_int(ev, tmp, SN_DTYPE, v);
		else /* xprof shows INVALID; memprof keeps the name */
			rc |= stat_ref(ev, tmp, names, SN_DTYPE, dtype);
	}
	if (*shape)
		rc |= stat_ref(ev, tmp, names, SN_SHAPE, shape);
	if (e->step >= 0)
		stat_int(ev, tmp, SN_GROUP, e->step);
	out->len = 0;
	mp_pw_put_msg(out, 4, ev);
	if (out->oom || ev->oom || tmp->oom)
		return MP_ENOMEM;
	return rc ? MP_ENOMEM : 0;
}

/* The solver's point for event `index` of memory `id`, or NULL. */
static const mp_solver_point_t *point_at(ex_points *pts, uint32_t npts, uint32_t id, uint64_t index)
{
	ex_points *x;

	if (!pts || id >= npts)
		return NULL;
	x = &pts[id];
	while (x->pos < x->n && x->p[x->pos].event_index < index)
		x->pos++;
	return x->pos < x->n && x->p[x->pos].event_index == index ? &x->p[x->pos] : NULL;
}

/* Total timeline points the pre-pass may keep (about 100 bytes each). */
#define EX_POINT_BUDGET 2000000u

static int prepass(mp_source_t *src, mp_solver_t **out, ex_points **pts, uint32_t *npts, mp_diag_t *diag)
{
	mp_solver_options_t o;
	mp_solver_t *sv;
	uint32_t nm = mp_source_memory_count(src), i;
	int rc;

	*out = NULL;
	*pts = NULL;
	*npts = 0;
	mp_solver_options_init(&o);
	o.breakdown = 0;
	o.timeline_points = EX_POINT_BUDGET / (nm ? nm : 1);
	if (o.timeline_points < 1000)
		o.timeline_points = 1000;
	sv = mp_solver_new(&o);
	if (!sv)
		return MP_ENOMEM;
	rc = mp_source_rewind(src, diag);
	if (rc == 0)
		rc = mp_solver_run(sv, src, diag);
	if (rc < 0) {
		mp_solver_free(sv);
		return rc;
	}
	for (i = 0; i < mp_solver_device_count(sv); i++)
		if (mp_solver_device(sv, i)->id + 1 > *npts)
			*npts = mp_solver_device(sv, i)->id + 1;
	*pts = calloc(*npts ? *npts : 1, sizeof(**pts));
	if (!*pts) {
		mp_solver_free(sv);
		return MP_ENOMEM;
	}
	for (i = 0; i < mp_solver_device_count(sv); i++) {
		const mp_solver_device_t *d = mp_solver_device(sv, i);

		(*pts)[d->id] = (ex_points){d->timeline, d->timeline_count, 0};
	}
	*out = sv;
	return 0;
}

/* One pass: every memory event encoded and sent to the sink. */
static int run_pass(mp_source_t *src, mp_strtab_t *names, ex_points *pts, uint32_t npts, ex_sink *sink,
		    mp_xplane_export_stats_t *stats, mp_diag_t *diag)
{
	ex_state st;
	mp_pw_buf_t out = {0}, ev = {0}, tmp = {0};
	mp_event_t e;
	int rc;

	memset(&st, 0, sizeof(st));
	memset(stats, 0, sizeof(*stats));
	for (uint32_t i = 0; pts && i < npts; i++)
		pts[i].pos = 0;
	rc = mp_source_rewind(src, diag);
	while (rc == 0 && (rc = mp_source_next(src, &e, diag)) > 0) {
		const mp_memory_info_t *info;
		mp_allocator_stats_t s;
		ex_live lv = {e.requested_bytes, e.allocated_bytes};
		ex_mem *m;

		rc = 0;
		if (e.kind != MP_EV_ALLOC && e.kind != MP_EV_FREE) {
			stats->skipped += e.kind != MP_EV_MEMORY;
			continue;
		}
		m = mem_of(&st, e.memory);
		if (!m) {
			rc = MP_ENOMEM;
			break;
		}
		if (lv.allocated == 0)
			lv.allocated = lv.requested;
		if (e.kind == MP_EV_ALLOC) {
			rc = live_add(&st, m, e.address, lv.requested, lv.allocated);
			if (rc < 0)
				break;
		} else if (!live_remove(&st, m, e.address, &lv) && !(e.flags & MP_EVENT_F_STATS)) {
			lv.requested = lv.allocated = 0; /* unknown address: sizes unknown */
		}
		info = mp_source_memory(src, e.memory);
		if (e.flags & MP_EVENT_F_STATS) {
			s = e.stats;
		} else {
			const mp_solver_point_t *pt = point_at(pts, npts, e.memory, e.index);
			uint64_t cap = info ? info->capacity_bytes : 0;

			s.stack_bytes = 0;
			s.heap_bytes = m->heap;
			s.free_bytes = cap > m->heap ? cap - m->heap : 0;
			s.peak_bytes = m->peak;
			s.fragmentation = NAN;
			if (pt) { /* what memprof's report computes at this event */
				s.stack_bytes = pt->stack_bytes;
				s.heap_bytes = pt->heap_bytes;
				s.free_bytes = pt->has_free ? pt->free_bytes : 0;
				s.fragmentation = pt->fragmentation;
			}
		}
		rc = encode_event(&out, &ev, &tmp, names, src, &e, info && info->name[0] ? info->name : "memory", &s,
				  lv.requested, lv.allocated);
		if (rc < 0)
			break;
		sink_write(sink, out.data, out.len);
		stats->events++;
	}
	state_free(&st);
	mp_pw_buf_free(&out);
	mp_pw_buf_free(&ev);
	mp_pw_buf_free(&tmp);
	return rc < 0 ? rc : 0;
}

int mp_xplane_export(mp_source_t *src, const char *path, const mp_xplane_export_options_t *opts,
		     mp_xplane_export_stats_t *stats, mp_diag_t *diag)
{
	mp_xplane_export_stats_t local;
	mp_solver_t *sv = NULL;
	ex_points *pts = NULL;
	uint32_t npts = 0;
	mp_strtab_t names;
	ex_sink count = {NULL, NULL, 0, 0}, out = {NULL, NULL, 0, 0};
	mp_pw_buf_t line_head = {0}, plane_head = {0}, meta = {0}, tail = {0}, t = {0};
	uint64_t events_bytes, line_len, plane_len;
	uint32_t i;
	int rc;

	mp_strtab_init(&names);
	for (i = 1; i < SN_COUNT; i++)
		if (mp_strtab_intern(&names, stat_names[i], strlen(stat_names[i])) != i) {
			mp_strtab_free(&names);
			return MP_ENOMEM;
		}
	/* pass 0 (sources without allocator stats): the solver's figures */
	if (!(opts && opts->source_has_stats)) {
		rc = prepass(src, &sv, &pts, &npts, diag);
		if (rc < 0)
			goto done;
	}
	/* pass 1: sizes and strings */
	rc = run_pass(src, &names, pts, npts, &count, &local, diag);
	if (rc < 0)
		goto done;
	events_bytes = count.bytes;
	mp_pw_put_uint(&line_head, 1, 0);
	mp_pw_put_str(&line_head, 2, "memprof");
	mp_pw_put_uint(&line_head, 3, (uint64_t)(opts ? opts->start_ns : 0));
	line_len = line_head.len + events_bytes;
	mp_pw_put_uint(&plane_head, 1, 0);
	mp_pw_put_str(&plane_head, 2, "/host:CPU");
	mp_xplane_put_meta(&meta, 4, 1, "MemoryAllocation");
	mp_xplane_put_meta(&meta, 4, 2, "MemoryDeallocation");
	for (i = 1; i < names.count; i++)
		mp_xplane_put_meta(&meta, 5, i, mp_strtab_get(&names, i));
	plane_len = plane_head.len + 1 + mp_pw_varint_size(line_len) + line_len + meta.len;
	mp_pw_put_str(&tail, 4, opts && opts->hostname ? opts->hostname : "memprof");
	if (line_head.oom || plane_head.oom || meta.oom || tail.oom) {
		rc = MP_ENOMEM;
		goto done;
	}
	/* pass 2: write */
	mp_diag_set_file(diag, path);
	if (opts && opts->gzip)
		out.gz = gzopen(path, "wb");
	else
		out.f = fopen(path, "wb");
	if (!out.gz && !out.f) {
		rc = mp_diag_set(diag, -(errno ? errno : EIO), -1, -1, "cannot create: %s", strerror(errno ? errno : EIO));
		goto done;
	}
	mp_pw_put_tag(&t, 1, MP_PW_LEN);
	mp_pw_put_varint(&t, plane_len);
	mp_pw_put_raw(&t, plane_head.data, plane_head.len);
	mp_pw_put_tag(&t, 3, MP_PW_LEN);
	mp_pw_put_varint(&t, line_len);
	mp_pw_put_raw(&t, line_head.data, line_head.len);
	if (t.oom) {
		rc = MP_ENOMEM;
		goto done;
	}
	sink_write(&out, t.data, t.len);
	{
		mp_strtab_t again;
		mp_xplane_export_stats_t second;

		/* the same strings get the same ids (interning is deterministic) */
		mp_strtab_init(&again);
		for (i = 1; i < SN_COUNT; i++)
			mp_strtab_intern(&again, stat_names[i], strlen(stat_names[i]));
		rc = run_pass(src, &again, pts, npts, &out, &second, diag);
		if (rc == 0 && (out.bytes - t.len != events_bytes || again.count != names.count))
			rc = mp_diag_set(diag, MP_ECORRUPT, -1, -1, "the input changed between the two passes");
		mp_strtab_free(&again);
	}
	if (rc < 0)
		goto done;
	sink_write(&out, meta.data, meta.len);
	sink_write(&out, tail.data, tail.len);
	if (out.err)
		rc = mp_diag_set(diag, out.err, -1, -1, "write failed: %s", mp_strerror(out.err));
done:
	if (out.gz && gzclose(out.gz) != Z_OK && rc == 0)
		rc = mp_diag_set(diag, MP_ECOMPRESS, -1, -1, "gzip write failed");
	if (out.f && fclose(out.f) != 0 && rc == 0)
		rc = mp_diag_set(diag, -(errno ? errno : EIO), -1, -1, "write failed: %s", strerror(errno ? errno : EIO));
	mp_strtab_free(&names);
	free(pts);
	mp_solver_free(sv);
	mp_pw_buf_free(&line_head);
	mp_pw_buf_free(&plane_head);
	mp_pw_buf_free(&meta);
	mp_pw_buf_free(&tail);
	mp_pw_buf_free(&t);
	if (stats)
		*stats = rc == 0 ? local : (mp_xplane_export_stats_t){0, 0};
	mp_source_rewind(src, NULL);
	return rc < 0 ? rc : 0;
}
