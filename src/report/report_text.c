/* report_text.c - aligned tables for people. Every byte count is exact
 * with a human unit beside it; unknown values say why. */
#include "report_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_TOP_DEFAULT 20
#define MAXCOL 10

/* A table: cells are formatted first, widths computed, then printed. */
typedef struct tbl {
	int ncol;
	const char *head[MAXCOL];
	unsigned right; /* bit c: right-align column c */
	char **cell;    /* row-major */
	size_t nrow, cap;
	int bad;
} tbl_t;

static void tbl_add(tbl_t *t, const char *const *v)
{
	if (t->bad)
		return;
	/* an item is a row of ncol cells */
	t->cell = mp_vec_grow(t->cell, &t->cap, t->nrow + 1, (size_t)t->ncol * sizeof(*t->cell));
	if (t->cap < t->nrow + 1) {
		t->bad = 1;
		return;
	}
	for (int c = 0; c < t->ncol; c++) {
		char *s = strdup(v[c] ? v[c] : "");
		if (!s)
			t->bad = 1;
		t->cell[t->nrow * (size_t)t->ncol + (size_t)c] = s;
	}
	t->nrow++;
}

static void tbl_print(FILE *out, tbl_t *t, const char *indent)
{
	size_t w[MAXCOL] = {0};

	for (int c = 0; c < t->ncol; c++)
		w[c] = strlen(t->head[c]);
	for (size_t r = 0; r < t->nrow; r++)
		for (int c = 0; c < t->ncol; c++) {
			const char *s = t->cell[r * (size_t)t->ncol + (size_t)c];
			size_t l = s ? strlen(s) : 0;
			w[c] = l > w[c] ? l : w[c];
		}
	for (size_t r = 0; r <= t->nrow; r++) {
		fputs(indent, out);
		for (int c = 0; c < t->ncol; c++) {
			const char *s = r == 0 ? t->head[c] : t->cell[(r - 1) * (size_t)t->ncol + (size_t)c];
			int last = c + 1 == t->ncol;
			if (!s)
				s = "";
			if (t->right & (1u << c))
				fprintf(out, "%*s%s", (int)w[c], s, last ? "" : "  ");
			else if (last)
				fputs(s, out);
			else
				fprintf(out, "%-*s  ", (int)w[c], s);
		}
		fputc('\n', out);
	}
	for (size_t i = 0; i < t->nrow * (size_t)t->ncol; i++)
		free(t->cell[i]);
	free(t->cell);
	t->cell = NULL;
	t->nrow = t->cap = 0;
}

static const char *human(char *buf, size_t n, uint64_t b)
{
	return mp_bytes_exact(buf, n, b);
}

static const char *frag_str(char *buf, size_t n, double f)
{
	if (isnan(f))
		snprintf(buf, n, "n/a");
	else if (f < 1.0 && f * 100.0 >= 99.995) /* never print 100% for less than 1 */
		snprintf(buf, n, "%.4f%%", f * 100.0 < 99.9999 ? f * 100.0 : 99.9999);
	else if (f > 0.0 && f * 100.0 < 0.005) /* nor 0% for more than 0 */
		snprintf(buf, n, "%.2g%%", f * 100.0);
	else
		snprintf(buf, n, "%.2f%%", f * 100.0);
	return buf;
}


static const char *step_str(char *buf, size_t n, int64_t step)
{
	if (step < 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%" PRId64, step);
	return buf;
}

/* The metadata column only when a shown row has one: most sources never
 * set it, and an always-empty column would only push op to the right. */
static void rows_table(FILE *out, const mp_report_input_t *in, const mp_solver_row_t *rows, size_t n, uint32_t top)
{
	tbl_t t = {9, {"total", "", "count", "allocated", "requested", "region", "dtype", "shape", "op"},
		   1u | 4u | 8u | 16u, NULL, 0, 0, 0};
	size_t shown = rp_shown(n, top);
	int meta = 0;
	char a[40], b[40], c[24], d[24], e[24], hb[64];

	for (size_t i = 0; i < shown && !meta; i++)
		meta = *rp_str(in, rows[i].metadata) != 0;
	if (meta) {
		t.ncol = 10;
		t.head[8] = "metadata";
		t.head[9] = "op";
	}
	for (size_t i = 0; i < shown; i++) {
		const mp_solver_row_t *r = &rows[i];
		const char *v[10];
		const char *h = human(hb, sizeof(hb), r->total_bytes), *paren = strchr(h, '(');
		snprintf(a, sizeof(a), "%" PRIu64 " B", r->total_bytes);
		snprintf(b, sizeof(b), "%s", paren ? paren : "");
		snprintf(c, sizeof(c), "%" PRIu64, r->occurrences);
		snprintf(d, sizeof(d), "%" PRIu64, r->allocated_bytes);
		snprintf(e, sizeof(e), "%" PRIu64, r->requested_bytes);
		v[0] = a, v[1] = b, v[2] = c, v[3] = d, v[4] = e;
		v[5] = mp_region_type_name(r->region);
		v[6] = *mp_dtype_shown(rp_str(in, r->dtype)) ? rp_str(in, r->dtype) : "-";
		v[7] = *rp_str(in, r->shape) ? rp_str(in, r->shape) : "-";
		v[8] = *rp_str(in, r->metadata) ? rp_str(in, r->metadata) : "-";
		v[t.ncol - 1] = *rp_row_op(in, r) ? rp_row_op(in, r) : "-";
		tbl_add(&t, v);
	}
	tbl_print(out, &t, "    ");
	if (shown < n)
		fprintf(out, "    ... %zu more rows, %s\n", n - shown, human(hb, sizeof(hb), rp_rest_bytes(rows, n, shown)));
}

static void summary(FILE *out, const mp_report_input_t *in, const mp_solver_device_t *d)
{
	char h[64], f[32], t[48], s[24];
	const mp_solver_point_t *p = &d->peak;

	if (!d->has_peak) {
		fprintf(out, "  no allocation event in the analysed window\n");
	} else {
		const mp_memory_info_t *m = mp_source_memory(in->source, d->id);
		char label[64];
		/* in the producer's words where it has them ("peak allocated") */
		snprintf(label, sizeof(label), "peak %s", m && m->in_use_name ? m->in_use_name : "in use");
		fprintf(out, "  %-17s %s at %s, step %s, event %" PRIu64 "\n", label, human(h, sizeof(h), d->peak_bytes),
			rp_time(in, t, sizeof(t), p->time_ns), step_str(s, sizeof(s), p->step), p->event_index);
		if (d->peak_mark) /* the stage the program had named last (a PyTorch annotate) */
			fprintf(out, "    after mark      %s\n", rp_str(in, d->peak_mark));
		if (d->peak_phase) /* the phase it fell in (PyTorch's external_annotations) */
			fprintf(out, "    in phase        %s\n", rp_str(in, d->peak_phase));
		fprintf(out, "    stack           %s\n", human(h, sizeof(h), p->stack_bytes));
		fprintf(out, "    heap            %s\n", human(h, sizeof(h), p->heap_bytes));
		if (p->has_reserved)
			fprintf(out, "    reserved        %s (live regions)\n", human(h, sizeof(h), p->reserved_bytes));
		if (p->has_free)
			fprintf(out, "    free            %s\n", human(h, sizeof(h), p->free_bytes));
		else
			fprintf(out, "    free            unknown (no capacity declared and no regions)\n");
		if (isnan(p->fragmentation))
			fprintf(out, "    fragmentation   n/a (%s)\n", d->fragmentation_reason ? d->fragmentation_reason : "unknown");
		else if (p->has_largest) {
			char h2[64];
			fprintf(out, "    fragmentation   %s (largest free chunk %s of %s free in regions)\n",
				frag_str(f, sizeof(f), p->fragmentation), human(h, sizeof(h), p->largest_free_bytes),
				human(h2, sizeof(h2), p->region_free_bytes));
		} else
			fprintf(out, "    fragmentation   %s (reported by the allocator)\n", frag_str(f, sizeof(f), p->fragmentation));
	}
	fprintf(out, "  lifetime peak     %s\n", human(h, sizeof(h), d->lifetime_peak_bytes));
	/* two levels: what the allocator reserved (regions: segments, pools)
	 * and, above, what it handed out of them (heap) */
	if (d->has_reserved_peak)
		fprintf(out, "  reserved peak     %s at %s, event %" PRIu64 " (live regions)\n",
			human(h, sizeof(h), d->reserved_peak_bytes), rp_time(in, t, sizeof(t), d->reserved_peak_time_ns),
			d->reserved_peak_event);
	if (d->capacity_bytes && (d->declared_capacity || !d->peak.has_reserved))
		fprintf(out, "  capacity          %s\n", human(h, sizeof(h), d->capacity_bytes));
	else if (d->capacity_bytes) /* the live regions at the peak are what was reserved, not a limit */
		fprintf(out, "  capacity          unknown (the figures above take the reserved bytes as the limit)\n");
	else
		fprintf(out, "  capacity          unknown\n");
	fprintf(out, "  events            %" PRIu64 " allocations, %" PRIu64 " frees, %" PRIu64 " failed, %" PRIu64 " dropped",
		d->allocations, d->deallocations, d->failed_allocations, d->dropped_events);
	if (d->unknown_frees)
		fprintf(out, ", %" PRIu64 " frees of unknown addresses", d->unknown_frees);
	if (d->duplicate_allocations)
		fprintf(out, ", %" PRIu64 " allocations at a live address", d->duplicate_allocations);
	if (d->rejected_regions)
		fprintf(out, ", %" PRIu64 " rejected region events", d->rejected_regions);
	fputc('\n', out);
}

/* What the source says of this memory id (MP_NOTE_INPUT: of the input)
 * beside its events: a snapshot's own counters, its dump check. */
static void notes(FILE *out, const mp_report_input_t *in, uint32_t memory, const char *indent)
{
	const mp_source_note_t *x;
	size_t i = 0;

	while ((x = rp_next_note(in, memory, &i)))
		if (x->text[0])
			fprintf(out, "%s%s%s\n", indent, x->warning ? "warning: " : "", x->text);
}

static void breakdown(FILE *out, const mp_report_input_t *in, const mp_solver_device_t *d, uint32_t top)
{
	char h[64];

	if (!d->has_breakdown) {
		fprintf(out, "\n  live at the peak: not computed\n");
		return;
	}
	fprintf(out, "\n  live at the peak: %zu rows, %s\n", d->breakdown_count, human(h, sizeof(h), d->peak.heap_bytes));
	if (d->breakdown_count)
		rows_table(out, in, d->breakdown, d->breakdown_count, top);
}

static void timeline(FILE *out, const mp_report_input_t *in, const mp_solver_device_t *d)
{
	tbl_t t = {7, {"time", "event", "step", "stack", "heap", "free", "fragmentation"}, 0x7fu, NULL, 0, 0, 0};
	char a[48], b[24], c[24], e[32], f[32], g[32], fr[32];

	fprintf(out, "\n  timeline: %zu points (bytes)\n", d->timeline_count);
	for (size_t i = 0; i < d->timeline_count; i++) {
		const mp_solver_point_t *p = &d->timeline[i];
		const char *v[7];
		snprintf(b, sizeof(b), "%" PRIu64, p->event_index);
		snprintf(e, sizeof(e), "%" PRIu64, p->stack_bytes);
		snprintf(f, sizeof(f), "%" PRIu64, p->heap_bytes);
		if (p->has_free)
			snprintf(g, sizeof(g), "%" PRIu64, p->free_bytes);
		else
			snprintf(g, sizeof(g), "-");
		v[0] = rp_time(in, a, sizeof(a), p->time_ns), v[1] = b, v[2] = step_str(c, sizeof(c), p->step);
		v[3] = e, v[4] = f, v[5] = g, v[6] = frag_str(fr, sizeof(fr), p->fragmentation);
		tbl_add(&t, v);
	}
	tbl_print(out, &t, "    ");
}

static void leaks(FILE *out, const mp_report_input_t *in, const mp_solver_device_t *d, uint32_t top)
{
	char h[64];

	fprintf(out, "\n  live at the end: %zu rows, %s\n", d->leak_count, human(h, sizeof(h), d->leak_bytes));
	if (d->leak_count)
		rows_table(out, in, d->leaks, d->leak_count, top);
}

static void ooms(FILE *out, const mp_report_input_t *in, const mp_solver_device_t *d)
{
	char h[64], h2[64], t[48], s[24], f[32];

	fprintf(out, "\n  failed allocations: %" PRIu64 "%s\n", d->oom_total,
		d->oom_count < d->oom_total ? " (the first ones are detailed)" : "");
	for (size_t i = 0; i < d->oom_count; i++) {
		const mp_solver_oom_t *o = &d->oom[i];
		const char *cause = mp_solver_oom_cause(o), *op = rp_str(in, o->op);
		fprintf(out, "  #%zu at %s, step %s, op %s: asked %s\n", i + 1, rp_time(in, t, sizeof(t), o->at.time_ns),
			step_str(s, sizeof(s), o->at.step), *op ? op : "-", human(h, sizeof(h), o->requested_bytes));
		fprintf(out, "     heap %s, free %s", human(h, sizeof(h), o->at.heap_bytes),
			o->at.has_free ? human(h2, sizeof(h2), o->at.free_bytes) : "unknown");
		if (o->at.has_largest)
			fprintf(out, ", largest free chunk %s", human(h, sizeof(h), o->at.largest_free_bytes));
		fprintf(out, ", fragmentation %s\n", frag_str(f, sizeof(f), o->at.fragmentation));
		if (o->at.has_reserved) {
			fprintf(out, "     reserved %s", human(h, sizeof(h), o->at.reserved_bytes));
			if (d->declared_capacity)
				fprintf(out, ", not reserved (capacity - reserved) %s",
					human(h2, sizeof(h2), d->declared_capacity > o->at.reserved_bytes
									 ? d->declared_capacity - o->at.reserved_bytes
									 : 0));
			fputc('\n', out);
		}
		if (cause && !strcmp(cause, "full"))
			fprintf(out, "     cause: memory was full (the request exceeds the free bytes)\n");
		else if (cause && !strcmp(cause, "fragmented"))
			fprintf(out, "     cause: fragmentation (enough bytes free, but no free chunk that large)\n");
		else if (cause)
			fprintf(out, "     cause: a free chunk was large enough (a limit outside the tracked regions)\n");
		else if (o->at.has_free)
			fprintf(out, "     cause: not known (enough bytes free; the largest free chunk is unknown without regions)\n");
		else
			fprintf(out, "     cause: not known (no capacity or regions to compare with)\n");
		if (o->top_count) {
			fprintf(out, "     largest live groups:\n");
			rows_table(out, in, o->top, o->top_count, 0);
		}
	}
}

int mp_report_text(FILE *out, const mp_report_input_t *in, size_t n, const mp_report_options_t *o)
{
	unsigned sec = rp_sections(o);
	uint32_t top = o && o->top ? o->top : TEXT_TOP_DEFAULT;

	errno = 0;
	for (size_t k = 0; k < n; k++) {
		const mp_solver_device_t **devs;
		size_t nd = rp_devices(&in[k], o, 1, &devs);
		char end[192];

		if (nd == (size_t)-1)
			return MP_ENOMEM;
		if (k)
			fputc('\n', out);
		fprintf(out, "%s: %" PRIu64 " events, capture %s", in[k].path ? in[k].path : "",
			mp_solver_event_count(in[k].solver), rp_end_text(&in[k], end, sizeof(end)));
		if (o && o->steps_set)
			fprintf(out, ", steps %" PRId64 ":%" PRId64, o->step_first, o->step_last);
		fputc('\n', out);
		if (mp_solver_dropped_unattributed(in[k].solver))
			fprintf(out, "warning: %" PRIu64 " events were dropped while recording\n",
				mp_solver_dropped_unattributed(in[k].solver));
		notes(out, &in[k], MP_NOTE_INPUT, "");
		if (!nd)
			fprintf(out, "no memory id with events\n");
		for (size_t i = 0; i < nd; i++) {
			const mp_solver_device_t *d = devs[i];
			fprintf(out, "\nmemory %" PRIu32 " '%s' (%s, %s)\n", d->id, rp_memory_name(&in[k], d->id),
				rp_memory_kind(&in[k], d->id), d->stats_model ? "allocator-reported stats" : "tracked addresses");
			if (sec & MP_REPORT_PEAK) {
				summary(out, &in[k], d);
				notes(out, &in[k], d->id, "  ");
			}
			if (sec & (MP_REPORT_PEAK | MP_REPORT_BREAKDOWN))
				breakdown(out, &in[k], d, top);
			if (sec & MP_REPORT_TIMELINE)
				timeline(out, &in[k], d);
			if (sec & MP_REPORT_LEAKS)
				leaks(out, &in[k], d, top);
			if (sec & MP_REPORT_OOM)
				ooms(out, &in[k], d);
		}
		free(devs);
	}
	if (fflush(out) == EOF || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
