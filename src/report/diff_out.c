/* diff_out.c - `memprof diff` as text for people and as JSON for tools
 * (field names: docs/diff.md, docs/schema/diff.schema.json). */
#include "diff_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "12288 B (12.00 KiB)", or "-" when the figure is unknown. */
static const char *bytes_or(char *buf, size_t n, int known, uint64_t v)
{
	if (!known)
		snprintf(buf, n, "-");
	else
		mp_bytes_exact(buf, n, v);
	return buf;
}

static const char *frag(char *buf, size_t n, const mp_solver_device_t *d)
{
	if (!d->has_peak || isnan(d->peak.fragmentation))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2f%%", 100.0 * d->peak.fragmentation);
	return buf;
}

static const char *when(char *buf, size_t n, const mp_diff_side_t *s)
{
	const mp_solver_device_t *d = s->dev;

	if (!d->has_peak)
		snprintf(buf, n, "-");
	else if (d->peak.step >= 0)
		snprintf(buf, n, "%s, step %" PRId64, s->time, d->peak.step);
	else
		snprintf(buf, n, "%s", s->time);
	return buf;
}

static void line3(FILE *out, const char *label, const char *a, const char *b, const char *change)
{
	fprintf(out, "  %-22s %-28s %-28s %s\n", label, a, b, change);
}

/* A change "+4096 B (+4.00 KiB)" of two known figures, else "". */
static const char *change_of(char *buf, size_t n, int known, uint64_t a, uint64_t b)
{
	char h[40];
	int64_t c = (int64_t)(b - a);

	if (!known)
		snprintf(buf, n, " ");
	else if (!c)
		snprintf(buf, n, "0 B");
	else
		snprintf(buf, n, "%+" PRId64 " B (%s)", c, dp_human_change(h, sizeof(h), c));
	return buf;
}

static void row_text(FILE *out, const mp_diff_row_t *r)
{
	char c[40], a[32], b[32], cnt[48];

	snprintf(cnt, sizeof(cnt), "%" PRIu64 " -> %" PRIu64, r->a_count, r->b_count);
	fprintf(out, "  %-12s %-12s %-12s %-14s %-7s ", dp_human_change(c, sizeof(c), r->change_bytes),
		mp_bytes_human(a, sizeof(a), r->a_bytes), mp_bytes_human(b, sizeof(b), r->b_bytes), cnt,
		mp_diff_kind_name(r->kind));
	if (r->function)
		fprintf(out, "%s\n", r->function[0] ? r->function : "(unknown)");
	else /* the key's fields that say something; PyTorch snapshots have only the op */
		fprintf(out, "%s%s%s%s%s%s%s%s%s\n", r->op[0] ? r->op : "(no op)", strcmp(r->region, "unknown") ? "  " : "",
			strcmp(r->region, "unknown") ? r->region : "", r->dtype[0] ? "  " : "", r->dtype,
			r->shape[0] ? "  " : "", r->shape, r->metadata ? "  " : "", r->metadata ? r->metadata : "");
}

static void memory_text(FILE *out, const mp_diff_memory_t *m, uint32_t top, int by_function)
{
	const mp_solver_device_t *a = m->a.dev, *b = m->b.dev;
	char x[128], y[128], z[128], h[40], p[32];
	size_t shown = rp_shown(m->row_count, top ? top : 20);

	if (!strcmp(m->a.name, m->b.name))
		fprintf(out, "\n%-24s %-28s %-28s %s\n", m->a.name, "A", "B", "change");
	else
		fprintf(out, "\n%s = %s\n%-24s %-28s %-28s %s\n", m->a.name, m->b.name, "", "A", "B", "change");
	snprintf(z, sizeof(z), "%+" PRId64 " B (%s, %s)", m->change_bytes, dp_human_change(h, sizeof(h), m->change_bytes),
		 dp_percent(p, sizeof(p), m));
	if (!m->change_bytes)
		snprintf(z, sizeof(z), "no change");
	line3(out, "peak", bytes_or(x, sizeof(x), a->has_peak, a->peak_bytes),
	      bytes_or(y, sizeof(y), b->has_peak, b->peak_bytes), z);
	line3(out, "at", when(x, sizeof(x), &m->a), when(y, sizeof(y), &m->b), "");
	if (m->a.phase || m->b.phase)
		line3(out, "phase", m->a.phase ? m->a.phase : "-", m->b.phase ? m->b.phase : "-", "");
	if (a->peak.has_reserved || b->peak.has_reserved)
		line3(out, "reserved at the peak", bytes_or(x, sizeof(x), a->peak.has_reserved, a->peak.reserved_bytes),
		      bytes_or(y, sizeof(y), b->peak.has_reserved, b->peak.reserved_bytes),
		      change_of(z, sizeof(z), a->peak.has_reserved && b->peak.has_reserved, a->peak.reserved_bytes,
				b->peak.reserved_bytes));
	line3(out, "fragmentation at peak", frag(x, sizeof(x), a), frag(y, sizeof(y), b), "");
	snprintf(x, sizeof(x), "%" PRIu64, a->failed_allocations);
	snprintf(y, sizeof(y), "%" PRIu64, b->failed_allocations);
	snprintf(z, sizeof(z), "%+" PRId64, (int64_t)(b->failed_allocations - a->failed_allocations));
	line3(out, "failed allocations", x, y, a->failed_allocations == b->failed_allocations ? "" : z);
	if (!m->has_rows) {
		fprintf(out, "\n  (no breakdown at the peak in either input)\n");
		return;
	}
	fprintf(out, "\n  live at the peak%s: %zu grown, %zu shrunk, %zu new, %zu gone; %zu unchanged (%s)\n",
		by_function ? ", by function" : "", m->grown, m->shrunk, m->added, m->gone, m->unchanged_rows,
		mp_bytes_human(x, sizeof(x), m->unchanged_bytes));
	if (!m->row_count)
		return;
	fprintf(out, "  %-12s %-12s %-12s %-14s %-7s %s\n", "change", "A", "B", "count A -> B", "kind",
		by_function ? "function" : "op  region  dtype  shape  [metadata]");
	for (size_t i = 0; i < shown; i++)
		row_text(out, &m->rows[i]);
	if (shown < m->row_count)
		fprintf(out, "  ... %zu more changed rows (--top N shows more)\n", m->row_count - shown);
}

static void names_text(FILE *out, const char *what, const char *const *v, size_t n)
{
	if (!n)
		return;
	fprintf(out, "\nonly in %s:", what);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s %s", i ? "," : "", v[i]);
	fputc('\n', out);
}

int mp_diff_text(FILE *out, const mp_diff_t *d, uint32_t top)
{
	fprintf(out, "memprof diff (%s)\n  A: %s\n  B: %s\n", d->kind, d->a.path, d->b.path);
	for (size_t i = 0; i < d->n; i++)
		memory_text(out, &d->mem[i], top, d->by_function);
	names_text(out, "A", (const char *const *)d->only_a, d->n_only_a);
	names_text(out, "B", (const char *const *)d->only_b, d->n_only_b);
	if (fflush(out) == EOF || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

static json_t *jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *side_json(const mp_diff_side_t *s, int *bad)
{
	const mp_solver_device_t *d = s->dev;
	json_t *o = json_object();

	if (!o)
		return NULL;
	mp_json_put(o, "name", json_string(s->name), bad);
	mp_json_put(o, "id", json_integer(d->id), bad);
	mp_json_put(o, "peak_bytes", d->has_peak ? mp_json_u64(d->peak_bytes) : json_null(), bad);
	mp_json_put(o, "time_ns", d->has_peak ? mp_json_u64(d->peak.time_ns) : json_null(), bad);
	mp_json_put(o, "time", d->has_peak ? json_string(s->time) : json_null(), bad);
	mp_json_put(o, "step", d->has_peak && d->peak.step >= 0 ? json_integer(d->peak.step) : json_null(), bad);
	mp_json_put(o, "phase", jstr_or_null(s->phase), bad);
	mp_json_put(o, "reserved_bytes", d->has_peak && d->peak.has_reserved ? mp_json_u64(d->peak.reserved_bytes) : json_null(), bad);
	mp_json_put(o, "fragmentation",
	    d->has_peak && !isnan(d->peak.fragmentation) ? json_real(d->peak.fragmentation) : json_null(), bad);
	mp_json_put(o, "failed_allocations", mp_json_u64(d->failed_allocations), bad);
	return o;
}

static json_t *row_json(const mp_diff_row_t *r, int *bad)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	mp_json_put(o, "kind", json_string(mp_diff_kind_name(r->kind)), bad);
	if (r->function) {
		mp_json_put(o, "function", json_string(r->function), bad);
	} else {
		mp_json_put(o, "op", json_string(r->op), bad);
		mp_json_put(o, "region", json_string(r->region), bad);
		mp_json_put(o, "dtype", json_string(r->dtype), bad);
		mp_json_put(o, "shape", json_string(r->shape), bad);
		mp_json_put(o, "metadata", jstr_or_null(r->metadata), bad);
	}
	mp_json_put(o, "a_bytes", mp_json_u64(r->a_bytes), bad);
	mp_json_put(o, "b_bytes", mp_json_u64(r->b_bytes), bad);
	mp_json_put(o, "change_bytes", json_integer(r->change_bytes), bad);
	mp_json_put(o, "a_count", mp_json_u64(r->a_count), bad);
	mp_json_put(o, "b_count", mp_json_u64(r->b_count), bad);
	return o;
}

static json_t *memory_json(const mp_diff_memory_t *m, uint32_t top, int *bad)
{
	json_t *o = json_object(), *rows = json_array();
	size_t shown = rp_shown(m->row_count, top);
	char h[40];

	if (!o || !rows) {
		json_decref(o);
		json_decref(rows);
		return NULL;
	}
	mp_json_put(o, "a", side_json(&m->a, bad), bad);
	mp_json_put(o, "b", side_json(&m->b, bad), bad);
	mp_json_put(o, "change_bytes", json_integer(m->change_bytes), bad);
	mp_json_put(o, "change", json_string(dp_human_change(h, sizeof(h), m->change_bytes)), bad);
	mp_json_put(o, "change_percent", isnan(m->change_percent) ? json_null() : json_real(m->change_percent), bad);
	mp_json_put(o, "has_rows", json_boolean(m->has_rows), bad);
	mp_json_put(o, "grown", mp_json_u64(m->grown), bad);
	mp_json_put(o, "shrunk", mp_json_u64(m->shrunk), bad);
	mp_json_put(o, "new", mp_json_u64(m->added), bad);
	mp_json_put(o, "gone", mp_json_u64(m->gone), bad);
	mp_json_put(o, "unchanged_rows", mp_json_u64(m->unchanged_rows), bad);
	mp_json_put(o, "unchanged_bytes", mp_json_u64(m->unchanged_bytes), bad);
	for (size_t i = 0; i < shown; i++)
		if (json_array_append_new(rows, row_json(&m->rows[i], bad)) < 0)
			*bad = 1;
	mp_json_put(o, "rows", rows, bad);
	mp_json_put(o, "rows_omitted", mp_json_u64(m->row_count - shown), bad);
	return o;
}

static json_t *names_json(const char *const *v, size_t n, int *bad)
{
	json_t *a = json_array();

	if (!a)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) < 0)
			*bad = 1;
	return a;
}

static json_t *input_json(const mp_report_input_t *in, int *bad)
{
	json_t *o = json_object();
	const char *unit = mp_source_time_unit(in->source);

	if (!o)
		return NULL;
	mp_json_put(o, "file", json_string(in->path ? in->path : ""), bad);
	mp_json_put(o, "time_unit", json_string(unit ? unit : "ns"), bad);
	return o;
}

static json_t *gates_json(const mp_diff_t *d, const mp_diff_gate_t *gates, size_t ngates, int *bad)
{
	json_t *arr = json_array();
	dp_gate_result_t *res = calloc(d->n + 1, sizeof(*res));

	if (!arr || !res) {
		json_decref(arr);
		free(res);
		return NULL;
	}
	for (size_t k = 0; k < ngates; k++) {
		int n = dp_gate_eval(d, &gates[k], res);
		for (int i = 0; i < n; i++)
			if (mp_diff_gate_row(arr, &gates[k], res[i].memory, res[i].a, res[i].b) < 0)
				*bad = 1;
	}
	free(res);
	return arr;
}

json_t *mp_diff_json(const mp_diff_t *d, uint32_t top, const mp_diff_gate_t *gates, size_t ngates)
{
	json_t *root = json_object(), *mem = json_array();
	int bad = 0;

	if (!root || !mem) {
		json_decref(root);
		json_decref(mem);
		return NULL;
	}
	mp_json_put(root, "format", json_string("memprof-diff"), &bad);
	mp_json_put(root, "version", json_integer(MP_DIFF_JSON_VERSION), &bad);
	mp_json_put(root, "kind", json_string(d->kind), &bad);
	mp_json_put(root, "rows_by", json_string(d->by_function ? "function" : "breakdown"), &bad);
	mp_json_put(root, "a", input_json(&d->a, &bad), &bad);
	mp_json_put(root, "b", input_json(&d->b, &bad), &bad);
	for (size_t i = 0; i < d->n; i++)
		if (json_array_append_new(mem, memory_json(&d->mem[i], top, &bad)) < 0)
			bad = 1;
	mp_json_put(root, "memories", mem, &bad);
	mp_json_put(root, "only_in_a", names_json((const char *const *)d->only_a, d->n_only_a, &bad), &bad);
	mp_json_put(root, "only_in_b", names_json((const char *const *)d->only_b, d->n_only_b, &bad), &bad);
	mp_json_put(root, "gates", gates_json(d, gates, gates ? ngates : 0, &bad), &bad);
	if (bad) {
		json_decref(root);
		return NULL;
	}
	return root;
}
