/* report_csv.c - CSV for spreadsheets and scripts (RFC 4180 quoting). One
 * table per section, header row first, tables separated by a blank line;
 * unknown values are empty fields. */
#include "report_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void u64f(FILE *out, uint64_t v, int known)
{
	if (known)
		fprintf(out, ",%" PRIu64, v);
	else
		fputc(',', out);
}

static void fragf(FILE *out, double f)
{
	if (isnan(f))
		fputc(',', out);
	else
		fprintf(out, ",%.17g", f);
}

static void stepf(FILE *out, int64_t s)
{
	if (s < 0)
		fputc(',', out);
	else
		fprintf(out, ",%" PRId64, s);
}

static void lead(FILE *out, const char *section, const mp_report_input_t *in, uint32_t dev)
{
	fputs(section, out);
	fputc(',', out);
	mp_csv_field(out, in->path ? in->path : "");
	fprintf(out, ",%" PRIu32, dev);
}

static void row(FILE *out, const mp_report_input_t *in, const mp_solver_row_t *r)
{
	fputc(',', out);
	mp_csv_field(out, rp_row_op(in, r));
	fprintf(out, ",%s,", mp_region_type_name(r->region));
	mp_csv_field(out, rp_str(in, r->dtype));
	fputc(',', out);
	mp_csv_field(out, rp_str(in, r->shape));
	fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d,", r->requested_bytes, r->allocated_bytes,
		r->occurrences, r->total_bytes, r->unknown_origin);
	mp_csv_field(out, rp_str(in, r->metadata));
}

/* metadata last: columns are only ever added at the end, so that scripts
 * that read them by position keep working */
#define ROW_COLS "op,region,dtype,shape,requested_bytes,allocated_bytes,occurrences,total_bytes,unknown_origin,metadata"

typedef void (*table_fn)(FILE *, const mp_report_input_t *, const mp_solver_device_t *, uint32_t);

static void t_summary(FILE *out, const mp_report_input_t *in, const mp_solver_device_t *d, uint32_t top)
{
	const mp_solver_point_t *p = &d->peak;

	(void)top;
	lead(out, "summary", in, d->id);
	fputc(',', out);
	mp_csv_field(out, rp_memory_name(in, d->id));
	fprintf(out, ",%s", d->stats_model ? "allocator_stats" : "addresses");
	u64f(out, d->capacity_bytes, d->capacity_bytes != 0);
	fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, d->allocations,
		d->deallocations, d->failed_allocations, d->dropped_events, d->unknown_frees, d->lifetime_peak_bytes);
	u64f(out, d->peak_bytes, d->has_peak);
	u64f(out, p->time_ns, d->has_peak);
	stepf(out, d->has_peak ? p->step : -1);
	u64f(out, p->event_index, d->has_peak);
	u64f(out, p->stack_bytes, d->has_peak);
	u64f(out, p->heap_bytes, d->has_peak);
	u64f(out, p->free_bytes, d->has_peak && p->has_free);
	u64f(out, p->largest_free_bytes, d->has_peak && p->has_largest);
	fragf(out, d->has_peak ? p->fragmentation : NAN);
	fputc(',', out);
	mp_csv_field(out, d->has_peak ? rp_str(in, d->peak_mark) : "");
	fputc('\n', out);
}

static void rows_of(FILE *out, const char *sec, const mp_report_input_t *in, const mp_solver_device_t *d,
		    const mp_solver_row_t *rows, size_t n, uint32_t top)
{
	size_t shown = rp_shown(n, top);

	for (size_t i = 0; i < shown; i++) {
		lead(out, sec, in, d->id);
		row(out, in, &rows[i]);
		fputc('\n', out);
	}
}

static void t_breakdown(FILE *out, const mp_report_input_t *in, const mp_solver_device_t *d, uint32_t top)
{
	rows_of(out, "breakdown", in, d, d->breakdown, d->has_breakdown ? d->breakdown_count : 0, top);
}

static void t_leaks(FILE *out, const mp_report_input_t *in, const mp_solver_device_t *d, uint32_t top)
{
	rows_of(out, "leaks", in, d, d->leaks, d->leak_count, top);
}

static void t_timeline(FILE *out, const mp_report_input_t *in, const mp_solver_device_t *d, uint32_t top)
{
	(void)top;
	for (size_t i = 0; i < d->timeline_count; i++) {
		const mp_solver_point_t *p = &d->timeline[i];
		lead(out, "timeline", in, d->id);
		fprintf(out, ",%" PRIu64 ",%" PRIu64, p->time_ns, p->event_index);
		stepf(out, p->step);
		fprintf(out, ",%" PRIu64 ",%" PRIu64, p->stack_bytes, p->heap_bytes);
		u64f(out, p->free_bytes, p->has_free);
		fragf(out, p->fragmentation);
		fputc('\n', out);
	}
}

static void t_oom(FILE *out, const mp_report_input_t *in, const mp_solver_device_t *d, uint32_t top)
{
	(void)top;
	for (size_t i = 0; i < d->oom_count; i++) {
		const mp_solver_oom_t *o = &d->oom[i];
		const char *cause = mp_solver_oom_cause(o);
		lead(out, "oom", in, d->id);
		fprintf(out, ",%zu,%" PRIu64, i, o->at.time_ns);
		stepf(out, o->at.step);
		fputc(',', out);
		mp_csv_field(out, rp_str(in, o->op));
		fprintf(out, ",%" PRIu64 ",%" PRIu64, o->requested_bytes, o->at.heap_bytes);
		u64f(out, o->at.free_bytes, o->at.has_free);
		u64f(out, o->at.largest_free_bytes, o->at.has_largest);
		fragf(out, o->at.fragmentation);
		fprintf(out, ",%s\n", cause ? cause : "");
	}
}

static void t_oom_top(FILE *out, const mp_report_input_t *in, const mp_solver_device_t *d, uint32_t top)
{
	(void)top;
	for (size_t i = 0; i < d->oom_count; i++)
		for (size_t k = 0; k < d->oom[i].top_count; k++) {
			lead(out, "oom_top", in, d->id);
			fprintf(out, ",%zu", i);
			row(out, in, &d->oom[i].top[k]);
			fputc('\n', out);
		}
}

static const struct {
	unsigned mask;
	const char *header;
	table_fn fn;
} tables[] = {
	{MP_REPORT_PEAK, "section,file,device,name,model,capacity_bytes,allocations,deallocations,failed_allocations,"
			 "dropped_events,unknown_frees,lifetime_peak_bytes,peak_bytes,time_ns,step,event_index,"
			 "stack_bytes,heap_bytes,free_bytes,largest_free_chunk_bytes,fragmentation,after_mark",
	 t_summary},
	{MP_REPORT_PEAK | MP_REPORT_BREAKDOWN, "section,file,device," ROW_COLS, t_breakdown},
	{MP_REPORT_TIMELINE, "section,file,device,time_ns,event_index,step,stack_bytes,heap_bytes,free_bytes,fragmentation",
	 t_timeline},
	{MP_REPORT_LEAKS, "section,file,device," ROW_COLS, t_leaks},
	{MP_REPORT_OOM, "section,file,device,oom,time_ns,step,op,requested_bytes,heap_bytes,free_bytes,"
			"largest_free_chunk_bytes,fragmentation,cause",
	 t_oom},
	{MP_REPORT_OOM, "section,file,device,oom," ROW_COLS, t_oom_top},
};

size_t mp_report_csv_table_count(void)
{
	return sizeof(tables) / sizeof(tables[0]);
}

const char *mp_report_csv_table_header(size_t t, const mp_report_options_t *o)
{
	return t < mp_report_csv_table_count() && (rp_sections(o) & tables[t].mask) ? tables[t].header : NULL;
}

int mp_report_csv_table_rows(FILE *out, size_t t, const mp_report_input_t *in, size_t n, const mp_report_options_t *o)
{
	uint32_t top = o ? o->top : 0;

	for (size_t k = 0; k < n; k++) {
		const mp_solver_device_t **devs;
		size_t nd = rp_devices(&in[k], o, 0, &devs);
		if (nd == (size_t)-1)
			return MP_ENOMEM;
		for (size_t i = 0; i < nd; i++)
			tables[t].fn(out, &in[k], devs[i], top);
		free(devs);
	}
	return 0;
}

int mp_report_csv(FILE *out, const mp_report_input_t *in, size_t n, const mp_report_options_t *o)
{
	int first = 1, err;

	errno = 0;
	for (size_t t = 0; t < mp_report_csv_table_count(); t++) {
		const char *header = mp_report_csv_table_header(t, o);
		if (!header)
			continue;
		if (!first)
			fputc('\n', out);
		first = 0;
		fprintf(out, "%s\n", header);
		if ((err = mp_report_csv_table_rows(out, t, in, n, o)) < 0)
			return err;
	}
	if (fflush(out) == EOF || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
