/* report_json.c - the JSON document (field names: docs/report.md). Byte
 * counts are JSON integers (jansson's json_int_t is 64-bit; counts above
 * 2^63 cannot occur from real captures and are clamped). Unknown values
 * are null, never a made-up number. */
#include "report_impl.h"

#include <memprof/report_doc.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static json_t *jfrag(double f)
{
	return isnan(f) ? json_null() : json_real(f);
}

static json_t *jstep(int64_t step)
{
	return step < 0 ? json_null() : json_integer(step);
}

static json_t *row_json(const mp_report_input_t *in, const mp_solver_row_t *r, int *bad)
{
	json_t *o = mp_json_object(bad);

	if (!o)
		return NULL;
	mp_json_put(o, "op", json_string(rp_row_op(in, r)), bad);
	mp_json_put(o, "region", json_string(mp_region_type_name(r->region)), bad);
	mp_json_put(o, "dtype", json_string(rp_str(in, r->dtype)), bad);
	mp_json_put(o, "shape", json_string(rp_str(in, r->shape)), bad);
	/* null, not "": most sources never set it, and a tag may be empty */
	mp_json_put(o, "metadata", r->metadata ? json_string(rp_str(in, r->metadata)) : json_null(), bad);
	mp_json_put(o, "requested_bytes", mp_json_u64(r->requested_bytes), bad);
	mp_json_put(o, "allocated_bytes", mp_json_u64(r->allocated_bytes), bad);
	mp_json_put(o, "occurrences", mp_json_u64(r->occurrences), bad);
	mp_json_put(o, "total_bytes", mp_json_u64(r->total_bytes), bad);
	mp_json_put(o, "unknown_origin", json_boolean(r->unknown_origin), bad);
	return o;
}

/* rows[0..shown) as an array, plus "<name>_omitted_rows/_bytes". */
static void put_rows(json_t *dev, const char *name, const mp_report_input_t *in, const mp_solver_row_t *rows,
		     size_t n, uint32_t top, int *bad)
{
	size_t shown = rp_shown(n, top);
	json_t *a = json_array();
	char key[64];

	if (!a) {
		*bad = 1;
		return;
	}
	for (size_t i = 0; i < shown; i++)
		if (json_array_append_new(a, row_json(in, &rows[i], bad)) < 0)
			*bad = 1;
	mp_json_put(dev, name, a, bad);
	snprintf(key, sizeof(key), "%s_omitted_rows", name);
	mp_json_put(dev, key, mp_json_u64(n - shown), bad);
	snprintf(key, sizeof(key), "%s_omitted_bytes", name);
	mp_json_put(dev, key, mp_json_u64(rp_rest_bytes(rows, n, shown)), bad);
}

static json_t *point_json(const mp_solver_point_t *p, int *bad)
{
	json_t *o = mp_json_object(bad);

	if (!o)
		return NULL;
	mp_json_put(o, "time_ns", mp_json_u64(p->time_ns), bad);
	mp_json_put(o, "event_index", mp_json_u64(p->event_index), bad);
	mp_json_put(o, "step", jstep(p->step), bad);
	mp_json_put(o, "stack_bytes", mp_json_u64(p->stack_bytes), bad);
	mp_json_put(o, "heap_bytes", mp_json_u64(p->heap_bytes), bad);
	mp_json_put(o, "free_bytes", p->has_free ? mp_json_u64(p->free_bytes) : json_null(), bad);
	mp_json_put(o, "reserved_bytes", p->has_reserved ? mp_json_u64(p->reserved_bytes) : json_null(), bad);
	mp_json_put(o, "fragmentation", jfrag(p->fragmentation), bad);
	return o;
}

/* The source's notes about one memory id (MP_NOTE_INPUT: the input's). */
static json_t *notes_json(const mp_report_input_t *in, uint32_t memory, int *bad)
{
	static const char *const kind[] = {"text", "bytes", "count", "flag"};
	json_t *a = json_array();
	const mp_source_note_t *x;
	size_t i = 0;

	if (!a) {
		*bad = 1;
		return NULL;
	}
	while ((x = rp_next_note(in, memory, &i))) {
		json_t *o = mp_json_object(bad);
		if (!o)
			break;
		mp_json_put(o, "key", json_string(x->key), bad);
		mp_json_put(o, "kind", json_string(x->kind >= 0 && x->kind <= MP_NOTE_FLAG ? kind[x->kind] : "text"), bad);
		mp_json_put(o, "value", x->kind == MP_NOTE_TEXT ? json_null() : x->kind == MP_NOTE_FLAG ? json_boolean(x->value)
										 : mp_json_u64(x->value), bad);
		mp_json_put(o, "text", json_string(x->text), bad);
		mp_json_put(o, "warning", json_boolean(x->warning), bad);
		if (json_array_append_new(a, o) < 0)
			*bad = 1;
	}
	return a;
}

static json_t *device_json(const mp_report_input_t *in, const mp_solver_device_t *d, const mp_report_options_t *o,
			   int *bad)
{
	unsigned sec = rp_sections(o);
	uint32_t top = o ? o->top : 0;
	json_t *j = json_object(), *a;

	if (!j) {
		*bad = 1;
		return NULL;
	}
	mp_json_put(j, "id", json_integer(d->id), bad);
	mp_json_put(j, "name", json_string(rp_memory_name(in, d->id)), bad);
	mp_json_put(j, "kind", json_string(rp_memory_kind(in, d->id)), bad);
	mp_json_put(j, "model", json_string(d->stats_model ? "allocator_stats" : "addresses"), bad);
	mp_json_put(j, "capacity_bytes", d->capacity_bytes ? mp_json_u64(d->capacity_bytes) : json_null(), bad);
	mp_json_put(j, "events", mp_json_u64(d->events), bad);
	mp_json_put(j, "allocations", mp_json_u64(d->allocations), bad);
	mp_json_put(j, "deallocations", mp_json_u64(d->deallocations), bad);
	mp_json_put(j, "failed_allocations", mp_json_u64(d->failed_allocations), bad);
	mp_json_put(j, "dropped_events", mp_json_u64(d->dropped_events), bad);
	mp_json_put(j, "unknown_frees", mp_json_u64(d->unknown_frees), bad);
	mp_json_put(j, "duplicate_allocations", mp_json_u64(d->duplicate_allocations), bad);
	mp_json_put(j, "rejected_regions", mp_json_u64(d->rejected_regions), bad);
	mp_json_put(j, "lifetime_peak_bytes", mp_json_u64(d->lifetime_peak_bytes), bad);
	mp_json_put(j, "source_notes", notes_json(in, d->id, bad), bad);
	if (d->has_reserved_peak) {
		json_t *r = json_object();
		if (!r)
			*bad = 1;
		else {
			mp_json_put(r, "bytes", mp_json_u64(d->reserved_peak_bytes), bad);
			mp_json_put(r, "time_ns", mp_json_u64(d->reserved_peak_time_ns), bad);
			mp_json_put(r, "event_index", mp_json_u64(d->reserved_peak_event), bad);
		}
		mp_json_put(j, "reserved_peak", r, bad);
	} else {
		mp_json_put(j, "reserved_peak", json_null(), bad);
	}
	if (d->has_peak) {
		const mp_solver_point_t *p = &d->peak;
		json_t *pk = json_object();
		if (!pk)
			*bad = 1;
		else {
			mp_json_put(pk, "bytes", mp_json_u64(d->peak_bytes), bad);
			mp_json_put(pk, "time_ns", mp_json_u64(p->time_ns), bad);
			mp_json_put(pk, "step", jstep(p->step), bad);
			mp_json_put(pk, "event_index", mp_json_u64(p->event_index), bad);
			mp_json_put(pk, "after_mark", d->peak_mark ? json_string(rp_str(in, d->peak_mark)) : json_null(), bad);
			mp_json_put(pk, "phase", d->peak_phase ? json_string(rp_str(in, d->peak_phase)) : json_null(), bad);
			mp_json_put(pk, "stack_bytes", mp_json_u64(p->stack_bytes), bad);
			mp_json_put(pk, "heap_bytes", mp_json_u64(p->heap_bytes), bad);
			mp_json_put(pk, "free_bytes", p->has_free ? mp_json_u64(p->free_bytes) : json_null(), bad);
			mp_json_put(pk, "reserved_bytes", p->has_reserved ? mp_json_u64(p->reserved_bytes) : json_null(), bad);
			mp_json_put(pk, "largest_free_chunk_bytes", p->has_largest ? mp_json_u64(p->largest_free_bytes) : json_null(), bad);
			mp_json_put(pk, "region_free_bytes", p->has_largest ? mp_json_u64(p->region_free_bytes) : json_null(), bad);
			mp_json_put(pk, "fragmentation", jfrag(p->fragmentation), bad);
			mp_json_put(pk, "fragmentation_unknown_reason",
			    d->fragmentation_reason ? json_string(d->fragmentation_reason) : json_null(), bad);
		}
		mp_json_put(j, "peak", pk, bad);
	} else {
		mp_json_put(j, "peak", json_null(), bad);
	}
	if (sec & (MP_REPORT_PEAK | MP_REPORT_BREAKDOWN)) {
		if (d->has_breakdown)
			put_rows(j, "breakdown", in, d->breakdown, d->breakdown_count, top, bad);
		else
			mp_json_put(j, "breakdown", json_array(), bad);
	}
	if (sec & MP_REPORT_TIMELINE) {
		a = json_array();
		if (!a)
			*bad = 1;
		for (size_t i = 0; a && i < d->timeline_count; i++)
			if (json_array_append_new(a, point_json(&d->timeline[i], bad)) < 0)
				*bad = 1;
		mp_json_put(j, "timeline", a, bad);
	}
	if (sec & MP_REPORT_LEAKS) {
		put_rows(j, "leaks", in, d->leaks, d->leak_count, top, bad);
		mp_json_put(j, "leak_bytes", mp_json_u64(d->leak_bytes), bad);
	}
	if (sec & MP_REPORT_OOM) {
		a = json_array();
		if (!a)
			*bad = 1;
		for (size_t i = 0; a && i < d->oom_count; i++) {
			const mp_solver_oom_t *r = &d->oom[i];
			json_t *x = json_object(), *t = json_array();
			if (!x || !t) {
				*bad = 1;
				json_decref(x);
				json_decref(t);
				break;
			}
			mp_json_put(x, "time_ns", mp_json_u64(r->at.time_ns), bad);
			mp_json_put(x, "event_index", mp_json_u64(r->at.event_index), bad);
			mp_json_put(x, "step", jstep(r->at.step), bad);
			mp_json_put(x, "op", json_string(rp_str(in, r->op)), bad);
			mp_json_put(x, "requested_bytes", mp_json_u64(r->requested_bytes), bad);
			mp_json_put(x, "stack_bytes", mp_json_u64(r->at.stack_bytes), bad);
			mp_json_put(x, "heap_bytes", mp_json_u64(r->at.heap_bytes), bad);
			mp_json_put(x, "free_bytes", r->at.has_free ? mp_json_u64(r->at.free_bytes) : json_null(), bad);
			mp_json_put(x, "reserved_bytes", r->at.has_reserved ? mp_json_u64(r->at.reserved_bytes) : json_null(), bad);
			mp_json_put(x, "largest_free_chunk_bytes", r->at.has_largest ? mp_json_u64(r->at.largest_free_bytes) : json_null(), bad);
			mp_json_put(x, "region_free_bytes", r->at.has_largest ? mp_json_u64(r->at.region_free_bytes) : json_null(), bad);
			mp_json_put(x, "fragmentation", jfrag(r->at.fragmentation), bad);
			mp_json_put(x, "cause", mp_solver_oom_cause(r) ? json_string(mp_solver_oom_cause(r)) : json_null(), bad);
			for (size_t k = 0; k < r->top_count; k++)
				if (json_array_append_new(t, row_json(in, &r->top[k], bad)) < 0)
					*bad = 1;
			mp_json_put(x, "top", t, bad);
			if (json_array_append_new(a, x) < 0)
				*bad = 1;
		}
		mp_json_put(j, "oom", a, bad);
		mp_json_put(j, "oom_total", mp_json_u64(d->oom_total), bad);
	}
	return j;
}

json_t *mp_report_json_input(const mp_report_input_t *in, const mp_report_options_t *o)
{
	const mp_solver_device_t **devs;
	size_t n = rp_devices(in, o, 0, &devs);
	json_t *root = json_object(), *arr = json_array(), *steps;
	int bad = 0;

	if (n == (size_t)-1 || !root || !arr) {
		free(devs);
		json_decref(root);
		json_decref(arr);
		return NULL;
	}
	mp_json_put(root, "format", json_string("memprof-report"), &bad);
	mp_json_put(root, "version", json_integer(MP_REPORT_JSON_VERSION), &bad);
	mp_json_put(root, "compat", json_null(), &bad); /* "xprof" with --compat=xprof: xprof_print.c */
	mp_json_put(root, "file", json_string(in->path ? in->path : ""), &bad);
	{
		mp_end_status_t end = mp_solver_end_status(in->solver);
		char why[192];
		mp_json_put(root, "end",
		    json_string(end == MP_END_CLEAN ? "clean" : end == MP_END_WRITE_FAILED ? "write_failed" : "abrupt"), &bad);
		mp_json_put(root, "end_reason", end == MP_END_WRITE_FAILED ? json_string(rp_end_text(in, why, sizeof(why))) : json_null(),
		    &bad);
	}
	mp_json_put(root, "events", mp_json_u64(mp_solver_event_count(in->solver)), &bad);
	mp_json_put(root, "dropped_events_unattributed", mp_json_u64(mp_solver_dropped_unattributed(in->solver)), &bad);
	/* a window (a kept run's, --from-event): its counters count the events from index from_event on */
	mp_json_put(root, "window_from_event", in->window_set ? mp_json_u64(in->window_from) : json_null(), &bad);
	mp_json_put(root, "time_unit", json_string(mp_source_time_unit(in->source) ? mp_source_time_unit(in->source) : "ns"), &bad);
	mp_json_put(root, "source_notes", notes_json(in, MP_NOTE_INPUT, &bad), &bad);
	if (o && o->steps_set) {
		steps = json_pack("{s:I,s:I}", "first", (json_int_t)o->step_first, "last", (json_int_t)o->step_last);
		mp_json_put(root, "steps", steps, &bad);
	} else {
		mp_json_put(root, "steps", json_null(), &bad);
	}
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(arr, device_json(in, devs[i], o, &bad)) < 0)
			bad = 1;
	mp_json_put(root, "devices", arr, &bad);
	free(devs);
	if (bad) {
		json_decref(root);
		return NULL;
	}
	return root;
}

int mp_report_json(FILE *out, const mp_report_input_t *in, size_t n, const mp_report_options_t *o)
{
	json_t *doc = mp_report_json_document(in, n, o, NULL);

	if (!doc)
		return MP_ENOMEM;
	return mp_json_write(out, doc, MP_JSON_LAYOUT);
}
