/* report.c - the three outputs of an analysis: aligned text for people, a
 * JSON document (the contract in docs/hlo.md) and the reference's CSV. */
#include "internal.h"

#include <memprof/output/csv.h>
#include <memprof/output/json.h>
#include <memprof/output/units.h>

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MIB(b) ((double)(b) / 1048576.0)

/* peak - unpadded peak; saturating (hostile traces can make the unpadded heap negative). */
static int64_t padding_overhead(const mp_hlo_result_t *r)
{
	int64_t d;

	return __builtin_sub_overflow(r->peak_heap_bytes, r->peak_unpadded_heap_bytes, &d) ? INT64_MAX : d;
}

static int finish(FILE *out)
{
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

static void span_text(char *buf, size_t n, const mp_hlo_buffer_t *b)
{
	if (b->has_span)
		snprintf(buf, n, "%" PRId64 "-%" PRId64, b->span_start, b->span_limit);
	else
		snprintf(buf, n, "-");
}

int mp_hlo_write_text(FILE *out, const mp_hlo_result_t *r, size_t top, int program_order)
{
	char a[64], b[64], c[64];
	size_t shown = top && top < r->n_buffers ? top : r->n_buffers;

	fprintf(out, "module:             %s (program id %" PRIu64 ")%s\n", r->module_name, r->program_id,
		r->compat ? "  [--compat=xprof]" : "");
	fprintf(out, "memory colour:      %" PRId64 "  (present:", r->color);
	for (size_t i = 0; i < r->n_colors; i++)
		fprintf(out, " %" PRId64, r->colors[i]);
	fprintf(out, ")\n");
	if (r->trace_id >= 0)
		fprintf(out, "heap trace:         %" PRId64 " (%zu events)\n", r->trace_id, r->n_events);
	else
		fprintf(out, "heap trace:         none for this colour (only indefinite buffers)\n");
	fprintf(out, "peak heap:          %" PRId64 " B (%s)", r->peak_heap_bytes, mp_bytes_human_signed(a, sizeof(a), r->peak_heap_bytes));
	if (r->trace_id >= 0)
		fprintf(out, " at event %" PRId64 " (%s)", r->peak_position,
			r->peak_instruction[0] ? r->peak_instruction : "?");
	fprintf(out, "\n");
	fprintf(out, "unpadded peak:      %" PRId64 " B (%s)\n", r->peak_unpadded_heap_bytes,
		mp_bytes_human_signed(a, sizeof(a), r->peak_unpadded_heap_bytes));
	fprintf(out, "padding overhead:   %s\n", mp_bytes_human_signed(a, sizeof(a), padding_overhead(r)));
	fprintf(out, "total allocation:   %" PRId64 " B (%s)\n", r->total_allocation_bytes,
		mp_bytes_human_signed(a, sizeof(a), r->total_allocation_bytes));
	fprintf(out, "indefinite:         %s added to every point (%s in indefinite allocations)\n",
		mp_bytes_human_signed(a, sizeof(a), r->indefinite_bytes), mp_bytes_human_signed(b, sizeof(b), r->indefinite_allocation_bytes));
	fprintf(out, "entry parameters:   %s   maybe-live-out: %s\n", mp_bytes_human_signed(a, sizeof(a), r->entry_parameter_bytes),
		mp_bytes_human_signed(b, sizeof(b), r->maybe_live_out_bytes));
	fprintf(out, "fragmentation:      %.2f %%\n", r->fragmentation_percent);
	fprintf(out, "buffers at peak:    %zu (buffers under %" PRId64 " B summed: %s)\n\n", r->n_buffers,
		r->small_buffer_size, mp_bytes_human_signed(c, sizeof(c), r->small_total_bytes));
	if (!shown)
		return finish(out);
	if (program_order)
		fprintf(out, "%s buffers at the peak in program order:\n", top && top < r->n_buffers ? "first" : "all");
	else
		fprintf(out, "%s buffers at the peak by size:\n", top && top < r->n_buffers ? "top" : "all");
	fprintf(out, "%4s %12s %12s %6s %-12s %-11s %s\n", "#", "size", "unpadded", "expan", "category", "span",
		"instruction / shape / op");
	for (size_t k = 0; k < shown; k++) {
		const mp_hlo_buffer_t *bf = &r->buffers[program_order ? k : r->by_size[k]];
		char exp[16] = "-", span[48];

		if (bf->unpadded_size > 0 && bf->unpadded_size < bf->size)
			snprintf(exp, sizeof(exp), "%.1fx", (double)bf->size / (double)bf->unpadded_size);
		span_text(span, sizeof(span), bf);
		fprintf(out, "%4zu %12s %12s %6s %-12s %-11s %s\n", k + 1, mp_bytes_human_signed(a, sizeof(a), bf->size),
			bf->category == MP_HLO_CAT_SMALL ? "-" : mp_bytes_human_signed(b, sizeof(b), bf->unpadded_size), exp,
			mp_hlo_category_name(bf->category), span, bf->instruction_name);
		if (bf->category != MP_HLO_CAT_SMALL) {
			fprintf(out, "%58s %s  %s%s%s\n", "", bf->shape, bf->opcode, bf->op_name[0] ? "  " : "",
				bf->op_name);
			if (bf->source[0])
				fprintf(out, "%58s %s\n", "", bf->source);
		}
	}
	if (shown < r->n_buffers)
		fprintf(out, "(%zu more; --top 0 shows all)\n", r->n_buffers - shown);
	return finish(out);
}

/* ---- JSON ---------------------------------------------------------------------- */

static json_t *buffer_json(const mp_hlo_buffer_t *b, size_t order)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "order", json_integer((json_int_t)order));
	json_object_set_new(o, "name", mp_json_text(b->instruction_name));
	json_object_set_new(o, "logical_buffer_id", json_integer(b->logical_buffer_id));
	json_object_set_new(o, "allocation_index", json_integer(b->allocation_index));
	json_object_set_new(o, "category", mp_json_text(mp_hlo_category_name(b->category)));
	json_object_set_new(o, "size_bytes", json_integer(b->size));
	json_object_set_new(o, "unpadded_size_bytes", json_integer(b->unpadded_size));
	if (b->unpadded_size > 0) {
		json_object_set_new(o, "expansion", json_real((double)b->size / (double)b->unpadded_size));
		json_object_set_new(o, "extra_bytes", json_integer(b->size - b->unpadded_size));
	} else {
		json_object_set_new(o, "expansion", json_null());
		json_object_set_new(o, "extra_bytes", json_integer(0));
	}
	json_object_set_new(o, "shape", mp_json_text(b->shape));
	json_object_set_new(o, "op_name", mp_json_text(b->op_name));
	json_object_set_new(o, "opcode", mp_json_text(b->opcode));
	json_object_set_new(o, "source", mp_json_text(b->source));
	json_object_set_new(o, "label", mp_json_text(b->label));
	json_object_set_new(o, "span_start", b->has_span ? json_integer(b->span_start) : json_null());
	json_object_set_new(o, "span_limit", b->has_span ? json_integer(b->span_limit) : json_null());
	return o;
}

static json_t *int_array(const int64_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_integer(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

int mp_hlo_write_json(FILE *out, const mp_hlo_result_t *r)
{
	json_t *o = json_object(), *order = json_array(), *bysize = json_array(), *names = json_array(),
	       *warn = json_array();
	int rc;

	if (!o || !order || !bysize || !names || !warn) {
		json_decref(o);
		json_decref(order);
		json_decref(bysize);
		json_decref(names);
		json_decref(warn);
		return MP_ENOMEM;
	}
	json_object_set_new(o, "schema", json_string("memprof.hlo/1"));
	json_object_set_new(o, "module_name", mp_json_text(r->module_name));
	/* program ids are uint64 fingerprints: a string keeps them exact in every JSON reader */
	{
		char pid[32];

		snprintf(pid, sizeof(pid), "%" PRIu64, r->program_id);
		json_object_set_new(o, "program_id", mp_json_text(pid));
	}
	json_object_set_new(o, "entry_computation_name", mp_json_text(r->entry_computation_name));
	json_object_set_new(o, "mode", mp_json_text(r->compat ? "xprof" : "default"));
	json_object_set_new(o, "color", json_integer(r->color));
	json_object_set_new(o, "colors", int_array(r->colors, r->n_colors));
	json_object_set_new(o, "small_buffer_size", json_integer(r->small_buffer_size));
	json_object_set_new(o, "heap_simulator_trace", r->trace_id >= 0 ? json_integer(r->trace_id) : json_null());
	json_object_set_new(o, "events", json_integer((json_int_t)r->n_events));
	json_object_set_new(o, "peak_heap_bytes", json_integer(r->peak_heap_bytes));
	json_object_set_new(o, "peak_position", json_integer(r->peak_position));
	json_object_set_new(o, "peak_instruction", mp_json_text(r->peak_instruction));
	json_object_set_new(o, "peak_unpadded_heap_bytes", json_integer(r->peak_unpadded_heap_bytes));
	json_object_set_new(o, "padding_overhead_bytes",
			    json_integer(padding_overhead(r)));
	json_object_set_new(o, "total_allocation_bytes", json_integer(r->total_allocation_bytes));
	json_object_set_new(o, "indefinite_bytes", json_integer(r->indefinite_bytes));
	json_object_set_new(o, "indefinite_allocation_bytes", json_integer(r->indefinite_allocation_bytes));
	json_object_set_new(o, "entry_parameter_bytes", json_integer(r->entry_parameter_bytes));
	json_object_set_new(o, "maybe_live_out_bytes", json_integer(r->maybe_live_out_bytes));
	json_object_set_new(o, "non_reusable_bytes", json_integer(r->non_reusable_bytes));
	json_object_set_new(o, "small_buffer_total_bytes", json_integer(r->small_total_bytes));
	json_object_set_new(o, "fragmentation_percent", json_real(r->fragmentation_percent));
	json_object_set_new(o, "heap_sizes", int_array(r->heap_sizes, r->n_points));
	json_object_set_new(o, "unpadded_heap_sizes", int_array(r->unpadded_heap_sizes, r->n_points));
	for (size_t i = 0; i < r->n_points; i++)
		json_array_append_new(names, mp_json_text(r->point_names[i]));
	json_object_set_new(o, "point_instruction_names", names);
	for (size_t i = 0; i < r->n_buffers; i++) {
		json_array_append_new(order, buffer_json(&r->buffers[i], i));
		json_array_append_new(bysize, buffer_json(&r->buffers[r->by_size[i]], r->by_size[i]));
	}
	json_object_set_new(o, "buffers_by_order", order);
	json_object_set_new(o, "buffers_by_size", bysize);
	for (size_t i = 0; i < r->n_warnings; i++)
		json_array_append_new(warn, mp_json_text(r->warnings[i]));
	json_object_set_new(o, "warnings", warn);
	rc = mp_json_write(out, o, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	if (rc < 0)
		return rc;
	return finish(out);
}

/* ---- CSV ------------------------------------------------------------------------ */

static void csv_field(FILE *out, const char *s, int last)
{
	mp_csv_field(out, s);
	fputc(last ? '\n' : ',', out);
}

int mp_hlo_write_csv(FILE *out, const mp_hlo_result_t *r)
{
	fputs("InstructionName,UnpaddedSizeMiB,SizeMiB,AllocAt,FreeAt,TfOpName,OpCode,Shape,AllocationType\n", out);
	for (size_t i = 0; i < r->n_buffers; i++) {
		const mp_hlo_buffer_t *b = &r->buffers[i];
		int64_t at = b->has_span ? b->span_start : 0, free_at = b->has_span ? b->span_limit : (int64_t)r->n_events;

		csv_field(out, b->instruction_name, 0);
		fprintf(out, "%.6f,%.6f,%" PRId64 ",%" PRId64 ",", MIB(b->unpadded_size), MIB(b->size), at, free_at);
		csv_field(out, b->op_name, 0);
		csv_field(out, b->opcode, 0);
		csv_field(out, b->shape, 0);
		csv_field(out, mp_hlo_category_name(b->category), 1);
	}
	return finish(out);
}
