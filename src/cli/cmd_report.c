/* cmd_report.c - `memprof report`: peak, breakdown, timeline, leaks and
 * OOM states of captures, as text, JSON or CSV (docs/report.md). */
#include "cli.h"

#include <memprof/capture.h>
#include <memprof/functions.h>
#include <memprof/report.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>
#include <memprof/xprof_compat.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: memprof report [--peak] [--timeline] [--breakdown] [--leaks] [--oom] [--by-function]\n"
		"                      [--device ID] [--steps A:B] [--top N] [--points N]\n"
		"                      [--compat=xprof] [--run NAME] [--json | --csv] FILE...\n"
		"\n"
		"  --peak        summary and what was live at the peak (the default)\n"
		"  --timeline    in use over time, down-sampled to --points points (default 1000)\n"
		"  --breakdown   what was live at the peak, grouped by op/region/dtype/shape/size\n"
		"  --leaks       what was still live at the end\n"
		"  --oom         every failed allocation and the state at that instant\n"
		"  --by-function allocations by allocating function (captures recorded with\n"
		"                --stacks; shown with --peak/--breakdown/--leaks by default)\n"
		"  --device ID   only this memory id (a number, or a name such as GPU_0_bfc)\n"
		"  --steps A:B   only steps A to B (A:, :B and A also accepted)\n"
		"  --top N       print at most N rows per table (text default 20)\n"
		"  --json        JSON (fields: docs/report.md)\n"
		"  --csv         CSV, one table per section\n"
		"  --compat=xprof  TensorBoard Memory Profile figures and table, quirks included\n"
		"                (xplane inputs; --compat=xprof-v1: current xprof's row names)\n"
		"  --run NAME    the run of a TensorBoard log directory (default: the newest)\n"
		"\n"
		"FILE: a .memprof capture, *.xplane.pb files (one per host, read together) or\n"
		"a TensorBoard log directory (plugins/profile/<run>/<host>.xplane.pb)\n"
		"\n"
		"exit codes: 0 ok, 1 analysis failed, 2 usage (bad option, range or device),\n"
		"            3 file not readable, 4 not a capture or corrupted\n");
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_i64(const char *s, size_t len, int64_t *out)
{
	char buf[32], *end;
	long long v;

	if (len == 0 || len >= sizeof(buf) || s[0] == '-' || s[0] == '+')
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* "A:B", "A:", ":B" or "A", with 0 <= A <= B. */
static int parse_steps(const char *s, int64_t *first, int64_t *last)
{
	const char *colon = strchr(s, ':');

	*first = 0;
	*last = INT64_MAX;
	if (!colon) {
		if (parse_i64(s, strlen(s), first) < 0)
			return -1;
		*last = *first;
		return 0;
	}
	if (colon == s && !colon[1])
		return -1;
	if (colon > s && parse_i64(s, (size_t)(colon - s), first) < 0)
		return -1;
	if (colon[1] && parse_i64(colon + 1, strlen(colon + 1), last) < 0)
		return -1;
	return *first <= *last ? 0 : -1;
}

/* The memory id that --device names in one input: a number, or a name. */
static int resolve_device(const mp_solver_t *s, const mp_source_t *src, const char *arg, uint32_t *id)
{
	uint32_t n;

	if (parse_u32(arg, &n) == 0)
		return mp_solver_find(s, n) ? (*id = n, 0) : -1;
	for (size_t i = 0; i < mp_solver_device_count(s); i++) {
		const mp_solver_device_t *d = mp_solver_device(s, i);
		const mp_memory_info_t *m = mp_source_memory(src, d->id);
		if (m && m->name && !strcmp(m->name, arg)) {
			*id = d->id;
			return 0;
		}
	}
	return -1;
}

static void list_devices(const mp_solver_t *s, const mp_source_t *src, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < mp_solver_device_count(s) && used < size; i++) {
		const mp_solver_device_t *d = mp_solver_device(s, i);
		const mp_memory_info_t *m = mp_source_memory(src, d->id);
		int w = snprintf(buf + used, size - used, "%s%" PRIu32 " '%s'", i ? ", " : "", d->id, m ? m->name : "");
		if (w < 0)
			break;
		used += (size_t)w;
	}
	if (!buf[0])
		snprintf(buf, size, "none");
}

/* JSON with each input's "functions" object (docs/report.md) next to the
 * solver's sections: the same document mp_report_json writes, plus that. */
static int report_json_functions(const mp_report_input_t *in, mp_functions_t **funcs, size_t n,
				 const mp_report_options_t *o)
{
	json_t *doc = NULL, *files = NULL;
	int rc;

	if (n > 1 && (!(doc = json_object()) || !(files = json_array()) || json_object_set_new(doc, "files", files))) {
		json_decref(doc);
		return MP_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *one = mp_report_json_input(&in[i], o), *fj;
		if (!one)
			goto nomem;
		if (funcs[i]) {
			fj = mp_functions_json(funcs[i], in[i].source, o->top, in[i].device_set, in[i].device);
			if (!fj || json_object_set_new(one, "functions", fj)) {
				json_decref(one);
				goto nomem;
			}
		}
		if (n == 1)
			doc = one;
		else if (json_array_append_new(files, one))
			goto nomem;
	}
	rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(doc);
	if (rc < 0 || fputc('\n', stdout) == EOF)
		return errno ? -errno : -EIO;
	return 0;
nomem:
	json_decref(doc);
	return MP_ENOMEM;
}

int cmd_report(int argc, char **argv)
{
	enum { O_PEAK = 256, O_TIMELINE, O_BREAKDOWN, O_LEAKS, O_OOM, O_DEVICE, O_STEPS, O_TOP, O_POINTS, O_JSON, O_CSV, O_COMPAT, O_RUN, O_FUNCS };
	static const struct option longopts[] = {
		{"peak", no_argument, NULL, O_PEAK},       {"timeline", no_argument, NULL, O_TIMELINE},
		{"breakdown", no_argument, NULL, O_BREAKDOWN}, {"leaks", no_argument, NULL, O_LEAKS},
		{"oom", no_argument, NULL, O_OOM},         {"device", required_argument, NULL, O_DEVICE},
		{"steps", required_argument, NULL, O_STEPS}, {"top", required_argument, NULL, O_TOP},
		{"points", required_argument, NULL, O_POINTS}, {"json", no_argument, NULL, O_JSON},
		{"csv", no_argument, NULL, O_CSV},         {"help", no_argument, NULL, 'h'},
		{"compat", required_argument, NULL, O_COMPAT}, {"run", required_argument, NULL, O_RUN},
		{"by-function", no_argument, NULL, O_FUNCS},
		{NULL, 0, NULL, 0},
	};
	mp_report_options_t ropt = {0};
	mp_solver_options_t sopt;
	const char *device = NULL;
	int format = 0, c, rc = MP_EXIT_OK, nfiles;
	mp_report_input_t *in = NULL;
	mp_solver_t **solvers = NULL;
	mp_source_t **sources = NULL;
	mp_xplane_input_options_t xin = {NULL, 0};
	mp_xprof_options_t xcompat = {1};
	const char **paths = NULL;
	int compat = 0, ninputs = 0, by_function = 0;
	mp_functions_t **funcs = NULL;

	mp_solver_options_init(&sopt);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_PEAK:
			ropt.sections |= MP_REPORT_PEAK;
			break;
		case O_TIMELINE:
			ropt.sections |= MP_REPORT_TIMELINE;
			break;
		case O_BREAKDOWN:
			ropt.sections |= MP_REPORT_BREAKDOWN;
			break;
		case O_LEAKS:
			ropt.sections |= MP_REPORT_LEAKS;
			break;
		case O_OOM:
			ropt.sections |= MP_REPORT_OOM;
			break;
		case O_FUNCS:
			by_function = 1;
			break;
		case O_DEVICE:
			device = optarg;
			break;
		case O_STEPS:
			if (parse_steps(optarg, &ropt.step_first, &ropt.step_last) < 0) {
				mp_cli_error("invalid --steps range '%s' (expected A:B with 0 <= A <= B)", optarg);
				return MP_EXIT_USAGE;
			}
			ropt.steps_set = 1;
			break;
		case O_TOP:
			if (parse_u32(optarg, &ropt.top) < 0 || ropt.top == 0) {
				mp_cli_error("invalid --top '%s' (expected a positive number)", optarg);
				return MP_EXIT_USAGE;
			}
			break;
		case O_POINTS:
			if (parse_u32(optarg, &sopt.timeline_points) < 0 || sopt.timeline_points == 0 ||
			    sopt.timeline_points > 10000000) {
				mp_cli_error("invalid --points '%s' (expected 1 to 10000000)", optarg);
				return MP_EXIT_USAGE;
			}
			break;
		case O_JSON:
		case O_CSV:
			if (format && format != c) {
				mp_cli_error("--json and --csv cannot be combined");
				return MP_EXIT_USAGE;
			}
			format = c;
			break;
		case O_COMPAT:
			if (strcmp(optarg, "xprof") && strcmp(optarg, "xprof-v1")) {
				mp_cli_error("invalid --compat '%s' (expected xprof or xprof-v1)", optarg);
				return MP_EXIT_USAGE;
			}
			compat = 1;
			xin.xprof_clock = 1;
			xcompat.legacy_names = !strcmp(optarg, "xprof");
			break;
		case O_RUN:
			xin.run = optarg;
			break;
		case 'h':
			usage(stdout);
			return MP_EXIT_OK;
		default:
			mp_cli_error("unknown or incomplete option '%s' (see 'memprof report --help')", argv[optind - 1]);
			return MP_EXIT_USAGE;
		}
	}
	nfiles = argc - optind;
	if (nfiles <= 0) {
		mp_cli_error("no input file (see 'memprof report --help')");
		return MP_EXIT_USAGE;
	}
	if (by_function && compat) {
		mp_cli_error("--by-function cannot be combined with --compat");
		return MP_EXIT_USAGE;
	}
	/* --by-function alone: only that table in text (JSON keeps the peak) */
	int functions_only = by_function && !ropt.sections;
	if (!ropt.sections)
		ropt.sections = MP_REPORT_PEAK;
	if (ropt.sections & (MP_REPORT_PEAK | MP_REPORT_BREAKDOWN | MP_REPORT_LEAKS))
		by_function |= 2; /* when the capture has stacks */
	sopt.breakdown = (ropt.sections & (MP_REPORT_PEAK | MP_REPORT_BREAKDOWN)) != 0;
	sopt.timeline = (ropt.sections & MP_REPORT_TIMELINE) != 0;
	sopt.steps_set = ropt.steps_set;
	sopt.step_first = ropt.step_first;
	sopt.step_last = ropt.step_last;
	if (ropt.top)
		sopt.top = ropt.top;

	in = calloc((size_t)nfiles, sizeof(*in));
	solvers = calloc((size_t)nfiles, sizeof(*solvers));
	sources = calloc((size_t)nfiles, sizeof(*sources));
	paths = calloc((size_t)nfiles, sizeof(*paths));
	funcs = calloc((size_t)nfiles, sizeof(*funcs));
	if (!in || !solvers || !sources || !paths || !funcs) {
		mp_cli_error("out of memory");
		rc = MP_EXIT_FAILURE;
		goto out;
	}
	for (int f = 0, used = 1; f < nfiles; f += used) {
		const char *path = argv[optind + f];
		mp_diag_t diag;
		char note[512];
		int err, i = ninputs;

		mp_diag_clear(&diag);
		/* TF/JAX captures: a log directory, or xplane files read together */
		err = mp_xplane_open_args(&sources[i], (const char *const *)argv + optind + f, (size_t)(nfiles - f), &xin,
					  note, sizeof(note), &diag);
		used = err > 0 ? err : 1;
		if (note[0])
			fprintf(stderr, "memprof: %s\n", note);
		if (err == 0)
			err = mp_capture_open_source(&sources[i], path, &diag);
		if (err >= 0 && mp_xplane_is_source(sources[i]) && mp_xplane_memory_event_count(sources[i]) == 0) {
			fprintf(stderr, "memprof: '%s': no memory events in this capture (TensorFlow records them "
					"for GPU allocators with host_trace_level >= 2)\n", path);
			mp_source_close(sources[i]);
			sources[i] = NULL;
			continue;
		}
		ninputs++;
		if (err >= 0 && used > 1)
			path = sources[i]->path; /* "host1.xplane.pb, host2.xplane.pb" */
		paths[i] = path;
		if (err < 0) {
			if (!diag.file[0])
				mp_diag_set_file(&diag, path);
			if (!diag.code)
				diag.code = err;
			rc = mp_cli_diag(&diag);
			goto out;
		}
		if (compat)
			continue;
		solvers[i] = mp_solver_new(&sopt);
		if (!solvers[i]) {
			mp_cli_error("out of memory");
			rc = MP_EXIT_FAILURE;
			goto out;
		}
		err = mp_solver_run(solvers[i], sources[i], &diag);
		if (err < 0) {
			if (!diag.file[0])
				mp_diag_set_file(&diag, path);
			if (!diag.code)
				diag.code = err;
			rc = mp_cli_diag(&diag);
			if (rc == MP_EXIT_USAGE) /* a solver limit is a property of the input */
				rc = MP_EXIT_FORMAT;
			goto out;
		}
		in[i].path = path;
		in[i].solver = solvers[i];
		in[i].source = sources[i];
		if (device) {
			if (resolve_device(solvers[i], sources[i], device, &in[i].device) < 0) {
				char list[512];
				list_devices(solvers[i], sources[i], list, sizeof(list));
				mp_cli_error("'%s': unknown device '%s' (memory ids: %s)", path, device, list);
				rc = MP_EXIT_USAGE;
				goto out;
			}
			in[i].device_set = 1;
		}
		if (by_function) {
			err = mp_functions_compute(&funcs[i], sources[i], solvers[i], &diag);
			if (err == MP_ENODATA && (by_function & 1)) {
				mp_cli_error("'%s': the capture has no call stacks (record it with 'memprof record --stacks')",
					     path);
				rc = MP_EXIT_USAGE;
				goto out;
			}
			if (err < 0 && err != MP_ENODATA) {
				if (!diag.file[0])
					mp_diag_set_file(&diag, path);
				rc = mp_cli_diag(&diag);
				goto out;
			}
		}
	}
	if (ninputs == 0)
		goto out; /* only captures without memory events */
	if (compat) {
		mp_diag_t diag;
		int err;

		mp_diag_clear(&diag);
		err = mp_xprof_report(stdout, sources, paths, (size_t)ninputs, &xcompat,
				      format == O_JSON ? MP_XPROF_JSON : format == O_CSV ? MP_XPROF_CSV : MP_XPROF_TEXT,
				      device, ropt.top, &diag);
		if (err < 0)
			rc = mp_cli_diag(&diag);
		goto out;
	}
	{
		int err = 0, any = 0;

		for (int i = 0; i < ninputs; i++)
			any |= funcs[i] != NULL;
		if (format == O_JSON)
			err = any ? report_json_functions(in, funcs, (size_t)ninputs, &ropt)
				  : mp_report_json(stdout, in, (size_t)ninputs, &ropt);
		else if (format == O_CSV) {
			err = mp_report_csv(stdout, in, (size_t)ninputs, &ropt);
			if (!err && any)
				printf("\n%s\n", mp_functions_csv_header);
			for (int i = 0; !err && i < ninputs; i++)
				if (funcs[i])
					err = mp_functions_csv(stdout, funcs[i], in[i].path, ropt.top, in[i].device_set,
							       in[i].device);
		}
		else if (!functions_only)
			err = mp_report_text(stdout, in, (size_t)ninputs, &ropt);
		for (int i = 0; format != O_JSON && format != O_CSV && !err && i < ninputs; i++) {
			if (!funcs[i])
				continue;
			if (ninputs > 1)
				printf("\n%s\n", in[i].path);
			err = mp_functions_text(stdout, funcs[i], sources[i], ropt.top, in[i].device_set, in[i].device);
		}
		if (err < 0) {
			mp_cli_error("writing the report: %s", mp_strerror(err));
			rc = err == MP_ENOMEM ? MP_EXIT_FAILURE : MP_EXIT_IO;
		}
	}
out:
	for (int i = 0; i < nfiles; i++) {
		if (funcs)
			mp_functions_free(funcs[i]);
		if (solvers)
			mp_solver_free(solvers[i]);
		if (sources)
			mp_source_close(sources[i]);
	}
	free(in);
	free(solvers);
	free(sources);
	free(paths);
	free(funcs);
	return rc;
}
