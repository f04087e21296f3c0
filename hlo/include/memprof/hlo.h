/* memprof/hlo.h - the HLO buffer viewer: read XLA HloProto dumps (or the
 * HloProtos embedded in an xplane.pb profile), replay the heap-simulator trace
 * of one memory colour and report the working space, the peak and the
 * buffers live at it.
 *
 * Pipeline: mp_hlo_file_open() (bytes, gzip, XSpace extraction, module list)
 * -> mp_hlo_module_load() (decode + indexes) -> mp_hlo_analyze() (replay,
 * peak snapshot) -> mp_hlo_write_text/json/csv(). Semantics and the JSON
 * contract are in docs/hlo.md.
 */
#ifndef MEMPROF_HLO_H
#define MEMPROF_HLO_H

#include <memprof/error.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- files and modules ------------------------------------------------ */

typedef struct mp_hlo_file mp_hlo_file_t;
typedef struct mp_hlo_module mp_hlo_module_t;

typedef struct mp_hlo_module_info {
	const char *name;     /* module name ("jit_f"); borrowed, valid until the file is closed */
	const char *display;  /* "<name>(<program id>)" as profiles name it; borrowed, same lifetime */
	uint64_t program_id;  /* HloModuleProto.id, or the profile's program id */
	size_t size;          /* bytes of the serialized HloProto */
} mp_hlo_module_info_t;

/* Open an HloProto (.hlo.pb, .hlo_proto.pb, optionally gzip-compressed) or an
 * XSpace (.xplane.pb) whose /host:metadata plane embeds HloProtos.
 * On success *out is owned by the caller; free with mp_hlo_file_close().
 * On failure returns a negative code and fills diag. */
int mp_hlo_file_open(const char *path, mp_hlo_file_t **out, mp_diag_t *diag);

/* The same from memory; the bytes are copied. name (may be NULL) only guides
 * format detection (a name ending in ".xplane.pb" is read as an XSpace). */
int mp_hlo_file_open_mem(const void *data, size_t len, const char *name,
			 mp_hlo_file_t **out, mp_diag_t *diag);

void mp_hlo_file_close(mp_hlo_file_t *file);

size_t mp_hlo_file_module_count(const mp_hlo_file_t *file);
/* Borrowed; valid until mp_hlo_file_close(). NULL when i is out of range. */
const mp_hlo_module_info_t *mp_hlo_file_module(const mp_hlo_file_t *file, size_t i);
/* 1 if the file is an XSpace profile, 0 if it is a plain HloProto. */
int mp_hlo_file_is_xspace(const mp_hlo_file_t *file);

/* Find a module by name, display name ("name(id)") or program id.
 * Returns 0 and *index, MP_ENOTFOUND, or MP_EUSAGE when a name is ambiguous. */
int mp_hlo_file_find(const mp_hlo_file_t *file, const char *sel, size_t *index,
		     mp_diag_t *diag);

/* Decode module i and build its indexes. Fails with MP_EHLO when the module
 * has no buffer assignment (a before_optimizations dump). Recoverable
 * problems (unknown ids) become warnings, see mp_hlo_module_warning().
 * Caller owns *out; free with mp_hlo_module_free(). The module does not
 * reference the file: the file may be closed afterwards. */
int mp_hlo_module_load(const mp_hlo_file_t *file, size_t i, mp_hlo_module_t **out,
		       mp_diag_t *diag);
void mp_hlo_module_free(mp_hlo_module_t *module);

/* Memory colours present (allocations and logical buffers), ascending.
 * Borrowed; valid until mp_hlo_module_free(). */
const int64_t *mp_hlo_module_colors(const mp_hlo_module_t *module, size_t *count);

/* Warnings found while indexing (borrowed strings, same lifetime). */
size_t mp_hlo_module_warning_count(const mp_hlo_module_t *module);
const char *mp_hlo_module_warning(const mp_hlo_module_t *module, size_t i);

/* ---- analysis ------------------------------------------------------------ */

typedef struct mp_hlo_options {
	int64_t color;             /* memory colour (LayoutProto.memory_space); default 0 */
	int64_t small_buffer_size; /* buffers strictly smaller are summed; default 16384 */
	int compat;                /* 1: reproduce xprof's Memory Viewer exactly (docs/hlo.md) */
} mp_hlo_options_t;

/* Defaults: colour 0, 16 KiB, default (corrected) mode. */
void mp_hlo_options_init(mp_hlo_options_t *opt);

typedef enum {
	MP_HLO_CAT_PARAMETER,
	MP_HLO_CAT_OUTPUT,
	MP_HLO_CAT_THREAD_LOCAL,
	MP_HLO_CAT_CONSTANT,
	MP_HLO_CAT_TEMPORARY,
	MP_HLO_CAT_SMALL /* the aggregate of buffers under small_buffer_size */
} mp_hlo_category_t;

/* Name as the reference prints it ("Parameter", "Temporary", ...). Static. */
const char *mp_hlo_category_name(mp_hlo_category_t cat);

/* One buffer live at the peak. Strings are owned by the result. */
typedef struct mp_hlo_buffer {
	int64_t logical_buffer_id; /* -1 for the small aggregate */
	int64_t allocation_index;  /* -1 for the small aggregate */
	mp_hlo_category_t category;
	int64_t size;              /* padded bytes (LogicalBufferProto.size) */
	int64_t unpadded_size;     /* bytes without layout padding; 0 for the aggregate */
	char *instruction_name;    /* "fusion.3{0}" (shape index appended when non-empty) */
	char *label;               /* "<instr>: <shape> # <op_name>" as the reference builds it */
	char *shape;               /* shape with layout ("f32[8,128]{1,0:T(8,128)}") */
	char *op_name;             /* metadata.op_name, "" if none */
	char *opcode;
	char *source;              /* "file:line", "" if none */
	int64_t span_start;        /* allocation span in program points (heap-simulator events) */
	int64_t span_limit;
	int has_span;              /* 0: not seen in the trace (indefinite / aggregate) */
} mp_hlo_buffer_t;

typedef struct mp_hlo_result {
	char *module_name;
	char *entry_computation_name;
	uint64_t program_id;              /* program id (HloModuleProto.id, or the profile's) */
	int64_t *colors;                  /* colours present in the module, ascending */
	size_t n_colors;
	int64_t color;
	int compat;
	int64_t small_buffer_size;
	int64_t trace_id;                 /* chosen heap-simulator trace, -1 if none */
	size_t n_events;                  /* events of that trace */

	int64_t peak_heap_bytes;          /* includes indefinite_bytes */
	int64_t peak_unpadded_heap_bytes; /* includes indefinite_bytes (padded, as the reference) */
	int64_t peak_position;            /* event index that reached the peak; 0 without a trace */
	char *peak_instruction;           /* instruction_name of that event, "" if none */
	int64_t total_allocation_bytes;   /* all allocations of the colour */
	int64_t indefinite_bytes;         /* added to every heap point (see docs) */
	int64_t indefinite_allocation_bytes; /* all indefinite allocations of the colour */
	int64_t entry_parameter_bytes;
	int64_t maybe_live_out_bytes;
	int64_t non_reusable_bytes;
	int64_t small_total_bytes;
	double fragmentation_percent;     /* (total - peak) / (total - indefinite_alloc) * 100; 0 if undefined */

	size_t n_points;                  /* n_events + 1, or 0 without a trace */
	int64_t *heap_sizes;              /* bytes before event i (last = after all), + indefinite_bytes */
	int64_t *unpadded_heap_sizes;
	char **point_names;               /* instruction_name of event i ("" for the last); strings owned by the result */

	size_t n_buffers;
	mp_hlo_buffer_t *buffers;         /* program order; the small aggregate last */
	size_t *by_size;                  /* indices into buffers, size descending, stable */

	size_t n_warnings;
	char **warnings;                  /* replay warnings (skipped events, ...) */
} mp_hlo_result_t;

/* Analyse one colour. Caller owns *out; free with mp_hlo_result_free().
 * Fails (MP_EHLO, diag names the event) on a double free, a negative heap, an
 * unknown event kind or a trace touching more than one allocation. */
int mp_hlo_analyze(const mp_hlo_module_t *module, const mp_hlo_options_t *opt,
		   mp_hlo_result_t **out, mp_diag_t *diag);
void mp_hlo_result_free(mp_hlo_result_t *result);

/* ---- output ---------------------------------------------------------------- */

/* Aligned text for people: the summary and the buffers at the peak, the
 * `top` largest (0 = all) listed by size, or in program order when
 * program_order is set. Returns 0 or -errno. */
int mp_hlo_write_text(FILE *out, const mp_hlo_result_t *r, size_t top, int program_order);
/* JSON document (schema in docs/hlo.md). Returns 0, -errno or MP_ENOMEM. */
int mp_hlo_write_json(FILE *out, const mp_hlo_result_t *r);
/* CSV with the reference's columns, one row per buffer in program order. */
int mp_hlo_write_csv(FILE *out, const mp_hlo_result_t *r);

#ifdef __cplusplus
}
#endif
#endif
