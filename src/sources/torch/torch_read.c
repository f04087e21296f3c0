/* torch_read.c - a snapshot's pickle into the source's records, in one
 * streaming pass.
 *
 * The snapshot is {'segments': [segment...], 'device_traces': [[entry...]
 * per device], 'allocator_settings': {...}}. The pickle reader is told
 * (handler.open) to stream the top-level dict, the segments list and each
 * device's list: every segment dict and trace entry dict is handed over
 * here as soon as the pickle appends it, turned into a tr_span_t or a
 * 32-byte tr_rec_t (and the 4-byte id of its stack), and freed. Frames
 * are turned into an op and a stack id once per distinct frames list
 * (torch_frames.c). */
#include "torch_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Schema names, interned first so that keys compare as ids. The actions
 * come first, in TA_* order. */
static const char *const names[] = {
	"", "alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
	"segment_unmap", "oom", "snapshot", "annotate",
	"segments", "device_traces", "device", "address", "total_size", "is_expandable", "blocks", "size",
	"requested_size", "state", "active_allocated", "active_pending_free", "active_awaiting_free", "frames",
	"action", "addr", "time_us", "device_free", "user_metadata", "name",
	"segment_type", "small", "allocator_settings", "external_annotations", "max_split_size",
	"expandable_segments", "roundup_power2_divisions", "stage", "START", "END",
};
enum {
	K_SEGMENTS = TA_COUNT, K_DEVICE_TRACES, K_DEVICE, K_ADDRESS, K_TOTAL_SIZE, K_IS_EXPANDABLE, K_BLOCKS, K_SIZE,
	K_REQUESTED_SIZE, K_STATE, K_ACTIVE_ALLOCATED, K_ACTIVE_PENDING_FREE, K_ACTIVE_AWAITING_FREE, K_FRAMES,
	K_ACTION, K_ADDR, K_TIME_US, K_DEVICE_FREE, K_USER_METADATA, K_NAME,
	K_SEGMENT_TYPE, K_SMALL, K_ALLOCATOR_SETTINGS, K_EXTERNAL_ANNOTATIONS, K_MAX_SPLIT_SIZE,
	K_EXPANDABLE_SEGMENTS, K_ROUNDUP_POWER2_DIVISIONS, K_STAGE, K_START, K_END, K_COUNT
};
_Static_assert(sizeof(names) / sizeof(names[0]) == K_COUNT, "one name per key");
_Static_assert(K_COUNT <= sizeof(((tr_src_t *)0)->key) / sizeof(uint32_t), "room for the keys");

/* user_metadata is a thread's setting that holds for many entries in a
 * row, and few distinct values are expected: a record keeps a 16-bit slot
 * (in its padding) rather than the string id. */
uint32_t tr_meta_slot(tr_src_t *s, uint32_t str)
{
	static const char other[] = "(other user_metadata: more than 65534 distinct values)";
	uint32_t slot;

	if (!str)
		return 0;
	if (mp_i64map_get(&s->meta_slot, str, &slot))
		return slot;
	if (s->nmeta > TR_MAX_META)
		return TR_MAX_META;
	if (!s->meta_ids && !(s->meta_ids = calloc(TR_MAX_META + 1u, sizeof(*s->meta_ids))))
		return UINT32_MAX;
	if (!s->nmeta)
		s->nmeta = 1; /* slot 0: none */
	if (s->nmeta == TR_MAX_META) { /* full: the rest share the last slot */
		if ((s->meta_ids[TR_MAX_META] = mp_strtab_intern(&s->strings, other, sizeof(other) - 1)) == UINT32_MAX)
			return UINT32_MAX;
		s->nmeta++;
		return TR_MAX_META;
	}
	if (mp_i64map_put(&s->meta_slot, str, s->nmeta) < 0)
		return UINT32_MAX;
	s->meta_ids[s->nmeta] = str;
	return s->nmeta++;
}

/* A user_metadata value: its string id, 0 when absent, empty (PyTorch
 * writes "" when none was set) or not a string. */
static uint32_t meta_of(const mp_pk_value_t *v)
{
	return v && v->kind == MP_PK_STR ? v->u.str : 0;
}

static const mp_pk_value_t *get(const tr_src_t *s, const mp_pk_obj_t *d, int k)
{
	return mp_pickle_dict_get(d, s->key[k]);
}

/* An integer field: absent -> dflt; present but not an int -> error. An
 * integer outside 64 bits (an MP_PK_BIGINT) is an error too: an address,
 * a size, a time or a device that large cannot be placed. */
static int get_int(const tr_src_t *s, const mp_pk_obj_t *d, int k, int64_t dflt, int64_t *out, const char *what,
		   mp_diag_t *diag)
{
	const mp_pk_value_t *v = get(s, d, k);

	*out = dflt;
	if (!v || v->kind == MP_PK_NONE)
		return 0;
	if (v->kind == MP_PK_BIGINT)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "%s: field '%s' does not fit in 64 bits (%s integer of %"
				   PRIu32 " bytes)", what, names[k], v->big_neg ? "a negative" : "an", v->big_len);
	if (v->kind != MP_PK_INT && v->kind != MP_PK_BOOL)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "%s: field '%s' is not an integer", what, names[k]);
	*out = v->u.i;
	return 0;
}

static int get_size(const tr_src_t *s, const mp_pk_obj_t *d, int k, uint64_t *out, const char *what, mp_diag_t *diag)
{
	int64_t v;
	int rc = get_int(s, d, k, 0, &v, what, diag);

	if (rc == 0 && v < 0)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "%s: field '%s' is negative (%" PRId64 ")", what, names[k], v);
	*out = (uint64_t)v;
	return rc;
}

static int device_slot(tr_src_t *s, int64_t dev, tr_dev_t **out, mp_diag_t *diag)
{
	if (dev < 0 || dev >= (int64_t)TR_MAX_DEVICES)
		return mp_diag_set(diag, MP_ELIMIT, -1, -1, "device %" PRId64 " outside 0..%u", dev, TR_MAX_DEVICES - 1);
	if ((uint32_t)dev >= s->ndevs) {
		tr_dev_t *nd = realloc(s->devs, ((size_t)dev + 1) * sizeof(*nd));
		if (!nd)
			return MP_ENOMEM;
		memset(nd + s->ndevs, 0, ((size_t)dev + 1 - s->ndevs) * sizeof(*nd));
		s->devs = nd;
		s->ndevs = (uint32_t)dev + 1;
	}
	*out = &s->devs[dev];
	return 0;
}

static int frames_of(tr_src_t *s, const mp_pk_obj_t *d, uint32_t *op, uint32_t *stack, mp_diag_t *diag)
{
	const mp_pk_value_t *f = get(s, d, K_FRAMES);

	*op = *stack = 0;
	return f ? tr_frames_op(s, f, op, stack, diag) : 0;
}

/* A block of a segment at dump time: kept when allocated (or allocated
 * and awaiting the end of its use on another stream). */
static int read_block(tr_src_t *s, tr_dev_t *dev, const mp_pk_value_t *bv, uint64_t *cursor, size_t idx,
		      mp_diag_t *diag)
{
	char what[96];
	tr_span_t b = {0};
	const mp_pk_value_t *state;
	int64_t addr;
	int rc;

	snprintf(what, sizeof(what), "segment %zu, block %zu", dev->segs.n, idx);
	if (bv->kind != MP_PK_DICT)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "%s is not a dict", what);
	if ((rc = get_size(s, bv->u.obj, K_SIZE, &b.size, what, diag)) < 0 ||
	    (rc = get_size(s, bv->u.obj, K_REQUESTED_SIZE, &b.requested, what, diag)) < 0 ||
	    (rc = get_int(s, bv->u.obj, K_ADDRESS, (int64_t)*cursor, &addr, what, diag)) < 0)
		return rc;
	b.addr = (uint64_t)addr;
	*cursor = b.addr + b.size; /* blocks tile their segment: older snapshots give no address */
	state = get(s, bv->u.obj, K_STATE);
	if (!state || state->kind != MP_PK_STR)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "%s: no 'state' string", what);
	if (state->u.str != s->key[K_ACTIVE_ALLOCATED] && state->u.str != s->key[K_ACTIVE_PENDING_FREE] &&
	    state->u.str != s->key[K_ACTIVE_AWAITING_FREE])
		return 0; /* inactive: a free chunk of the segment */
	/* freed by the program, its free waiting on another stream: in the
	 * segment still, no longer in allocated bytes */
	b.awaiting = state->u.str != s->key[K_ACTIVE_ALLOCATED];
	b.size_max = b.size;
	if (!b.requested)
		b.requested = b.size;
	if ((rc = frames_of(s, bv->u.obj, &b.op, &b.stack, diag)) < 0)
		return rc;
	return mp_vec_push(&dev->blocks, &b, sizeof(b));
}

static int read_segment(tr_src_t *s, const mp_pk_value_t *sv, mp_diag_t *diag)
{
	char what[64];
	tr_span_t seg = {0};
	const mp_pk_value_t *blocks, *exp, *type;
	tr_dev_t *dev = NULL;
	int64_t device, addr;
	uint64_t cursor;
	int rc;

	snprintf(what, sizeof(what), "segment %" PRIu64, s->info.segments);
	if (sv->kind != MP_PK_DICT)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "%s is not a dict", what);
	if ((rc = get_int(s, sv->u.obj, K_DEVICE, 0, &device, what, diag)) < 0 ||
	    (rc = get_int(s, sv->u.obj, K_ADDRESS, 0, &addr, what, diag)) < 0 ||
	    (rc = get_size(s, sv->u.obj, K_TOTAL_SIZE, &seg.size, what, diag)) < 0 ||
	    (rc = device_slot(s, device, &dev, diag)) < 0)
		return rc;
	seg.addr = (uint64_t)addr;
	exp = get(s, sv->u.obj, K_IS_EXPANDABLE);
	seg.expandable = exp && (exp->kind == MP_PK_BOOL || exp->kind == MP_PK_INT) && exp->u.i;
	type = get(s, sv->u.obj, K_SEGMENT_TYPE);
	/* the pool decides how blocks are split; older snapshots name none:
	 * the small pool's segments are its 2 MiB buffers */
	seg.small = type && type->kind == MP_PK_STR ? type->u.str == s->key[K_SMALL] : seg.size == TR_SMALL_BUFFER;
	seg.size_max = seg.size;
	dev->seen = 1;
	s->info.segments++;
	if ((rc = mp_vec_push(&dev->segs, &seg, sizeof(seg))) < 0)
		return rc;
	blocks = get(s, sv->u.obj, K_BLOCKS);
	if (!blocks)
		return 0;
	if (blocks->kind != MP_PK_LIST)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "%s: 'blocks' is not a list", what);
	cursor = seg.addr;
	for (size_t i = 0; i < blocks->u.obj->n; i++)
		if ((rc = read_block(s, dev, &blocks->u.obj->items[i], &cursor, i, diag)) < 0)
			return rc;
	return 0;
}

/* "<frame>; device free 123 B (0.1 KiB)": what an OOM entry adds. */
static uint32_t oom_op(tr_src_t *s, uint32_t frame, uint64_t device_free)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	char text[600];
	double v = (double)device_free;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(text, sizeof(text), "%s%sdevice free %" PRIu64 " B (%.1f %s)", mp_strtab_get(&s->strings, frame),
		 frame ? "; " : "", device_free, v, unit[u]);
	return mp_strtab_intern(&s->strings, text, strlen(text));
}

static int read_entry(tr_src_t *s, uint32_t device, const mp_pk_value_t *ev, mp_diag_t *diag)
{
	char what[96];
	tr_rec_t r = {0};
	const mp_pk_value_t *action, *meta;
	tr_dev_t *dev = NULL;
	int64_t addr;
	uint32_t slot, stack = 0;
	int rc;

	if ((rc = device_slot(s, device, &dev, diag)) < 0)
		return rc;
	snprintf(what, sizeof(what), "device %" PRIu32 ", trace entry %zu", device, dev->recs.n);
	if (ev->kind != MP_PK_DICT)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "%s is not a dict", what);
	action = get(s, ev->u.obj, K_ACTION);
	if (!action || action->kind != MP_PK_STR)
		return mp_diag_set(diag, MP_EFORMAT, -1, -1, "%s: no 'action' string", what);
	for (r.action = TA_ALLOC; r.action < TA_COUNT && s->key[r.action] != action->u.str; r.action++)
		;
	if (r.action == TA_COUNT) { /* an action of a newer PyTorch: nothing memprof can place */
		s->unknown_actions++;
		return 0;
	}
	if ((rc = get_int(s, ev->u.obj, r.action == TA_OOM ? K_DEVICE_FREE : K_ADDR, 0, &addr, what, diag)) < 0 ||
	    (rc = get_size(s, ev->u.obj, K_SIZE, &r.size, what, diag)) < 0 ||
	    (rc = get_int(s, ev->u.obj, K_TIME_US, 0, &r.time_us, what, diag)) < 0 ||
	    (rc = frames_of(s, ev->u.obj, &r.op, &stack, diag)) < 0)
		return rc;
	r.addr = (uint64_t)addr;
	meta = get(s, ev->u.obj, K_USER_METADATA);
	if (r.action == TA_ANNOTATE) { /* its metadata is the mark's label, no allocation's */
		if (!meta || meta->kind != MP_PK_STR)
			meta = get(s, ev->u.obj, K_NAME);
		r.op = meta_of(meta);
		stack = 0;
	} else if ((slot = tr_meta_slot(s, meta_of(meta))) == UINT32_MAX) {
		return MP_ENOMEM;
	} else {
		r.meta = (uint16_t)slot;
	}
	if (r.action == TA_SNAPSHOT) {
		r.op = s->op_snapshot;
		stack = 0;
	} else if (r.action == TA_OOM && (r.op = oom_op(s, r.op, r.addr)) == UINT32_MAX) {
		return MP_ENOMEM;
	}
	if (r.time_us && (!s->origin_us || r.time_us < s->origin_us))
		s->origin_us = r.time_us;
	if (r.time_us)
		s->has_time = 1;
	dev->seen = 1;
	s->info.trace_entries++;
	if ((rc = mp_vec_push(&dev->recs, &r, sizeof(r))) < 0)
		return rc;
	return mp_vec_push(&dev->rstacks, &stack, sizeof(stack));
}

/* allocator_settings: what shapes the blocks (torch_layout.c). Values of
 * an unexpected type keep PyTorch's defaults. */
static void read_settings(tr_src_t *s, const mp_pk_value_t *v)
{
	const mp_pk_value_t *x;
	tr_settings_t *st = &s->settings;

	if (v->kind != MP_PK_DICT)
		return;
	st->known = 1;
	x = get(s, v->u.obj, K_MAX_SPLIT_SIZE);
	if (x && x->kind == MP_PK_INT && x->u.i > 0)
		st->max_split_size = (uint64_t)x->u.i;
	x = get(s, v->u.obj, K_EXPANDABLE_SEGMENTS);
	st->expandable_segments = x && (x->kind == MP_PK_BOOL || x->kind == MP_PK_INT) && x->u.i;
	x = get(s, v->u.obj, K_ROUNDUP_POWER2_DIVISIONS);
	if (!x || x->kind != MP_PK_DICT)
		return;
	/* {"1": n, "2": n, "4": n, ... "32768": n}: the interval from KEY MiB
	 * (below 2 MiB for "1") */
	for (size_t i = 0; i + 1 < x->u.obj->n; i += 2) {
		const mp_pk_value_t *k = &x->u.obj->items[i], *n = &x->u.obj->items[i + 1];
		const char *text = k->kind == MP_PK_STR ? mp_strtab_get(&s->strings, k->u.str) : "";
		char *end;
		unsigned long mib = strtoul(text, &end, 10);
		unsigned idx = 0;
		if (!*text || *end || !mib || (mib & (mib - 1)) || n->kind != MP_PK_INT || n->u.i < 0 || n->u.i > 1 << 20)
			continue;
		while ((1ul << idx) < mib)
			idx++;
		if (idx < 64)
			st->divisions[idx] = (uint32_t)n->u.i;
	}
}

/* external_annotations: [{'stage': 'START'|'END', 'name', 'device',
 * 'time_us'}]: phases, in time order per device. */
static int read_annotations(tr_src_t *s, const mp_pk_value_t *v, mp_diag_t *diag)
{
	int rc;

	if (v->kind != MP_PK_LIST)
		return 0;
	for (size_t i = 0; i < v->u.obj->n; i++) {
		const mp_pk_value_t *a = &v->u.obj->items[i], *stage, *name;
		tr_phase_t ph = {0};
		tr_dev_t *dev;
		int64_t device;
		if (a->kind != MP_PK_DICT)
			continue;
		stage = get(s, a->u.obj, K_STAGE);
		name = get(s, a->u.obj, K_NAME);
		if (!stage || stage->kind != MP_PK_STR || !name || name->kind != MP_PK_STR ||
		    (stage->u.str != s->key[K_START] && stage->u.str != s->key[K_END]))
			continue;
		if ((rc = get_int(s, a->u.obj, K_DEVICE, 0, &device, "an external annotation", diag)) < 0 ||
		    (rc = get_int(s, a->u.obj, K_TIME_US, 0, &ph.time_us, "an external annotation", diag)) < 0 ||
		    (rc = device_slot(s, device, &dev, diag)) < 0)
			return rc;
		ph.name = name->u.str;
		ph.begin = stage->u.str == s->key[K_START];
		if ((rc = mp_vec_push(&dev->phases, &ph, sizeof(ph))) < 0)
			return rc;
	}
	return 0;
}

static int h_open(void *ctx, const mp_pk_obj_t *parent, const mp_pk_value_t *key, const mp_pk_obj_t *alt,
		  mp_pk_obj_t *obj, mp_diag_t *diag)
{
	tr_src_t *s = ctx;
	uint16_t pr = parent ? parent->role : 0;

	if (!parent && !s->root_seen && obj->kind == MP_PK_DICT) {
		s->root_seen = 1;
		obj->role = TR_ROLE_ROOT;
		obj->stream = 1;
	} else if (pr == TR_ROLE_ROOT && key && key->kind == MP_PK_STR && obj->kind == MP_PK_LIST) {
		if (key->u.str == s->key[K_SEGMENTS] || key->u.str == s->key[K_DEVICE_TRACES]) {
			obj->role = key->u.str == s->key[K_SEGMENTS] ? TR_ROLE_SEGMENTS : TR_ROLE_TRACES;
			obj->stream = 1;
		}
	} else if (pr == TR_ROLE_SEGMENTS && obj->kind == MP_PK_DICT) {
		obj->role = TR_ROLE_SEGMENT;
	} else if (obj->kind == MP_PK_LIST &&
		   (pr == TR_ROLE_TRACES || (pr == TR_ROLE_DEVTRACE && alt && alt->role == TR_ROLE_TRACES))) {
		if (s->next_trace >= TR_MAX_DEVICES)
			return mp_diag_set(diag, MP_ELIMIT, -1, -1, "more than %u device traces", TR_MAX_DEVICES);
		obj->role = TR_ROLE_DEVTRACE;
		obj->stream = 1;
		obj->user = s->next_trace++;
	} else if (pr == TR_ROLE_DEVTRACE && obj->kind == MP_PK_DICT) {
		obj->role = TR_ROLE_ENTRY;
	}
	return 0;
}

static int h_item(void *ctx, mp_pk_obj_t *parent, const mp_pk_value_t *key, const mp_pk_value_t *value,
		  mp_diag_t *diag)
{
	tr_src_t *s = ctx;
	int rc;

	if (!parent) { /* STOP */
		if (value->kind != MP_PK_DICT || value->u.obj->role != TR_ROLE_ROOT)
			return mp_diag_set(diag, MP_EFORMAT, -1, -1, "not a PyTorch memory snapshot: the pickle holds "
					   "no dict with 'segments' and 'device_traces'");
		return 0;
	}
	switch (parent->role) {
	case TR_ROLE_ROOT:
		if (key && key->kind == MP_PK_STR && key->u.str == s->key[K_ALLOCATOR_SETTINGS])
			read_settings(s, value);
		if (key && key->kind == MP_PK_STR && key->u.str == s->key[K_EXTERNAL_ANNOTATIONS])
			return read_annotations(s, value, diag);
		if (key && key->kind == MP_PK_STR && (key->u.str == s->key[K_SEGMENTS] || key->u.str == s->key[K_DEVICE_TRACES])) {
			if (value->kind != MP_PK_LIST)
				return mp_diag_set(diag, MP_EFORMAT, -1, -1, "'%s' is not a list", mp_strtab_get(&s->strings, key->u.str));
			s->root_seen = 2;
		}
		return 0;
	case TR_ROLE_SEGMENTS:
		return read_segment(s, value, diag);
	case TR_ROLE_TRACES:
		if (value->kind != MP_PK_LIST)
			return mp_diag_set(diag, MP_EFORMAT, -1, -1, "device_traces[%" PRIu32 "] is not a list", s->next_trace);
		if (value->u.obj->role == TR_ROLE_DEVTRACE)
			return 0; /* its entries were streamed */
		/* built whole (the reader could not tell it was a device's
		 * list): its entries now */
		for (size_t i = 0; i < value->u.obj->n; i++)
			if ((rc = read_entry(s, s->next_trace, &value->u.obj->items[i], diag)) < 0)
				return rc;
		s->next_trace++;
		return 0;
	case TR_ROLE_DEVTRACE:
		return read_entry(s, parent->user, value, diag);
	default:
		return 0;
	}
}

static long gz_read(void *io, uint8_t *buf, size_t size, mp_diag_t *diag)
{
	int got = gzread((gzFile)io, buf, (unsigned)(size > (1u << 30) ? 1u << 30 : size));
	int err;
	const char *msg;

	if (got >= 0)
		return got;
	msg = gzerror((gzFile)io, &err);
	return mp_diag_set(diag, MP_ECOMPRESS, -1, -1, "gzip: %s", msg ? msg : "read error");
}

int tr_read(tr_src_t *s, const char *path, mp_diag_t *diag)
{
	mp_pk_handler_t h = {.ctx = s, .open = h_open, .item = h_item};
	gzFile gz;
	int rc;

	s->settings.max_split_size = UINT64_MAX;
	for (int k = 0; k < K_COUNT; k++)
		if ((s->key[k] = mp_strtab_intern(&s->strings, names[k], strlen(names[k]))) == UINT32_MAX)
			return MP_ENOMEM;
	if (!(gz = gzopen(path, "rb")))
		return mp_diag_set(diag, -errno, -1, -1, "cannot open: %s", strerror(errno));
	gzbuffer(gz, 1u << 18);
	rc = mp_pickle_read(gz_read, gz, &s->strings, &h, diag);
	if (rc == 0 && s->root_seen != 2)
		rc = mp_diag_set(diag, MP_EFORMAT, -1, -1, "not a PyTorch memory snapshot: the top-level dict has "
				 "neither 'segments' nor 'device_traces'");
	gzclose(gz);
	return rc;
}
