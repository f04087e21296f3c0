/* xprof_print.c - text, JSON and CSV output of xprof-compatible profiles
 * (`memprof report --compat=xprof`). */
#include <memprof/xprof_compat.h>
#include <memprof/event.h>
#include <memprof/output/csv.h>
#include <memprof/output/json.h>
#include <memprof/output/units.h>

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int matches(const mp_xprof_memory_t *m, const char *device)
{
	char num[16];

	if (!device)
		return 1;
	snprintf(num, sizeof(num), "%" PRIu32, m->id);
	return !strcmp(device, m->name) || !strcmp(device, num);
}

/* The JSON follows the report's contract (docs/report.md, version 2; the
 * schema is docs/schema/report.schema.json): a quantity both reports have
 * carries the default report's name (peak.bytes, allocated_bytes, ...),
 * and what only xprof defines is added beside it (peak.time_ps, the
 * "xprof" objects, a row's "special"). */

static json_t *row_json(const mp_xprof_row_t *r, int *bad)
{
	json_t *o = mp_json_object(bad);
	uint64_t total;

	if (!o)
		return NULL;
	if (__builtin_mul_overflow(r->allocation_bytes, r->occurrences, &total))
		total = UINT64_MAX;
	mp_json_put(o, "op", json_string(r->op), bad);
	mp_json_put(o, "region", json_string(r->region), bad);
	mp_json_put(o, "dtype", json_string(r->dtype), bad);
	mp_json_put(o, "shape", json_string(r->shape), bad);
	mp_json_put(o, "metadata", json_null(), bad); /* the default report's row: TensorFlow has no such tag */
	mp_json_put(o, "requested_bytes", mp_json_u64(r->requested_bytes), bad);
	mp_json_put(o, "allocated_bytes", mp_json_u64(r->allocation_bytes), bad);
	mp_json_put(o, "occurrences", mp_json_u64(r->occurrences), bad);
	mp_json_put(o, "total_bytes", mp_json_u64(total), bad);
	mp_json_put(o, "unknown_origin", json_boolean(r->unknown_origin), bad);
	mp_json_put(o, "special", json_boolean(r->special), bad);
	return o;
}

static json_t *peak_json(const mp_xprof_memory_t *m, int *bad)
{
	json_t *o = mp_json_object(bad);

	if (!o)
		return NULL;
	mp_json_put(o, "bytes", mp_json_u64(m->peak_bytes), bad);
	mp_json_put(o, "time_ns", mp_json_u64(m->peak_time_ns), bad);
	/* what TensorBoard shows (peakStatsTimePs); xprof's clock has ns steps */
	mp_json_put(o, "time_ps", mp_json_u64(m->peak_time_ns > UINT64_MAX / 1000 ? UINT64_MAX : m->peak_time_ns * 1000), bad);
	mp_json_put(o, "step", m->peak_step < 0 ? json_null() : json_integer(m->peak_step), bad);
	mp_json_put(o, "stack_bytes", mp_json_u64(m->stack_bytes), bad);
	mp_json_put(o, "heap_bytes", mp_json_u64(m->heap_bytes), bad);
	mp_json_put(o, "free_bytes", mp_json_u64(m->free_bytes), bad);
	mp_json_put(o, "fragmentation", isfinite(m->fragmentation) ? json_real(m->fragmentation) : json_null(), bad);
	return o;
}

static json_t *mem_json(const mp_xprof_memory_t *m, int *bad)
{
	json_t *o = json_object(), *rows = json_array(), *x = json_object();
	size_t i;

	if (!o || !rows || !x) {
		json_decref(o);
		json_decref(rows);
		json_decref(x);
		*bad = 1;
		return NULL;
	}
	mp_json_put(o, "id", json_integer(m->id), bad);
	mp_json_put(o, "name", json_string(m->name), bad);
	mp_json_put(o, "kind", json_string(m->kind ? m->kind : "other"), bad);
	mp_json_put(o, "model", json_string("allocator_stats"), bad); /* xprof's figures are the allocator's */
	mp_json_put(o, "capacity_bytes", mp_json_u64(m->capacity_bytes), bad);
	mp_json_put(o, "events", mp_json_u64(m->stream_events), bad);
	mp_json_put(o, "allocations", mp_json_u64(m->allocations), bad);
	mp_json_put(o, "deallocations", mp_json_u64(m->deallocations), bad);
	mp_json_put(o, "lifetime_peak_bytes", mp_json_u64(m->lifetime_peak_max), bad);
	mp_json_put(o, "peak", peak_json(m, bad), bad);
	for (i = 0; i < m->nrows; i++)
		if (json_array_append_new(rows, row_json(&m->rows[i], bad)) < 0)
			*bad = 1;
	mp_json_put(o, "breakdown", rows, bad);
	/* xprof's "lifetime peak" is the last event's peak_bytes_in_use */
	mp_json_put(x, "peak_bytes_usage_lifetime", mp_json_u64(m->lifetime_peak_xprof), bad);
	mp_json_put(o, "xprof", x, bad);
	return o;
}

struct json_t *mp_xprof_json(const mp_xprof_profile_t *p, const char *path, const char *device)
{
	json_t *o = json_object(), *ids = json_array(), *mems = json_array(), *x = json_object();
	int bad = 0;
	size_t i;

	if (!o || !ids || !mems || !x) {
		json_decref(o);
		json_decref(ids);
		json_decref(mems);
		json_decref(x);
		return NULL;
	}
	mp_json_put(o, "format", json_string("memprof-report"), &bad);
	mp_json_put(o, "version", json_integer(MP_XPROF_JSON_VERSION), &bad);
	mp_json_put(o, "compat", json_string(p->legacy_names ? "xprof" : "xprof-v1"), &bad);
	mp_json_put(o, "file", json_string(path ? path : ""), &bad);
	for (i = 0; i < p->n; i++) {
		if (!matches(&p->mems[i], device))
			continue;
		if (json_array_append_new(ids, json_string(p->mems[i].name)) < 0 ||
		    json_array_append_new(mems, mem_json(&p->mems[i], &bad)) < 0)
			bad = 1;
	}
	/* xprof's memoryIds: the memories in the order TensorBoard lists them */
	mp_json_put(x, "memory_ids", ids, &bad);
	mp_json_put(o, "xprof", x, &bad);
	mp_json_put(o, "devices", mems, &bad);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static void text_memory(FILE *out, const mp_xprof_memory_t *m, uint32_t top)
{
	char b1[64];
	size_t i, n = top && top < m->nrows ? top : m->nrows;

	fprintf(out, "\nmemory %s (%" PRIu64 " events: %" PRIu64 " allocations, %" PRIu64 " deallocations)\n",
		m->name, m->events, m->allocations, m->deallocations);
	mp_bytes_exact(b1, sizeof(b1), m->peak_bytes);
	fprintf(out, "  peak (stack + heap)    %s at %.6f ms (%" PRIu64 " ps), step %" PRId64 "\n", b1,
		(double)m->peak_time_ns / 1e6, m->peak_time_ns * 1000, m->peak_step);
	mp_bytes_exact(b1, sizeof(b1), m->capacity_bytes);
	fprintf(out, "  memory capacity        %s\n", b1);
	mp_bytes_exact(b1, sizeof(b1), m->stack_bytes);
	fprintf(out, "  stack reservation      %s\n", b1);
	mp_bytes_exact(b1, sizeof(b1), m->heap_bytes);
	fprintf(out, "  heap allocation        %s\n", b1);
	mp_bytes_exact(b1, sizeof(b1), m->free_bytes);
	fprintf(out, "  free memory            %s\n", b1);
	fprintf(out, "  fragmentation          %.2f%%\n", m->fragmentation * 100.0);
	mp_bytes_exact(b1, sizeof(b1), m->lifetime_peak_xprof);
	fprintf(out, "  lifetime peak (xprof)  %s  (the last event's value", b1);
	mp_bytes_exact(b1, sizeof(b1), m->lifetime_peak_max);
	fprintf(out, "; true maximum %s)\n", b1);
	fprintf(out, "  memory breakdown at the peak (%zu rows%s):\n", m->nrows, n < m->nrows ? ", first shown" : "");
	fprintf(out, "    %14s %14s %5s  %-16s %-8s %-16s %s\n", "allocation B", "requested B", "occ", "region",
		"dtype", "shape", "op");
	for (i = 0; i < n; i++) {
		const mp_xprof_row_t *r = &m->rows[i];

		fprintf(out, "    %14" PRIu64 " %14" PRIu64 " %5" PRIu64 "  %-16s %-8s %-16s %s\n", r->allocation_bytes,
			r->requested_bytes, r->occurrences, r->region, r->dtype, r->shape, r->op);
	}
}

int mp_xprof_print(FILE *out, const mp_xprof_profile_t *const *p, const char *const *paths, size_t n,
		   int format, const char *device, uint32_t top)
{
	size_t f, i, r;

	for (f = 0; f < n && device; f++) {
		int any = 0;

		for (i = 0; i < p[f]->n; i++)
			any |= matches(&p[f]->mems[i], device);
		if (!any)
			return MP_ENOTFOUND;
	}
	if (format == MP_XPROF_JSON) {
		json_t *doc;
		int rc;

		if (n == 1) {
			doc = mp_xprof_json(p[0], paths[0], device);
		} else {
			json_t *files = json_array();

			doc = json_object();
			if (!doc || !files || json_object_set_new(doc, "files", files) < 0) {
				json_decref(doc);
				return MP_ENOMEM;
			}
			for (f = 0; f < n; f++) {
				json_t *one = mp_xprof_json(p[f], paths[f], device);
				if (!one || json_array_append_new(files, one) < 0) {
					json_decref(doc);
					return MP_ENOMEM;
				}
			}
		}
		if (!doc)
			return MP_ENOMEM;
		rc = mp_json_write(out, doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (rc < 0)
			return rc;
	} else if (format == MP_XPROF_CSV) {
		fprintf(out, "section,file,memory,peak_bytes,peak_time_ps,stack_bytes,heap_bytes,free_bytes,"
			     "capacity_bytes,fragmentation,peak_step,lifetime_peak_bytes_xprof,lifetime_peak_bytes\n");
		for (f = 0; f < n; f++)
			for (i = 0; i < p[f]->n; i++) {
				const mp_xprof_memory_t *m = &p[f]->mems[i];

				if (!matches(m, device))
					continue;
				fputs("summary,", out);
				mp_csv_field(out, paths[f]);
				fputc(',', out);
				mp_csv_field(out, m->name);
				fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
					     ",%.17g,%" PRId64 ",%" PRIu64 ",%" PRIu64 "\n",
					m->peak_bytes, m->peak_time_ns * 1000, m->stack_bytes, m->heap_bytes,
					m->free_bytes, m->capacity_bytes, m->fragmentation, m->peak_step,
					m->lifetime_peak_xprof, m->lifetime_peak_max);
			}
		fprintf(out, "\nsection,file,memory,op,allocation_bytes,requested_bytes,occurrences,region,dtype,shape\n");
		for (f = 0; f < n; f++)
			for (i = 0; i < p[f]->n; i++) {
				const mp_xprof_memory_t *m = &p[f]->mems[i];
				size_t lim = top && top < m->nrows ? top : m->nrows;

				if (!matches(m, device))
					continue;
				for (r = 0; r < lim; r++) {
					const mp_xprof_row_t *row = &m->rows[r];

					fputs("breakdown,", out);
					mp_csv_field(out, paths[f]);
					fputc(',', out);
					mp_csv_field(out, m->name);
					fputc(',', out);
					mp_csv_field(out, row->op);
					fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", row->allocation_bytes,
						row->requested_bytes, row->occurrences);
					mp_csv_field(out, row->region);
					fputc(',', out);
					mp_csv_field(out, row->dtype);
					fputc(',', out);
					mp_csv_field(out, row->shape);
					fputc('\n', out);
				}
			}
	} else {
		for (f = 0; f < n; f++) {
			fprintf(out, "%s'%s': xprof-compatible memory profile (--compat=xprof)\n", f ? "\n" : "",
				paths[f]);
			if (p[f]->n == 0)
				fprintf(out, "  no memory events in this capture\n");
			for (i = 0; i < p[f]->n; i++)
				if (matches(&p[f]->mems[i], device))
					text_memory(out, &p[f]->mems[i], top ? top : 20);
		}
	}
	if (fflush(out) != 0 || ferror(out))
		return -(errno ? errno : EIO);
	return 0;
}

int mp_xprof_report(FILE *out, mp_source_t *const *srcs, const char *const *paths, size_t n,
		    const mp_xprof_options_t *opts, int format, const char *device, uint32_t top,
		    mp_diag_t *diag)
{
	mp_xprof_profile_t **p = calloc(n ? n : 1, sizeof(*p));
	size_t i;
	int rc = 0;

	if (!p)
		return MP_ENOMEM;
	for (i = 0; i < n && rc == 0; i++) {
		mp_event_t ev;
		int k;

		/* xprof's figures come from the allocator's own statistics */
		mp_source_rewind(srcs[i], NULL);
		while ((k = mp_source_next(srcs[i], &ev, diag)) > 0 && (ev.kind != MP_EV_ALLOC && ev.kind != MP_EV_FREE))
			;
		if (k < 0) {
			rc = k;
			break;
		}
		if (k > 0 && !(ev.flags & MP_EVENT_F_STATS)) {
			mp_diag_set_file(diag, paths[i]);
			rc = mp_diag_set(diag, MP_EUSAGE, -1, -1,
					 "--compat=xprof needs allocator-reported statistics (TF/JAX xplane captures, "
					 "or captures exported from them)");
			break;
		}
		rc = mp_xprof_compute(srcs[i], opts, &p[i], diag);
		if (rc < 0)
			mp_diag_set_file(diag, paths[i]);
	}
	if (rc == 0) {
		rc = mp_xprof_print(out, (const mp_xprof_profile_t *const *)p, paths, n, format, device, top);
		if (rc == MP_ENOTFOUND)
			mp_diag_set(diag, rc, -1, -1, "unknown device '%s'", device);
		else if (rc < 0)
			mp_diag_set(diag, rc, -1, -1, "writing the report: %s", mp_strerror(rc));
	}
	for (i = 0; i < n; i++)
		mp_xprof_free(p[i]);
	free(p);
	return rc;
}
