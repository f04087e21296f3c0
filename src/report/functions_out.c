/* functions_out.c - the "allocations by function" table as text and JSON
 * (memprof/functions.h; fields in docs/report.md). */
#include <memprof/functions.h>
#include <memprof/report.h>

#include "report_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define TOP_DEFAULT 20
#define NCOL 7

static const char *memory_name(const mp_source_t *src, uint32_t id)
{
	const mp_memory_info_t *m = mp_source_memory(src, id);

	return m && m->name ? m->name : "?";
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "";
}

static int wanted(const mp_func_row_t *r, int device_set, uint32_t device)
{
	return !device_set || r->memory == device;
}

/* The most characters of a function name the text table shows. */
#define FN_TEXT_MAX 120

/* A row's label, at most FN_TEXT_MAX characters: a long name (C++
 * templates, demangled) is cut, and says so; a Python frame's file loses
 * its leading directories instead ("main (...u/train.py:12)"), so that
 * its line stays. JSON and CSV have them whole. */
static void label_text(const mp_func_row_t *row, char *buf, size_t size)
{
	size_t fn = strlen(row->function), room, len;
	char line[16];

	if (strlen(row->label) <= FN_TEXT_MAX) {
		snprintf(buf, size, "%s", row->label);
		return;
	}
	snprintf(line, sizeof(line), row->line ? ":%" PRIu32 : "", row->line);
	room = FN_TEXT_MAX - (fn < FN_TEXT_MAX / 2 ? fn : FN_TEXT_MAX / 2) - strlen(line) - 6; /* " (...)" */
	len = strlen(row->file);
	if (row->kind == MP_FRAME_PYTHON && row->file[0] && len > room)
		snprintf(buf, size, "%.*s (...%s%s)", FN_TEXT_MAX / 2, row->function, row->file + len - room, line);
	else
		snprintf(buf, size, "%.*s...", FN_TEXT_MAX - 3, row->label);
}

/* One table per memory id: cells formatted first, then widths, then rows. */
int mp_functions_text(FILE *out, mp_functions_t *f, const mp_source_t *src, uint32_t top, int device_set,
		      uint32_t device)
{
	static const char *const head[NCOL] = {"function", "live at peak", "blocks", "allocations",
					       "requested (all)", "live at end", "object"};
	size_t n = mp_functions_count(f), i = 0;

	if (!top)
		top = TOP_DEFAULT;
	while (i < n) {
		uint32_t mem = mp_functions_row(f, i)->memory;
		size_t j = i, end, shown, w[NCOL], c, r;
		char (*cell)[NCOL][160];

		while (j < n && mp_functions_row(f, j)->memory == mem)
			j++;
		end = j;
		if (!wanted(mp_functions_row(f, i), device_set, device)) {
			i = end;
			continue;
		}
		shown = end - i < top ? end - i : top;
		cell = calloc(shown ? shown : 1, sizeof(*cell));
		if (!cell)
			return -ENOMEM;
		for (c = 0; c < NCOL; c++)
			w[c] = strlen(head[c]);
		for (r = 0; r < shown; r++) {
			const mp_func_row_t *row = mp_functions_row(f, i + r);
			label_text(row, cell[r][0], sizeof(cell[r][0]));
			mp_bytes_exact(cell[r][1], sizeof(cell[r][1]), row->peak_bytes);
			snprintf(cell[r][2], sizeof(cell[r][2]), "%" PRIu64, row->peak_count);
			if (row->failed)
				snprintf(cell[r][3], sizeof(cell[r][3]), "%" PRIu64 " (+%" PRIu64 " failed)",
					 row->allocations, row->failed);
			else
				snprintf(cell[r][3], sizeof(cell[r][3]), "%" PRIu64, row->allocations);
			mp_bytes_exact(cell[r][4], sizeof(cell[r][4]), row->requested_bytes);
			mp_bytes_exact(cell[r][5], sizeof(cell[r][5]), row->leak_bytes);
			snprintf(cell[r][6], sizeof(cell[r][6]), "%s", base_name(row->object));
			for (c = 0; c < NCOL; c++)
				if (strlen(cell[r][c]) > w[c])
					w[c] = strlen(cell[r][c]);
		}
		fprintf(out, "\nAllocations by function, memory '%s' (%zu function%s, %u distinct stacks, symbols: %s)\n",
			memory_name(src, mem), end - i, end - i == 1 ? "" : "s", mp_functions_distinct_stacks(f),
			mp_functions_symbolizer(f));
		for (r = 0; r <= shown; r++) {
			fputs("  ", out);
			for (c = 0; c < NCOL; c++) {
				const char *v = r ? cell[r - 1][c] : head[c];
				int right = c >= 1 && c <= 5;
				fprintf(out, right ? "%*s" : "%-*s", c == NCOL - 1 ? 0 : (int)w[c], v);
				if (c < NCOL - 1)
					fputs("  ", out);
			}
			fputc('\n', out);
		}
		if (shown < end - i)
			fprintf(out, "  ... %zu more (--top N)\n", end - i - shown);
		free(cell);
		i = end;
	}
	return ferror(out) ? -EIO : 0;
}

static json_t *hex(uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%#" PRIx64, v);
	return json_string(buf);
}

static int put(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

static json_t *frames_json(mp_functions_t *f, uint32_t stack, int *bad)
{
	const mp_func_frame_t *fr;
	json_t *arr = json_array();
	uint32_t n, i;

	if (!arr || mp_functions_frames(f, stack, &fr, &n)) {
		*bad |= !arr;
		return arr;
	}
	for (i = 0; i < n; i++) {
		json_t *o = json_object();
		if (!o || put(o, "address", hex(fr[i].address)) ||
		    put(o, "function", fr[i].function ? json_string(fr[i].function) : json_null()) ||
		    put(o, "object", fr[i].object ? json_string(fr[i].object) : json_null()) ||
		    put(o, "offset", hex(fr[i].offset)) ||
		    put(o, "kind", json_string(mp_frame_kind_name(fr[i].kind))) ||
		    (fr[i].kind == MP_FRAME_PYTHON && (put(o, "file", json_string(fr[i].file ? fr[i].file : "")) ||
						       put(o, "line", json_integer(fr[i].line)))) ||
		    json_array_append_new(arr, o)) {
			*bad = 1;
			break;
		}
	}
	return arr;
}

json_t *mp_functions_json(mp_functions_t *f, const mp_source_t *src, uint32_t top, int device_set, uint32_t device)
{
	json_t *root = json_object(), *rows = json_array();
	size_t n = mp_functions_count(f), i, in_mem = 0;
	uint32_t mem = UINT32_MAX;
	int bad = !root || !rows;

	if (!bad && (put(root, "symbolizer", json_string(mp_functions_symbolizer(f))) ||
		     put(root, "distinct_stacks", json_integer(mp_functions_distinct_stacks(f)))))
		bad = 1;
	for (i = 0; i < n && !bad; i++) {
		const mp_func_row_t *r = mp_functions_row(f, i);
		json_t *o;

		in_mem = r->memory == mem ? in_mem + 1 : 1;
		mem = r->memory;
		if (!wanted(r, device_set, device) || (top && in_mem > top))
			continue;
		o = json_object();
		if (!o || put(o, "memory", json_string(memory_name(src, r->memory))) ||
		    put(o, "memory_id", json_integer(r->memory)) || put(o, "function", json_string(r->function)) ||
		    put(o, "object", json_string(r->object)) || put(o, "file", json_string(r->file)) ||
		    put(o, "line", json_integer(r->line)) || put(o, "kind", json_string(mp_frame_kind_name(r->kind))) ||
		    put(o, "allocations", json_integer((json_int_t)r->allocations)) ||
		    put(o, "requested_bytes", json_integer((json_int_t)r->requested_bytes)) ||
		    put(o, "failed_allocations", json_integer((json_int_t)r->failed)) ||
		    put(o, "peak_bytes", json_integer((json_int_t)r->peak_bytes)) ||
		    put(o, "peak_count", json_integer((json_int_t)r->peak_count)) ||
		    put(o, "peak_requested_bytes", json_integer((json_int_t)r->peak_requested_bytes)) ||
		    put(o, "leak_bytes", json_integer((json_int_t)r->leak_bytes)) ||
		    put(o, "leak_count", json_integer((json_int_t)r->leak_count)) ||
		    put(o, "stacks", json_integer(r->stacks)) ||
		    put(o, "stack", r->stack ? frames_json(f, r->stack, &bad) : json_array()) ||
		    json_array_append_new(rows, o))
			bad = 1;
	}
	if (bad || put(root, "rows", rows)) {
		json_decref(root);
		return NULL;
	}
	return root;
}

static void csv_field(FILE *out, const char *s)
{
	fputc(',', out);
	mp_csv_field(out, s);
}

const char *const mp_functions_csv_header =
	"section,file,device,function,object,allocations,requested_bytes,failed_allocations,peak_bytes,"
	"peak_count,leak_bytes,leak_count,stacks,source_file,line";

int mp_functions_csv(FILE *out, mp_functions_t *f, const char *file, uint32_t top, int device_set, uint32_t device)
{
	size_t n = mp_functions_count(f), i, in_mem = 0;
	uint32_t mem = UINT32_MAX;

	for (i = 0; i < n; i++) {
		const mp_func_row_t *r = mp_functions_row(f, i);

		in_mem = r->memory == mem ? in_mem + 1 : 1;
		mem = r->memory;
		if (!wanted(r, device_set, device) || (top && in_mem > top))
			continue;
		fputs("functions", out);
		csv_field(out, file ? file : "");
		fprintf(out, ",%" PRIu32, r->memory);
		csv_field(out, r->function);
		csv_field(out, r->object);
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32,
			r->allocations, r->requested_bytes, r->failed, r->peak_bytes, r->peak_count, r->leak_bytes,
			r->leak_count, r->stacks);
		csv_field(out, r->file);
		fprintf(out, ",%" PRIu32 "\n", r->line);
	}
	return ferror(out) ? -EIO : 0;
}
