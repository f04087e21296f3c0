/* cmd_report.c - `memprof report`: peak, breakdown, timeline, leaks and
 * OOM states of captures, as text, JSON or CSV (docs/report.md). */
#include "cli.h"
#include "inputs.h"
#include "options.h"
#include "report_seek.h"
#include "plot_out.h"
#include "report_stream.h"
#include "runs.h"

#include <memprof/output/json.h>
#include <memprof/report_ranks.h>
#include <memprof/functions.h>
#include <memprof/plot.h>
#include <memprof/report.h>
#include <memprof/report_doc.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>
#include <memprof/xprof_compat.h>

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
		"                      [--all-processes] [--full-replay] [--from-event N]\n"
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
		"                line for the helpers; --json lists them all either way)\n");
	fprintf(out,
		"  --full-replay replay every event: a long capture's --peak, --breakdown,\n"
		"                --leaks, --oom and --steps windows are otherwise read from its\n"
		"                last checkpoint before the moment they need (the same output,\n"
		"                docs/report.md); on every core, cut at checkpoints\n"
		"                (MEMPROF_REPLAY_THREADS=1: one)\n"
		"  --from-event N  the window of a capture after its first N events: the state\n"
		"                then (live blocks, regions) and the events after; counters\n"
		"                count the window's events (a kept run's window is the window\n"
		"                from its first checkpoint's N, which report prints)\n"
		"  --all-frames  PyTorch snapshots: an allocation's op is its innermost frame,\n"
		"                even inside torch/ or the standard library (docs/torch.md);\n"
		"                captures: --by-function's function too (not only your code's),\n"
		"                and --tree keeps the interpreter's frames outside a Python's\n"
		"                outermost frame (_start ... PyEval_EvalCode)\n"
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
		"FILE: a 'memprof record' run (its process tree, then the main process;\n"
		"several runs: the ranks of a job, a table of their peaks, then the highest),\n"
		"a single .memprof capture, *.xplane.pb files (one per host, read together), a\n"
		"TensorBoard log directory (plugins/profile/<run>/<host>.xplane.pb) or a\n"
		"PyTorch memory snapshot (*.pickle[.gz] of torch.cuda.memory._dump_snapshot)\n"
		"\n"
		"exit codes: 0 ok, 1 analysis failed, 2 usage (bad option, range or device),\n"
		"            3 file not readable, 4 not a capture or corrupted\n");
}

/* What the command line asks for. */
typedef struct report_args {
	mp_report_options_t ropt;
	mp_solver_options_t sopt;
	cli_input_args_t in;
	mp_xprof_options_t xcompat;
	const char *picture, *picture_opt; /* --svg/--png/--html and which */
	int format;                        /* O_JSON, O_CSV or 0: text */
	int compat, by_function, min_percent_set, all_processes, full_replay;
	int from_set;                      /* --from-event N */
	uint64_t from_event;
	int tree;                          /* --tree's mp_tree_kind_t, -1: none */
	double min_percent;
	int functions_only;                /* --by-function or --tree alone: only those in text */
	const cli_runs_t *ranks;           /* several runs, one per rank (memprof/report_ranks.h), or NULL */
	int rank;                          /* ... the one reported: the highest peak */
} report_args_t;

enum { O_PEAK = 256, O_TIMELINE, O_BREAKDOWN, O_LEAKS, O_OOM, O_TOP, O_POINTS, O_JSON, O_CSV, O_COMPAT, O_SVG, O_PNG,
       O_HTML, O_TREE, O_MIN_PERCENT, O_FROM_EVENT };

/* --svg, --png or --html OUT (c): one picture, its name ending as its format. */
static int picture_option(report_args_t *a, int c, const char *arg)
{
	if (a->picture) {
		mp_cli_error("one picture at a time: --svg, --png and --html cannot be combined");
		return MP_EXIT_USAGE;
	}
	a->picture = arg;
	a->picture_opt = c == O_SVG ? "--svg" : c == O_PNG ? "--png" : "--html";
	if (mp_render_format_of(arg) != (c == O_SVG ? MP_RENDER_SVG : c == O_PNG ? MP_RENDER_PNG : MP_RENDER_HTML)) {
		mp_cli_error("%s '%s': the file name must end in %s", a->picture_opt, arg,
			     c == O_SVG ? ".svg" : c == O_PNG ? ".png" : ".html");
		return MP_EXIT_USAGE;
	}
	return MP_EXIT_OK;
}

/* One option of report's own (the input options are the parser's). */
static int report_option(void *ctx, int c, const char *arg)
{
	report_args_t *a = ctx;
	static const unsigned section[] = {MP_REPORT_PEAK, MP_REPORT_TIMELINE, MP_REPORT_BREAKDOWN, MP_REPORT_LEAKS,
					   MP_REPORT_OOM};

	if (c >= O_PEAK && c <= O_OOM) {
		a->ropt.sections |= section[c - O_PEAK];
		return MP_EXIT_OK;
	}
	switch (c) {
	case O_TREE:
		if ((a->tree = arg ? mp_tree_kind_parse(arg) : MP_TREE_PEAK) < 0) {
			mp_cli_error("invalid --tree '%s' (expected peak, leaks or allocated)", arg);
			return MP_EXIT_USAGE;
		}
		break;
	case O_FROM_EVENT:
		a->from_set = 1;
		return cli_parse_from_event(arg, &a->from_event);
	case O_MIN_PERCENT:
		a->min_percent_set = 1;
		return cli_parse_min_percent(arg, &a->min_percent);
	case O_TOP:
		return cli_top_option(arg, &a->ropt.top);
	case O_POINTS:
		if (cli_parse_u32(arg, &a->sopt.timeline_points) < 0 || a->sopt.timeline_points == 0 ||
		    a->sopt.timeline_points > 10000000) {
			mp_cli_error("invalid --points '%s' (expected 1 to 10000000)", arg);
			return MP_EXIT_USAGE;
		}
		break;
	case O_JSON:
	case O_CSV:
		if (a->format && a->format != c) {
			mp_cli_error("--json and --csv cannot be combined");
			return MP_EXIT_USAGE;
		}
		a->format = c;
		break;
	case O_COMPAT:
		if (strcmp(arg, "xprof") && strcmp(arg, "xprof-v1")) {
			mp_cli_error("invalid --compat '%s' (expected xprof or xprof-v1)", arg);
			return MP_EXIT_USAGE;
		}
		a->compat = 1;
		a->in.xplane.xprof_clock = 1;
		a->xcompat.legacy_names = !strcmp(arg, "xprof");
		break;
	default: /* O_SVG, O_PNG, O_HTML */
		return picture_option(a, c, arg);
	}
	return MP_EXIT_OK;
}

/* The options that do not go together. */
static int check_combinations(const report_args_t *a)
{
	const char *with_compat = a->by_function ? "--by-function" : a->tree >= 0 ? "--tree" : NULL;

	if (with_compat && a->compat) {
		mp_cli_error("%s cannot be combined with --compat", with_compat);
		return MP_EXIT_USAGE;
	}
	if (a->min_percent_set && a->tree < 0) {
		mp_cli_error("--min-percent applies to --tree");
		return MP_EXIT_USAGE;
	}
	if (a->from_set && (a->compat || a->in.steps_set)) {
		mp_cli_error("--from-event cannot be combined with %s", a->compat ? "--compat" : "--steps");
		return MP_EXIT_USAGE;
	}
	if (a->picture && a->compat) {
		mp_cli_error("%s cannot be combined with --compat (the charts show memprof's figures)", a->picture_opt);
		return MP_EXIT_USAGE;
	}
	return MP_EXIT_OK;
}

/* The command line into a, the inputs from argv[optind]: CLI_OPT_CONTINUE,
 * or the exit code to return. */
static int parse_args(report_args_t *a, int argc, char **argv)
{
	const struct option longopts[] = {
		{"peak", no_argument, NULL, O_PEAK},       {"timeline", no_argument, NULL, O_TIMELINE},
		{"breakdown", no_argument, NULL, O_BREAKDOWN}, {"leaks", no_argument, NULL, O_LEAKS},
		{"oom", no_argument, NULL, O_OOM},         {"top", required_argument, NULL, O_TOP},
		{"points", required_argument, NULL, O_POINTS}, {"json", no_argument, NULL, O_JSON},
		{"csv", no_argument, NULL, O_CSV},         {"compat", required_argument, NULL, O_COMPAT},
		{"by-function", no_argument, &a->by_function, 1}, {"svg", required_argument, NULL, O_SVG},
		{"png", required_argument, NULL, O_PNG},   {"html", required_argument, NULL, O_HTML},
		{"all-processes", no_argument, &a->all_processes, 1},
		{"full-replay", no_argument, &a->full_replay, 1},
		{"tree", optional_argument, NULL, O_TREE}, {"min-percent", required_argument, NULL, O_MIN_PERCENT},
		{"from-event", required_argument, NULL, O_FROM_EVENT},
		{NULL, 0, NULL, 0},
	};
	cli_parser_t p = {.command = "report", .usage = usage, .shortopts = "h", .own = longopts,
			  .option = report_option, .ctx = a, .inputs = CLI_IN_ALL, .in = &a->in};
	int rc;

	if ((rc = cli_parse_options(&p, argc, argv)) != CLI_OPT_CONTINUE)
		return rc;
	if (argc - optind <= 0) {
		mp_cli_error("no input file (see 'memprof report --help')");
		return MP_EXIT_USAGE;
	}
	return check_combinations(a) == MP_EXIT_OK ? CLI_OPT_CONTINUE : MP_EXIT_USAGE;
}

/* What the sections asked for need of the solver and of the inputs. */
static void plan(report_args_t *a, cli_inputs_options_t *io)
{
	mp_report_options_t *r = &a->ropt;
	mp_solver_options_t *s = &a->sopt;
	/* --by-function or --tree alone: only those in text (JSON keeps the
	 * peak); --tree alone computes no by-function table */
	int tree_alone = a->tree >= 0 && !a->by_function && !r->sections;

	a->functions_only = (a->by_function || a->tree >= 0) && !r->sections;
	if (!r->sections)
		r->sections = MP_REPORT_PEAK;
	if ((r->sections & (MP_REPORT_PEAK | MP_REPORT_BREAKDOWN | MP_REPORT_LEAKS)) && !tree_alone)
		a->by_function |= 2; /* when the capture has stacks */
	cli_input_args_wire(&a->in, io, s);
	r->steps_set = s->steps_set;
	r->step_first = s->step_first;
	r->step_last = s->step_last;
	s->breakdown = (r->sections & (MP_REPORT_PEAK | MP_REPORT_BREAKDOWN)) != 0 || a->picture;
	s->timeline = (r->sections & MP_REPORT_TIMELINE) != 0 || a->picture;
	if (r->top)
		s->top = r->top;
	if (a->picture && !(r->sections & MP_REPORT_TIMELINE))
		s->timeline_points = 2000; /* the chart's resolution; the text shows no timeline */
	io->solver = a->compat ? NULL : s;
	io->functions = (a->by_function & 1) ? 1 : a->by_function ? 2 : 0;
	io->tree = a->tree + 1;
	io->tree_min_percent = a->min_percent;
	/* (issue 43) a window: a kept run's, or --from-event's */
	io->window = !a->compat && !s->steps_set;
	io->from_set = a->from_set;
	io->from_event = a->from_event;
	io->window_replay = a->full_replay;
	/* (issue 43) sections a seed from a checkpoint gives exactly: a seek,
	 * else (or with --full-replay) a replay in segments on every core */
	io->par = !a->compat && !a->picture && !s->steps_set && !(a->by_function & 1) && a->tree < 0 &&
		  !(r->sections & ~(unsigned)(MP_REPORT_PEAK | MP_REPORT_BREAKDOWN | MP_REPORT_LEAKS | MP_REPORT_OOM));
	if (io->par && !a->full_replay)
		io->seek = CLI_SEEK | ((r->sections & MP_REPORT_OOM) ? CLI_SEEK_OOM : 0) |
			   ((r->sections & MP_REPORT_LEAKS) ? CLI_SEEK_LEAKS : 0);
	/* a steps window: from the checkpoint before its first step, up to its
	 * end (report_seek_steps.c); every section, not the stacks' tables */
	if (s->steps_set && !a->compat && !a->picture && !(a->by_function & 1) && a->tree < 0 && !a->full_replay)
		io->seek = CLI_SEEK | CLI_SEEK_STEPS;
}

/* --by-function's and --tree's tables after the CSV sections. */
static int write_csv_extras(const report_args_t *a, const cli_inputs_t *ci)
{
	int err = 0, any_functions = 0;

	for (int i = 0; i < ci->n; i++)
		any_functions |= ci->functions[i] != NULL;
	if (any_functions)
		printf("\n%s\n", mp_functions_csv_header);
	for (int i = 0; !err && i < ci->n; i++)
		if (ci->functions[i])
			err = mp_functions_csv(stdout, ci->functions[i], ci->in[i].path, a->ropt.top, ci->in[i].device_set,
					       ci->in[i].device);
	if (!err && a->tree >= 0)
		printf("\n%s\n", mp_calltree_csv_header);
	for (int i = 0; !err && a->tree >= 0 && i < ci->n; i++)
		err = mp_calltree_csv(stdout, ci->trees[i], ci->sources[i], ci->in[i].path, a->tree, ci->in[i].device_set,
				      ci->in[i].device);
	return err;
}

/* --by-function's and --tree's tables after the text report. */
static int write_text_extras(const report_args_t *a, const cli_inputs_t *ci)
{
	int err = 0;

	for (int i = 0; !err && i < ci->n; i++) {
		if (!ci->functions[i])
			continue;
		if (ci->n > 1)
			printf("\n%s\n", ci->in[i].path);
		err = mp_functions_text(stdout, ci->functions[i], ci->sources[i], a->ropt.top, ci->in[i].device_set,
					ci->in[i].device);
	}
	for (int i = 0; !err && a->tree >= 0 && i < ci->n; i++) {
		if (ci->n > 1)
			printf("\n%s\n", ci->in[i].path);
		err = mp_calltree_text(stdout, ci->trees[i], ci->sources[i], ci->solvers[i], a->tree, ci->in[i].device_set,
				       ci->in[i].device);
	}
	return err;
}

/* The "ranks" object of the rank solved in ci (NULL: out of memory). */
static json_t *ranks_json(const report_args_t *a, const cli_inputs_t *ci)
{
	mp_report_rank_detail_t d;

	mp_report_rank_detail(&d, &ci->in[0]);
	return mp_report_ranks_json(a->ranks->runs, (size_t)a->ranks->nruns, a->rank, &d);
}

/* The report of the opened inputs on stdout, as JSON, CSV or text. */
static int write_report(const report_args_t *a, const cli_inputs_t *ci, const cli_runs_t *runs)
{
	size_t n = (size_t)ci->n;
	int err;

	if (a->format == O_JSON) {
		mp_report_doc_extras_t x = {ci->functions, ci->trees, a->tree, runs->runs, (size_t)runs->nruns};
		json_t *doc = mp_report_json_document(ci->in, n, &a->ropt, &x);
		if (doc && a->ranks && json_object_set_new(doc, "ranks", ranks_json(a, ci))) {
			json_decref(doc);
			doc = NULL;
		}
		err = doc ? mp_json_write(stdout, doc, MP_JSON_LAYOUT) : MP_ENOMEM; /* takes doc */
	} else if (a->format == O_CSV) {
		err = mp_report_csv(stdout, ci->in, n, &a->ropt);
		if (!err)
			err = write_csv_extras(a, ci);
		if (!err && a->ranks) {
			mp_report_rank_detail_t d;
			mp_report_rank_detail(&d, &ci->in[0]);
			mp_report_ranks_csv(stdout, a->ranks->runs, (size_t)a->ranks->nruns, a->rank, &d);
		}
	} else {
		err = 0;
		if (!a->functions_only && a->ranks) {
			mp_report_rank_detail_t d;
			mp_report_rank_detail(&d, &ci->in[0]);
			mp_report_ranks_text(stdout, a->ranks->runs, (size_t)a->ranks->nruns, a->rank, &d);
		}
		if (!a->functions_only) {
			cli_runs_print(stdout, runs, a->all_processes);
			for (size_t i = 0; i < n; i++) {
				cli_keep_print(stdout, ci->paths[i]);
				cli_window_print(stdout, &ci->in[i]);
			}
			err = mp_report_text(stdout, ci->in, n, &a->ropt);
		}
		if (!err)
			err = write_text_extras(a, ci);
	}
	if (err < 0) {
		mp_cli_error("writing the report: %s", mp_strerror(err));
		return err == MP_ENOMEM ? MP_EXIT_FAILURE : MP_EXIT_IO;
	}
	return MP_EXIT_OK;
}

/* --compat=xprof: TensorBoard's Memory Profile figures instead. */
static int write_compat(const report_args_t *a, const cli_inputs_t *ci)
{
	mp_diag_t diag;

	mp_diag_clear(&diag);
	if (mp_xprof_report(stdout, ci->sources, ci->paths, (size_t)ci->n, &a->xcompat,
			    a->format == O_JSON ? MP_XPROF_JSON : a->format == O_CSV ? MP_XPROF_CSV : MP_XPROF_TEXT,
			    a->in.device, a->ropt.top, &diag) < 0)
		return mp_cli_diag(&diag);
	return MP_EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
	report_args_t a = {.xcompat = {1}, .tree = -1, .min_percent = MP_CALLTREE_MIN_PERCENT_DEFAULT};
	cli_inputs_options_t io = {0};
	cli_inputs_t ci = {0};
	cli_runs_t runs = {0}, rank_view, *shown = &runs;
	int rc;

	mp_solver_options_init(&a.sopt);
	if ((rc = parse_args(&a, argc, argv)) != CLI_OPT_CONTINUE)
		return rc;
	plan(&a, &io);
	if ((rc = cli_runs_expand(&runs, argv + optind, argc - optind, &a.in.sel)) != MP_EXIT_OK)
		goto out;
	if (cli_ranks_want(&runs, argc - optind, &a.in.sel) && !a.compat) {
		/* ranks: the table from the summaries, then only the highest solved */
		a.ranks = &runs;
		a.rank = mp_report_ranks_highest(runs.runs, (size_t)runs.nruns);
		rank_view = (cli_runs_t){1, &runs.runs[a.rank], 1, &runs.files[a.rank], &runs.owned[a.rank],
					 &runs.labels[a.rank]};
		shown = &rank_view;
	} else if (!a.compat && !a.picture) {
		/* one input at a time: the memory of the largest, not of all */
		cli_report_stream_t st = {&a.ropt,
					  a.format == O_JSON  ? CLI_STREAM_JSON
					  : a.format == O_CSV ? CLI_STREAM_CSV
							      : CLI_STREAM_TEXT,
					  a.tree, a.functions_only, a.all_processes};
		rc = cli_report_stream(&st, runs.files, runs.nfiles, &io, &runs);
		goto out;
	}
	rc = cli_inputs_open(&ci, shown->files, shown->nfiles, &io);
	if (rc != MP_EXIT_OK || ci.n == 0)
		goto out; /* an error, or only captures without memory events */
	rc = a.compat ? write_compat(&a, &ci) : write_report(&a, &ci, shown);
	if (rc == MP_EXIT_OK && a.picture && !a.compat) {
		/* the timeline and the breakdown of what the report shows, beside it */
		mp_plot_options_t po = {.charts = MP_PLOT_TIMELINE | MP_PLOT_BREAKDOWN, .top = a.ropt.top};
		fflush(stdout);
		cli_runs_title_inputs(shown, &ci);
		rc = cli_plot_write(&ci, &po, a.picture);
	}
out:
	cli_inputs_close(&ci);
	cli_runs_free(&runs);
	return rc;
}
