/* cmd_report.c - `memprof report`: peak, breakdown, timeline, leaks and
 * OOM states of captures, as text, JSON or CSV (docs/report.md). */
#include "cli.h"
#include "inputs.h"
#include "plot_out.h"
#include "runs.h"

#include <memprof/functions.h>
#include <memprof/plot.h>
#include <memprof/report.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>
#include <memprof/xprof_compat.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One JSON contract for both reports (docs/report.md): one version. */
_Static_assert(MP_REPORT_JSON_VERSION == MP_XPROF_JSON_VERSION, "the default and --compat=xprof JSON differ in version");

static void usage(FILE *out)
{
	fprintf(out,
		"usage: memprof report [--peak] [--timeline] [--breakdown] [--leaks] [--oom] [--by-function]\n"
		"                      [--tree[=peak|leaks|allocated] [--min-percent P]]\n"
		"                      [--device ID] [--steps A:B] [--top N] [--points N]\n"
		"                      [--compat=xprof] [--run NAME] [--pid N | --process all]\n"
		"                      [--all-processes]\n"
		"                      [--json | --csv]\n"
		"                      [--svg OUT.svg | --png OUT.png | --html OUT.html]\n"
		"                      [--all-frames] [--user-code LIST]\n"
		"                      FILE...\n"
		"\n"
		"  --peak        summary and what was live at the peak (the default)\n"
		"  --timeline    in use over time, down-sampled to --points points (default 1000)\n"
		"  --breakdown   what was live at the peak, grouped by op/region/dtype/shape/\n"
		"                metadata/size\n"
		"  --leaks       what was still live at the end\n"
		"  --oom         every failed allocation and the state at that instant\n"
		"  --by-function allocations by allocating function (captures recorded with\n"
		"                --stacks; shown with --peak/--breakdown/--leaks by default)\n"
		"  --tree[=KIND] the call tree of the bytes live at the peak (KIND peak, the\n"
		"                default), live at the end (leaks) or allocated over the run\n"
		"                (allocated); captures with stacks, PyTorch snapshots\n"
		"  --min-percent P  fold the tree's frames under P%% of its root into (other)\n"
		"                (default 1; 0 keeps every frame)\n"
		"  --device ID   only this memory id (a number, or a name such as GPU_0_bfc)\n"
		"  --steps A:B   only steps A to B (A:, :B and A also accepted)\n"
		"  --top N       print at most N rows per table (text default 20)\n"
		"  --json        JSON (fields: docs/report.md)\n"
		"  --csv         CSV, one table per section\n"
		"  --compat=xprof  TensorBoard Memory Profile figures and table, quirks included\n"
		"                (xplane inputs; --compat=xprof-v1: current xprof's row names)\n"
		"  --run NAME    the run of a TensorBoard log directory (default: the newest)\n"
		"  --pid N       in a 'memprof record' run, that process (default: the main\n"
		"                process, the one with the largest peak)\n"
		"  --process all in a 'memprof record' run, every process that did work, side\n"
		"                by side (helpers -- shells, exec'd wrappers -- only in the tree)\n"
		"  --all-processes  in a 'memprof record' run's process tree, every process on\n"
		"                its line with its whole command line (by default: the main\n"
		"                process, the 5 largest others, a count of the rest and one\n"
		"                line for the helpers; --json lists them all either way)\n"
		"  --all-frames  PyTorch snapshots: an allocation's op is its innermost frame,\n"
		"                even inside torch/ or the standard library (docs/torch.md);\n"
		"                captures: --by-function's function too (not only your code's)\n"
		"  --user-code LIST  Python files that count as your code (snapshots, captures\n"
		"                with Python frames) besides those outside torch, the standard\n"
		"                library and installed packages: 'packages' (all but torch),\n"
		"                package names (transformers,peft) or path prefixes (/opt/src/),\n"
		"                comma-separated\n"
		"  --svg OUT.svg, --png OUT.png, --html OUT.html\n"
		"                also draw the timeline and the breakdown at the peak of what the\n"
		"                report shows into a picture (see 'memprof plot' for more charts);\n"
		"                --html: one self-contained page with hover details, zoom and pan\n"
		"                and the breakdown as a sortable table\n"
		"\n"
		"FILE: a 'memprof record' run (its process tree, then the main process), a\n"
		"single .memprof capture, *.xplane.pb files (one per host, read together), a\n"
		"TensorBoard log directory (plugins/profile/<run>/<host>.xplane.pb) or a\n"
		"PyTorch memory snapshot (*.pickle[.gz] of torch.cuda.memory._dump_snapshot)\n"
		"\n"
		"exit codes: 0 ok, 1 analysis failed, 2 usage (bad option, range or device),\n"
		"            3 file not readable, 4 not a capture or corrupted\n");
}

/* JSON with each input's "functions" and "call_tree" objects
 * (docs/report.md) next to the solver's sections, and the process trees of
 * runs ("runs"): the same document mp_report_json writes, plus those. */
static int report_json_functions(const mp_report_input_t *in, mp_functions_t **funcs, mp_calltree_t **trees,
				 int tree_kind, size_t n, const mp_report_options_t *o, const cli_runs_t *runs)
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
		if (trees[i]) {
			fj = mp_calltree_json(trees[i], in[i].source, tree_kind, in[i].device_set, in[i].device);
			if (!fj || json_object_set_new(one, "call_tree", fj)) {
				json_decref(one);
				goto nomem;
			}
		}
		if (n == 1)
			doc = one;
		else if (json_array_append_new(files, one))
			goto nomem;
	}
	if (runs->nruns) { /* the process trees of the runs these captures came from */
		json_t *arr = json_array();
		if (!arr || json_object_set_new(doc, "runs", arr))
			goto nomem;
		for (int r = 0; r < runs->nruns; r++)
			if (json_array_append_new(arr, cli_run_json(runs->runs[r])))
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
	enum { O_PEAK = 256, O_TIMELINE, O_BREAKDOWN, O_LEAKS, O_OOM, O_DEVICE, O_STEPS, O_TOP, O_POINTS, O_JSON, O_CSV,
	       O_COMPAT, O_RUN, O_FUNCS, O_SVG, O_PNG, O_HTML, O_PID, O_PROCESS, O_ALL_FRAMES, O_USER_CODE, O_TREE, O_MIN_PERCENT,
	       O_ALL_PROCESSES };
	static const struct option longopts[] = {
		{"peak", no_argument, NULL, O_PEAK},       {"timeline", no_argument, NULL, O_TIMELINE},
		{"breakdown", no_argument, NULL, O_BREAKDOWN}, {"leaks", no_argument, NULL, O_LEAKS},
		{"oom", no_argument, NULL, O_OOM},         {"device", required_argument, NULL, O_DEVICE},
		{"steps", required_argument, NULL, O_STEPS}, {"top", required_argument, NULL, O_TOP},
		{"points", required_argument, NULL, O_POINTS}, {"json", no_argument, NULL, O_JSON},
		{"csv", no_argument, NULL, O_CSV},         {"help", no_argument, NULL, 'h'},
		{"compat", required_argument, NULL, O_COMPAT}, {"run", required_argument, NULL, O_RUN},
		{"by-function", no_argument, NULL, O_FUNCS}, {"svg", required_argument, NULL, O_SVG},
		{"png", required_argument, NULL, O_PNG},   {"pid", required_argument, NULL, O_PID},
		{"process", required_argument, NULL, O_PROCESS},
		{"all-processes", no_argument, NULL, O_ALL_PROCESSES},
		{"html", required_argument, NULL, O_HTML},
		{"all-frames", no_argument, NULL, O_ALL_FRAMES},
		{"user-code", required_argument, NULL, O_USER_CODE},
		{"tree", optional_argument, NULL, O_TREE},
		{"min-percent", required_argument, NULL, O_MIN_PERCENT},
		{NULL, 0, NULL, 0},
	};
	mp_report_options_t ropt = {0};
	mp_solver_options_t sopt;
	cli_inputs_options_t io = {NULL, NULL, NULL, 0, 0, NULL, 0, MP_CALLTREE_MIN_PERCENT_DEFAULT};
	cli_inputs_t ci;
	const char *device = NULL, *picture = NULL, *picture_opt = NULL;
	int format = 0, c, rc = MP_EXIT_OK, nfiles;
	mp_xplane_input_options_t xin = {NULL, 0};
	mp_xprof_options_t xcompat = {1};
	int compat = 0, by_function = 0, tree = -1, min_percent_set = 0, all_processes = 0;
	cli_run_select_t sel = {0, 0, 0};
	cli_runs_t runs = {0};

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
		case O_TREE:
			if ((tree = optarg ? mp_tree_kind_parse(optarg) : MP_TREE_PEAK) < 0) {
				mp_cli_error("invalid --tree '%s' (expected peak, leaks or allocated)", optarg);
				return MP_EXIT_USAGE;
			}
			break;
		case O_MIN_PERCENT:
			if (cli_parse_min_percent(optarg, &io.tree_min_percent) != MP_EXIT_OK)
				return MP_EXIT_USAGE;
			min_percent_set = 1;
			break;
		case O_ALL_FRAMES:
			io.torch_all_frames = 1;
			break;
		case O_USER_CODE:
			if (cli_parse_user_code(optarg, &io.torch_user_code) != MP_EXIT_OK)
				return MP_EXIT_USAGE;
			break;
		case O_DEVICE:
			device = optarg;
			break;
		case O_STEPS:
			if (cli_steps_option(optarg, &ropt.step_first, &ropt.step_last) != MP_EXIT_OK)
				return MP_EXIT_USAGE;
			ropt.steps_set = 1;
			break;
		case O_TOP:
			if (cli_top_option(optarg, &ropt.top) != MP_EXIT_OK)
				return MP_EXIT_USAGE;
			break;
		case O_POINTS:
			if (cli_parse_u32(optarg, &sopt.timeline_points) < 0 || sopt.timeline_points == 0 ||
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
		case O_PID:
			if (cli_run_parse_pid(optarg, &sel))
				return MP_EXIT_USAGE;
			break;
		case O_PROCESS:
			if (cli_run_parse_process(optarg, &sel))
				return MP_EXIT_USAGE;
			break;
		case O_ALL_PROCESSES:
			all_processes = 1;
			break;
		case O_SVG:
		case O_PNG:
		case O_HTML:
			if (picture) {
				mp_cli_error("one picture at a time: --svg, --png and --html cannot be combined");
				return MP_EXIT_USAGE;
			}
			picture = optarg;
			picture_opt = c == O_SVG ? "--svg" : c == O_PNG ? "--png" : "--html";
			if (mp_render_format_of(picture) !=
			    (c == O_SVG ? MP_RENDER_SVG : c == O_PNG ? MP_RENDER_PNG : MP_RENDER_HTML)) {
				mp_cli_error("%s '%s': the file name must end in %s", picture_opt, picture,
					     c == O_SVG ? ".svg" : c == O_PNG ? ".png" : ".html");
				return MP_EXIT_USAGE;
			}
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
	if (tree >= 0 && compat) {
		mp_cli_error("--tree cannot be combined with --compat");
		return MP_EXIT_USAGE;
	}
	if (min_percent_set && tree < 0) {
		mp_cli_error("--min-percent applies to --tree");
		return MP_EXIT_USAGE;
	}
	if (picture && compat) {
		mp_cli_error("%s cannot be combined with --compat (the charts show memprof's figures)", picture_opt);
		return MP_EXIT_USAGE;
	}
	/* --by-function or --tree alone: only those in text (JSON keeps the
	 * peak); --tree alone computes no by-function table */
	int functions_only = (by_function || tree >= 0) && !ropt.sections;
	int tree_alone = tree >= 0 && !by_function && !ropt.sections;
	if (!ropt.sections)
		ropt.sections = MP_REPORT_PEAK;
	if ((ropt.sections & (MP_REPORT_PEAK | MP_REPORT_BREAKDOWN | MP_REPORT_LEAKS)) && !tree_alone)
		by_function |= 2; /* when the capture has stacks */
	sopt.breakdown = (ropt.sections & (MP_REPORT_PEAK | MP_REPORT_BREAKDOWN)) != 0 || picture;
	sopt.timeline = (ropt.sections & MP_REPORT_TIMELINE) != 0 || picture;
	sopt.steps_set = ropt.steps_set;
	sopt.step_first = ropt.step_first;
	sopt.step_last = ropt.step_last;
	if (ropt.top)
		sopt.top = ropt.top;
	if (picture && !(ropt.sections & MP_REPORT_TIMELINE))
		sopt.timeline_points = 2000; /* the chart's resolution; the text shows no timeline */

	io.solver = compat ? NULL : &sopt;
	io.xplane = &xin;
	io.device = device;
	io.functions = (by_function & 1) ? 1 : by_function ? 2 : 0;
	io.tree = tree + 1;
	memset(&ci, 0, sizeof(ci));
	if ((rc = cli_runs_expand(&runs, argv + optind, nfiles, &sel)) != MP_EXIT_OK)
		goto out;
	rc = cli_inputs_open(&ci, runs.files, runs.nfiles, &io);
	if (rc != MP_EXIT_OK || ci.n == 0)
		goto out; /* an error, or only captures without memory events */
	if (compat) {
		mp_diag_t diag;
		int err;

		mp_diag_clear(&diag);
		err = mp_xprof_report(stdout, ci.sources, ci.paths, (size_t)ci.n, &xcompat,
				      format == O_JSON ? MP_XPROF_JSON : format == O_CSV ? MP_XPROF_CSV : MP_XPROF_TEXT,
				      device, ropt.top, &diag);
		if (err < 0)
			rc = mp_cli_diag(&diag);
		goto out;
	}
	{
		int err = 0, any = 0;

		for (int i = 0; i < ci.n; i++)
			any |= ci.functions[i] != NULL || ci.trees[i] != NULL;
		if (format == O_JSON)
			err = any || runs.nruns ? report_json_functions(ci.in, ci.functions, ci.trees, tree, (size_t)ci.n,
									&ropt, &runs)
						: mp_report_json(stdout, ci.in, (size_t)ci.n, &ropt);
		else if (format == O_CSV) {
			err = mp_report_csv(stdout, ci.in, (size_t)ci.n, &ropt);
			int any_functions = 0;
			for (int i = 0; i < ci.n; i++)
				any_functions |= ci.functions[i] != NULL;
			if (!err && any_functions)
				printf("\n%s\n", mp_functions_csv_header);
			for (int i = 0; !err && i < ci.n; i++)
				if (ci.functions[i])
					err = mp_functions_csv(stdout, ci.functions[i], ci.in[i].path, ropt.top,
							       ci.in[i].device_set, ci.in[i].device);
			if (!err && tree >= 0)
				printf("\n%s\n", mp_calltree_csv_header);
			for (int i = 0; !err && tree >= 0 && i < ci.n; i++)
				err = mp_calltree_csv(stdout, ci.trees[i], ci.sources[i], ci.in[i].path, tree,
						      ci.in[i].device_set, ci.in[i].device);
		}
		else if (!functions_only) {
			cli_runs_print(stdout, &runs, all_processes);
			err = mp_report_text(stdout, ci.in, (size_t)ci.n, &ropt);
		}
		for (int i = 0; format != O_JSON && format != O_CSV && !err && i < ci.n; i++) {
			if (!ci.functions[i])
				continue;
			if (ci.n > 1)
				printf("\n%s\n", ci.in[i].path);
			err = mp_functions_text(stdout, ci.functions[i], ci.sources[i], ropt.top, ci.in[i].device_set,
						ci.in[i].device);
		}
		for (int i = 0; format != O_JSON && format != O_CSV && !err && tree >= 0 && i < ci.n; i++) {
			if (ci.n > 1)
				printf("\n%s\n", ci.in[i].path);
			err = mp_calltree_text(stdout, ci.trees[i], ci.sources[i], ci.solvers[i], tree,
					       ci.in[i].device_set, ci.in[i].device);
		}
		if (err < 0) {
			mp_cli_error("writing the report: %s", mp_strerror(err));
			rc = err == MP_ENOMEM ? MP_EXIT_FAILURE : MP_EXIT_IO;
		}
	}
	if (rc == MP_EXIT_OK && picture) {
		/* the timeline and the breakdown of what the report shows, beside it */
		mp_plot_options_t po = {.charts = MP_PLOT_TIMELINE | MP_PLOT_BREAKDOWN, .top = ropt.top};
		fflush(stdout);
		cli_runs_title_inputs(&runs, &ci);
		rc = cli_plot_write(&ci, &po, picture);
	}
out:
	cli_inputs_close(&ci);
	cli_runs_free(&runs);
	return rc;
}
