/* xplane_fixture.h - helpers for tests that build their own XSpace files
 * with memprof/xspace_build.h (no shared data needed). */
#ifndef MEMPROF_XPLANE_FIXTURE_H
#define MEMPROF_XPLANE_FIXTURE_H

#include <memprof/xplane.h>
#include <memprof/xspace_build.h>

/* A BFC-style memory event with every stat xprof reads. strings: ref != 0
 * stores strings by reference (ref_value), else inline (str_value). */
typedef struct fx_mem {
	const char *kind; /* "MemoryAllocation" / "MemoryDeallocation" */
	int64_t offset_ps;
	const char *allocator;
	int64_t stack, heap, free, peak, requested, allocation, addr;
	double frag;
	const char *op, *region, *shape; /* NULL = stat absent */
	int64_t dtype;                   /* -1 = absent */
	int64_t group;                   /* -1 = absent */
} fx_mem_t;

static inline void fx_add(mp_xsb_t *b, const fx_mem_t *m, int ref)
{
	void (*str)(mp_xsb_t *, const char *, const char *) = ref ? mp_xsb_stat_ref : mp_xsb_stat_str;

	mp_xsb_event(b, m->kind, m->offset_ps, 0);
	str(b, "allocator_name", m->allocator);
	mp_xsb_stat_int(b, "bytes_reserved", m->stack);
	mp_xsb_stat_int(b, "bytes_allocated", m->heap);
	mp_xsb_stat_int(b, "bytes_available", m->free);
	if (m->frag == 0.0)
		mp_xsb_stat_int(b, "fragmentation", 0); /* as TF stores a printed "0" */
	else
		mp_xsb_stat_double(b, "fragmentation", m->frag);
	mp_xsb_stat_int(b, "peak_bytes_in_use", m->peak);
	mp_xsb_stat_int(b, "requested_bytes", m->requested);
	mp_xsb_stat_int(b, "allocation_bytes", m->allocation);
	mp_xsb_stat_uint(b, "addr", (uint64_t)m->addr);
	if (m->op)
		str(b, "tf_op", m->op);
	mp_xsb_stat_int(b, "id", 99); /* pending_step_id: xprof ignores it */
	if (m->region)
		str(b, "region_type", m->region);
	if (m->dtype >= 0)
		mp_xsb_stat_int(b, "data_type", m->dtype);
	if (m->shape)
		str(b, "shape", m->shape);
	if (m->group >= 0)
		mp_xsb_stat_int(b, "group_id", m->group);
}

/* Write a one-host XSpace: a device plane, then /host:CPU with one line per
 * distinct `line` value of the events (lines[i] gives event i's line). */
static inline void fx_write(const char *path, const fx_mem_t *ev, size_t n, const int *lines,
			    const int64_t *line_ts, int nlines, int ref, int gzip)
{
	mp_xsb_t *b = mp_xsb_new();
	mp_diag_t diag;
	int l;
	size_t i;

	assert_non_null(b);
	mp_xsb_plane(b, 1, "/device:GPU:0");
	mp_xsb_line(b, 1, "Stream #1", 1000);
	mp_xsb_event(b, "MemoryAllocation", 5, 0); /* same name on another plane: ignored */
	mp_xsb_stat_str(b, "allocator_name", "decoy");
	mp_xsb_plane(b, 2, "/host:CPU");
	for (l = 0; l < nlines; l++) {
		mp_xsb_line(b, l + 1, "thread", line_ts ? line_ts[l] : 1000);
		mp_xsb_event(b, "SomeOp", 1, 5); /* a non-memory event */
		mp_xsb_stat_str(b, "tf_op", "x");
		for (i = 0; i < n; i++)
			if ((lines ? lines[i] : 0) == l)
				fx_add(b, &ev[i], ref);
	}
	mp_xsb_hostname(b, "fixture-host");
	assert_int_equal(mp_xsb_write(b, path, gzip, &diag), 0);
	mp_xsb_free(b);
}

/* Event kinds by the names xprof matches. */
#define FX_A "MemoryAllocation"
#define FX_D "MemoryDeallocation"

/* xprof's unit test case (xplane_to_memory_profile_test.cc), hand-checked:
 * heap 5000 at the peak, minus the 300 B allocation of the peak step that
 * is live -> 4700 B "unused preallocated", plus 2000 B of stack. */
static const fx_mem_t xprof_case[] = {
	{FX_A, 40000, "GPU_0_bfc", 2000, 3000, 5000, 8500, 200, 256, 0x1000, 0, "foo/bar", "output", "[4]", 1, -1},
	{FX_D, 50000, "GPU_0_bfc", 2000, 2744, 5256, 8500, 200, 256, 0x1000, 0, NULL, NULL, NULL, -1, -1},
	{FX_A, 70000, "GPU_0_bfc", 2000, 5000, 3000, 9500, 250, 300, 0x2000, 0.25, "mul_grad/Sum", "temp", "[]", 1, -1},
};

/* The events of a source but its memory descriptions, with their strings
 * copied out (at most 64). */
typedef struct fx_collected {
	mp_event_t ev[64];
	char op[64][64], dtype[64][32], shape[64][32];
	size_t n;
} fx_collected_t;

/* One file as a source (xprof_clock: xprof's times, offset_ps alone),
 * failing the test when it cannot be opened. Owned by the caller
 * (mp_source_close). */
static inline mp_source_t *fx_open1(const char *path, int xprof_clock)
{
	mp_xplane_options_t o = {-1, NULL, xprof_clock};
	mp_source_t *src = NULL;
	mp_diag_t diag;
	int rc = mp_xplane_open_source(&src, &path, 1, &o, &diag);

	if (rc)
		fail_msg("open %s: %s", path, diag.text);
	return src;
}

/* Read src to its end into c, failing the test on an error. */
static inline void fx_collect(mp_source_t *src, fx_collected_t *c)
{
	mp_event_t ev;
	mp_diag_t diag;
	int rc;

	c->n = 0;
	while ((rc = mp_source_next(src, &ev, &diag)) > 0) {
		if (ev.kind == MP_EV_MEMORY)
			continue;
		assert_true(c->n < 64);
		c->ev[c->n] = ev;
		snprintf(c->op[c->n], 64, "%s", mp_source_string(src, ev.op));
		snprintf(c->dtype[c->n], 32, "%s", mp_source_string(src, ev.dtype));
		snprintf(c->shape[c->n], 32, "%s", mp_source_string(src, ev.shape));
		c->n++;
	}
	assert_int_equal(rc, 0);
}

#endif
