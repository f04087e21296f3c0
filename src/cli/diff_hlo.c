/* diff_hlo.c - `memprof diff a.hlo.pb b.hlo.pb`: two HLO modules' peak
 * working space and the buffers at it (memprof/hlo_diff.h), with the same
 * gates as the other inputs (docs/diff.md). */
#include "cli.h"
#include "diff_cli.h"

#include <memprof/output/json.h>
#include <memprof/hlo.h>
#include <memprof/hlo_diff.h>
#include <memprof/report_doc.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>

int cli_diff_looks_hlo(const char *path)
{
	static const char *const ends[] = {".hlo.pb", ".hlo.pb.gz", ".hlo_proto.pb"};
	size_t n = strlen(path);

	for (size_t i = 0; i < 3; i++) {
		size_t k = strlen(ends[i]);
		if (n > k && !strcmp(path + n - k, ends[i]))
			return 1;
	}
	return 0;
}

/* Load and analyse the module of one file (--module NAME|ID when it holds
 * several), as `memprof hlo` does with its default options. */
static int analyze(const char *path, const char *module, mp_hlo_module_t **mod, mp_hlo_result_t **res)
{
	mp_hlo_file_t *file = NULL;
	mp_hlo_options_t opt;
	mp_diag_t diag;
	size_t index = 0;
	int rc;

	mp_diag_clear(&diag);
	mp_hlo_options_init(&opt);
	if (mp_hlo_file_open(path, &file, &diag) < 0)
		return mp_cli_diag(&diag);
	if (module) {
		if (mp_hlo_file_find(file, module, &index, &diag) < 0) {
			mp_hlo_file_close(file);
			return mp_cli_diag(&diag);
		}
	} else if (mp_hlo_file_module_count(file) > 1) {
		mp_cli_error("'%s' holds %zu modules; choose one with --module NAME|ID ('memprof hlo --list' lists them)",
			     path, mp_hlo_file_module_count(file));
		mp_hlo_file_close(file);
		return MP_EXIT_USAGE;
	}
	rc = mp_hlo_module_load(file, index, mod, &diag);
	mp_hlo_file_close(file);
	if (rc < 0 || (rc = mp_hlo_analyze(*mod, &opt, res, &diag)) < 0) {
		mp_diag_set_file(&diag, path);
		return mp_cli_diag(&diag);
	}
	return MP_EXIT_OK;
}

/* The gates on the peak working space: NAME is the module's name (A's or B's). */
static int gates_check(const mp_hlo_result_t *a, const mp_hlo_result_t *b, const mp_diff_gate_t *g, size_t n,
		       json_t *arr, int print)
{
	int failed = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t pa = (uint64_t)a->peak_heap_bytes, pb = (uint64_t)b->peak_heap_bytes;
		int bad;
		if (g[i].memory[0] && strcmp(g[i].memory, a->module_name) && strcmp(g[i].memory, b->module_name)) {
			mp_cli_error("--fail-above '%s': the modules are '%s' and '%s'", g[i].spec, a->module_name,
				     b->module_name);
			return -1;
		}
		bad = mp_diff_gate_exceeds(&g[i], pa, pb);
		if (arr && mp_diff_gate_row(arr, &g[i], g[i].total ? "total" : a->module_name, pa, pb) < 0)
			return -1;
		if (bad && print)
			mp_diff_gate_say(stderr, &g[i], a->module_name, pa, pb);
		failed += bad;
	}
	return failed;
}

int cli_diff_hlo(const char *pa, const char *pb, const cli_diff_hlo_options_t *o)
{
	mp_hlo_module_t *ma = NULL, *mb = NULL;
	mp_hlo_result_t *ra = NULL, *rb = NULL;
	mp_hlo_diff_t *d = NULL;
	int rc, err = 0;

	if ((rc = analyze(pa, o->module, &ma, &ra)) != MP_EXIT_OK || (rc = analyze(pb, o->module, &mb, &rb)) != MP_EXIT_OK)
		goto out;
	if (gates_check(ra, rb, o->gates, o->ngates, NULL, 0) < 0) {
		rc = MP_EXIT_USAGE;
		goto out;
	}
	if (mp_hlo_diff_compute(ra, rb, &d) < 0) {
		mp_cli_error("out of memory");
		rc = MP_EXIT_FAILURE;
		goto out;
	}
	if (o->json) {
		json_t *doc = mp_hlo_diff_document(d, pa, pb, o->top);
		if (!doc || gates_check(ra, rb, o->gates, o->ngates, json_object_get(doc, "gates"), 0) < 0) {
			json_decref(doc);
			mp_cli_error("out of memory");
			rc = MP_EXIT_FAILURE;
			goto out;
		}
		err = mp_json_write(stdout, doc, MP_JSON_LAYOUT); /* takes doc */
		if (!err && fflush(stdout) == EOF)
			err = errno ? -errno : -EIO;
	} else {
		err = mp_hlo_diff_text(stdout, d, pa, pb, o->top ? o->top : 20);
	}
	if (err < 0) {
		mp_cli_error("writing the diff: %s", mp_strerror(err));
		rc = MP_EXIT_IO;
		goto out;
	}
	rc = gates_check(ra, rb, o->gates, o->ngates, NULL, 1) > 0 ? MP_EXIT_FAILURE : MP_EXIT_OK;
out:
	mp_hlo_diff_free(d);
	mp_hlo_result_free(ra);
	mp_hlo_result_free(rb);
	mp_hlo_module_free(ma);
	mp_hlo_module_free(mb);
	return rc;
}
