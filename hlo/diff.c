/* diff.c - two HLO modules' buffers at their peaks, matched by identity
 * (memprof/hlo_diff.h), and the diff as text and JSON. */
#include <memprof/error.h>
#include <memprof/hlo_diff.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const char *s)
{
	return s ? s : "";
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static const mp_hlo_buffer_t *buf_of(const mp_hlo_diff_row_t *r)
{
	return r->b ? r->b : r->a;
}

static int row_cmp(const void *x, const void *y)
{
	const mp_hlo_diff_row_t *p = x, *q = y;
	uint64_t mp = mag(p->change_bytes), mq = mag(q->change_bytes);

	if (mp != mq)
		return mp > mq ? -1 : 1;
	return strcmp(str(buf_of(p)->instruction_name), str(buf_of(q)->instruction_name));
}

static int same_shape(const mp_hlo_buffer_t *x, const mp_hlo_buffer_t *y)
{
	return x->size == y->size && !strcmp(str(x->opcode), str(y->opcode)) && !strcmp(str(x->shape), str(y->shape));
}

int mp_hlo_diff_compute(const mp_hlo_result_t *a, const mp_hlo_result_t *b, mp_hlo_diff_t **out)
{
	size_t na = a->n_buffers, nb = b->n_buffers, n = 0;
	mp_hlo_diff_t *d = calloc(1, sizeof(*d));
	size_t *match = calloc(na ? na : 1, sizeof(*match)); /* index in b + 1, 0: none */
	char *used = calloc(nb ? nb : 1, 1);
	int *by_shape = calloc(na ? na : 1, sizeof(*by_shape));

	*out = NULL;
	if (!d || !match || !used || !by_shape || !(d->rows = calloc(na + nb + 1, sizeof(*d->rows)))) {
		free(match);
		free(used);
		free(by_shape);
		mp_hlo_diff_free(d);
		return MP_ENOMEM;
	}
	d->a = a;
	d->b = b;
	/* identity first: the instruction and its shape index */
	for (size_t i = 0; i < na; i++)
		for (size_t k = 0; k < nb && !match[i]; k++)
			if (!used[k] && a->buffers[i].category == b->buffers[k].category &&
			    !strcmp(str(a->buffers[i].instruction_name), str(b->buffers[k].instruction_name))) {
				match[i] = k + 1;
				used[k] = 1;
			}
	/* then what a renumbering left: the same opcode, shape and size */
	for (size_t i = 0; i < na; i++)
		for (size_t k = 0; k < nb && !match[i]; k++)
			if (!used[k] && same_shape(&a->buffers[i], &b->buffers[k])) {
				match[i] = k + 1;
				used[k] = 1;
				by_shape[i] = 1;
			}
	for (size_t i = 0; i < na; i++) {
		const mp_hlo_buffer_t *x = &a->buffers[i], *y = match[i] ? &b->buffers[match[i] - 1] : NULL;
		mp_hlo_diff_row_t r = {x, y, y ? y->size - x->size : -x->size, "gone", by_shape[i]};
		d->renamed += by_shape[i];
		if (y && !r.change_bytes) {
			d->unchanged++;
			d->unchanged_bytes += x->size;
			continue;
		}
		r.kind = !y ? "gone" : r.change_bytes > 0 ? "grown" : "shrunk";
		d->grown += y && r.change_bytes > 0;
		d->shrunk += y && r.change_bytes < 0;
		d->gone += !y;
		d->rows[n++] = r;
	}
	for (size_t k = 0; k < nb; k++)
		if (!used[k]) {
			d->rows[n++] = (mp_hlo_diff_row_t){NULL, &b->buffers[k], b->buffers[k].size, "new", 0};
			d->added++;
		}
	d->n_rows = n;
	if (n)
		qsort(d->rows, n, sizeof(*d->rows), row_cmp);
	free(match);
	free(used);
	free(by_shape);
	*out = d;
	return 0;
}

void mp_hlo_diff_free(mp_hlo_diff_t *d)
{
	if (!d)
		return;
	free(d->rows);
	free(d);
}

static const char *human(char *buf, size_t n, int64_t v, int sign)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
	double x = (double)mag(v);
	int u = -1;

	while (x >= 1024.0 && u < 3) {
		x /= 1024.0;
		u++;
	}
	const char *s = !sign || !v ? "" : v > 0 ? "+" : "-";
	if (u < 0)
		snprintf(buf, n, "%s%" PRIu64 " B", s, mag(v));
	else
		snprintf(buf, n, "%s%.2f %s", s, x, units[u]);
	return buf;
}

static void line3(FILE *out, const char *label, const char *a, const char *b, const char *c)
{
	fprintf(out, "  %-22s %-28s %-28s %s\n", label, a, b, c);
}

/* One figure of both modules and its change. */
static void figure(FILE *out, const char *label, int64_t a, int64_t b)
{
	char x[64], y[64], z[64], h[32];

	if (mag(a) < 1024)
		snprintf(x, sizeof(x), "%" PRId64 " B", a);
	else
		snprintf(x, sizeof(x), "%" PRId64 " B (%s)", a, human(h, sizeof(h), a, 0));
	if (mag(b) < 1024)
		snprintf(y, sizeof(y), "%" PRId64 " B", b);
	else
		snprintf(y, sizeof(y), "%" PRId64 " B (%s)", b, human(h, sizeof(h), b, 0));
	if (a == b)
		snprintf(z, sizeof(z), "no change");
	else if (a)
		snprintf(z, sizeof(z), "%+" PRId64 " B (%s, %+.2f%%)", b - a, human(h, sizeof(h), b - a, 1),
			 100.0 * (double)(b - a) / (double)a);
	else
		snprintf(z, sizeof(z), "%+" PRId64 " B (%s)", b - a, human(h, sizeof(h), b - a, 1));
	line3(out, label, x, y, z);
}

int mp_hlo_diff_text(FILE *out, const mp_hlo_diff_t *d, const char *path_a, const char *path_b, size_t top)
{
	const mp_hlo_result_t *a = d->a, *b = d->b;
	char x[64], y[64], h1[32], h2[32], h3[32];
	size_t shown = top && top < d->n_rows ? top : d->n_rows;

	fprintf(out, "memprof diff (hlo)\n  A: %s (%s)\n  B: %s (%s)\n\n", path_a, str(a->module_name), path_b,
		str(b->module_name));
	fprintf(out, "%-24s %-28s %-28s %s\n", "colour", "A", "B", "change");
	figure(out, "peak", a->peak_heap_bytes, b->peak_heap_bytes);
	snprintf(x, sizeof(x), "#%" PRId64 " %s", a->peak_position, str(a->peak_instruction));
	snprintf(y, sizeof(y), "#%" PRId64 " %s", b->peak_position, str(b->peak_instruction));
	line3(out, "at", x, y, "");
	figure(out, "padding at the peak", a->peak_heap_bytes - a->peak_unpadded_heap_bytes,
	       b->peak_heap_bytes - b->peak_unpadded_heap_bytes);
	figure(out, "indefinite", a->indefinite_bytes, b->indefinite_bytes);
	figure(out, "total allocations", a->total_allocation_bytes, b->total_allocation_bytes);
	snprintf(x, sizeof(x), "%.2f%%", a->fragmentation_percent);
	snprintf(y, sizeof(y), "%.2f%%", b->fragmentation_percent);
	line3(out, "fragmentation", x, y, "");
	fprintf(out, "\n  buffers at the peak: %zu grown, %zu shrunk, %zu new, %zu gone; %zu unchanged (%s)%s\n", d->grown,
		d->shrunk, d->added, d->gone, d->unchanged, human(h1, sizeof(h1), d->unchanged_bytes, 0),
		d->renamed ? "; some matched by opcode, shape and size (marked ~)" : "");
	if (d->n_rows)
		fprintf(out, "  %-12s %-12s %-12s %-7s %s\n", "change", "A", "B", "kind", "buffer");
	for (size_t i = 0; i < shown; i++) {
		const mp_hlo_diff_row_t *r = &d->rows[i];
		const mp_hlo_buffer_t *bb = buf_of(r);
		fprintf(out, "  %-12s %-12s %-12s %-7s %s%s: %s (%s)\n", human(h1, sizeof(h1), r->change_bytes, 1),
			human(h2, sizeof(h2), r->a ? r->a->size : 0, 0), human(h3, sizeof(h3), r->b ? r->b->size : 0, 0),
			r->kind, r->by_shape ? "~" : "", str(bb->instruction_name), str(bb->shape),
			mp_hlo_category_name(bb->category));
	}
	if (shown < d->n_rows)
		fprintf(out, "  ... %zu more changed buffers (--top N shows more)\n", d->n_rows - shown);
	if (fflush(out) == EOF || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

static json_t *side_json(const mp_hlo_result_t *r)
{
	return json_pack("{s:s,s:I,s:I,s:s,s:I,s:I,s:I,s:I,s:f}", "module_name", str(r->module_name),
			 "peak_heap_bytes", (json_int_t)r->peak_heap_bytes, "peak_position", (json_int_t)r->peak_position,
			 "peak_instruction", str(r->peak_instruction), "padding_bytes",
			 (json_int_t)(r->peak_heap_bytes - r->peak_unpadded_heap_bytes), "indefinite_bytes",
			 (json_int_t)r->indefinite_bytes, "total_allocation_bytes", (json_int_t)r->total_allocation_bytes,
			 "entry_parameter_bytes", (json_int_t)r->entry_parameter_bytes, "fragmentation_percent",
			 r->fragmentation_percent);
}

json_t *mp_hlo_diff_json(const mp_hlo_diff_t *d, size_t top)
{
	size_t shown = top && top < d->n_rows ? top : d->n_rows;
	json_t *o = json_pack("{s:o*,s:o*,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "a", side_json(d->a), "b",
			      side_json(d->b), "change_bytes", (json_int_t)(d->b->peak_heap_bytes - d->a->peak_heap_bytes),
			      "indefinite_change_bytes", (json_int_t)(d->b->indefinite_bytes - d->a->indefinite_bytes),
			      "grown", (json_int_t)d->grown, "shrunk", (json_int_t)d->shrunk, "new", (json_int_t)d->added,
			      "gone", (json_int_t)d->gone, "unchanged", (json_int_t)d->unchanged, "unchanged_bytes",
			      (json_int_t)d->unchanged_bytes, "rows_omitted", (json_int_t)(d->n_rows - shown));
	json_t *rows = json_array();

	if (!o || !rows || json_object_set_new(o, "rows", rows) < 0) {
		json_decref(o);
		return NULL;
	}
	for (size_t i = 0; i < shown; i++) {
		const mp_hlo_diff_row_t *r = &d->rows[i];
		const mp_hlo_buffer_t *bb = buf_of(r);
		json_t *x = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:b}", "kind", r->kind, "instruction",
				      str(bb->instruction_name), "opcode", str(bb->opcode), "shape", str(bb->shape), "category",
				      mp_hlo_category_name(bb->category), "a_bytes", (json_int_t)(r->a ? r->a->size : 0),
				      "b_bytes", (json_int_t)(r->b ? r->b->size : 0), "change_bytes",
				      (json_int_t)r->change_bytes, "a_unpadded_bytes",
				      (json_int_t)(r->a ? r->a->unpadded_size : 0), "b_unpadded_bytes",
				      (json_int_t)(r->b ? r->b->unpadded_size : 0), "matched_by_shape", r->by_shape);
		if (!x || json_array_append_new(rows, x) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

json_t *mp_hlo_diff_document(const mp_hlo_diff_t *d, const char *path_a, const char *path_b, size_t top)
{
	json_t *doc = json_pack("{s:s,s:i,s:s,s:{s:s},s:{s:s},s:o*,s:[]}", "format", "memprof-diff", "version", 1,
				"kind", "hlo", "a", "file", path_a, "b", "file", path_b, "hlo", mp_hlo_diff_json(d, top),
				"gates");

	if (doc && !json_object_get(doc, "hlo")) { /* the "hlo" object's builder ran out of memory */
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}
