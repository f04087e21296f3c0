/* report_common.c - device selection and string resolution for the writers. */
#include "report_impl.h"

#include <memprof/reader.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned rp_sections(const mp_report_options_t *o)
{
	return o && o->sections ? o->sections : MP_REPORT_PEAK;
}

static int by_peak_cmp(const void *a, const void *b)
{
	const mp_solver_device_t *x = *(const mp_solver_device_t *const *)a, *y = *(const mp_solver_device_t *const *)b;

	if (x->peak_bytes != y->peak_bytes)
		return x->peak_bytes > y->peak_bytes ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

size_t rp_devices(const mp_report_input_t *in, const mp_report_options_t *o, int by_peak,
		  const mp_solver_device_t ***out)
{
	size_t n = mp_solver_device_count(in->solver), k = 0;
	const mp_solver_device_t **v = calloc(n ? n : 1, sizeof(*v));

	*out = v;
	if (!v)
		return (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		const mp_solver_device_t *d = mp_solver_device(in->solver, i);
		if (in->device_set ? d->id != in->device : o && o->device_set && d->id != o->device)
			continue;
		v[k++] = d;
	}
	if (by_peak)
		qsort(v, k, sizeof(*v), by_peak_cmp);
	return k;
}

const char *rp_str(const mp_report_input_t *in, uint32_t id)
{
	return id ? mp_source_string(in->source, id) : "";
}

const char *rp_memory_name(const mp_report_input_t *in, uint32_t id)
{
	const mp_memory_info_t *m = mp_source_memory(in->source, id);

	return m && m->name ? m->name : "";
}

const char *rp_memory_kind(const mp_report_input_t *in, uint32_t id)
{
	const mp_memory_info_t *m = mp_source_memory(in->source, id);

	return mp_memory_kind_name(m ? m->kind : MP_MEMORY_OTHER);
}

const char *rp_row_op(const mp_report_input_t *in, const mp_solver_row_t *r)
{
	return r->unknown_origin ? RP_UNKNOWN_ORIGIN : rp_str(in, r->op);
}

size_t rp_shown(size_t n, uint32_t top)
{
	return top && top < n ? top : n;
}

uint64_t rp_rest_bytes(const mp_solver_row_t *rows, size_t n, size_t shown)
{
	uint64_t b = 0;

	for (size_t i = shown; i < n; i++)
		b += rows[i].total_bytes;
	return b;
}

const char *rp_time(const mp_report_input_t *in, char *buf, size_t n, uint64_t ns)
{
	const char *unit = mp_source_time_unit(in->source);

	if (unit)
		snprintf(buf, n, "%s %" PRIu64, unit, ns);
	else
		snprintf(buf, n, "%" PRIu64 ".%06" PRIu64 " ms", ns / 1000000, ns % 1000000);
	return buf;
}

const mp_source_note_t *rp_next_note(const mp_report_input_t *in, uint32_t memory, size_t *i)
{
	const mp_source_note_t *notes;
	size_t n = mp_source_notes(in->source, &notes);

	while (*i < n) {
		const mp_source_note_t *x = &notes[(*i)++];
		if (x->memory == memory)
			return x;
	}
	return NULL;
}

const char *rp_end_text(const mp_report_input_t *in, char *buf, size_t size)
{
	const mp_capture_trailer_t *t;
	mp_capture_t *cap;
	const char *why;
	char b[32];
	int err;

	switch (mp_solver_end_status(in->solver)) {
	case MP_END_CLEAN:
		return "ended cleanly";
	case MP_END_WRITE_FAILED:
		/* the trailer says why, when the input is one capture (a run's
		 * merged processes are not) */
		cap = mp_capture_stacks_of((mp_source_t *)(uintptr_t)in->source);
		t = cap ? mp_capture_trailer(cap) : NULL;
		if (!t || !t->write_errno)
			return "cut short: its writer could not write more (disk full or file size limit)";
		err = (int)t->write_errno;
		why = err == ENOSPC ? "the disk was full (ENOSPC)"
		      : err == EDQUOT ? "the disk quota was reached (EDQUOT)"
		      : err == EFBIG  ? "the file size limit was reached (EFBIG)"
				      : strerror(err);
		snprintf(buf, size, "cut short: %s at %s; events after %.1f s are not all in it", why,
			 mp_bytes_human(b, sizeof(b), t->write_offset), (double)t->complete_ns / 1e9);
		return buf;
	default:
		return "cut off (read up to its last complete block)";
	}
}
